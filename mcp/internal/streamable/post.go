package streamable

import (
	"context"
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
//
// A body bigger than one chunk (chunkBytes) is read into pooled chunks
// and copied once into a buffer of its exact size: memory follows what
// actually arrives (a client may declare the limit and send nothing), and
// a big body costs one allocation of its size rather than a buffer
// doubled past it.
func (t *Transport) readBody(r *controller.Request) (*[]byte, controller.Reply) {
	if r.ContentLength > t.cfg.MaxBodyBytes {
		return nil, errorReply(http.StatusRequestEntityTooLarge, errBodyTooLarge)
	}
	buf := wire.GetBuffer()
	body := http.MaxBytesReader(nil, r.Body, t.cfg.MaxBodyBytes)
	b := (*buf)[:0]
	if n := int(min(r.ContentLength, chunkBytes)); n > 0 && cap(b) < n {
		b = make([]byte, 0, n)
	}
	var chunks []*[]byte // the full chunks before b, when there are several
	putChunks := func() {
		for _, c := range chunks {
			wire.PutBuffer(c)
		}
	}
	for {
		if len(b) == cap(b) {
			if cap(b) < chunkBytes {
				b = append(b, 0)[:len(b)]
			} else {
				if chunks == nil {
					chunks = append(chunks, buf)
				}
				*chunks[len(chunks)-1] = b
				c := wire.GetBuffer()
				if cap(*c) < chunkBytes {
					*c = make([]byte, 0, chunkBytes)
				}
				chunks = append(chunks, c)
				b = (*c)[:0]
			}
		}
		n, err := body.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			if chunks != nil {
				*chunks[len(chunks)-1] = b
				putChunks()
			} else {
				*buf = b
				wire.PutBuffer(buf)
			}
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
	if chunks == nil {
		*buf = b
		return buf, nil
	}
	*chunks[len(chunks)-1] = b
	total := 0
	for _, c := range chunks {
		total += len(*c)
	}
	whole := make([]byte, 0, total)
	for _, c := range chunks {
		whole = append(whole, *c...)
	}
	putChunks()
	// Too big for the pool: PutBuffer will let it go.
	return &whole, nil
}

// chunkBytes is the size of the chunks a big body is read in, and so
// what a declared Content-Length reserves before the body arrives.
const chunkBytes = 64 << 10

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
	// The body goes back to the pool when the request is answered,
	// unless a call that outlives the answer took it (bodyRef).
	kept := false
	defer func() {
		if !kept {
			wire.PutBuffer(buf)
		}
	}()
	body := *buf

	if wire.IsBatch(body) {
		return t.batch(r, sess, rev, body, bodyRef{buf: buf, kept: &kept})
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
		return sess.post(r, rev, &msg, bodyRef{buf: buf, kept: &kept})
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
	call := t.callOf(r.Request, msg, rev)
	if refused := t.stepUp(r.Request, &call); refused != nil {
		return refused
	}
	if t.statelessStreaming(msg) {
		return t.statelessCall(r, rev, msg)
	}
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
	return jsonAnswer(http.StatusOK, t.engine.AppendReply(nil, msg.ID, *reply), reply.Buffer)
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
// answer. The requests run one after another, and each answer is sent as
// soon as it is ready, so that a batch holds one answer in memory at a
// time; Limits.MaxBatch bounds its messages and Limits.MaxAnswer the
// array's bytes (protocol.BatchAnswer).
func (t *Transport) batch(r *controller.Request, sess *session, rev protocol.Revision, body []byte, ref bodyRef) controller.Reply {
	if sess != nil {
		rev = sess.Revision()
	} else if t.sessions != nil {
		return errorReply(http.StatusBadRequest, errSessionRequired)
	}
	if rev.OrDefault() != protocol.Rev20250326 {
		return errorReply(http.StatusBadRequest, errBatchRev)
	}
	items, derr := t.engine.Decoder().DecodeBatch(body, t.cfg.Limits.MaxBatch)
	if derr != nil {
		return errorReply(http.StatusBadRequest, derr)
	}
	if sess != nil && t.closing() {
		for i := range items {
			if items[i].Err == nil && items[i].Msg.Kind == wire.KindRequest {
				return shuttingDown(wire.ID{})
			}
		}
	}
	answered := false
	for i := range items {
		// One refused request refuses the batch: a batch has one HTTP
		// answer, and a partial one would hide the refusal.
		if refused := t.authorize(r.Request, &items[i].Msg); items[i].Err == nil && refused != nil {
			return refused
		}
		answered = answered || items[i].Err != nil || items[i].Msg.Kind == wire.KindRequest
	}
	answers := protocol.NewBatchAnswer(t.cfg.Limits.MaxAnswer)
	if !answered {
		t.runBatch(r, sess, rev, items, answers, nil)
		return controller.Status(http.StatusAccepted)
	}
	// The items' params point into the body: it stays out of the pool
	// until the last of them ran.
	buf := ref.take()
	return controller.Stream(http.StatusOK, jsonHeader(), func(_ context.Context, send controller.Send) error {
		defer wire.PutBuffer(buf)
		if err := t.runBatch(r, sess, rev, items, answers, send); err != nil {
			return err
		}
		return send(answers.End())
	})
}

// runBatch runs a batch's items in order into answers, sending each part
// with send (nil: keep it). It stops at the first failed send: the
// client is gone.
func (t *Transport) runBatch(r *controller.Request, sess *session, rev protocol.Revision, items []wire.BatchItem,
	answers *protocol.BatchAnswer, send controller.Send) error {
	for i := range items {
		it := &items[i]
		msg := &it.Msg
		switch {
		case it.Err != nil:
			answers.Error(msg.ID, it.Err)
		case answers.Over():
			if msg.Kind == wire.KindRequest {
				answers.Refuse(msg.ID)
			}
		case msg.Method == "initialize":
			if msg.Kind == wire.KindRequest {
				answers.Error(msg.ID, errBatchInit)
			}
		default:
			var reply *protocol.Reply
			if sess != nil {
				reply = sess.dispatchSync(r.Request, msg)
			} else if msg.Kind != wire.KindResponse && msg.Kind != wire.KindErrorResponse {
				call := t.callOf(r.Request, msg, rev)
				rp := t.dispatchAlone(r.Context(), &call)
				reply = &rp
			}
			if msg.Kind == wire.KindRequest && reply != nil {
				answers.Add(msg.ID, t.engine.AppendReply(nil, msg.ID, *reply))
			}
		}
		if send != nil {
			if p := answers.Take(); len(p) > 0 {
				if err := send(p); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// bodyRef is a request's pooled body, which a call that runs on after its
// request is answered takes (setting kept) and puts back when it ends, so
// that its params need no copy and keep their tape.
type bodyRef struct {
	buf  *[]byte
	kept *bool
}

// take hands the body to a call: the caller puts it back.
func (b bodyRef) take() *[]byte {
	if b.kept == nil {
		return nil
	}
	*b.kept = true
	return b.buf
}

// callOf is the engine's Call of a decoded message of a request without
// a session.
func (t *Transport) callOf(r *http.Request, m *wire.Message, rev protocol.Revision) protocol.Call {
	c := protocol.Call{Method: m.Method, ID: m.ID, Params: m.Params, Revision: rev, Tape: m.Tape}
	if t.cfg.Identity != nil {
		c.Identity = t.cfg.Identity(r)
	}
	return c
}
