package board

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/saguaro-go/saguaro/example_app/database"
)

// channel is the PostgreSQL NOTIFY channel of task changes.
const channel = "saguaro_board"

// maxPayload keeps a notification under PostgreSQL's 8000-byte limit: a
// larger task travels by id and the listeners read it.
const maxPayload = 7000

var migrations = []database.Migration{{
	Version: 1,
	SQLite: `CREATE TABLE tasks (
		seq INTEGER PRIMARY KEY AUTOINCREMENT,
		title TEXT NOT NULL,
		notes TEXT NOT NULL DEFAULT '',
		tags TEXT NOT NULL DEFAULT '[]',
		done BOOLEAN NOT NULL DEFAULT FALSE,
		version BIGINT NOT NULL DEFAULT 1,
		created_at BIGINT NOT NULL,
		updated_at BIGINT NOT NULL)`,
	Postgres: `CREATE TABLE tasks (
		seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
		title TEXT NOT NULL,
		notes TEXT NOT NULL DEFAULT '',
		tags TEXT NOT NULL DEFAULT '[]',
		done BOOLEAN NOT NULL DEFAULT FALSE,
		version BIGINT NOT NULL DEFAULT 1,
		created_at BIGINT NOT NULL,
		updated_at BIGINT NOT NULL)`,
}}

const columns = `seq, title, notes, tags, done, version, created_at, updated_at`

// SQL is the Store on a database.DB. On SQLite the one process that owns
// the file hears its changes directly, after each commit; on PostgreSQL
// every change is announced with NOTIFY in the transaction that makes it,
// so every replica's Watch hears exactly the committed changes, in commit
// order, whoever made them.
type SQL struct {
	db     *database.DB
	id     string
	logger *slog.Logger
	now    func() time.Time

	wmu sync.Mutex // SQLite: one write and its delivery at a time

	mu       sync.Mutex
	watchers map[int]func(Change)
	next     int
	listener *database.Listener
}

// Open migrates the board's schema and returns its Store. On PostgreSQL
// it starts listening for the other replicas' changes; Close stops that.
func Open(ctx context.Context, db *database.DB, logger *slog.Logger) (*SQL, error) {
	if err := db.Migrate(ctx, "board", migrations); err != nil {
		return nil, err
	}
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	s := &SQL{db: db, id: hex.EncodeToString(b), logger: logger, now: time.Now, watchers: map[int]func(Change){}}
	if db.Dialect == database.Postgres {
		l, err := db.Listen(ctx, channel, s.heard, func() { s.deliver(Change{Kind: Resync}) })
		if err != nil {
			return nil, err
		}
		s.listener = l
	}
	return s, nil
}

// ID identifies this Store among the replicas: Change.Origin of its own
// changes.
func (s *SQL) ID() string { return s.id }

// Close implements Store.
func (s *SQL) Close() error {
	if s.listener != nil {
		s.listener.Close()
	}
	return nil
}

// Watch implements Store.
func (s *SQL) Watch(fn func(Change)) (stop func()) {
	s.mu.Lock()
	id := s.next
	s.next++
	s.watchers[id] = fn
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		delete(s.watchers, id)
		s.mu.Unlock()
	}
}

func (s *SQL) deliver(c Change) {
	s.mu.Lock()
	fns := slices.Collect(maps.Values(s.watchers))
	s.mu.Unlock()
	for _, fn := range fns {
		fn(c)
	}
}

// notice is a change as NOTIFY carries it.
type notice struct {
	Kind   ChangeKind `json:"k"`
	ID     string     `json:"id"`
	Origin string     `json:"o"`
	Task   *Task      `json:"t,omitempty"`
}

// heard delivers one NOTIFY payload.
func (s *SQL) heard(payload string) {
	var n notice
	if err := json.Unmarshal([]byte(payload), &n); err != nil {
		s.logger.Warn("board: bad notification", slog.Any("error", err))
		return
	}
	c := Change{Kind: n.Kind, Origin: n.Origin}
	switch {
	case n.Task != nil:
		c.Task = *n.Task
	case n.Kind == Deleted:
		c.Task = Task{ID: n.ID}
	default:
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		t, err := s.Get(ctx, n.ID)
		cancel()
		if err != nil {
			// Deleted since: its own notice follows.
			return
		}
		c.Task = t
	}
	s.deliver(c)
}

