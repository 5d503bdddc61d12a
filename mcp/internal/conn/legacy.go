package conn

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/saguaro-go/saguaro/mcp/internal/protocol"
	"github.com/saguaro-go/saguaro/mcp/internal/session"
	"github.com/saguaro-go/saguaro/mcp/internal/wire"
)

// The revisions before 2026-07-28: initialize starts the connection's one
// session, and every other message belongs to it.

var (
	errAlreadyInitialized = wire.NewError(wire.InvalidRequest, "Invalid Request: the session is already initialized")
	errNotInitialized     = wire.NewError(wire.InvalidRequest, "Invalid Request: send initialize first")
	errBatchRev           = wire.NewError(wire.InvalidRequest, "Invalid Request: batches are only allowed in protocol revision 2025-03-26")
	errBatchInit          = wire.NewError(wire.InvalidRequest, "Invalid Request: initialize must not be part of a batch")
)

// legacy serves a request or notification of the session.
func (s *server) legacy(msg *wire.Message) {
	sess := s.session()
	if msg.Method == "initialize" {
		if msg.Kind != wire.KindRequest {
			return
		}
		if sess != nil {
			s.writeError(msg.ID, errAlreadyInitialized)
			return
		}
		s.initialize(msg)
		return
	}
	if sess == nil {
		// Only ping may come before initialize; a notification is
		// dropped.
		if msg.Kind == wire.KindRequest && msg.Method != "ping" {
			s.writeError(msg.ID, errNotInitialized)
			return
		}
		if msg.Kind == wire.KindRequest {
			call := protocol.Call{Method: msg.Method, ID: msg.ID, Params: msg.Params, Tape: msg.Tape, Identity: s.cfg.Identity}
			s.finish(msg.ID, s.eng.Dispatch(s.ctx, &call, nil))
		}
		return
	}
	info, _ := s.eng.Method(msg.Method)
	if msg.Kind == wire.KindNotification && info.Mode == protocol.ModeFast {
		s.call(sess, msg, info.Mode) // at once: never behind a request
		return
	}
	s.calls.Add(1)
	s.spawn(func() {
		defer s.calls.Done()
		s.call(sess, msg, info.Mode)
	})
}

// initialize starts the session. It runs before the next message is
// read, which therefore belongs to the new session.
func (s *server) initialize(msg *wire.Message) {
	call := protocol.Call{Method: msg.Method, ID: msg.ID, Params: msg.Params, Tape: msg.Tape, Identity: s.cfg.Identity}
	reply := s.eng.Dispatch(s.ctx, &call, nil)
	if reply.Err == nil && reply.Effect.Kind == protocol.EffectInitialize {
		s.mu.Lock()
		s.sess = session.New(reply.Effect.Revision, reply.Effect.Client, reply.State, s.cfg.QueueSize)
		s.mu.Unlock()
	}
	s.finish(msg.ID, reply)
}

// call serves one message of the session on the calling goroutine and
// answers it.
func (s *server) call(sess *session.Session, msg *wire.Message, mode protocol.Mode) {
	ctx, cancel, ok := sess.CallContext(s.ctx, msg.ID, s.cfg.RequestTimeout)
	if !ok {
		if msg.Kind == wire.KindRequest {
			s.writeError(msg.ID, protocol.ErrCancelled)
		}
		return
	}
	defer func() {
		cancel()
		sess.Untrack(msg.ID)
	}()
	c := sess.Call(msg, &callOutbound{s: s, sess: sess, id: msg.ID})
	c.Identity = s.cfg.Identity
	reply := sess.Dispatch(ctx, s.eng, &c, mode, nil)
	if msg.Kind == wire.KindRequest {
		s.finish(msg.ID, reply)
	}
}

// batch serves a 2025-03-26 batch: every request answered in one array,
// in order; notifications and responses consumed.
func (s *server) batch(body []byte) {
	sess := s.session()
	if sess == nil || sess.Revision().OrDefault() != protocol.Rev20250326 {
		s.writeError(wire.ID{}, errBatchRev)
		return
	}
	items, derr := s.eng.Decoder().DecodeBatch(body, s.cfg.MaxBatch)
	if derr != nil {
		s.writeError(wire.ID{}, derr)
		return
	}
	s.calls.Add(1)
	s.spawn(func() {
		defer s.calls.Done()
		answers := protocol.NewBatchAnswer(s.cfg.MaxAnswer)
		for i := range items {
			it := &items[i]
			msg := &it.Msg
			switch {
			case it.Err != nil:
				answers.Error(msg.ID, it.Err)
				continue
			case msg.Kind == wire.KindResponse || msg.Kind == wire.KindErrorResponse:
				sess.Deliver(msg)
				continue
			case answers.Over():
				if msg.Kind == wire.KindRequest {
					answers.Refuse(msg.ID)
				}
				continue
			case msg.Method == "initialize":
				if msg.Kind == wire.KindRequest {
					answers.Error(msg.ID, errBatchInit)
				}
				continue
			case msg.Method == "notifications/cancelled":
				s.cancel(msg)
				continue
			}
			info, _ := s.eng.Method(msg.Method)
			ctx, cancel, ok := sess.CallContext(s.ctx, msg.ID, s.cfg.RequestTimeout)
			if !ok {
				if msg.Kind == wire.KindRequest {
					answers.Error(msg.ID, protocol.ErrCancelled)
				}
				continue
			}
			c := sess.Call(msg, &callOutbound{s: s, sess: sess, id: msg.ID})
			c.Identity = s.cfg.Identity
			reply := sess.Dispatch(ctx, s.eng, &c, info.Mode, nil)
			cancel()
			sess.Untrack(msg.ID)
			if msg.Kind == wire.KindRequest {
				answers.Add(msg.ID, s.eng.AppendReply(nil, msg.ID, reply))
			}
		}
		if out := answers.End(); out != nil {
			_ = s.write(out, wire.ID{})
		}
	})
}

// callOutbound is the back channel of a call of the session: everything
// goes on the connection, related to the call.
type callOutbound struct {
	s    *server
	sess *session.Session
	id   wire.ID
}

func (o *callOutbound) Notify(_ context.Context, method string, params json.RawMessage) error {
	return o.s.write(wire.AppendNotification(nil, method, params), o.id)
}

// Request sends a server→client request and waits for its answer, which
// cannot come once the client's input ended: then it fails at once.
func (o *callOutbound) Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	if o.s.input.Err() != nil {
		return nil, errInputEnded
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := context.AfterFunc(o.s.input, func() { cancel(errInputEnded) })
	defer stop()
	res, err := o.sess.Request(ctx, method, params, func(msg []byte) error { return o.s.write(msg, o.id) })
	if err != nil && errors.Is(context.Cause(ctx), errInputEnded) {
		return nil, errInputEnded
	}
	return res, err
}
