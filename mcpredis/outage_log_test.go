package mcpredis

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestOutageLogsOnceEachWay: however many attempts fail in a row, the log
// hears of the outage once when it starts and once when it ends; a
// failed attempt waits before the next, and ends its wait with ctx.
func TestOutageLogsOnceEachWay(t *testing.T) {
	var buf bytes.Buffer
	o := outage{log: slog.New(slog.NewTextHandler(&buf, nil)), waiting: "writes wait", resumed: "writes resume"}
	ctx := context.Background()
	boom := errors.New("connection refused")

	start := time.Now()
	for range 3 {
		assert.True(t, o.after(ctx, boom))
	}
	assert.GreaterOrEqual(t, time.Since(start), 3*250*time.Millisecond, "each failure waits before the next attempt")
	assert.True(t, o.after(ctx, nil))
	assert.True(t, o.after(ctx, nil))
	assert.Equal(t, 1, strings.Count(buf.String(), "writes wait"), buf.String())
	assert.Contains(t, buf.String(), "connection refused")
	assert.Equal(t, 1, strings.Count(buf.String(), "writes resume"), buf.String())

	cctx, cancel := context.WithCancel(ctx)
	time.AfterFunc(20*time.Millisecond, cancel)
	assert.False(t, o.after(cctx, boom), "a wait ended by ctx says so")

	buf.Reset()
	assert.True(t, o.after(cctx, boom), "ctx already ended: no wait")
	assert.True(t, o.after(ctx, nil))
	assert.Equal(t, 1, strings.Count(buf.String(), "writes resume"), "an outage that outlived its ctx still ends in the log once")
}
