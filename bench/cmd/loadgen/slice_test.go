package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/saguaro-go/saguaro/bench/internal/configs"
	"github.com/saguaro-go/saguaro/bench/internal/mcpconn"
	"github.com/saguaro-go/saguaro/bench/internal/probe"
	"github.com/saguaro-go/saguaro/bench/internal/proc"
	"github.com/saguaro-go/saguaro/bench/internal/serve"
)

// sessionServer is a small stateful MCP server for runSlice: sessions,
// echo and progress. With crosstalk set, a progress call sometimes carries
// the token of the previous call of its session.
type sessionServer struct {
	crosstalk bool
	next      atomic.Int64
	mu        sync.Mutex
	live      map[string]bool
	lastTok   map[string]string
	deleted   atomic.Int64
}

func (f *sessionServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	sid := r.Header.Get("Mcp-Session-Id")
	if r.Method == http.MethodDelete {
		f.mu.Lock()
		delete(f.live, sid)
		f.mu.Unlock()
		f.deleted.Add(1)
		w.WriteHeader(204)
		return
	}
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name string `json:"name"`
			Meta struct {
				ProgressToken string `json:"progressToken"`
			} `json:"_meta"`
			Arguments struct {
				Text string `json:"text"`
			} `json:"arguments"`
		} `json:"params"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	if req.Method == "initialize" {
		sid = fmt.Sprintf("sess-%d", f.next.Add(1))
		f.mu.Lock()
		f.live[sid] = true
		f.mu.Unlock()
		w.Header().Set("Mcp-Session-Id", sid)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":%q,"capabilities":{},"serverInfo":{"name":"f","version":"0"}}}`, req.ID, mcpconn.ProtocolVersion)
		return
	}
	f.mu.Lock()
	ok := f.live[sid]
	prev := f.lastTok[sid]
	f.lastTok[sid] = req.Params.Meta.ProgressToken
	f.mu.Unlock()
	if !ok {
		http.Error(w, "unknown session", 404)
		return
	}
	if req.Method == "notifications/initialized" {
		w.WriteHeader(202)
		return
	}
	text, _ := json.Marshal(req.Params.Arguments.Text)
	result := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":%s}]}}`, req.ID, text)
	if req.Params.Name != "progress" {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, result)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	for i := 1; i <= serve.ProgressSteps; i++ {
		tok := req.Params.Meta.ProgressToken
		if f.crosstalk && i == 3 && prev != "" {
			tok = prev
		}
		fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":%q,\"progress\":%d}}\n\n", tok, i)
	}
	fmt.Fprintf(w, "event: message\ndata: %s\n\n", result)
}

func testServer(t *testing.T, h http.Handler) *server {
	t.Helper()
	mcpSrv := httptest.NewServer(h)
	t.Cleanup(mcpSrv.Close)
	mux := http.NewServeMux()
	mux.Handle(probe.Path, probe.Handler())
	probeSrv := httptest.NewServer(mux)
	t.Cleanup(probeSrv.Close)
	ep, err := mcpconn.NewEndpoint(mcpSrv.URL+"/mcp", nil)
	if err != nil {
		t.Fatal(err)
	}
	return &server{
		cfg: configs.Config{Name: "fake", Stateful: true},
		Proc: &proc.Proc{Ready: serve.Ready{MCPURL: mcpSrv.URL + "/mcp", ProbeURL: probeSrv.URL + probe.Path},
			HTTP: &http.Client{Timeout: 5 * time.Second}},
		ep: ep,
	}
}

func TestRunSliceSharedSessionsProgress(t *testing.T) {
	f := &sessionServer{live: map[string]bool{}, lastTok: map[string]string{}}
	s := testServer(t, f)
	r := runSlice(s, sliceSpec{Conns: 5, Progress: true, Share: true}, 20*time.Millisecond, 150*time.Millisecond, 5*time.Second)
	if n := r.Fail.Total(); n != 0 {
		t.Fatalf("%d failures: %v", n, r.Fail.First)
	}
	if r.OK == 0 || r.Hist.Count() != r.OK {
		t.Fatalf("ok %d, histogram %d", r.OK, r.Hist.Count())
	}
	// 5 connections share sessions two by two: 3 sessions, each deleted once.
	if got := f.next.Load(); got != 3 {
		t.Fatalf("%d sessions opened, want 3", got)
	}
	if got := f.deleted.Load(); got != 3 {
		t.Fatalf("%d DELETEs, want 3", got)
	}
	if r.After.AllocObjs < r.Before.AllocObjs || r.Window <= 0 {
		t.Fatalf("probe snapshots not read: %+v %+v", r.Before, r.After)
	}
}

func TestRunSliceCatchesCrosstalk(t *testing.T) {
	f := &sessionServer{crosstalk: true, live: map[string]bool{}, lastTok: map[string]string{}}
	s := testServer(t, f)
	r := runSlice(s, sliceSpec{Conns: 4, Progress: true, Share: true}, 20*time.Millisecond, 150*time.Millisecond, 5*time.Second)
	if r.Fail.Count["crosstalk"] == 0 {
		t.Fatalf("crosstalk not caught: %v", r.Fail.First)
	}
	if !strings.Contains(r.Fail.First["crosstalk"], "on the stream of") {
		t.Fatalf("unexpected message %q", r.Fail.First["crosstalk"])
	}
}

func TestRunSliceEcho(t *testing.T) {
	f := &sessionServer{live: map[string]bool{}, lastTok: map[string]string{}}
	s := testServer(t, f)
	r := runSlice(s, sliceSpec{Conns: 3}, 10*time.Millisecond, 100*time.Millisecond, 5*time.Second)
	if r.Fail.Total() != 0 || r.OK == 0 {
		t.Fatalf("ok %d, failures %v", r.OK, r.Fail.First)
	}
	if got := f.next.Load(); got != 3 {
		t.Fatalf("%d sessions, want one per connection", got)
	}
}
