package streamable

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/saguaro-go/saguaro/controller"
	"github.com/saguaro-go/saguaro/mcp/internal/protocol"
	"github.com/saguaro-go/saguaro/mcp/internal/wire"
)

// The back channels of calls: how a handler's notifications and
// server→client requests reach the client that made the call, and the
// client's answers reach the handler.

// request sends a server→client request on st and waits for the answer.
func (s *session) request(ctx context.Context, st *stream, method string, params json.RawMessage) (json.RawMessage, error) {
	return s.Request(ctx, method, params, func(msg []byte) error {
		if !st.emit(msg) {
			return protocol.ErrSessionEnded
		}
		return nil
	})
}

// streamOutbound is the back channel of a streaming call: everything goes
// on the call's own stream.
type streamOutbound struct{ st *stream }

func (o *streamOutbound) Notify(ctx context.Context, method string, params json.RawMessage) error {
	if !o.st.emitWait(ctx, wire.AppendNotification(nil, method, params)) {
		return protocol.ErrSessionEnded
	}
	return nil
}

func (o *streamOutbound) Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	return o.st.s.request(ctx, o.st, method, params)
}

// CloseStream ends the call's current connection without ending its
// stream; see Request.CloseStream.
func (o *streamOutbound) CloseStream(retry time.Duration) bool {
	if o.st.s.Revision() < protocol.Rev20251125 {
		// Before 2025-11-25 a server should not end a response stream
		// before the response, and clients need not resume one.
		return false
	}
	return o.st.closeConnection(retry)
}

// sessionOutbound is the back channel of a call answered with JSON:
// notifications cannot reach the client on this connection and are
// dropped; server→client requests go on the session's GET stream.
type sessionOutbound struct{ s *session }

func (o *sessionOutbound) Notify(context.Context, string, json.RawMessage) error { return nil }

func (o *sessionOutbound) Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	return o.s.request(ctx, o.s.standalone(), method, params)
}

// callOutbound is the back channel of a call without a session (every
// 2026-07-28 call, and a legacy one that asked for progress):
// notifications go on the call's own response stream, which they start;
// there are no server→client requests (2026-07-28 answers input_required
// instead).
type callOutbound struct {
	mb      *controller.Mailbox
	mu      sync.Mutex
	started bool
	done    bool
	answer  callDone // sent to the Handle when nothing started the stream
}

func (o *callOutbound) Notify(_ context.Context, method string, params json.RawMessage) error {
	frame := wire.AppendNotification(nil, method, params)
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.done {
		return nil
	}
	if !o.started {
		if err := o.mb.Send(streamStarted{}); err != nil {
			return err
		}
		o.started = true
	}
	return o.mb.Send(callFrame{data: frame})
}

func (o *callOutbound) Request(_ context.Context, method string, _ json.RawMessage) (json.RawMessage, error) {
	return protocol.Discard{}.Request(context.Background(), method, nil)
}

// finish hands the response to the connection, with its JSON-RPC error
// code (0 for a result) for the request's log line.
func (o *callOutbound) finish(body []byte, status int, release []byte, code int) {
	o.mu.Lock()
	o.done = true
	started := o.started
	o.mu.Unlock()
	if started {
		_ = o.mb.SendContext(context.Background(), callFinal{data: body, code: code})
		return
	}
	o.answer = callDone{body: body, status: status, release: release, code: code}
	_ = o.mb.SendContext(context.Background(), &o.answer)
}
