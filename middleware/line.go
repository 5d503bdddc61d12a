package middleware

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/httplog/v3"
)

// The request line: httplog's fields, in httplog's order, named by the
// schema. httplog v3 builds this line only inside its middleware, which
// has no hook for what the preset changes (redaction, levels, streams, its
// own attributes) and allocates several times more, so the preset builds
// it here. TestRequestLogger_LineMatchesHTTPLog compares the result with
// httplog's own line on every schema: after an upgrade of httplog it shows
// what changed.

// appendPanic appends the fields of a panic with value rec: its message
// and the file:line of the frames in stack, the first being the one that
// panicked. Like httplog it leaves out the last frame and those of the
// runtime's panic machinery.
func appendPanic(line []slog.Attr, s *httplog.Schema, rec any, stack []uintptr) []slog.Attr {
	line = appendAttrs(line, slog.String(s.ErrorMessage, fmt.Sprintf("panic: %v", rec)))
	if len(stack) == 0 {
		return line
	}
	frames := runtime.CallersFrames(stack)
	var files []string
	for frame, more := frames.Next(); more; frame, more = frames.Next() {
		if !strings.Contains(frame.File, "runtime/panic.go") {
			files = append(files, fmt.Sprintf("%s:%d", frame.File, frame.Line))
		}
	}
	return appendAttrs(line, slog.Any(s.ErrorStackTrace, files))
}

// appendFields appends httplog's fields after a panic's: the request, the
// response, the client's abort and the bodies. u is the URL as logged.
func (l *reqLogger) appendFields(line []slog.Attr, st *reqState, u string, status int, d time.Duration, aborted, logReqBody, logRespBody bool) []slog.Attr {
	o := &l.opts
	s := o.Schema
	r, ww := st.orig, &st.sw
	ref := headerValue(r.Header, "Referer")
	if strings.ContainsAny(ref, "?#@") {
		ref = redactReferer(ref, l.keep)
	}
	line = appendAttrs(line,
		slog.String(s.RequestURL, scheme(r)+"://"+r.Host+u),
		slog.String(s.RequestMethod, r.Method),
		slog.String(s.RequestPath, r.URL.Path),
		slog.String(s.RequestRemoteIP, r.RemoteAddr),
		slog.String(s.RequestHost, r.Host),
		slog.String(s.RequestScheme, scheme(r)),
		slog.String(s.RequestProto, r.Proto),
		slog.Attr{Key: s.RequestHeaders, Value: slog.GroupValue(l.requestHeaderAttrs(r.Header, st.hdrBuf[:0])...)},
		slog.Int64(s.RequestBytes, r.ContentLength),
		slog.String(s.RequestUserAgent, headerValue(r.Header, "User-Agent")),
		slog.String(s.RequestReferer, ref),
		slog.Attr{Key: s.ResponseHeaders, Value: slog.GroupValue(headerAttrs(ww.Header(), o.LogResponseHeaders)...)},
		slog.Int(s.ResponseStatus, status),
		responseDuration(s.ResponseDuration, d),
		slog.Int(s.ResponseBytes, ww.bytes),
	)
	if aborted {
		line = appendAttrs(line, slog.Any(httplog.ErrorKey, httplog.ErrClientAborted), slog.String(s.ErrorType, "ClientAborted"))
	}
	if logReqBody {
		line = appendAttrs(line, slog.String(s.RequestBody, logBody(st.reqBody, r.Header, o)))
	}
	if logRespBody {
		line = appendAttrs(line, slog.String(s.ResponseBody, logBody(st.respBody, ww.Header(), o)))
	}
	return line
}

// appendMessage appends httplog's message: "POST /mcp => HTTP 200 (1.2ms)",
// u being the URL as logged.
func appendMessage(buf []byte, method, u string, status int, d time.Duration) []byte {
	buf = append(buf, method...)
	buf = append(buf, ' ')
	buf = append(buf, u...)
	buf = append(buf, " => HTTP "...)
	buf = strconv.AppendInt(buf, int64(status), 10)
	buf = append(buf, " ("...)
	buf = append(buf, d.String()...)
	return append(buf, ')')
}

// appendAttrs appends the attributes that have a key (a schema leaves out
// a field by naming it "").
func appendAttrs(attrs []slog.Attr, more ...slog.Attr) []slog.Attr {
	for _, a := range more {
		if a.Key != "" {
			attrs = append(attrs, a)
		}
	}
	return attrs
}

