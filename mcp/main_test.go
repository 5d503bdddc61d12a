package mcp

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if os.Getenv(stdioChildEnv) != "" {
		// The test binary started by the stdio process tests: it is the
		// server, not the tests.
		os.Exit(stdioChild())
	}
	goleak.VerifyTestMain(m)
}
