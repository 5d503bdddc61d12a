package middleware

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-chi/httplog/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fallbackCounter counts the writes that reach it: the lines JSONHandler
// hands to slog.
type fallbackCounter struct {
	w io.Writer
	n *atomic.Int64
}

func (f fallbackCounter) Write(p []byte) (int, error) {
	f.n.Add(1)
	return f.w.Write(p)
}

// newCountingJSONHandler is NewJSONHandler whose slog path counts its
// lines into n.
func newCountingJSONHandler(w io.Writer, opts *slog.HandlerOptions, n *atomic.Int64) *JSONHandler {
	h := NewJSONHandler(w, opts)
	h.slog = slog.NewJSONHandler(fallbackCounter{h.out, n}, opts)
	return h
}

// The request line written by the direct path is httplog's, byte for byte:
// every line case of TestRequestLogger_LineMatchesHTTPLog on every schema,
// httplog's middleware writing through slog.JSONHandler and the preset
// through JSONHandler, neither with a ReplaceAttr (which would turn the
// direct path off). What differs from run to run is then normalised in the
// text of both lines alike.
func TestJSONHandler_LineMatchesHTTPLog(t *testing.T) {
	t.Parallel()
	schemas := []struct {
		name string
		s    *httplog.Schema
	}{
		{"ECS", httplog.SchemaECS},
		{"OTEL", httplog.SchemaOTEL},
		{"GCP", httplog.SchemaGCP},
		{"ECS-concise", httplog.SchemaECS.Concise(true)},
	}
	// Lines holding a value the direct path leaves to slog: an error, a
	// panic's stack, several values of one header.
	viaSlog := map[string]bool{
		"panic recovered": true, "panic not recovered": true, "attributes and error": true,
		"client aborted": true, "listed headers": true,
	}
	for _, sc := range schemas {
		for _, tc := range lineCases {
			t.Run(sc.name+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				opts := &slog.HandlerOptions{Level: slog.LevelDebug}
				want := lineThrough(t, sc.s, tc, true, func(w io.Writer) slog.Handler {
					return slog.NewJSONHandler(w, opts)
				})
				want = normaliseText(sc.s, want)
				if tc.byDesign != nil {
					plain := *sc.s
					plain.Level = "" // no ReplaceAttr: the level is under "level"
					e := &lineEdit{t: t, s: &plain, line: want}
					tc.byDesign(e)
					want = e.line
				}
				var slogLines atomic.Int64
				got := lineThrough(t, sc.s, tc, false, func(w io.Writer) slog.Handler {
					return newCountingJSONHandler(w, opts, &slogLines)
				})
				assert.Equal(t, want, normaliseText(sc.s, got))
				if !viaSlog[tc.name] {
					assert.Zero(t, slogLines.Load(), "the line went through slog")
				}
			})
		}
	}
}

// normaliseText fixes, in a line's text, what differs from one run to the
// next: the time, the duration in its field and at the end of the message,
// and a panic's stack below the frame that panicked.
func normaliseText(s *httplog.Schema, line string) string {
	last := func(field string) string {
		if s.GroupDelimiter != "" {
			if _, k, ok := strings.Cut(field, s.GroupDelimiter); ok {
				return k
			}
		}
		return field
	}
	str := `"(?:[^"\\]|\\.)*"`
	line = regexp.MustCompile(`^\{"time":`+str).ReplaceAllString(line, `{"time":"T"`)
	line = regexp.MustCompile(`("msg":"(?:[^"\\]|\\.)*) \([^()"]*\)"`).ReplaceAllString(line, `$1 (D)"`)
	if k := last(s.ResponseDuration); k != "" {
		line = regexp.MustCompile(regexp.QuoteMeta(fmt.Sprintf("%q:", k))+`(?:`+str+`|[-+.eE0-9]+)`).
			ReplaceAllString(line, fmt.Sprintf("%q:0", k))
	}
	if k := last(s.ErrorStackTrace); k != "" {
		line = regexp.MustCompile(`(`+regexp.QuoteMeta(fmt.Sprintf("%q:[", k))+str+`)(?:,`+str+`)*\]`).
			ReplaceAllString(line, `$1]`)
	}
	return line
}

// stringer is a value of kind Any.
type stringer struct{ s string }

func (s stringer) String() string { return s.s }

type valuer struct{}

func (valuer) LogValue() slog.Value { return slog.StringValue("resolved") }

