package mcp

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/saguaro-go/saguaro/mcp/internal/protocol"
	"github.com/saguaro-go/saguaro/mcp/internal/seal"
	"github.com/saguaro-go/saguaro/mcp/internal/wire"
)

func modAccept(fields map[string]any) map[string]any {
	return map[string]any{"action": "accept", "content": fields}
}

// inputRequired checks an input_required result and returns its requests
// by key and its requestState.
func modInputRequired(t *testing.T, r mresp) (map[string]any, string) {
	t.Helper()
	require.Nil(t, r.err, "error %+v", r.err)
	require.Equal(t, "input_required", r.result["resultType"], "%v", r.result)
	reqs, _ := r.result["inputRequests"].(map[string]any)
	state, _ := r.result["requestState"].(string)
	require.NotEmpty(t, state)
	assert.Contains(t, r.result["_meta"], metaServerInfo)
	assert.NotContains(t, r.result, "ttlMs", "input_required is not cacheable")
	return reqs, state
}

func modText(t *testing.T, r mresp) string {
	t.Helper()
	require.Nil(t, r.err, "error %+v", r.err)
	require.Equal(t, "complete", r.result["resultType"], "%v", r.result)
	content := r.result["content"].([]any)
	return content[0].(map[string]any)["text"].(string)
}

func modCall(name string, extra map[string]any) mreq {
	p := map[string]any{"name": name, "arguments": map[string]any{}}
	for k, v := range extra {
		p[k] = v
	}
	return mreq{method: "tools/call", params: p}
}