// write runs one statement that returns a task row and announces the
// change: with NOTIFY in the same transaction on PostgreSQL, directly
// after the commit on SQLite.
func (s *SQL) write(ctx context.Context, kind ChangeKind, query string, args ...any) (Task, error) {
	var t Task
	if s.db.Dialect == database.SQLite {
		s.wmu.Lock()
		defer s.wmu.Unlock()
	}
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		var err error
		t, err = scan(tx.QueryRowContext(ctx, s.db.Rebind(query), args...))
		if err != nil {
			return err
		}
		if s.db.Dialect != database.Postgres {
			return nil
		}
		payload, err := json.Marshal(notice{Kind: kind, ID: t.ID, Origin: s.id, Task: &t})
		if err != nil {
			return err
		}
		if len(payload) > maxPayload {
			payload, _ = json.Marshal(notice{Kind: kind, ID: t.ID, Origin: s.id})
		}
		if _, err := tx.ExecContext(ctx, `SELECT pg_notify($1, $2)`, channel, string(payload)); err != nil {
			return fmt.Errorf("board: notify: %w", err)
		}
		return nil
	})
	if err != nil {
		return Task{}, err
	}
	if s.db.Dialect == database.SQLite {
		s.deliver(Change{Kind: kind, Task: t, Origin: s.id})
	}
	return t, nil
}

// Add implements Store.
func (s *SQL) Add(ctx context.Context, in NewTask) (Task, error) {
	in, err := in.clean()
	if err != nil {
		return Task{}, err
	}
	tags, _ := json.Marshal(orEmpty(in.Tags))
	now := s.now().UnixMicro()
	return s.write(ctx, Created,
		`INSERT INTO tasks (title, notes, tags, done, version, created_at, updated_at)
		 VALUES (?, ?, ?, FALSE, 1, ?, ?) RETURNING `+columns,
		in.Title, in.Notes, string(tags), now, now)
}

// Get implements Store.
func (s *SQL) Get(ctx context.Context, id string) (Task, error) {
	seq, ok := seqOf(id)
	if !ok {
		return Task{}, fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	t, err := scan(s.db.QueryRowContext(ctx, s.db.Rebind(`SELECT `+columns+` FROM tasks WHERE seq = ?`), seq))
	if errors.Is(err, ErrNotFound) {
		return Task{}, fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	return t, err
}

// SetDone implements Store.
func (s *SQL) SetDone(ctx context.Context, id string, done bool) (Task, error) {
	seq, ok := seqOf(id)
	if !ok {
		return Task{}, fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	t, err := s.write(ctx, Updated,
		`UPDATE tasks SET done = ?, version = version + 1, updated_at = ? WHERE seq = ? RETURNING `+columns,
		done, s.now().UnixMicro(), seq)
	if errors.Is(err, ErrNotFound) {
		return Task{}, fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	return t, err
}

// Delete implements Store.
func (s *SQL) Delete(ctx context.Context, id string) (Task, error) {
	seq, ok := seqOf(id)
	if !ok {
		return Task{}, fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	t, err := s.write(ctx, Deleted, `DELETE FROM tasks WHERE seq = ? RETURNING `+columns, seq)
	if errors.Is(err, ErrNotFound) {
		return Task{}, fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	return t, err
}

// List implements Store.
func (s *SQL) List(ctx context.Context, done *bool) ([]Task, error) {
	q, args := `SELECT `+columns+` FROM tasks ORDER BY seq`, []any(nil)
	if done != nil {
		q, args = `SELECT `+columns+` FROM tasks WHERE done = ? ORDER BY seq`, []any{*done}
	}
	rows, err := s.db.QueryContext(ctx, s.db.Rebind(q), args...)
	if err != nil {
		return nil, fmt.Errorf("board: list: %w", err)
	}
	defer rows.Close()
	out := []Task{}
	for rows.Next() {
		t, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("board: list: %w", err)
	}
	return out, nil
}

type scanner interface{ Scan(dest ...any) error }

func scan(r scanner) (Task, error) {
	var (
		t                Task
		seq              int64
		tags             string
		created, updated int64
	)
	err := r.Scan(&seq, &t.Title, &t.Notes, &tags, &t.Done, &t.Version, &created, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return Task{}, ErrNotFound
	}
	if err != nil {
		return Task{}, fmt.Errorf("board: %w", err)
	}
	t.ID = taskID(seq)
	if err := json.Unmarshal([]byte(tags), &t.Tags); err != nil {
		return Task{}, fmt.Errorf("board: tags of %s: %w", t.ID, err)
	}
	if len(t.Tags) == 0 {
		t.Tags = nil
	}
	t.CreatedAt = time.UnixMicro(created).UTC()
	t.UpdatedAt = time.UnixMicro(updated).UTC()
	return t, nil
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
