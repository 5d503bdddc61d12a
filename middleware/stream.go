package middleware

import (
	"log/slog"
	"net/http"
	"strconv"
	"time"
)

// streamStarted is called by the stream writer when an event stream is
// accepted.
func (st *reqState) streamStarted(status int) {
	st.stream.Store(true)
	st.l.streamStart(st, st.sw.Header(), status)
}

// streamStart writes the line that says an event stream was accepted.
func (l *reqLogger) streamStart(st *reqState, respHeader http.Header, status int) {
	if l.opts.NoStreamStart || slog.LevelInfo < l.opts.Level {
		return
	}
	ctx := st.hr.Context()
	if !l.logger.Enabled(ctx, slog.LevelInfo) {
		return
	}
	if l.opts.Skip != nil && l.opts.Skip(st.logged, status) {
		return
	}
	r := st.orig
	s := l.opts.Schema
	u := urlString(st.url)
	attrs := []slog.Attr{
		slog.String(s.RequestURL, scheme(r)+"://"+r.Host+u),
		slog.String(s.RequestMethod, r.Method),
		slog.String(s.RequestPath, r.URL.Path),
		slog.String(s.RequestRemoteIP, r.RemoteAddr),
		slog.Int(s.ResponseStatus, status),
	}
	k := len(attrs)
	attrs = st.appendRequestAttrs(attrs)
	_, fromReq := findAttr(attrs[k:], MCPSessionKey)
	attrs = appendResponseAttrs(attrs, respHeader, fromReq)
	attrs = append(attrs, slog.String(StreamLogKey, "start"))
	attrs = merge(attrs, st.bag.snapshot())
	attrs = dropEmptyKeys(attrs)
	if s.GroupDelimiter != "" {
		attrs = groupByDelimiter(attrs, s.GroupDelimiter)
	}
	msg := r.Method + " " + u + " => HTTP " + strconv.Itoa(status) + " stream start"
	if jh, ok := l.logger.Handler().(*JSONHandler); ok {
		if done, _ := jh.writeLine(time.Now(), slog.LevelInfo, []byte(msg), attrs); done {
			return
		}
	}
	l.logger.LogAttrs(ctx, slog.LevelInfo, msg, attrs...)
}
