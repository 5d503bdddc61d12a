//go:build race

package mcp

// raceDetector says the tests run with the race detector, which
// multiplies the memory a process holds.
const raceDetector = true
