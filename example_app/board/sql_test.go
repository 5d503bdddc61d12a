package board

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/saguaro-go/saguaro/example_app/database"
	"github.com/saguaro-go/saguaro/example_app/database/dbtest"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// backends opens the board on each database kind: an SQLite file and a
// PostgreSQL database of the test's own.
func backends(t *testing.T) map[string]func(t *testing.T) *database.DB {
	return map[string]func(t *testing.T) *database.DB{
		"sqlite": func(t *testing.T) *database.DB {
			return openDB(t, filepath.Join(t.TempDir(), "board.db"))
		},
		"postgres": func(t *testing.T) *database.DB { return openDB(t, dbtest.URL(t)) },
	}
}

func openDB(t *testing.T, target string) *database.DB {
	t.Helper()
	db, err := database.Open(context.Background(), target)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return db
}

func openStore(t *testing.T, db *database.DB) *SQL {
	t.Helper()
	s, err := Open(context.Background(), db, quiet)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

// recorder collects what Watch delivers.
type recorder struct {
	mu sync.Mutex
	cs []Change
}

func (r *recorder) add(c Change) { r.mu.Lock(); r.cs = append(r.cs, c); r.mu.Unlock() }
func (r *recorder) len() int     { r.mu.Lock(); defer r.mu.Unlock(); return len(r.cs) }
func (r *recorder) all() []Change {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Change(nil), r.cs...)
}

func TestStore(t *testing.T) {
	for name, open := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := openStore(t, open(t))
			var rec recorder
			defer s.Watch(rec.add)()

			a, err := s.Add(ctx, NewTask{Title: "  Write docs ", Notes: "n", Tags: []string{"Docs", "docs", " "}})
			require.NoError(t, err)
			assert.Equal(t, "t1", a.ID)
			assert.Equal(t, "Write docs", a.Title)
			assert.Equal(t, []string{"docs"}, a.Tags)
			assert.EqualValues(t, 1, a.Version)
			b, err := s.Add(ctx, NewTask{Title: "Ship"})
			require.NoError(t, err)
			assert.Equal(t, "t2", b.ID)
			assert.Nil(t, b.Tags)

			_, err = s.Add(ctx, NewTask{Title: " "})
			assert.ErrorIs(t, err, ErrInvalid)
			for _, id := range []string{"t99", "x1", "t01", "t", "t-1", "1"} {
				_, err = s.Get(ctx, id)
				assert.ErrorIs(t, err, ErrNotFound, id)
				_, err = s.SetDone(ctx, id, true)
				assert.ErrorIs(t, err, ErrNotFound, id)
			}

			done, err := s.SetDone(ctx, "t1", true)
			require.NoError(t, err)
			assert.True(t, done.Done)
			assert.EqualValues(t, 2, done.Version)
			yes, no := true, false
			l, err := s.List(ctx, &yes)
			require.NoError(t, err)
			require.Len(t, l, 1)
			assert.Equal(t, "t1", l[0].ID)
			l, err = s.List(ctx, &no)
			require.NoError(t, err)
			require.Len(t, l, 1)
			assert.Equal(t, "t2", l[0].ID)

			gone, err := s.Delete(ctx, "t2")
			require.NoError(t, err)
			assert.Equal(t, "Ship", gone.Title)
			_, err = s.Get(ctx, "t2")
			assert.ErrorIs(t, err, ErrNotFound)

			require.Eventually(t, func() bool { return rec.len() == 4 }, 5*time.Second, 10*time.Millisecond)
			cs := rec.all()
			kinds := []ChangeKind{cs[0].Kind, cs[1].Kind, cs[2].Kind, cs[3].Kind}
			assert.Equal(t, []ChangeKind{Created, Created, Updated, Deleted}, kinds)
			assert.Equal(t, s.ID(), cs[0].Origin)
			assert.True(t, cs[2].Task.Done)
			assert.Equal(t, "t2", cs[3].Task.ID)
		})
	}
}

// TestSQLiteSurvivesReopen: the file keeps the board.
func TestSQLiteSurvivesReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "board.db")
	ctx := context.Background()
	db, err := database.Open(ctx, path)
	require.NoError(t, err)
	s, err := Open(ctx, db, quiet)
	require.NoError(t, err)
	_, err = s.Add(ctx, NewTask{Title: "kept"})
	require.NoError(t, err)
	require.NoError(t, s.Close())
	require.NoError(t, db.Close())

	s2 := openStore(t, openDB(t, path))
	l, err := s2.List(ctx, nil)
	require.NoError(t, err)
	require.Len(t, l, 1)
	assert.Equal(t, "kept", l[0].Title)
	n, err := s2.Add(ctx, NewTask{Title: "next"})
	require.NoError(t, err)
	assert.Equal(t, "t2", n.ID)
}

// TestReplicasHearEveryChange: three stores on one PostgreSQL database
// (three replicas) with 8 writers spread over them. Every writer adds
// tasks and flips the one shared task; no update is lost (the shared
// task's version counts every flip) and every replica hears every change,
// with the right origin.
func TestReplicasHearEveryChange(t *testing.T) {
	url := dbtest.URL(t)
	ctx := context.Background()
	var stores [3]*SQL
	var recs [3]recorder
	for i := range stores {
		stores[i] = openStore(t, openDB(t, url))
		defer stores[i].Watch(recs[i].add)()
	}
	shared, err := stores[0].Add(ctx, NewTask{Title: "shared"})
	require.NoError(t, err)

	const writers, adds = 8, 10
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			s := stores[w%3]
			for i := range adds {
				_, err := s.Add(ctx, NewTask{Title: "w", Tags: []string{string(rune('a' + w))}})
				assert.NoError(t, err)
				_, err = s.SetDone(ctx, shared.ID, (w+i)%2 == 0)
				assert.NoError(t, err)
			}
		})
	}
	wg.Wait()

	got, err := stores[2].Get(ctx, shared.ID)
	require.NoError(t, err)
	assert.EqualValues(t, 1+writers*adds, got.Version, "every flip counted")
	all, err := stores[1].List(ctx, nil)
	require.NoError(t, err)
	assert.Len(t, all, 1+writers*adds)

	want := 1 + 2*writers*adds // the shared task's creation, then adds and flips
	for i := range recs {
		require.Eventually(t, func() bool { return recs[i].len() == want }, 10*time.Second, 20*time.Millisecond,
			"replica %d heard %d of %d changes", i, recs[i].len(), want)
		origins := map[string]int{}
		for _, c := range recs[i].all() {
			origins[c.Origin]++
		}
		assert.Equal(t, 1+(3*adds*2), origins[stores[0].ID()], "writers 0, 3, 6 on replica 0, and the shared task")
		assert.Equal(t, 3*adds*2, origins[stores[1].ID()])
		assert.Equal(t, 2*adds*2, origins[stores[2].ID()])
	}
}
