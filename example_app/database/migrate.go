package database

import (
	"context"
	"database/sql"
	"fmt"
	"hash/fnv"
)

// Migration is one step of a component's schema, spelled per dialect.
// Versions start at 1 and only grow; a step, once released, never
// changes (add a new one instead).
type Migration struct {
	Version  int
	SQLite   string
	Postgres string
}

// Migrate brings component's schema up to its last migration: the steps
// not yet recorded in schema_migrations run in order, each in the
// transaction that records it. Replicas that start together are
// serialised on PostgreSQL by an advisory lock, so each step runs once.
func (db *DB) Migrate(ctx context.Context, component string, steps []Migration) error {
	create := `CREATE TABLE IF NOT EXISTS schema_migrations (
		component TEXT NOT NULL,
		version INTEGER NOT NULL,
		PRIMARY KEY (component, version))`
	return db.Tx(ctx, func(tx *sql.Tx) error {
		if db.Dialect == Postgres {
			h := fnv.New64a()
			h.Write([]byte("saguaro-example-migrations"))
			if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(h.Sum64())); err != nil {
				return fmt.Errorf("database: migration lock: %w", err)
			}
		}
		if _, err := tx.ExecContext(ctx, create); err != nil {
			return fmt.Errorf("database: schema_migrations: %w", err)
		}
		var have int
		q := db.Rebind(`SELECT COALESCE(MAX(version), 0) FROM schema_migrations WHERE component = ?`)
		if err := tx.QueryRowContext(ctx, q, component).Scan(&have); err != nil {
			return fmt.Errorf("database: schema_migrations: %w", err)
		}
		for _, m := range steps {
			if m.Version <= have {
				continue
			}
			stmt := m.SQLite
			if db.Dialect == Postgres {
				stmt = m.Postgres
			}
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("database: %s migration %d: %w", component, m.Version, err)
			}
			ins := db.Rebind(`INSERT INTO schema_migrations (component, version) VALUES (?, ?)`)
			if _, err := tx.ExecContext(ctx, ins, component, m.Version); err != nil {
				return fmt.Errorf("database: %s migration %d: %w", component, m.Version, err)
			}
		}
		return nil
	})
}
