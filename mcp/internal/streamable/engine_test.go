package streamable

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/saguaro-go/saguaro/mcp/cluster"
	"github.com/saguaro-go/saguaro/mcp/internal/protocol"
	"github.com/saguaro-go/saguaro/mcp/internal/wire"
)

// pingEngine is the smallest engine a transport serves: initialize,
// notifications/initialized and ping. The transport's own unit tests use
// it; everything else is tested through package mcp's endpoint, with the
// real engine.
type pingEngine struct{ decoder *wire.Decoder }

func newPingEngine() *pingEngine {
	return &pingEngine{decoder: wire.NewDecoder("initialize", "ping", "notifications/initialized")}
}

var allRevisions = protocol.RevisionSet(protocol.Rev20250326, protocol.Rev20250618, protocol.Rev20251125)

func (e *pingEngine) Decoder() *wire.Decoder { return e.decoder }

func (e *pingEngine) Method(name string) (protocol.Method, bool) {
	switch name {
	case "initialize", "ping":
		return protocol.Method{Name: name, Mode: protocol.ModeFast, Revisions: allRevisions, Offered: true}, true
	case "notifications/initialized":
		return protocol.Method{Name: name, Notification: true, Mode: protocol.ModeFast, Revisions: allRevisions, Offered: true}, true
	}
	return protocol.Method{}, false
}

func (e *pingEngine) NewState(context.Context, protocol.Revision) (any, error) { return nil, nil }

func (e *pingEngine) Dispatch(_ context.Context, call *protocol.Call, state any) protocol.Reply {
	r := protocol.Reply{State: state}
	switch call.Method {
	case "initialize":
		r.Result = json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"ping","version":"1"}}`)
		r.Effect = protocol.Effect{Kind: protocol.EffectInitialize, Revision: protocol.Rev20251125}
	case "ping":
		r.Result = json.RawMessage(`{}`)
	case "notifications/initialized":
		r.Effect = protocol.Effect{Kind: protocol.EffectInitialized}
	default:
		if !call.ID.IsZero() {
			r.Err = wire.NewError(wire.MethodNotFound, "Method not found")
		}
	}
	return r
}

func (e *pingEngine) AppendReply(dst []byte, id wire.ID, r protocol.Reply) []byte {
	if r.Err != nil {
		return wire.AppendErrorResponse(dst, id, r.Err)
	}
	return wire.AppendResponse(dst, id, r.Result)
}

func (e *pingEngine) Client(raw []byte) any { return nil }
func (e *pingEngine) ParamHeaders(context.Context, string, string, any) []protocol.ParamHeader {
	return nil
}
func (e *pingEngine) StepUp(context.Context, *protocol.Call) []string { return nil }
func (e *pingEngine) HiddenLists() []protocol.Change                  { return nil }
func (e *pingEngine) OnChange(func(protocol.Change)) func()           { return func() {} }

func (e *pingEngine) TraceChange(_ context.Context, _ protocol.Revision, _ string, msg []byte) ([]byte, func()) {
	return msg, nil
}

func (e *pingEngine) Listen(context.Context, *protocol.Call, func()) (protocol.Listener, *wire.Error) {
	return nil, wire.NewError(wire.MethodNotFound, "Method not found")
}

// noState is the codec of an engine that keeps no state.
type noState struct{}

func (noState) EncodeState(any) ([]byte, bool, error) { return nil, true, nil }
func (noState) DecodeState([]byte) (any, error)       { return nil, nil }
func (noState) Movable() bool                         { return false }

// newTestTransport serves the ping engine with sessions; it is shut down
// when the test ends.
func newTestTransport(t *testing.T) *Transport {
	t.Helper()
	tr := New(Config{
		Engine:       newPingEngine(),
		Codec:        noState{},
		Cluster:      cluster.NewMemory().Join(""),
		MaxBodyBytes: 1 << 20,
		Logger:       slog.New(slog.NewTextHandler(io.Discard, nil)),
		Sessions: &SessionConfig{IdleTimeout: time.Minute, MaxSessions: 100, QueueSize: 4,
			RequestTimeout: time.Minute, Retry: time.Second, ResumeGrace: time.Second, StreamEvents: 16},
	})
	t.Cleanup(func() { _ = tr.Shutdown(context.Background()) })
	return tr
}

// post serves one POST and returns the recorder.
func post(tr *Transport, sid, body string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("Content-Type", "application/json")
	if sid != "" {
		r.Header.Set("Mcp-Session-Id", sid)
	}
	w := httptest.NewRecorder()
	tr.ServeHTTP(w, r)
	return w
}

// open initializes a session and returns its id.
func open(t *testing.T, tr *Transport) string {
	t.Helper()
	w := post(tr, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	sid := w.Header().Get("Mcp-Session-Id")
	require.NotEmpty(t, sid)
	return sid
}

// TestSessionEndedWhileLookedUp: a request that found its session just
// before the session ended gets 404, like any request for an ended one.
func TestSessionEndedWhileLookedUp(t *testing.T) {
	tr := newTestTransport(t)
	sid := open(t, tr)
	tr.sessions.mu.RLock()
	s := tr.sessions.m[sid]
	tr.sessions.mu.RUnlock()
	s.end()
	// Put it back in the table, as a lookup racing with end sees it.
	tr.sessions.mu.Lock()
	tr.sessions.m[sid] = s
	tr.sessions.mu.Unlock()
	defer func() {
		tr.sessions.mu.Lock()
		delete(tr.sessions.m, sid)
		tr.sessions.mu.Unlock()
	}()
	w := post(tr, sid, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	require.Equal(t, http.StatusNotFound, w.Code, w.Body.String())
	require.Contains(t, w.Body.String(), `"code":-32600`)
	r := httptest.NewRequest(http.MethodGet, "/mcp", nil)
	r.Header.Set("Accept", "text/event-stream")
	r.Header.Set("Mcp-Session-Id", sid)
	w = httptest.NewRecorder()
	tr.ServeHTTP(w, r)
	require.Equal(t, http.StatusNotFound, w.Code, w.Body.String())
}