func TestInputRequiredRoundTrips(t *testing.T) {
	m := startModern(t, nil)

	t.Run("one round", func(t *testing.T) {
		reqs, state := modInputRequired(t, m.do(modCall("ask", nil)))
		require.Len(t, reqs, 1)
		name := reqs["name"].(map[string]any)
		assert.Equal(t, "elicitation/create", name["method"])
		assert.Equal(t, "name?", name["params"].(map[string]any)["message"])
		r := m.do(modCall("ask", map[string]any{"inputResponses": map[string]any{"name": modAccept(map[string]any{"name": "Ann"})}, "requestState": state}))
		assert.Equal(t, "hello Ann", modText(t, r))
	})

	t.Run("several rounds", func(t *testing.T) {
		reqs, s1 := modInputRequired(t, m.do(modCall("ask_twice", nil)))
		require.Contains(t, reqs, "first")
		reqs, s2 := modInputRequired(t, m.do(modCall("ask_twice", map[string]any{
			"inputResponses": map[string]any{"first": modAccept(map[string]any{"name": "A"})}, "requestState": s1})))
		require.Contains(t, reqs, "second")
		require.NotContains(t, reqs, "first", "an answered request is not asked again")
		assert.NotEqual(t, s1, s2)
		r := m.do(modCall("ask_twice", map[string]any{
			"inputResponses": map[string]any{"second": modAccept(map[string]any{"name": "B"})}, "requestState": s2}))
		assert.Equal(t, "A+B", modText(t, r), "the first answer came back in the state")
	})

	t.Run("several inputs at once", func(t *testing.T) {
		reqs, state := modInputRequired(t, m.do(modCall("ask_many", nil)))
		require.Len(t, reqs, 3)
		assert.Equal(t, "roots/list", reqs["roots"].(map[string]any)["method"])
		r := m.do(modCall("ask_many", map[string]any{"requestState": state, "inputResponses": map[string]any{
			"a": modAccept(map[string]any{"name": "x"}), "b": modAccept(map[string]any{"name": "y"}),
			"roots": map[string]any{"roots": []any{map[string]any{"uri": "file:///r"}}}}}))
		assert.Equal(t, "x y 1", modText(t, r))
	})

	t.Run("a missing input is asked again", func(t *testing.T) {
		_, state := modInputRequired(t, m.do(modCall("ask_many", nil)))
		reqs, _ := modInputRequired(t, m.do(modCall("ask_many", map[string]any{"requestState": state, "inputResponses": map[string]any{
			"a": modAccept(map[string]any{"name": "x"}), "wrong": modAccept(map[string]any{"name": "?"})}})))
		assert.NotContains(t, reqs, "a")
		assert.Contains(t, reqs, "b")
		assert.Contains(t, reqs, "roots")
	})

	t.Run("answers without state are accepted", func(t *testing.T) {
		r := m.do(modCall("ask", map[string]any{"inputResponses": map[string]any{
			"name": modAccept(map[string]any{"name": "Bo"}), "extra": modAccept(map[string]any{"x": 1})}}))
		assert.Equal(t, "hello Bo", modText(t, r))
	})

	t.Run("prompts/get", func(t *testing.T) {
		r := m.do(mreq{method: "prompts/get", params: map[string]any{"name": "p"}})
		_, state := modInputRequired(t, r)
		r = m.do(mreq{method: "prompts/get", params: map[string]any{"name": "p", "requestState": state,
			"inputResponses": map[string]any{"topic": modAccept(map[string]any{"name": "cats"})}}})
		require.Nil(t, r.err)
		assert.Equal(t, "complete", r.result["resultType"])
		assert.Len(t, r.result["messages"], 1)
	})

	bad := func(t *testing.T, q mreq, reason string) {
		t.Helper()
		r := m.do(q)
		require.NotNil(t, r.err, "%v", r.result)
		assert.Equal(t, wire.InvalidParams, r.err.Code)
		if reason != "" {
			assert.JSONEq(t, `{"reason":"`+reason+`"}`, string(r.err.Data))
		}
	}
	_, state := modInputRequired(t, m.do(modCall("ask", nil)))
	answer := map[string]any{"name": modAccept(map[string]any{"name": "Eve"})}

	t.Run("tampered state", func(t *testing.T) {
		bad(t, modCall("ask", map[string]any{"inputResponses": answer, "requestState": state + "-TAMPERED"}), "request_state_tampered")
		b := []byte(state)
		b[len(b)/2] ^= 1
		bad(t, modCall("ask", map[string]any{"inputResponses": answer, "requestState": string(b)}), "request_state_tampered")
		bad(t, modCall("ask", map[string]any{"inputResponses": answer, "requestState": ""}), "request_state_tampered")
	})
	t.Run("state from another request", func(t *testing.T) {
		bad(t, modCall("ask_twice", map[string]any{"inputResponses": answer, "requestState": state}), "request_state_binding")
		other := modCall("ask", map[string]any{"inputResponses": answer, "requestState": state})
		other.params["arguments"] = map[string]any{"x": 1}
		bad(t, other, "request_state_binding")
		bad(t, mreq{method: "prompts/get", params: map[string]any{"name": "p", "inputResponses": answer, "requestState": state}}, "request_state_binding")
	})
	t.Run("malformed inputResponses", func(t *testing.T) {
		bad(t, modCall("ask", map[string]any{"inputResponses": map[string]any{"name": 12345}}), "")
		bad(t, modCall("ask", map[string]any{"inputResponses": nil}), "")
		bad(t, modCall("ask", map[string]any{"requestState": 7}), "")
	})
	t.Run("only tools/call, prompts/get and resources/read", func(t *testing.T) {
		r := m.do(mreq{method: "tools/list"})
		assert.Equal(t, "complete", r.result["resultType"])
	})
}

func TestInputRequiredBoundToIdentity(t *testing.T) {
	m := startModern(t, &Options{Identity: func(r *http.Request) string { return r.Header.Get("X-User") }})
	q := modCall("ask", nil)
	q.hdr = map[string]string{"X-User": "alice"}
	_, state := modInputRequired(t, m.do(q))
	retry := modCall("ask", map[string]any{"requestState": state, "inputResponses": map[string]any{"name": modAccept(map[string]any{"name": "A"})}})
	retry.hdr = map[string]string{"X-User": "mallory"}
	r := m.do(retry)
	require.NotNil(t, r.err)
	assert.JSONEq(t, `{"reason":"request_state_binding"}`, string(r.err.Data))
	retry.hdr = map[string]string{"X-User": "alice"}
	assert.Equal(t, "hello A", modText(t, m.do(retry)))
}

