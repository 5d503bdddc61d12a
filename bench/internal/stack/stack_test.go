package stack

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestWrap(t *testing.T) {
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "inner")
	})
	var logs bytes.Buffer
	s, err := Wrap("/mcp", inner, &logs)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	send := func(token string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader("{}"))
		if token != "" {
			r.Header.Set("Authorization", "Bearer "+token)
		}
		w := httptest.NewRecorder()
		s.Handler.ServeHTTP(w, r)
		return w
	}
	if w := send(s.Token); w.Code != 200 || w.Body.String() != "inner" {
		t.Fatalf("with the minted token: %d %q", w.Code, w.Body.String())
	}
	if w := send(""); w.Code != 401 || w.Header().Get("WWW-Authenticate") == "" {
		t.Fatalf("without a token: %d %q", w.Code, w.Header().Get("WWW-Authenticate"))
	}
	if w := send(s.Token + "x"); w.Code != 401 {
		t.Fatalf("with a spoiled token: %d", w.Code)
	}
	if n := strings.Count(logs.String(), "\n"); n != 3 {
		t.Fatalf("%d log lines, want one per request:\n%s", n, logs.String())
	}
	if strings.Contains(logs.String(), s.Token) {
		t.Fatal("the token reached the log")
	}
}