// requestHeaderAttrs returns the logged request headers, credentials and
// the Referer's secrets redacted as redactHeader does.
func (l *reqLogger) requestHeaderAttrs(h http.Header, buf []slog.Attr) []slog.Attr {
	for i, name := range l.opts.LogRequestHeaders {
		canon := l.reqHeaders[i]
		vals := h[canon]
		if len(vals) == 0 {
			continue
		}
		switch canon {
		case "Authorization", "Proxy-Authorization":
			red := make([]string, len(vals))
			for i, v := range vals {
				red[i] = redactCredential(v)
			}
			vals = red
		case "Cookie":
			red := make([]string, len(vals))
			for i := range red {
				red[i] = Redacted
			}
			vals = red
		case "Referer":
			if ref := vals[0]; strings.ContainsAny(ref, "?#@") {
				vals = []string{redactReferer(ref, l.keep)}
			}
		}
		buf = appendHeaderAttr(buf, name, vals)
	}
	return buf
}

// headerAttrs returns the listed headers of h as attributes.
func headerAttrs(h http.Header, names []string) []slog.Attr {
	if len(names) == 0 {
		return nil
	}
	attrs := make([]slog.Attr, 0, len(names))
	for _, name := range names {
		attrs = appendHeaderAttr(attrs, name, h.Values(name))
	}
	return attrs
}

func appendHeaderAttr(attrs []slog.Attr, name string, vals []string) []slog.Attr {
	switch {
	case len(vals) == 1:
		return append(attrs, slog.String(name, vals[0]))
	case len(vals) > 1:
		return append(attrs, slog.Any(name, vals))
	}
	return attrs
}

// responseDuration is the duration field in the schema's unit.
func responseDuration(key string, d time.Duration) slog.Attr {
	switch key {
	case httplog.ECSResponseDuration:
		return slog.Int64(key, d.Nanoseconds())
	case httplog.OTELResponseDuration:
		return slog.Float64(key, d.Seconds())
	case httplog.GCPResponseDuration:
		return slog.String(key, strconv.FormatFloat(d.Seconds(), 'f', -1, 64)+"s")
	default:
		return slog.Float64(key, float64(d.Milliseconds()))
	}
}

// logBody is a logged body: trimmed to LogBodyMaxLen, or a note when its
// Content-Type is not one of LogBodyContentTypes.
func logBody(body *bytes.Buffer, header http.Header, o *LogOptions) string {
	if body == nil || body.Len() == 0 {
		return ""
	}
	contentType := header.Get("Content-Type")
	for _, allowed := range o.LogBodyContentTypes {
		if strings.HasPrefix(contentType, allowed) {
			if o.LogBodyMaxLen <= 0 || o.LogBodyMaxLen >= body.Len() {
				return body.String()
			}
			return body.String()[:o.LogBodyMaxLen] + "... [trimmed]"
		}
	}
	return fmt.Sprintf("[body redacted for Content-Type: %s]", contentType)
}

func dropEmptyKeys(attrs []slog.Attr) []slog.Attr {
	out := attrs[:0]
	for _, a := range attrs {
		if a.Key != "" {
			out = append(out, a)
		}
	}
	return out
}

// groupByDelimiter nests "group<d>key" attributes the way httplog does for
// schemas with a GroupDelimiter (GCP), so start and end lines match.
func groupByDelimiter(attrs []slog.Attr, d string) []slog.Attr {
	var out []slog.Attr
	var groups []string
	members := map[string][]slog.Attr{}
	for _, a := range attrs {
		g, k, ok := strings.Cut(a.Key, d)
		if !ok {
			out = append(out, a)
			continue
		}
		if _, seen := members[g]; !seen {
			groups = append(groups, g)
		}
		members[g] = append(members[g], slog.Attr{Key: k, Value: a.Value})
	}
	for _, g := range groups {
		out = append(out, slog.Attr{Key: g, Value: slog.GroupValue(members[g]...)})
	}
	return out
}

// urlString is u.String() without building a new string for the common
// server request: an absolute path and nothing else (then String is
// EscapedPath, which returns the path itself when nothing needs escaping).
func urlString(u *url.URL) string {
	if u.Scheme == "" && u.Opaque == "" && u.Host == "" && u.User == nil && !u.ForceQuery &&
		u.RawQuery == "" && u.Fragment == "" && strings.HasPrefix(u.Path, "/") {
		return u.EscapedPath()
	}
	return u.String()
}

func scheme(r *http.Request) string {
	if r.TLS != nil {
		return "https"
	}
	return "http"
}

// levelForStatus maps a status to a level: 5xx Error, 4xx Warn, else Info.
// Status 0 means the handler wrote nothing, which net/http sends as 200.
func levelForStatus(status int) slog.Level {
	switch {
	case status >= 500:
		return slog.LevelError
	case status >= 400:
		return slog.LevelWarn
	default:
		return slog.LevelInfo
	}
}
