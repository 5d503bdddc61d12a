package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/saguaro-go/saguaro/mcp/internal/wire"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type mwKey struct{}

// seenCall is what a recording middleware saw of one message.
type seenCall struct {
	method, target, identity, session string
	request                           bool
	result                            string
	err                               error
}

// The middleware wraps every method on every transport, sees the method,
// its target, the caller and the session before and the result after,
// and can refuse, replace and pass context on.
func TestMiddlewareOnEveryTransport(t *testing.T) {
	var mu sync.Mutex
	var seen []seenCall
	record := func(next MethodHandler) MethodHandler {
		return func(ctx context.Context, req *Request) (json.RawMessage, error) {
			res, err := next(context.WithValue(ctx, mwKey{}, "from middleware"), req)
			mu.Lock()
			seen = append(seen, seenCall{req.Method, req.Target(), req.Identity, req.Session, !req.ID.IsZero(), string(res), err})
			mu.Unlock()
			return res, err
		}
	}
	gate := func(next MethodHandler) MethodHandler {
		return func(ctx context.Context, req *Request) (json.RawMessage, error) {
			switch req.Target() {
			case "secret":
				return nil, wire.NewError(wire.InvalidParams, "not for you")
			case "replace":
				if _, err := next(ctx, req); err != nil {
					return nil, err
				}
				return json.RawMessage(`{"content":[{"type":"text","text":"replaced"}]}`), nil
			case "boom":
				panic("middleware failed")
			case "opaque":
				return nil, fmt.Errorf("a database password is in here")
			}
			return next(ctx, req)
		}
	}
	srv := NewServer(Implementation{Name: "mw", Version: "1"}, &ServerOptions{Middleware: []func(MethodHandler) MethodHandler{record, gate}})
	var secretRan atomic.Int32
	require.NoError(t, AddTool(srv, &Tool{Name: "echo"}, func(ctx context.Context, _ *CallToolRequest, in EchoIn) (string, error) {
		v, _ := ctx.Value(mwKey{}).(string)
		return v + ": " + in.Text, nil
	}))
	for _, name := range []string{"secret", "replace", "boom", "opaque"} {
		require.NoError(t, AddTool(srv, &Tool{Name: name}, func(context.Context, *CallToolRequest, struct{}) (string, error) {
			if name == "secret" {
				secretRan.Add(1)
			}
			return "original", nil
		}))
	}

	for _, c := range rawClients(t, srv, caller{identity: "alice"}, nil) {
		t.Run(c.name, func(t *testing.T) {
			mu.Lock()
			before := len(seen)
			mu.Unlock()
			_, _, m := c.call(t, toolCall("2", "echo", `{"text":"hi"}`))
			assert.Equal(t, "from middleware: hi", m.text(t))

			_, _, m = c.call(t, toolCall("3", "secret", `{}`))
			require.NotNil(t, m.Error)
			assert.Equal(t, wire.InvalidParams, m.Error.Code)
			assert.Equal(t, "not for you", m.Error.Message)
			assert.Zero(t, secretRan.Load(), "the refused tool did not run")

			_, _, m = c.call(t, toolCall("4", "replace", `{}`))
			assert.Equal(t, "replaced", m.text(t))

			for _, name := range []string{"boom", "opaque"} {
				_, _, m = c.call(t, toolCall("5", name, `{}`))
				require.NotNil(t, m.Error, name)
				assert.Equal(t, wire.InternalError, m.Error.Code, name)
				assert.NotContains(t, m.Error.Message, "password")
				assert.NotContains(t, m.Error.Message, "middleware failed")
			}

			mu.Lock()
			var calls []seenCall
			for _, s := range seen[before:] {
				if s.method == "tools/call" { // the handshakes of other clients may come in between
					calls = append(calls, s)
				}
			}
			mu.Unlock()
			require.NotEmpty(t, calls)
			echo := calls[0]
			assert.Equal(t, "tools/call", echo.method)
			assert.Equal(t, "echo", echo.target)
			assert.Equal(t, "alice", echo.identity)
			assert.Equal(t, c.session, echo.session)
			assert.True(t, echo.request)
			assert.Contains(t, echo.result, "from middleware: hi", "the middleware sees the encoded result")
			assert.NoError(t, echo.err)
			targets := []string{}
			for _, s := range calls {
				targets = append(targets, s.target)
			}
			assert.Equal(t, []string{"echo", "secret", "replace", "opaque"}, targets, "the panicking middleware recorded nothing")
		})
	}
	// The session's handshake went through the middleware too.
	mu.Lock()
	defer mu.Unlock()
	var methods []string
	for _, s := range seen {
		if !s.request {
			methods = append(methods, s.method)
		}
		if s.method == "initialize" {
			assert.Contains(t, s.result, `"protocolVersion"`)
		}
	}
	assert.Contains(t, methods, "notifications/initialized")
}

// A middleware that keeps a method from running keeps its effect from
// happening: a refused initialize starts no session.
func TestMiddlewareRefusesInitialize(t *testing.T) {
	refuse := func(next MethodHandler) MethodHandler {
		return func(ctx context.Context, req *Request) (json.RawMessage, error) {
			res, err := next(ctx, req)
			if req.Method == "initialize" {
				return nil, wire.NewError(wire.InvalidRequest, "closed for the day")
			}
			return res, err
		}
	}
	srv := NewServer(Implementation{Name: "mw", Version: "1"}, &ServerOptions{Middleware: []func(MethodHandler) MethodHandler{refuse}})
	ts := startServer(t, &Options{Handler: srv, Sessions: &SessionOptions{}})
	resp := ts.post("", initBody("2025-11-25", `{}`))
	m := readJSON(t, resp, 200)
	require.NotNil(t, m.Error)
	assert.Equal(t, "closed for the day", m.Error.Message)
	assert.Empty(t, resp.Header.Get("Mcp-Session-Id"))
	assert.Zero(t, ts.sessionCount())
}

// A result that is not JSON is refused rather than sent.
func TestMiddlewareInvalidResult(t *testing.T) {
	bad := func(next MethodHandler) MethodHandler {
		return func(ctx context.Context, req *Request) (json.RawMessage, error) {
			_, _ = next(ctx, req)
			return json.RawMessage(`{"content":[`), nil
		}
	}
	srv := NewServer(Implementation{Name: "mw", Version: "1"}, &ServerOptions{Middleware: []func(MethodHandler) MethodHandler{bad}})
	require.NoError(t, AddTool(srv, &Tool{Name: "t"}, func(context.Context, *CallToolRequest, struct{}) (string, error) {
		return strings.Repeat("x", 100<<10), nil // a big result, in a buffer of its own
	}))
	ts := startServer(t, &Options{Handler: srv})
	m := readJSON(t, ts.post("", toolCall("1", "t", `{}`)), 200)
	require.NotNil(t, m.Error)
	assert.Equal(t, wire.InternalError, m.Error.Code)
}
