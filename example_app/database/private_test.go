//go:build unix

package database_test

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/saguaro-go/saguaro/example_app/database"
)

// TestSQLiteFilesArePrivate: the database file, its write-ahead log and
// its shared-memory file are readable by their owner only, whatever the
// umask, and a file left readable by an older version is tightened.
func TestSQLiteFilesArePrivate(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	dir := t.TempDir()
	path := filepath.Join(dir, "board.db")
	db, err := database.Open(context.Background(), path)
	require.NoError(t, err)
	_, err = db.Exec(`CREATE TABLE t (a TEXT); INSERT INTO t VALUES ('secret')`)
	require.NoError(t, err)
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		st, err := os.Stat(p)
		require.NoError(t, err, p)
		assert.Equal(t, os.FileMode(0o600), st.Mode().Perm(), p)
	}
	require.NoError(t, db.Close())

	require.NoError(t, os.Chmod(path, 0o644))
	db, err = database.Open(context.Background(), path)
	require.NoError(t, err)
	defer db.Close()
	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm(), "an existing file is tightened")
}

// TestSQLiteRefusesAnOpenDirectory: a directory anyone may write to
// (without the sticky bit) lets anyone replace the database: refused.
func TestSQLiteRefusesAnOpenDirectory(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0o777))
	_, err := database.Open(context.Background(), filepath.Join(dir, "board.db"))
	assert.ErrorIs(t, err, database.ErrUnsafeFile)
	assert.ErrorContains(t, err, "writable by anyone")
	require.NoError(t, os.Chmod(dir, os.ModeSticky|0o777))
	db, err := database.Open(context.Background(), filepath.Join(dir, "board.db"))
	require.NoError(t, err, "a sticky directory such as /tmp is fine")
	db.Close()
}
