//go:build !race

package mcp

// raceDetector reports whether the tests run under -race, which makes
// everything several times slower.
const raceDetector = false
