package database_test

import (
	"context"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/saguaro-go/saguaro/example_app/database"
	"github.com/saguaro-go/saguaro/example_app/database/dbtest"
)

func TestMain(m *testing.M) {
	code := dbtest.Main(m)
	if code == 0 {
		if err := goleak.Find(); err != nil {
			os.Stderr.WriteString("goleak: " + err.Error() + "\n")
			code = 1
		}
	}
	os.Exit(code)
}

func TestRebind(t *testing.T) {
	pg := &database.DB{Dialect: database.Postgres}
	assert.Equal(t, "SELECT $1, $2 WHERE a = $3", pg.Rebind("SELECT ?, ? WHERE a = ?"))
	lite := &database.DB{Dialect: database.SQLite}
	assert.Equal(t, "SELECT ?", lite.Rebind("SELECT ?"))
}

func TestOpenRefusesWhatDoesNotAnswer(t *testing.T) {
	_, err := database.Open(context.Background(), "postgres://nobody@127.0.0.1:1/x?connect_timeout=1")
	assert.Error(t, err)
	_, err = database.Open(context.Background(), t.TempDir()+"/no/such/dir/x.db")
	assert.Error(t, err)
}

var steps = []database.Migration{
	{Version: 1, SQLite: `CREATE TABLE m (a INTEGER)`, Postgres: `CREATE TABLE m (a INTEGER)`},
	{Version: 2, SQLite: `INSERT INTO m VALUES (1)`, Postgres: `INSERT INTO m VALUES (1)`},
}

// TestMigrateRunsEachStepOnce: replicas that start together, and a
// restart, apply every step exactly once.
func TestMigrateRunsEachStepOnce(t *testing.T) {
	ctx := context.Background()
	url := dbtest.URL(t)
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			db, err := database.Open(ctx, url)
			if !assert.NoError(t, err) {
				return
			}
			defer db.Close()
			assert.NoError(t, db.Migrate(ctx, "test", steps))
		})
	}
	wg.Wait()
	db, err := database.Open(ctx, url)
	require.NoError(t, err)
	defer db.Close()
	require.NoError(t, db.Migrate(ctx, "test", steps))
	var n int
	require.NoError(t, db.QueryRow(`SELECT COUNT(*) FROM m`).Scan(&n))
	assert.Equal(t, 1, n)

	lite, err := database.Open(ctx, t.TempDir()+"/m.db")
	require.NoError(t, err)
	defer lite.Close()
	require.NoError(t, lite.Migrate(ctx, "test", steps))
	require.NoError(t, lite.Migrate(ctx, "test", steps))
	require.NoError(t, lite.QueryRow(`SELECT COUNT(*) FROM m`).Scan(&n))
	assert.Equal(t, 1, n)

	bad := []database.Migration{{Version: 3, SQLite: `NOT SQL`, Postgres: `NOT SQL`}}
	assert.Error(t, lite.Migrate(ctx, "test", append(steps, bad...)))
}

// TestListenResyncsAfterALostConnection: the listener hears NOTIFY, and
// when its connection is killed it reconnects, says so (resync) and hears
// the next one.
func TestListenResyncsAfterALostConnection(t *testing.T) {
	ctx := context.Background()
	db, err := database.Open(ctx, dbtest.URL(t))
	require.NoError(t, err)
	defer db.Close()
	got := make(chan string, 10)
	var resyncs atomic.Int32
	l, err := db.Listen(ctx, "test_channel", func(p string) { got <- p }, func() { resyncs.Add(1) })
	require.NoError(t, err)
	defer l.Close()

	_, err = db.Exec(`SELECT pg_notify('test_channel', 'one')`)
	require.NoError(t, err)
	assert.Equal(t, "one", receive(t, got))

	_, err = db.Exec(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE 'LISTEN%' AND datname = current_database()`)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return resyncs.Load() == 1 }, 10*time.Second, 20*time.Millisecond)
	_, err = db.Exec(`SELECT pg_notify('test_channel', 'two')`)
	require.NoError(t, err)
	assert.Equal(t, "two", receive(t, got))

	lite, err := database.Open(ctx, "")
	require.NoError(t, err)
	defer lite.Close()
	_, err = lite.Listen(ctx, "x", func(string) {}, nil)
	assert.ErrorIs(t, err, database.ErrNotPostgres)
}

func receive(t *testing.T, c <-chan string) string {
	t.Helper()
	select {
	case s := <-c:
		return s
	case <-time.After(10 * time.Second):
		t.Fatal("no notification")
		return ""
	}
}