// The direct path writes every record slog.JSONHandler would write the
// same, byte for byte, or leaves it to slog; and it takes every kind a
// request line is made of.
func TestJSONHandler_MatchesSlogJSONHandler(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 7, 28, 12, 0, 0, 123456789, time.FixedZone("X", 3600))
	strs := []string{"", "plain", `quo"te`, `back\slash`, "nl\nret\rtab\t", "ctl\x00\x01\x1f\x7f", "<html>&amp;",
		"é 日本 🌵", "bad\xffutf8\xc3", "\u2028\u2029", "\xed\xa0\x80", strings.Repeat("long ", 500)}
	cases := []struct {
		name   string
		attrs  []slog.Attr
		direct bool
	}{
		{"none", nil, true},
		{"numbers", []slog.Attr{slog.Int64("i", -42), slog.Uint64("u", math.MaxUint64), slog.Bool("t", true),
			slog.Bool("f", false), slog.Duration("d", 1500*time.Millisecond), slog.Int("zero", 0)}, true},
		{"floats", []slog.Attr{slog.Float64("a", 0), slog.Float64("b", 1.5), slog.Float64("c", 1e-7),
			slog.Float64("d", 1e21), slog.Float64("e", 123456789.125), slog.Float64("f", -2.5e-9),
			slog.Float64("g", math.SmallestNonzeroFloat64), slog.Float64("h", 0.001), slog.Float64("i", 1e20)}, true},
		{"groups", []slog.Attr{slog.Group("empty"), slog.String("k", "v"),
			slog.Group("g", slog.String("a", "1"), slog.Group("h", slog.Int("b", 2)), slog.Group("none")),
			slog.Group("", slog.String("inline", "x")), slog.Group("", slog.Group("")),
			slog.Group("gg", slog.Group("")), slog.String("", "empty key")}, true},
		{"first inline", []slog.Attr{slog.Group("", slog.String("a", "b")), slog.String("c", "d")}, true},
		{"duplicate keys", []slog.Attr{slog.String("k", "1"), slog.String("k", "2")}, true},
		{"error", []slog.Attr{slog.Any("err", errors.New("boom"))}, false},
		{"time", []slog.Attr{slog.Time("at", at)}, false},
		{"any", []slog.Attr{slog.Any("s", stringer{"x"}), slog.Any("list", []string{"a", "b"})}, false},
		{"valuer", []slog.Attr{slog.Any("v", valuer{})}, false},
		{"nan", []slog.Attr{slog.Float64("nan", math.NaN())}, false},
		{"inf", []slog.Attr{slog.Float64("inf", math.Inf(-1))}, false},
		{"deep any", []slog.Attr{slog.Group("g", slog.Any("x", 1.5+2i))}, false},
	}
	for i, s := range strs {
		cases = append(cases, struct {
			name   string
			attrs  []slog.Attr
			direct bool
		}{fmt.Sprintf("string %d", i), []slog.Attr{slog.String(s, s), slog.Group(s, slog.String("k", s))}, true})
	}
	for _, tc := range cases {
		for _, lvl := range []slog.Level{slog.LevelDebug, slog.LevelInfo, slog.LevelWarn, slog.LevelError, slog.LevelInfo + 2} {
			for _, msg := range []string{"POST /mcp => HTTP 200 (1.2ms)", strs[3] + strs[4] + strs[5] + strs[8] + strs[9]} {
				var want bytes.Buffer
				r := slog.NewRecord(at, lvl, msg, 0)
				r.AddAttrs(tc.attrs...)
				require.NoError(t, slog.NewJSONHandler(&want, nil).Handle(context.Background(), r))

				var got bytes.Buffer
				h := NewJSONHandler(&got, nil)
				done, err := h.writeLine(at, lvl, []byte(msg), tc.attrs)
				require.NoError(t, err)
				require.Equal(t, tc.direct, done, tc.name)
				if !done {
					assert.Zero(t, got.Len(), "%s: a line left to slog must not be written", tc.name)
					continue
				}
				assert.Equal(t, want.String(), got.String(), tc.name)
			}
		}
	}
}

// A handler with a ReplaceAttr or AddSource leaves every line to slog.
func TestJSONHandler_OptionsTurnDirectOff(t *testing.T) {
	t.Parallel()
	for _, opts := range []*slog.HandlerOptions{
		{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr { return a }},
		{AddSource: true},
	} {
		var out bytes.Buffer
		done, err := NewJSONHandler(&out, opts).writeLine(time.Now(), slog.LevelInfo, []byte("m"), nil)
		require.NoError(t, err)
		assert.False(t, done)
		assert.Zero(t, out.Len())
	}
	var out bytes.Buffer
	done, err := NewJSONHandler(&out, nil).writeLine(time.Now(), slog.LevelInfo, []byte("m"), nil)
	require.NoError(t, err)
	assert.True(t, done)
	assert.Contains(t, out.String(), `"msg":"m"}`+"\n")
}

// As a slog.Handler, JSONHandler is slog.JSONHandler: level, attributes,
// groups and all.
func TestJSONHandler_IsSlogJSONHandler(t *testing.T) {
	t.Parallel()
	var got, want bytes.Buffer
	opts := &slog.HandlerOptions{Level: slog.LevelWarn}
	log := func(l *slog.Logger) {
		l.Info("hidden")
		l.Warn("shown", "k", 1)
		l.With("a", "b").WithGroup("g").Error("grouped", "e", errors.New("x"))
	}
	h := NewJSONHandler(&got, opts)
	log(slog.New(h))
	log(slog.New(slog.NewJSONHandler(&want, opts)))
	re := regexp.MustCompile(`"time":"[^"]*"`)
	assert.Equal(t, re.ReplaceAllString(want.String(), "T"), re.ReplaceAllString(got.String(), "T"))
	assert.Equal(t, 2, strings.Count(got.String(), "\n"))
	assert.False(t, h.Enabled(context.Background(), slog.LevelInfo))
	assert.True(t, h.Enabled(context.Background(), slog.LevelWarn))
}

// Lines from many goroutines, through both paths, never interleave.
func TestJSONHandler_ConcurrentLines(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer // not safe for concurrent use: the handler must serialize
	h := NewJSONHandler(&out, nil)
	logger := slog.New(h)
	done := make(chan struct{})
	const n = 200
	for g := 0; g < 4; g++ {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := 0; i < n; i++ {
				if g%2 == 0 {
					_, _ = h.writeLine(time.Now(), slog.LevelInfo, []byte("direct"), []slog.Attr{slog.Int("i", i)})
				} else {
					logger.Info("slog", "i", i)
				}
			}
		}()
	}
	for range 4 {
		<-done
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	require.Len(t, lines, 4*n)
	for _, l := range lines {
		require.Regexp(t, `^\{"time":"[^"]+","level":"INFO","msg":"(direct|slog)","i":\d+\}$`, l)
	}
}
