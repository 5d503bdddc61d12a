package soak

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestVerdict(t *testing.T) {
	kill := window{Name: windowKill, From: 10 * time.Second, To: 20 * time.Second}
	cases := []struct {
		o    outcome
		want bool
	}{
		{outcome{Kind: kindSlowBody, Status: 408}, true},
		{outcome{Kind: kindSlowBody, Err: "connection closed"}, true},
		{outcome{Kind: kindSlowBody, Err: "not cut within the body timeout"}, false},
		{outcome{Kind: kindLegacyCall, Status: 503, RetryAfter: true}, true},
		{outcome{Kind: kindLegacyCall, Status: 503}, false},
		{outcome{Kind: kindLegacyCall, Status: 429, RetryAfter: true}, true},
		{outcome{Kind: kindLegacyCall, Status: 502, At: 15 * time.Second}, true},
		{outcome{Kind: kindLegacyCall, Status: 502, At: 30 * time.Second}, false},
		{outcome{Kind: kindLegacyCall, Status: 404, At: 12 * time.Second}, true},
		{outcome{Kind: kindLegacyCall, Status: 404, At: 2 * time.Second}, false},
		{outcome{Kind: kindResume, Status: 409}, true},
		{outcome{Kind: kindLegacyCall, Status: 409}, false},
		{outcome{Kind: kindResume, Status: 200, Err: "bad answer: event 0-3 replayed", At: 15 * time.Second}, false},
		{outcome{Kind: kindFeed, Status: 200, Err: "connection closed mid-answer", At: 15 * time.Second}, true},
		{outcome{Kind: kindModernCall, Status: 500}, false},
	}
	for _, c := range cases {
		if got, why := verdict(c.o, []window{kill}); got != c.want {
			t.Errorf("%s at %s: documented=%v (%s), want %v", c.o, c.o.At, got, why, c.want)
		}
	}
}

func TestReadStream(t *testing.T) {
	in := "id: s-1\ndata:\n\n: keep-alive\n\nid: s-2\ndata: {\"a\":1}\ndata: {\"b\":2}\n\nevent: x\ndata: last\n\n"
	var ids, datas []string
	err := readStream(strings.NewReader(in), func(id string, data []byte) bool {
		ids, datas = append(ids, id), append(datas, string(data))
		return true
	})
	if err == nil {
		t.Fatal("a stream that ends before the caller stops is an unexpected EOF")
	}
	if strings.Join(ids, ",") != "s-1,s-2," || datas[1] != "{\"a\":1}\n{\"b\":2}" || datas[2] != "last" {
		t.Fatalf("ids %q, data %q", ids, datas)
	}
	if streamOf("0-17") != "0" || seqOf("0-17") != 17 || seqOf("a-b-3") != 3 {
		t.Fatal("event ids split wrong")
	}
}

// procStatus counts this process's descriptors, and among them its
// connections to a given port.
func TestProcStatus(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	rss, fds, pooled, err := procStatus(os.Getpid(), map[int]bool{port: true})
	if err != nil {
		t.Skip("no /proc here:", err)
	}
	if rss < 1<<20 || fds < 5 || pooled != 1 {
		t.Fatalf("rss %d, fds %d, connections to port %d: %d (want 1)", rss, fds, port, pooled)
	}
	_, fds2, _, _ := procStatus(os.Getpid(), nil)
	conn.Close()
	_, fds3, _, _ := procStatus(os.Getpid(), nil)
	if fds3 != fds2-1 {
		t.Fatalf("closing a connection took fds from %d to %d", fds2, fds3)
	}
}

// A result whose figures went back to baseline passes; one more goroutine
// than the slack, a heap 11% up, a lost task or an undocumented failure
// each fail their criterion, and the report and chart are written.
func TestCriteriaAndReport(t *testing.T) {
	start := time.Now()
	mk := func() *Result {
		led := newLedger(start)
		led.success(kindLegacyCall, "single")
		led.created("single", "a", "b")
		b := sample{Proc: "single", Goroutines: 10, FDs: 12, Heap: 2 << 20, RSS: 30 << 20}
		return &Result{Started: start, Ledger: led, Checked: map[string]int{"single": 2}, Missing: map[string][]string{},
			Procs:   []*ProcResult{{Name: "single", Baseline: b, Final: b}},
			Samples: []sample{b, {Proc: "single", At: time.Second, Goroutines: 30, FDs: 20, Heap: 5 << 20, RSS: 35 << 20}},
			Windows: []window{{Name: windowKill, From: time.Second, To: 2 * time.Second}}}
	}
	if r := mk(); !r.Passed() {
		t.Fatalf("back to baseline fails: %+v", r.Criteria())
	}
	if r := mk(); func() bool {
		r.Procs[0].Final.Pooled = r.Procs[0].Baseline.Pooled + 2
		r.Procs[0].Final.Heap = r.Procs[0].Baseline.Heap*109/100 + 2*pooledHeap
		return !r.Passed()
	}() {
		t.Fatalf("two more pooled connections' buffers count against the heap: %+v", r.Criteria())
	}
	fails := map[string]func(*Result){
		"goroutines":  func(r *Result) { r.Procs[0].Final.Goroutines += goroutineSlack + 1 },
		"descriptors": func(r *Result) { r.Procs[0].Final.FDs += fdSlack + 1 },
		"heap":        func(r *Result) { r.Procs[0].Final.Heap = r.Procs[0].Baseline.Heap * 111 / 100 },
		"heap within": func(r *Result) {
			// Two more pooled connections excuse their buffers, not more.
			r.Procs[0].Final.Pooled = r.Procs[0].Baseline.Pooled + 2
			r.Procs[0].Final.Heap = r.Procs[0].Baseline.Heap*111/100 + 2*pooledHeap
		},
		"lost":       func(r *Result) { r.Missing["single"] = []string{"b"} },
		"documented": func(r *Result) { r.Ledger.fail(outcome{Kind: kindModernCall, Target: "single", Status: 500}) },
	}
	for name, spoil := range fails {
		r := mk()
		spoil(r)
		failed := 0
		for _, c := range r.Criteria() {
			if !c.Pass {
				failed++
				if !strings.Contains(c.Name, name) && !strings.Contains(c.Name, map[string]string{"lost": "lost", "descriptors": "file descriptors"}[name]) {
					t.Errorf("%s: the wrong criterion failed: %s", name, c.Name)
				}
			}
		}
		if failed != 1 {
			t.Errorf("%s: %d criteria failed, want 1", name, failed)
		}
	}

	r := mk()
	dir := t.TempDir()
	png := filepath.Join(dir, "soak.png")
	if err := r.Plot(png); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(png)
	if err != nil || !bytes.HasPrefix(b, []byte("\x89PNG")) {
		t.Fatalf("no PNG: %v", err)
	}
	var md bytes.Buffer
	if err := r.WriteReport(&md, Header{Title: "T", Command: "make soak", PNG: "soak.png"}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"verdict: **PASS**", "| heap within 10% of baseline", "![heap, RSS", "| single | 10 → 10 |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("the report lacks %q:\n%s", want, md.String())
		}
	}
}
