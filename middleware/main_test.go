package middleware

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-chi/httplog/v3"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// logSink collects JSON log lines written from any goroutine.
type logSink struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *logSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *logSink) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// lines decodes every line written so far.
func (s *logSink) lines(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(s.String()), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m), "line %q", l)
		out = append(out, m)
	}
	return out
}

// waitLines waits until n lines are written and returns them. The end line
// of a request is written after the handler returns, which can be after the
// client has read the whole response.
func (s *logSink) waitLines(t *testing.T, n int) []map[string]any {
	t.Helper()
	require.Eventually(t, func() bool { return len(s.lines(t)) >= n }, 5*time.Second, 5*time.Millisecond,
		"want %d log lines, have:\n%s", n, s.String())
	time.Sleep(20 * time.Millisecond) // a line too many would show up now
	return s.lines(t)
}

// newTestLogger returns a JSON logger at Debug that writes to a new sink,
// with the ECS schema's names for time, level and message.
func newTestLogger() (*slog.Logger, *logSink) {
	sink := &logSink{}
	h := slog.NewJSONHandler(sink, &slog.HandlerOptions{
		Level:       slog.LevelDebug,
		ReplaceAttr: httplog.SchemaECS.ReplaceAttr,
	})
	return slog.New(h), sink
}
