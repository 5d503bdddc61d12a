package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/saguaro-go/saguaro/mcp/internal/protocol"
	"github.com/saguaro-go/saguaro/mcp/internal/wire"
)

// recorder is an Outbound that records notifications and answers requests
// from a table.
type recorder struct {
	mu      sync.Mutex
	notes   []string
	reqs    []string
	answers map[string]string
}

func (r *recorder) Notify(ctx context.Context, method string, params json.RawMessage) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.notes = append(r.notes, method+" "+string(params))
	return nil
}

func (r *recorder) Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reqs = append(r.reqs, method+" "+string(params))
	a, ok := r.answers[method]
	if !ok {
		return nil, wire.NewError(wire.MethodNotFound, "no")
	}
	return json.RawMessage(a), nil
}

func newRequest(rev Revision, caps *ClientCapabilities, out protocol.Outbound, token string, level LogLevel) *Request {
	r := &Request{Revision: rev, Client: caps, out: out, logLevel: level}
	if token != "" {
		r.Meta.ProgressToken = ProgressToken{raw: token}
	}
	return r
}

func TestProgress(t *testing.T) {
	ctx := context.Background()
	for _, tok := range []string{`1`, `"1"`, `"abc"`, `-2.5`} {
		rec := &recorder{}
		r := newRequest(Rev20251125, nil, rec, tok, 0)
		if err := r.Progress(ctx, 0, 100, ""); err != nil {
			t.Fatal(err)
		}
		if err := r.Progress(ctx, 50, 100, "half"); err != nil {
			t.Fatal(err)
		}
		if err := r.Progress(ctx, 50, 100, ""); !errors.Is(err, ErrProgressNotIncreasing) {
			t.Errorf("equal progress: %v", err)
		}
		if err := r.Progress(ctx, 10, 0, ""); !errors.Is(err, ErrProgressNotIncreasing) {
			t.Errorf("decreasing progress: %v", err)
		}
		if err := r.Progress(ctx, 100.5, 0, ""); err != nil {
			t.Fatal(err)
		}
		want := []string{
			`notifications/progress {"progressToken":` + tok + `,"progress":0,"total":100}`,
			`notifications/progress {"progressToken":` + tok + `,"progress":50,"total":100,"message":"half"}`,
			`notifications/progress {"progressToken":` + tok + `,"progress":100.5}`,
		}
		if fmt.Sprint(rec.notes) != fmt.Sprint(want) {
			t.Errorf("token %s:\n got  %v\n want %v", tok, rec.notes, want)
		}
	}
	rec := &recorder{}
	if err := newRequest(Rev20251125, nil, rec, "", 0).Progress(ctx, 1, 2, ""); err != nil || len(rec.notes) != 0 {
		t.Error("progress without token must be a silent no-op")
	}
}

func TestProgressTokenFromParams(t *testing.T) {
	s := NewServer(Implementation{Name: "p", Version: "1"}, nil)
	_ = AddTool(s, &Tool{Name: "tok"}, func(ctx context.Context, req *CallToolRequest, in struct{}) (string, error) {
		if err := req.Progress(ctx, 1, 0, ""); err != nil {
			return "", err
		}
		return req.Meta.ProgressToken.String(), nil
	})
	e := newEngine(s, engineOptions{})
	for _, tok := range []string{`7`, `"7"`} {
		rec := &recorder{}
		m, _ := e.Decoder().Decode([]byte(req("1", "tools/call", `{"name":"tok","_meta":{"progressToken":`+tok+`}}`)))
		c := testCall(&m, Rev20251125)
		c.Outbound = rec
		r := e.Dispatch(context.Background(), &c, nil)
		if string(r.Result) != `{"content":[{"type":"text","text":"7"}]}` {
			t.Errorf("result %s", r.Result)
		}
		if len(rec.notes) != 1 || !strings.Contains(rec.notes[0], `"progressToken":`+tok+`,`) {
			t.Errorf("token %s not echoed with its type: %v", tok, rec.notes)
		}
	}
}

func TestLogFiltering(t *testing.T) {
	ctx := context.Background()
	rec := &recorder{}
	r := newRequest(Rev20251125, nil, rec, "", LogWarning)
	_ = r.Log(ctx, LogInfo, "x", "dropped")
	_ = r.Log(ctx, LogWarning, "db", map[string]any{"n": 1})
	_ = r.Log(ctx, LogEmergency, "", "on fire")
	if err := r.Log(ctx, LogLevel(42), "", "x"); !errors.Is(err, ErrLogLevel) {
		t.Errorf("bad level: %v", err)
	}
	if err := r.Log(ctx, LogError, "", "bad \xff"); !errors.Is(err, wire.ErrInvalidUTF8) {
		t.Errorf("invalid UTF-8 log: %v", err)
	}
	want := []string{
		`notifications/message {"level":"warning","logger":"db","data":{"n":1}}`,
		`notifications/message {"level":"emergency","data":"on fire"}`,
	}
	if fmt.Sprint(rec.notes) != fmt.Sprint(want) {
		t.Errorf("got %v", rec.notes)
	}
	rec2 := &recorder{}
	_ = newRequest(Rev20251125, nil, rec2, "", 0).Log(ctx, LogDebug, "", "unset level sends all")
	if len(rec2.notes) != 1 {
		t.Error("unset level must send every level")
	}
}

