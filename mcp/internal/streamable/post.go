package streamable

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/saguaro-go/saguaro/controller"
	"github.com/saguaro-go/saguaro/mcp/internal/protocol"
	"github.com/saguaro-go/saguaro/mcp/internal/wire"
)

var (
	errBodyTooLarge = wire.NewError(wire.InvalidRequest, "Request body too large")
	errBodyRead     = wire.NewError(wire.InvalidRequest, "Request body could not be read")
	errBatchRev     = wire.NewError(wire.InvalidRequest, "Invalid Request: batches are only allowed in protocol revision 2025-03-26")
	errBatchInit    = wire.NewError(wire.InvalidRequest, "Invalid Request: initialize must not be part of a batch")
	errStrayResp    = wire.NewError(wire.InvalidRequest, "Invalid Request: no request of this server is waiting for a response")
)

// readBody reads the POST body within the size limit into a pooled
// buffer; the caller returns it with wire.PutBuffer. A body that is not
// sent within Limits.BodyTimeout is answered 408 and its connection
// closed.
func (t *Transport) readBody(r *controller.Request) (*[]byte, controller.Reply) {
	if r.ContentLength > t.cfg.MaxBodyBytes {
		return nil, errorReply(http.StatusRequestEntityTooLarge, errBodyTooLarge)
	}
	buf := wire.GetBuffer()
	body := http.MaxBytesReader(nil, r.Body, t.cfg.MaxBodyBytes)
	b := (*buf)[:0]
	// The declared length is a hint, not a promise: a client may declare
	// the limit and send nothing. Beyond preallocBytes the buffer grows
	// with what actually arrives.
	if n := int(min(r.ContentLength, preallocBytes)); n > 0 && cap(b) < n {
		b = make([]byte, 0, n)
	}
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := body.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			*buf = b
			wire.PutBuffer(buf)
			var tooLarge *http.MaxBytesError
			switch {
			case errors.As(err, &tooLarge):
				return nil, errorReply(http.StatusRequestEntityTooLarge, errBodyTooLarge)
			case timedOut(err):
				t.slowBody(r.Request, len(b))
				h := jsonHeader()
				h.Set("Connection", "close")
				return nil, controller.Buffered(http.StatusRequestTimeout, h, wire.AppendErrorResponse(nil, wire.ID{}, errBodyTimeout))
			}
			return nil, errorReply(http.StatusBadRequest, errBodyRead)
		}
	}
	if t.cfg.Limits.BodyTimeout > 0 {
		_ = r.SetReadDeadline(time.Time{})
	}
	*buf = b
	return buf, nil
}

// preallocBytes bounds what a declared Content-Length reserves before
// the body arrives.
const preallocBytes = 64 << 10

// post serves a POST: one message, or (2025-03-26) a batch.
func (t *Transport) post(r *controller.Request) controller.Reply {
	if modernHeader(r.Request) {
		return t.modernPost(r) // 2026-07-28
	}
	var sess *session
	if t.sessions != nil {
		var reply controller.Reply
		if sess, reply = t.sessions.lookup(r.Request); reply != nil {
			return reply
		}
	}
	rev, bad := checkHeaders(r.Request)
	if bad != nil {
		return bad
	}
	buf, bad := t.readBody(r)
	if bad != nil {
		return bad
	}
	defer wire.PutBuffer(buf)
	body := *buf

	if wire.IsBatch(body) {
		return t.batch(r, sess, rev, body)
	}
	msg, derr := t.engine.Decoder().Decode(body)
	if derr != nil {
		t.attrs(r.Context(), slog.Int(protocol.AttrErrorCode, derr.Code))
		return controller.Buffered(http.StatusBadRequest, jsonHeader(),
			wire.AppendErrorResponse(nil, msg.ID, derr))
	}
	if rev == 0 && msg.IsCall() && protocol.HasModernMeta(msg.Params) {
		return t.modernMessage(r, &msg) // 2026-07-28 _meta without its header
	}
	switch {
	case sess != nil:
		return sess.post(r, rev, &msg)
	case t.sessions == nil:
		return t.stateless(r, rev, &msg)
	case msg.Method == "initialize" && msg.Kind == wire.KindRequest:
		return t.sessions.initialize(r, &msg)
	}
	return errorReply(http.StatusBadRequest, errSessionRequired)
}

// stateless serves one message with no session: the request's own state,
// no back channel, always a JSON answer.
func (t *Transport) stateless(r *controller.Request, rev protocol.Revision, msg *wire.Message) controller.Reply {
	ctx := r.Context()
	switch msg.Kind {
	case wire.KindResponse, wire.KindErrorResponse:
		return errorReply(http.StatusBadRequest, errStrayResp)
	}
	t.callAttrs(r.Request, msg, rev)
	if refused := t.authorize(r.Request, msg); refused != nil {
		return refused
	}
	if t.statelessStreaming(msg) {
		return t.statelessCall(r, rev, msg)
	}
	call := callOf(msg, rev)
	reply := t.dispatchAlone(ctx, &call)
	return t.answer(r.Request, msg, &reply)
}

