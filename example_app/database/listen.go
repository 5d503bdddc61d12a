package database

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// ErrNotPostgres is returned by Listen on an SQLite DB: one process owns
// an SQLite file, and it hears its own changes directly.
var ErrNotPostgres = errors.New("database: LISTEN needs PostgreSQL")

// Listener is a LISTEN on one PostgreSQL channel; see DB.Listen.
type Listener struct {
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
}

// Listen starts listening on channel on a connection of its own and
// returns once PostgreSQL confirmed the LISTEN, so that every NOTIFY
// committed after Listen returns reaches fn. fn runs on the listener's
// goroutine, one payload at a time, in commit order; it must not block for
// long.
//
// When the connection is lost, the listener reconnects (1 s, doubling, at
// most 30 s between tries) and then calls resync: what was notified while
// it was away is lost, so the caller must reread what it keeps. Close
// stops it.
func (db *DB) Listen(ctx context.Context, channel string, fn func(payload string), resync func()) (*Listener, error) {
	if db.Dialect != Postgres {
		return nil, ErrNotPostgres
	}
	conn, err := db.listenConn(ctx, channel)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	l := &Listener{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(l.done)
		backoff := time.Second
		for {
			err := receive(ctx, conn, fn)
			closeCtx, c := context.WithTimeout(context.Background(), time.Second)
			_ = conn.Close(closeCtx)
			c()
			if ctx.Err() != nil {
				return
			}
			_ = err // the connection broke: reconnect below
			for {
				select {
				case <-ctx.Done():
					return
				case <-time.After(backoff):
				}
				conn, err = db.listenConn(ctx, channel)
				if err == nil {
					backoff = time.Second
					break
				}
				backoff = min(2*backoff, 30*time.Second)
			}
			if resync != nil {
				resync()
			}
		}
	}()
	return l, nil
}

func (db *DB) listenConn(ctx context.Context, channel string) (*pgx.Conn, error) {
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(cctx, db.url)
	if err != nil {
		return nil, fmt.Errorf("database: listen: %w", err)
	}
	if _, err := conn.Exec(cctx, "LISTEN "+pgx.Identifier{channel}.Sanitize()); err != nil {
		_ = conn.Close(context.Background())
		return nil, fmt.Errorf("database: listen %s: %w", channel, err)
	}
	return conn, nil
}

func receive(ctx context.Context, conn *pgx.Conn, fn func(string)) error {
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		fn(n.Payload)
	}
}

// Close stops the listener and waits for its goroutine.
func (l *Listener) Close() {
	l.once.Do(l.cancel)
	<-l.done
}
