package mcp

import (
	"encoding/json"
	"testing"
)

// FuzzRendersViews: whatever a client declares under the extension, the
// check answers without panicking, and only a declared view MIME type
// makes a UI client.
func FuzzRendersViews(f *testing.F) {
	for _, s := range []string{`{"mimeTypes":["text/html;profile=mcp-app"]}`, `{"mimeTypes":["text/html; profile=\"mcp-app\""]}`,
		`{}`, `{"mimeTypes":"text/html;profile=mcp-app"}`, `{"mimeTypes":[1,null]}`, `null`, `[]`, `{"mimeTypes":["text/html"]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		c := &ClientCapabilities{Extensions: map[string]json.RawMessage{ExtUI: raw}}
		got := rendersViews(c)
		var s struct {
			MIMETypes []string `json:"mimeTypes"`
		}
		want := false
		if json.Unmarshal(raw, &s) == nil {
			for _, m := range s.MIMETypes {
				want = want || isViewMIME(m)
			}
		}
		if got != want {
			t.Fatalf("rendersViews(%s) = %v", raw, got)
		}
		req := &Request{Revision: Rev20250326, Client: c}
		if req.RendersViews() {
			t.Fatal("a 2025-03-26 client renders no views")
		}
	})
}
