package middleware

import (
	"context"
	"io"
	"log/slog"
	"math"
	"strconv"
	"sync"
	"time"
	"unsafe"

	"github.com/saguaro-go/saguaro/internal/jsonstr"
)

// JSONHandler is a [slog.Handler] that writes exactly what
// [slog.JSONHandler] writes, and lets [RequestLogger] write its request
// lines straight into the output, without building a [slog.Record]: the
// same bytes for a fraction of the CPU. Use it as the handler of the
// logger given to RequestLogger (and for the rest of the program's logs,
// which it hands to a slog.JSONHandler).
//
// The direct path is taken when the handler has no ReplaceAttr and no
// AddSource, and the logger was not narrowed with With or WithGroup (those
// return a plain slog handler); otherwise, and for a line holding a value
// the direct path does not write (an error, a time, any other value of
// kind Any, a LogValuer, a non-finite float), the line goes through
// slog.JSONHandler, so the output is the same either way.
type JSONHandler struct {
	slog *slog.JSONHandler // everything but the direct path
	out  *lockedWriter
	// level is the minimum level (opts.Level, Info when nil); direct
	// reports whether the direct path may be taken.
	level  slog.Leveler
	direct bool
	bufs   sync.Pool // of *[]byte
}

// lockedWriter serializes the writes of both paths, so that lines never
// interleave on a writer that is not safe for concurrent use.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// NewJSONHandler returns a JSONHandler writing to w with opts (nil means
// the defaults), as [slog.NewJSONHandler] does.
func NewJSONHandler(w io.Writer, opts *slog.HandlerOptions) *JSONHandler {
	var o slog.HandlerOptions
	if opts != nil {
		o = *opts
	}
	out := &lockedWriter{w: w}
	h := &JSONHandler{
		slog:   slog.NewJSONHandler(out, &o),
		out:    out,
		level:  o.Level,
		direct: o.ReplaceAttr == nil && !o.AddSource,
	}
	if h.level == nil {
		h.level = slog.LevelInfo
	}
	return h
}

// Enabled reports whether a record of level l is written.
func (h *JSONHandler) Enabled(_ context.Context, l slog.Level) bool {
	return l >= h.level.Level()
}

// Handle writes r as slog.JSONHandler does.
func (h *JSONHandler) Handle(ctx context.Context, r slog.Record) error {
	return h.slog.Handle(ctx, r)
}

// WithAttrs returns slog.JSONHandler's WithAttrs: a handler on the same
// writer, which RequestLogger serves through slog.
func (h *JSONHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return h.slog.WithAttrs(attrs)
}

// WithGroup returns slog.JSONHandler's WithGroup: a handler on the same
// writer, which RequestLogger serves through slog.
func (h *JSONHandler) WithGroup(name string) slog.Handler {
	return h.slog.WithGroup(name)
}

// writeLine writes the line slog.JSONHandler would write for a record of
// t, lvl, msg and attrs, and reports whether it did: false (nothing
// written) when the handler or a value needs slog.
func (h *JSONHandler) writeLine(t time.Time, lvl slog.Level, msg []byte, attrs []slog.Attr) (bool, error) {
	if !h.direct {
		return false, nil
	}
	bp, _ := h.bufs.Get().(*[]byte)
	if bp == nil {
		bp = new([]byte)
	}
	b := append((*bp)[:0], `{"time":"`...)
	b = t.Round(0).AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","level":`...)
	b = jsonstr.AppendString(b, lvl.String())
	b = append(b, `,"msg":`...)
	// The message is read, not kept: no string copy of it is needed.
	b = jsonstr.AppendString(b, unsafe.String(unsafe.SliceData(msg), len(msg)))
	b, ok := appendJSONAttrs(b, ",", attrs)
	var err error
	if ok {
		b = append(b, "}\n"...)
		_, err = h.out.Write(b)
	}
	if cap(b) <= 16<<10 { // keep the pool's buffers small
		*bp = b
		h.bufs.Put(bp)
	}
	return ok, err
}

// appendJSONAttrs appends attrs as slog.JSONHandler does, the first
// preceded by sep, and reports whether every value was one it writes
// itself; b is then unusable when not.
func appendJSONAttrs(b []byte, sep string, attrs []slog.Attr) ([]byte, bool) {
	for _, a := range attrs {
		v := a.Value
		if v.Kind() == slog.KindGroup {
			g := v.Group()
			if len(g) == 0 {
				continue // slog writes no empty group
			}
			if a.Key == "" { // inlined
				n := len(b)
				var ok bool
				if b, ok = appendJSONAttrs(b, sep, g); !ok {
					return b, false
				}
				if len(b) > n {
					sep = ","
				}
				continue
			}
			b = append(b, sep...)
			b = jsonstr.AppendString(b, a.Key)
			b = append(b, ":{"...)
			var ok bool
			if b, ok = appendJSONAttrs(b, "", g); !ok {
				return b, false
			}
			b = append(b, '}')
			sep = ","
			continue
		}
		b = append(b, sep...)
		b = jsonstr.AppendString(b, a.Key)
		b = append(b, ':')
		switch v.Kind() {
		case slog.KindString:
			b = jsonstr.AppendString(b, v.String())
		case slog.KindInt64:
			b = strconv.AppendInt(b, v.Int64(), 10)
		case slog.KindUint64:
			b = strconv.AppendUint(b, v.Uint64(), 10)
		case slog.KindBool:
			b = strconv.AppendBool(b, v.Bool())
		case slog.KindDuration:
			b = strconv.AppendInt(b, int64(v.Duration()), 10)
		case slog.KindFloat64:
			f := v.Float64()
			if math.IsInf(f, 0) || math.IsNaN(f) {
				return b, false
			}
			b = appendJSONFloat(b, f)
		default: // Any, Time, LogValuer: slog's business
			return b, false
		}
		sep = ","
	}
	return b, true
}

// appendJSONFloat appends f as encoding/json writes a float64, which is
// what slog.JSONHandler writes.
func appendJSONFloat(b []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}
