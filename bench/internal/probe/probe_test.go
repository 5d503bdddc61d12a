package probe

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

var sink [][]byte

func TestHandler(t *testing.T) {
	read := func(q string) Snapshot {
		t.Helper()
		w := httptest.NewRecorder()
		Handler().ServeHTTP(w, httptest.NewRequest(http.MethodGet, Path+q, nil))
		if w.Code != 200 {
			t.Fatalf("status %d", w.Code)
		}
		var s Snapshot
		if err := json.Unmarshal(w.Body.Bytes(), &s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	a := read("")
	for range 1000 {
		sink = append(sink, make([]byte, 1024))
	}
	b := read("?gc=1")
	if !b.ForcedGC || a.ForcedGC {
		t.Fatalf("forced_gc %v %v", a.ForcedGC, b.ForcedGC)
	}
	if b.AllocObjs-a.AllocObjs < 1000 || b.AllocBytes-a.AllocBytes < 1000*1024 {
		t.Fatalf("allocations not counted: %d objects, %d bytes", b.AllocObjs-a.AllocObjs, b.AllocBytes-a.AllocBytes)
	}
	if b.HeapLive < 1000*1024 || b.Goroutines == 0 || b.CPUNS() <= 0 || b.GCCycles <= a.GCCycles {
		t.Fatalf("implausible snapshot %+v", b)
	}
	w := httptest.NewRecorder()
	Handler().ServeHTTP(w, httptest.NewRequest(http.MethodPost, Path, nil))
	if w.Code != http.StatusMethodNotAllowed {
		t.Fatalf("POST: %d", w.Code)
	}
}
