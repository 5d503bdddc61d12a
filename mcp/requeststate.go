package mcp

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"time"

	"github.com/saguaro-go/saguaro/mcp/internal/protocol"
	"github.com/saguaro-go/saguaro/mcp/internal/seal"
	"github.com/saguaro-go/saguaro/mcp/internal/wire"
)

// requestState is the opaque state of a 2026-07-28 input_required result.
// The client holds it and sends it back, so it is attacker-controlled: it
// is sealed with AES-256-GCM (integrity and confidentiality) and bound to
// the call that produced it.
//
// Token: sealed with the handler's keys (package seal), the additional
// data naming the format. Plaintext: JSON
// {m: method, d: digest of the params, i: digest of the caller's
// identity, e: expiry (unix seconds), a: the answers used so far}.
//
// What is rejected, all as InvalidParams with data.reason: a token that
// does not open with any key ("tampered"), one past its expiry
// ("expired"), and one bound to another method, other params (name,
// arguments, uri) or another caller ("binding") — state cannot be
// replayed into a different request. A token may be replayed into the
// same request until it expires (its answers are the client's own): when
// that matters, make the tool's effect idempotent or keep your own
// single-use record.

const (
	defaultStateTTL = 10 * time.Minute
	stateAAD        = "mcp-request-state/1"
)

// stateSealer seals requestState with the handler's key set.
type stateSealer struct {
	keys *seal.Keys
	ttl  time.Duration
	now  func() time.Time
}

func newStateSealer(keys *seal.Keys, ttl time.Duration) *stateSealer {
	if ttl <= 0 {
		ttl = defaultStateTTL
	}
	return &stateSealer{keys: keys, ttl: ttl, now: time.Now}
}

type statePayload struct {
	Method   string                     `json:"m"`
	Digest   []byte                     `json:"d"`
	Identity []byte                     `json:"i"`
	Expires  int64                      `json:"e"`
	Answers  map[string]json.RawMessage `json:"a,omitempty"`
}

// binding digests what a state is bound to: the call's params without
// _meta, inputResponses and requestState (canonical JSON, so a client's
// re-encoding does not matter), and the caller.
func binding(call *protocol.Call) (params, identity []byte) {
	canon := map[string]any{}
	_ = protocol.EachParam(call.Params, func(key, val []byte) *wire.Error {
		k, ok := wire.Unquote(key)
		if !ok || k == "_meta" || k == "inputResponses" || k == "requestState" {
			return nil
		}
		d := json.NewDecoder(bytes.NewReader(val))
		d.UseNumber()
		var v any
		if d.Decode(&v) == nil {
			canon[k] = v
		}
		return nil
	})
	enc, _ := json.Marshal(canon)
	p := sha256.Sum256(append([]byte(call.Method+"\x00"), enc...))
	i := sha256.Sum256([]byte("identity\x00" + call.Identity))
	return p[:16], i[:16]
}

func (s *stateSealer) seal(call *protocol.Call, answers map[string]json.RawMessage) (string, error) {
	d, id := binding(call)
	pt, err := json.Marshal(&statePayload{Method: call.Method, Digest: d, Identity: id,
		Expires: s.now().Add(s.ttl).Unix(), Answers: answers})
	if err != nil {
		return "", err
	}
	return s.keys.Seal(pt, []byte(stateAAD)), nil
}

func stateError(reason string) *wire.Error {
	return &wire.Error{Code: wire.InvalidParams, Message: "Invalid params: requestState " + reason,
		Data: map[string]string{"reason": "request_state_" + reason}}
}

// open verifies a state for call and returns its answers.
func (s *stateSealer) open(token string, call *protocol.Call) (map[string]json.RawMessage, *wire.Error) {
	pt, err := s.keys.Open(token, []byte(stateAAD))
	if err != nil {
		return nil, stateError("tampered")
	}
	var p statePayload
	if json.Unmarshal(pt, &p) != nil {
		return nil, stateError("tampered")
	}
	if s.now().Unix() > p.Expires {
		return nil, stateError("expired")
	}
	d, id := binding(call)
	if p.Method != call.Method || !bytes.Equal(p.Digest, d) || !bytes.Equal(p.Identity, id) {
		return nil, stateError("binding")
	}
	return p.Answers, nil
}
