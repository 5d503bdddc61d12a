package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/saguaro-go/saguaro/bench/internal/check"
	"github.com/saguaro-go/saguaro/bench/internal/configs"
	"github.com/saguaro-go/saguaro/bench/internal/payload"
)

// docServer is a small stateless MCP server for the payload workload:
// tools/call echo and resources/read of the 16 KiB document, decoded and
// encoded with encoding/json. With spoil, every seventh echo loses its
// last byte.
type docServer struct{ spoil bool }

func (d docServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			URI       string `json:"uri"`
			Arguments struct {
				Text string `json:"text"`
			} `json:"arguments"`
		} `json:"params"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	var id int64
	_ = json.Unmarshal(req.ID, &id)
	result := map[string]any{}
	switch {
	case req.Method == "tools/call":
		text := req.Params.Arguments.Text
		if d.spoil && id%7 == 0 {
			text = text[:len(text)-1]
		}
		result["content"] = []map[string]string{{"type": "text", "text": text}}
	case req.Method == "resources/read" && req.Params.URI == payload.DocURI(16):
		result["contents"] = []map[string]string{{"uri": req.Params.URI, "mimeType": payload.MIMEType, "text": payload.Document(16 << 10)}}
	default:
		http.Error(w, "unknown", 400)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
}

func TestPayloadSlices(t *testing.T) {
	s := testServer(t, docServer{})
	s.cfg.Stateful = false
	e := payload.NewEcho(16 << 10)
	for _, kind := range payloadKinds {
		var n bodyCount
		spec := sliceSpec{Conns: 3, Drain: true, Call: payloadCall(kind, 16, e, payload.Document(16<<10), &n)}
		r := runSlice(s, spec, 20*time.Millisecond, 80*time.Millisecond, 5*time.Second)
		if r.Fail.Total() != 0 || r.OK == 0 {
			t.Fatalf("%s: OK %d, failures %v", kind, r.OK, r.Fail.First)
		}
		calls, in, out := n.calls.Load(), n.in.Load(), n.out.Load()
		if calls < r.OK || in/calls == 0 || out/calls < 16<<10 {
			t.Fatalf("%s: %d calls (%d OK), %d bytes in, %d out", kind, calls, r.OK, in, out)
		}
		if kind == payloadEcho && in/calls < 16<<10 {
			t.Fatalf("echo: %d bytes in per call", in/calls)
		}
	}
}

func TestPayloadSliceCatchesAWrongEcho(t *testing.T) {
	s := testServer(t, docServer{spoil: true})
	s.cfg.Stateful = false
	e := payload.NewEcho(1 << 10)
	var n bodyCount
	r := runSlice(s, sliceSpec{Conns: 2, Drain: true, Call: payloadCall(payloadEcho, 1, e, "", &n)}, 10*time.Millisecond, 80*time.Millisecond, 5*time.Second)
	if r.Fail.Count["echo"] == 0 {
		t.Fatalf("a wrong echo went unnoticed: %v", r.Fail.Count)
	}
}

// The targets' verdicts follow the figures: CPU per call against bare's,
// bytes allocated against the bodies.
func TestPayloadVerdicts(t *testing.T) {
	o := &options{workloads: map[string]bool{"payload": true}}
	o.payload = payloadOptions{sizes: []int{1, 16}, conns: []int{16}, rounds: 1, warmup: time.Millisecond, slice: time.Millisecond}
	r := &runResult{Opts: o, Payload: map[string]*payloadAgg{}}
	cell := func(name string, kib int, cpuNS int64, bytes uint64) {
		for _, kind := range payloadKinds {
			a := &payloadAgg{Calls: 10, InBytes: 10 * 1000, OutBytes: 10 * 1000}
			a.OK, a.CPUNS, a.Bytes, a.Window, a.SliceRPS = 10, 10*cpuNS, 10*bytes, time.Second, []float64{10}
			r.Payload[payloadKey(name, kind, kib, 16)] = a
		}
	}
	r.Configs = []configs.Config{{Name: configs.Bare, Library: "bare"}, {Name: "saguaro-a", Library: "saguaro"}, {Name: "saguaro-b", Library: "saguaro"},
		{Name: "saguaro-tp", Library: "saguaro", Only: "throughput"}}
	cell(configs.Bare, 16, 1000, 5000)
	cell("saguaro-a", 16, 500, 3000)  // 0.5× CPU, 1.5× bytes: meets both
	cell("saguaro-b", 16, 600, 3100)  // misses both
	cell(configs.Bare, 1, 1000, 5000) // no target at 1 KiB
	cell("saguaro-a", 1, 900, 9000)
	if v := payloadVerdict(r, "saguaro-a", payloadEcho, 16, 16); !strings.Contains(v, "meets both") {
		t.Fatalf("verdict %q", v)
	}
	if v := payloadVerdict(r, "saguaro-b", payloadRead, 16, 16); !strings.Contains(v, "misses CPU and bytes") || !strings.Contains(v, "0.60× bare") || !strings.Contains(v, "1.55×") {
		t.Fatalf("verdict %q", v)
	}
	if v := payloadVerdict(r, "saguaro-a", payloadEcho, 1, 16); strings.Contains(v, "meets") || strings.Contains(v, "misses") {
		t.Fatalf("a verdict at 1 KiB: %q", v)
	}
	r.Payload[payloadKey("saguaro-b", payloadEcho, 16, 16)].Fail.Add(&check.Error{Kind: "echo", Detail: "echoed 3 bytes"})
	if v := payloadVerdict(r, "saguaro-b", payloadEcho, 16, 16); !strings.Contains(v, "FAILED") {
		t.Fatalf("verdict %q", v)
	}
	if got := payloadFailures(r, "saguaro-b"); len(got) != 1 || !strings.Contains(got[0], "tools/call echo 16 KiB") {
		t.Fatalf("failures %q", got)
	}
	var page strings.Builder
	renderPayload(r, func(f string, args ...any) { fmt.Fprintf(&page, f, args...) })
	for _, want := range []string{"### Targets", "#### tools/call echo, 16 KiB, 16 connections", "#### resources/read, 1 KiB", "no target at this size", "| saguaro-a | 10 |"} {
		if !strings.Contains(page.String(), want) {
			t.Errorf("page without %q", want)
		}
	}
	if strings.Contains(page.String(), "saguaro-tp") {
		t.Errorf("a throughput-only configuration on the payload page:\n%s", page.String())
	}
}