func TestServerToClientRequests(t *testing.T) {
	ctx := context.Background()
	answers := map[string]string{
		"sampling/createMessage": `{"role":"assistant","content":{"type":"text","text":"This is a test response from the client"},"model":"test-model","stopReason":"endTurn"}`,
		"elicitation/create":     `{"action":"accept","content":{"username":"testuser"}}`,
		"roots/list":             `{"roots":[{"uri":"file:///home","name":"home"}]}`,
	}
	all := &ClientCapabilities{Sampling: &SamplingCapability{}, Elicitation: &ElicitationCapability{}, Roots: &RootsCapability{}}
	rec := &recorder{answers: answers}
	r := newRequest(Rev20250618, all, rec, "", 0)
	res, err := r.CreateMessage(ctx, &CreateMessageParams{Messages: []*SamplingMessage{{Role: RoleUser, Content: Text("hi")}}, MaxTokens: 100})
	if err != nil || res.Model != "test-model" || res.Content.(*TextContent).Text != "This is a test response from the client" {
		t.Fatalf("sampling: %+v %v", res, err)
	}
	if rec.reqs[0] != `sampling/createMessage {"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":100}` {
		t.Errorf("sampling params %s", rec.reqs[0])
	}
	el, err := r.Elicit(ctx, &ElicitParams{Message: "who?", RequestedSchema: map[string]any{"type": "object"}})
	if err != nil || el.Action != "accept" || el.Content["username"] != "testuser" {
		t.Fatalf("elicit: %+v %v", el, err)
	}
	roots, err := r.ListRoots(ctx)
	if err != nil || len(roots.Roots) != 1 || roots.Roots[0].URI != "file:///home" {
		t.Fatalf("roots: %+v %v", roots, err)
	}

	// Capability gating: nothing is sent.
	none := &recorder{answers: answers}
	gated := []struct {
		name string
		err  error
	}{
		{"no caps sampling", func() error {
			_, err := newRequest(Rev20251125, nil, none, "", 0).CreateMessage(ctx, &CreateMessageParams{})
			return err
		}()},
		{"sampling tools", func() error {
			_, err := newRequest(Rev20251125, all, none, "", 0).CreateMessage(ctx, &CreateMessageParams{Tools: json.RawMessage(`[]`)})
			return err
		}()},
		{"sampling context", func() error {
			_, err := newRequest(Rev20251125, all, none, "", 0).CreateMessage(ctx, &CreateMessageParams{IncludeContext: "allServers"})
			return err
		}()},
		{"elicitation in 03", func() error {
			_, err := newRequest(Rev20250326, all, none, "", 0).Elicit(ctx, &ElicitParams{Message: "m"})
			return err
		}()},
		{"url elicitation in 06", func() error {
			_, err := newRequest(Rev20250618, &ClientCapabilities{Elicitation: &ElicitationCapability{URL: &struct{}{}}}, none, "", 0).Elicit(ctx, &ElicitParams{Mode: "url"})
			return err
		}()},
		{"url elicitation undeclared", func() error {
			_, err := newRequest(Rev20251125, all, none, "", 0).Elicit(ctx, &ElicitParams{Mode: "url"})
			return err
		}()},
		{"form elicitation with url only", func() error {
			_, err := newRequest(Rev20251125, &ClientCapabilities{Elicitation: &ElicitationCapability{URL: &struct{}{}}}, none, "", 0).Elicit(ctx, &ElicitParams{})
			return err
		}()},
		{"roots", func() error {
			_, err := newRequest(Rev20251125, &ClientCapabilities{}, none, "", 0).ListRoots(ctx)
			return err
		}()},
	}
	for _, g := range gated {
		if !errors.Is(g.err, ErrClientCapability) {
			t.Errorf("%s: %v", g.name, g.err)
		}
	}
	if len(none.reqs) != 0 {
		t.Errorf("gated requests were sent: %v", none.reqs)
	}
	url := &ClientCapabilities{Elicitation: &ElicitationCapability{URL: &struct{}{}}}
	if _, err := newRequest(Rev20251125, url, rec, "", 0).Elicit(ctx, &ElicitParams{Mode: "url", Message: "m", URL: "https://x", ElicitationID: "e1"}); err != nil {
		t.Errorf("url elicitation: %v", err)
	}
}

func TestDiscardOutbound(t *testing.T) {
	ctx := context.Background()
	caps := &ClientCapabilities{Sampling: &SamplingCapability{}, Roots: &RootsCapability{}}
	r := newRequest(Rev20251125, caps, nil, "1", 0)
	if err := r.Progress(ctx, 1, 0, ""); err != nil {
		t.Errorf("progress must be dropped silently: %v", err)
	}
	if err := r.Log(ctx, LogInfo, "", "x"); err != nil {
		t.Errorf("log must be dropped silently: %v", err)
	}
	if _, err := r.ListRoots(ctx); !errors.Is(err, ErrNoBackchannel) {
		t.Errorf("roots: %v", err)
	}
	if _, err := r.CreateMessage(ctx, &CreateMessageParams{}); !errors.Is(err, ErrNoBackchannel) {
		t.Errorf("sampling: %v", err)
	}
}

func TestInputRequiredIsInternalInLegacy(t *testing.T) {
	s := NewServer(Implementation{Name: "p", Version: "1"}, nil)
	_ = AddTool(s, &Tool{Name: "ask"}, func(ctx context.Context, req *CallToolRequest, in struct{}) (string, error) {
		return "", &InputRequiredError{Key: "r0", Method: "elicitation/create"}
	})
	lg, _ := testLogger()
	e := newEngine(s, engineOptions{Logger: lg})
	if out := call(t, e, Rev20251125, "ask", `{}`); errorOf(t, out) != wire.InternalError {
		t.Errorf("got %s", out)
	}
}
