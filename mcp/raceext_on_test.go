//go:build race

package mcp_test

// raceEnabled: the race detector runs, which makes sync.Pool drop some of
// what is put in it.
const raceEnabled = true
