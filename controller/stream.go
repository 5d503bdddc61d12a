package controller

import (
	"context"
	"log/slog"
	"net/http"
)

// Send writes one chunk to the client and flushes it. It returns the write
// error when the client is gone or the write timed out; once it failed,
// every later call fails too. An empty chunk flushes only.
type Send func(chunk []byte) error

type streamReply struct {
	status int
	header http.Header
	fn     func(ctx context.Context, send Send) error
}

// Stream replies with a status and headers, flushed at once, then calls fn
// on the connection's goroutine to send the body in chunks. ctx is the
// request's context: it ends when the client goes away. The response ends
// when fn returns; an error it returns is logged (the status is already
// sent, so it cannot change). A panic in fn aborts the connection.
func Stream(status int, header http.Header, fn func(ctx context.Context, send Send) error) Reply {
	return &streamReply{status: status, header: header, fn: fn}
}

func (s *streamReply) serve(c *Request) {
	defer c.recoverStream()
	defer c.finish()
	c.writeHead(s.status, s.header)
	if err := c.write(nil); err != nil {
		return
	}
	if err := s.fn(c.Request.Context(), c.write); err != nil && c.Request.Context().Err() == nil {
		c.h.opts.Logger.WarnContext(c.Request.Context(), "controller: stream ended with an error",
			slog.String("path", c.Request.URL.Path), slog.Any("error", err))
	}
}