func TestRequestStateSealer(t *testing.T) {
	c := &protocol.Call{Method: "tools/call", Params: json.RawMessage(`{"name":"ask","arguments":{"b":1,"a":[1,2]}}`), Identity: "id"}
	old := newStateSealer(seal.New([][]byte{[]byte("old key")}), time.Minute)
	tok, err := old.seal(c, map[string]json.RawMessage{"k": json.RawMessage(`{"action":"accept"}`)})
	require.NoError(t, err)

	t.Run("canonical params", func(t *testing.T) {
		same := *c
		same.Params = json.RawMessage(`{ "arguments": {"a":[1, 2], "b":1.0e0}, "name":"ask", "requestState":"x", "_meta":{"p":1}}`)
		// 1.0e0 and 1 are different JSON numbers to a canonicalizer that
		// keeps number text; the binding must not depend on whitespace or
		// member order, and does on values.
		_, jerr := old.open(tok, &same)
		assert.NotNil(t, jerr)
		same.Params = json.RawMessage(`{ "arguments": {"a":[1, 2], "b":1}, "name":"ask", "requestState":"x", "_meta":{"p":1}}`)
		answers, jerr := old.open(tok, &same)
		require.Nil(t, jerr)
		assert.JSONEq(t, `{"action":"accept"}`, string(answers["k"]))
	})
	t.Run("key rotation", func(t *testing.T) {
		rotated := newStateSealer(seal.New([][]byte{[]byte("new key"), []byte("old key")}), time.Minute)
		_, jerr := rotated.open(tok, c)
		assert.Nil(t, jerr, "an old key still opens")
		tok2, _ := rotated.seal(c, nil)
		_, jerr = old.open(tok2, c)
		assert.NotNil(t, jerr, "the new key seals")
		retired := newStateSealer(seal.New([][]byte{[]byte("new key")}), time.Minute)
		_, jerr = retired.open(tok, c)
		require.NotNil(t, jerr)
		assert.Equal(t, "Invalid params: requestState tampered", jerr.Message)
	})
	t.Run("expired", func(t *testing.T) {
		later := newStateSealer(seal.New([][]byte{[]byte("old key")}), time.Minute)
		later.now = func() time.Time { return time.Now().Add(2 * time.Minute) }
		_, jerr := later.open(tok, c)
		require.NotNil(t, jerr)
		assert.JSONEq(t, `{"reason":"request_state_expired"}`, modJSON(t, jerr.Data))
	})
	t.Run("random key per engine", func(t *testing.T) {
		a, b := newStateSealer(seal.New(nil), 0), newStateSealer(seal.New(nil), 0)
		tk, _ := a.seal(c, nil)
		_, jerr := b.open(tk, c)
		assert.NotNil(t, jerr)
		assert.Equal(t, defaultStateTTL, a.ttl)
	})
}

func modJSON(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// answeringOutbound answers every server→client request at once, as a
// legacy client on a session stream would.
type answeringOutbound struct{ asked []string }

func (o *answeringOutbound) Notify(context.Context, string, json.RawMessage) error { return nil }
func (o *answeringOutbound) Request(_ context.Context, method string, _ json.RawMessage) (json.RawMessage, error) {
	o.asked = append(o.asked, method)
	return json.RawMessage(`{"action":"accept","content":{"name":"Leg"}}`), nil
}

// TestSameHandlerBothEras runs one handler in a legacy session (its
// request is answered on the back channel) and in 2026-07-28 (it becomes
// an input_required result): one code path.
func TestSameHandlerBothEras(t *testing.T) {
	s, _, _ := modernFixture(t)
	e := newEngine(s, engineOptions{})
	out := &answeringOutbound{}
	caps := &ClientCapabilities{Elicitation: &ElicitationCapability{}}
	legacy := protocol.Call{Method: "tools/call", ID: wire.Int(1), Params: json.RawMessage(`{"name":"ask"}`),
		Revision: protocol.Rev20251125, Client: caps, Outbound: out}
	r := e.Dispatch(context.Background(), &legacy, nil)
	require.Nil(t, r.Err)
	assert.Contains(t, string(r.Result), "hello Leg")
	assert.Equal(t, []string{"elicitation/create"}, out.asked)

	modern := legacy
	modern.Revision, modern.Outbound = protocol.Rev20260728, nil
	r = e.Dispatch(context.Background(), &modern, nil)
	require.Nil(t, r.Err)
	assert.Contains(t, string(r.Result), `"resultType":"input_required"`)
	assert.Len(t, out.asked, 1, "the modern call sent nothing on a back channel")
}