// answer turns a dispatched reply into the HTTP reply: 202 for a
// notification, the JSON-RPC response otherwise.
func (t *Transport) answer(r *http.Request, msg *wire.Message, reply *protocol.Reply) controller.Reply {
	if msg.Kind == wire.KindNotification {
		return controller.Status(http.StatusAccepted)
	}
	if reply.Err != nil {
		t.attrs(r.Context(), slog.Int(protocol.AttrErrorCode, reply.Err.Code))
	}
	return controller.BufferedType(http.StatusOK, contentJSON, t.engine.AppendReply(nil, msg.ID, *reply))
}

// callAttrs reports what is being called to the log hook.
func (t *Transport) callAttrs(r *http.Request, msg *wire.Message, rev protocol.Revision) {
	t.callAttrsIn(r, msg, rev, "")
}

// callAttrsIn is callAttrs for a message of session sessionID ("" for
// none), whose id comes first, as when it was set on its own before.
func (t *Transport) callAttrsIn(r *http.Request, msg *wire.Message, rev protocol.Revision, sessionID string) {
	if t.cfg.Attrs == nil {
		return
	}
	attrs := make([]slog.Attr, 0, 5)
	if sessionID != "" {
		attrs = append(attrs, slog.String(protocol.AttrSession, sessionID))
	}
	attrs = append(attrs, slog.String(protocol.AttrMethod, msg.Method))
	if !msg.ID.IsZero() {
		attrs = append(attrs, slog.String(protocol.AttrID, msg.ID.String()))
	}
	if rev != 0 {
		attrs = append(attrs, slog.String(protocol.AttrRevision, rev.String()))
	}
	key, member := "", ""
	switch msg.Method {
	case "tools/call":
		key, member = protocol.AttrTool, "name"
	case "prompts/get":
		key, member = protocol.AttrPrompt, "name"
	case "resources/read", "resources/subscribe", "resources/unsubscribe":
		key, member = protocol.AttrResource, "uri"
	}
	if key != "" && len(msg.Params) > 0 {
		_ = wire.EachMember(msg.Params, func(k, v []byte) error {
			if wire.KeyIs(k, member) {
				if s, ok := wire.Unquote(v); ok {
					attrs = append(attrs, slog.String(key, s))
				}
			}
			return nil
		})
	}
	t.cfg.Attrs(r.Context(), attrs...)
}

// batch serves a 2025-03-26 batch: each request answered in one JSON
// array, notifications and responses consumed; 202 when nothing needs an
// answer.
func (t *Transport) batch(r *controller.Request, sess *session, rev protocol.Revision, body []byte) controller.Reply {
	if sess != nil {
		rev = sess.Revision()
	} else if t.sessions != nil {
		return errorReply(http.StatusBadRequest, errSessionRequired)
	}
	if rev.OrDefault() != protocol.Rev20250326 {
		return errorReply(http.StatusBadRequest, errBatchRev)
	}
	items, derr := t.engine.Decoder().DecodeBatch(body)
	if derr != nil {
		return errorReply(http.StatusBadRequest, derr)
	}
	for i := range items {
		// One refused request refuses the batch: a batch has one HTTP
		// answer, and a partial one would hide the refusal.
		if refused := t.authorize(r.Request, &items[i].Msg); items[i].Err == nil && refused != nil {
			return refused
		}
	}
	out := []byte{'['}
	answered := 0
	appendOne := func(b []byte) {
		if answered > 0 {
			out = append(out, ',')
		}
		out = append(out, b...)
		answered++
	}
	for i := range items {
		it := &items[i]
		if it.Err != nil {
			appendOne(wire.AppendErrorResponse(nil, it.Msg.ID, it.Err))
			continue
		}
		msg := &it.Msg
		if msg.Method == "initialize" {
			if msg.Kind == wire.KindRequest {
				appendOne(wire.AppendErrorResponse(nil, msg.ID, errBatchInit))
			}
			continue
		}
		var reply *protocol.Reply
		if sess != nil {
			reply = sess.dispatchSync(r.Request, msg)
		} else {
			switch msg.Kind {
			case wire.KindResponse, wire.KindErrorResponse:
				continue
			}
			call := callOf(msg, rev)
			rp := t.dispatchAlone(r.Context(), &call)
			reply = &rp
		}
		if msg.Kind == wire.KindRequest && reply != nil {
			appendOne(t.engine.AppendReply(nil, msg.ID, *reply))
		}
	}
	if answered == 0 {
		return controller.Status(http.StatusAccepted)
	}
	out = append(out, ']')
	return controller.BufferedType(http.StatusOK, contentJSON, out)
}

// callOf is the engine's Call of a decoded message.
func callOf(m *wire.Message, rev protocol.Revision) protocol.Call {
	return protocol.Call{Method: m.Method, ID: m.ID, Params: m.Params, Revision: rev, Tape: m.Tape}
}
