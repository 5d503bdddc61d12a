package conn

import (
	"context"
	"encoding/json"

	"github.com/saguaro-go/saguaro/mcp/internal/protocol"
	"github.com/saguaro-go/saguaro/mcp/internal/wire"
)

// The 2026-07-28 revision on a connection: every request carries its
// _meta and is served on its own, with a state of its own; there is no
// initialize and no session. What a call sends goes on the connection,
// related to it; a handler's server→client requests become an
// input_required result. notifications/cancelled cancels a request, and
// ends a subscriptions/listen.

// modernMessage checks and serves one 2026-07-28 message.
func (s *server) modernMessage(msg *wire.Message) {
	m, perr := protocol.ReadModern(msg.Tape, msg.Method, msg.Params)
	if perr == nil {
		perr = m.MissingMeta()
	}
	if perr == nil {
		if rev, ok := protocol.ParseRevision(m.Version); !ok || rev != protocol.Rev20260728 {
			perr = protocol.UnsupportedVersion(m.Version)
		}
	}
	if msg.Kind == wire.KindNotification {
		return // the only client notification, cancellation, is served before
	}
	if perr != nil {
		s.writeError(msg.ID, perr)
		return
	}
	info, known := s.eng.Method(msg.Method)
	if !known || info.Notification || !info.In(protocol.Rev20260728) || !info.Offered {
		s.writeError(msg.ID, wire.NewError(wire.MethodNotFound, "Method not found: "+msg.Method))
		return
	}
	client, level, jerr := m.Context(s.eng)
	if jerr != nil {
		s.writeError(msg.ID, jerr)
		return
	}
	call := &protocol.Call{Method: msg.Method, ID: msg.ID, Params: msg.Params, Revision: protocol.Rev20260728, Tape: msg.Tape,
		Client: client, LogLevel: level, Identity: s.cfg.Identity}
	if info.Mode == protocol.ModeListen {
		s.listen(call)
		return
	}
	call.Outbound = &modernOutbound{s: s, id: msg.ID}
	s.calls.Add(1)
	s.spawn(func() {
		defer s.calls.Done()
		ctx, cancel, ok := s.modern.CallContext(s.ctx, msg.ID, s.cfg.RequestTimeout)
		if !ok {
			s.writeError(msg.ID, protocol.ErrCancelled)
			return
		}
		defer func() {
			cancel()
			s.modern.Untrack(msg.ID)
		}()
		reply := protocol.Reply{Err: protocol.ErrInternal}
		if state, err := s.eng.NewState(ctx, protocol.Rev20260728); err == nil {
			reply = s.eng.Dispatch(ctx, call, state)
		} else {
			s.log.ErrorContext(ctx, "mcp: handler could not make a state", "err", err)
		}
		s.finish(msg.ID, reply)
	})
}

// modernOutbound is the back channel of a 2026-07-28 call: notifications
// go on the connection, related to the call; there are no server→client
// requests (the engine answers input_required instead).
type modernOutbound struct {
	s  *server
	id wire.ID
}

func (o *modernOutbound) Notify(_ context.Context, method string, params json.RawMessage) error {
	return o.s.write(wire.AppendNotification(nil, method, params), o.id)
}

func (o *modernOutbound) Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	return protocol.Discard{}.Request(ctx, method, params)
}

// listening is an open subscriptions/listen of the connection.
type listening struct {
	l      protocol.Listener
	wake   chan struct{}
	cancel context.CancelFunc // ends it without a word: the client's input ended
}

// listen opens a subscription: its notifications go on the connection,
// related to the listen request, until the client cancels it or the
// connection ends.
func (s *server) listen(call *protocol.Call) {
	ls := &listening{wake: make(chan struct{}, 1)}
	l, perr := s.eng.Listen(s.ctx, call, func() {
		select {
		case ls.wake <- struct{}{}:
		default:
		}
	})
	if perr != nil {
		s.writeError(call.ID, perr)
		return
	}
	ls.l = l
	ctx, cancel, ok := s.modern.CallContext(s.ctx, call.ID, 0)
	if !ok {
		l.Close()
		return
	}
	ls.cancel = cancel
	s.mu.Lock()
	s.listeners[ls] = true
	s.mu.Unlock()
	ls.wake <- struct{}{} // the acknowledgement
	s.calls.Add(1)
	go func() {
		defer func() {
			s.mu.Lock()
			delete(s.listeners, ls)
			delete(s.cancelled, call.ID)
			s.mu.Unlock()
			l.Close()
			cancel()
			s.modern.Untrack(call.ID)
			s.calls.Done()
		}()
		for {
			select {
			case <-ls.wake:
				for _, m := range l.Take(nil) {
					if s.write(m, call.ID) != nil {
						return
					}
				}
			case <-ctx.Done():
				if s.ctx.Err() != nil {
					// The server shuts down while the client listens:
					// it is told the subscription ended.
					p := call.ID.AppendJSON([]byte(`{"requestId":`))
					_ = s.write(wire.AppendNotification(nil, "notifications/cancelled",
						append(p, `,"reason":"the server is shutting down"}`...)), call.ID)
				}
				return
			}
		}
	}()
}
