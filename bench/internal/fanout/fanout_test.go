package fanout

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestPayloadRoundTrip(t *testing.T) {
	for _, c := range [][2]int64{{0, 0}, {1, 1712345678901234567}, {1 << 40, 9223372036854775807}} {
		b := AppendPayload(nil, c[0], c[1])
		seq, ts, err := ParsePayload(b)
		if err != nil || seq != c[0] || ts != c[1] {
			t.Errorf("%s: got %d %d %v", b, seq, ts, err)
		}
	}
	for _, bad := range []string{"", "{}", `{"seq":1}`, `{"seq":,"ts":1}`, `{"seq":1,"ts":1`, `{"seq":-1,"ts":1}`,
		`{"seq":1,"ts":1} `, `{"seq":1,"ts":12345678901234567890}`, `{"seq":1,"ts":1x}`} {
		if _, _, err := ParsePayload([]byte(bad)); err == nil {
			t.Errorf("ParsePayload(%q) accepted it", bad)
		}
	}
}

func TestPublisher(t *testing.T) {
	var got []byte
	h := Publisher(func(data []byte) { got = data })
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/publish?seq=7", nil))
	if rec.Code != http.StatusNoContent {
		t.Fatalf("status %d", rec.Code)
	}
	if seq, ts, err := ParsePayload(got); err != nil || seq != 7 || ts == 0 {
		t.Fatalf("published %q", got)
	}
	for _, req := range []*http.Request{httptest.NewRequest(http.MethodGet, "/publish?seq=1", nil),
		httptest.NewRequest(http.MethodPost, "/publish?seq=x", nil)} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code/100 != 4 {
			t.Errorf("%s %s: status %d", req.Method, req.URL, rec.Code)
		}
	}
}
