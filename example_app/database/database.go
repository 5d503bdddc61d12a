// Package database opens the example app's database: SQLite through a
// pure-Go driver (modernc.org/sqlite), which needs no server and keeps
// `go run ./example_app` one command, or PostgreSQL through pgx, which
// replicas share. It applies each component's schema migrations on start
// and, on PostgreSQL, carries LISTEN/NOTIFY for changes that every replica
// must hear.
//
// Queries are written once with "?" placeholders; [DB.Rebind] turns them
// into PostgreSQL's "$1" form. Everything else that differs between the
// two (DDL, upserts) is spelled per [Dialect] by the caller.
package database

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
	_ "modernc.org/sqlite"             // registers the "sqlite" driver
)

// Dialect names the SQL spoken by a DB.
type Dialect int

// The two dialects.
const (
	SQLite Dialect = iota + 1
	Postgres
)

// String returns "sqlite" or "postgres".
func (d Dialect) String() string {
	switch d {
	case SQLite:
		return "sqlite"
	case Postgres:
		return "postgres"
	}
	return "unknown"
}

// ErrURL is wrapped by every error of Open about its argument.
var ErrURL = errors.New("database: invalid database URL")

// ErrUnsafeFile is wrapped by Open's refusal of an SQLite file that others
// could replace: one in a directory anyone may write to.
var ErrUnsafeFile = errors.New("database: unsafe SQLite file")

// DB is an open database: the pool, its dialect, and for PostgreSQL the
// URL that listeners connect with.
type DB struct {
	*sql.DB
	Dialect Dialect
	url     string
}

// Open opens the database named by target and checks that it answers:
// "postgres://…" or "postgresql://…" is PostgreSQL; anything else is the
// path of an SQLite file, created if missing, and "" an SQLite database in
// memory that lives as long as the DB.
//
// An SQLite file is made readable and writable by its owner only (mode
// 0600, and its -wal and -shm files with it: SQLite gives them the
// database file's mode), since it holds the authorization server's keys;
// an existing file with a wider mode is narrowed. A file in a directory
// that anyone may write to, without the sticky bit, is refused
// ([ErrUnsafeFile]).
//
// Pitfall: an SQLite DB holds one connection, so that writers queue in the
// process instead of failing with SQLITE_BUSY; a long transaction blocks
// every other query. Two processes must not share one SQLite file: give
// replicas PostgreSQL.
func Open(ctx context.Context, target string) (*DB, error) {
	if strings.HasPrefix(target, "postgres://") || strings.HasPrefix(target, "postgresql://") {
		if _, err := url.Parse(target); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrURL, err)
		}
		db, err := sql.Open("pgx", target)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrURL, err)
		}
		db.SetMaxOpenConns(16)
		db.SetConnMaxIdleTime(time.Minute)
		return ping(ctx, &DB{DB: db, Dialect: Postgres, url: target})
	}
	dsn := "file::memory:"
	if target != "" {
		if err := private(target); err != nil {
			return nil, err
		}
		dsn = "file:" + (&url.URL{Path: target}).EscapedPath()
	}
	// busy_timeout: another process's lock (a backup, the sqlite3 shell)
	// is waited for, not failed on.
	dsn += "?_pragma=busy_timeout(5000)&_pragma=foreign_keys(1)"
	if target != "" {
		dsn += "&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)"
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrURL, err)
	}
	// One connection: writes queue here rather than fail with
	// SQLITE_BUSY, and an in-memory database stays one database.
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	return ping(ctx, &DB{DB: db, Dialect: SQLite})
}

// private creates the SQLite file at path with mode 0600 unless it
// exists, narrows the mode of the file and of its companions when it is
// wider, and refuses a directory that anyone may write to. SQLite creates
// the -wal and -shm files with the database file's mode, so the first
// file decides for all three.
func private(path string) error {
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrURL, err)
	}
	if st.Mode().Perm()&0o002 != 0 && st.Mode()&os.ModeSticky == 0 {
		return fmt.Errorf("%w: %s is writable by anyone", ErrUnsafeFile, dir)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrURL, err)
	}
	_ = f.Close()
	for _, p := range []string{path, path + "-wal", path + "-shm", path + "-journal"} {
		st, err := os.Stat(p)
		if err != nil || st.Mode().Perm()&0o077 == 0 {
			continue
		}
		if err := os.Chmod(p, st.Mode().Perm()&0o700); err != nil {
			return fmt.Errorf("%w: %s is readable by others and cannot be narrowed: %w", ErrUnsafeFile, p, err)
		}
	}
	return nil
}

func ping(ctx context.Context, db *DB) (*DB, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("database: %s does not answer: %w", db.Dialect, err)
	}
	return db, nil
}

// Rebind returns query with its "?" placeholders numbered "$1", "$2", …
// for PostgreSQL, unchanged for SQLite. Queries must not hold a literal
// "?" (in a string constant, say).
func (db *DB) Rebind(query string) string {
	if db.Dialect != Postgres || !strings.Contains(query, "?") {
		return query
	}
	var b strings.Builder
	n := 0
	for _, r := range query {
		if r == '?' {
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Tx runs fn in a transaction and commits it when fn returns nil.
func (db *DB) Tx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("database: begin: %w", err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("database: commit: %w", err)
	}
	return nil
}
