package wire

import (
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// FuzzDecode proves that decoding never panics and that the answer rule
// holds: a request gets exactly one response, a valid notification or
// response gets none, and anything invalid gets exactly one error whose
// encoding is valid JSON and UTF-8.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"no"}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"n"}]`,
		`[]`, `{}`, `1e3`, `{"jsonrpc":"2.0","id":1.5,"method":"x"}`, "\xff",
	} {
		f.Add([]byte(s))
	}
	d := NewDecoder("ping", "tools/call")
	f.Fuzz(func(t *testing.T, data []byte) {
		answers := func(m Message, err *Error) int {
			if err != nil {
				out := AppendErrorResponse(nil, m.ID, err)
				if !json.Valid(out) || !utf8.Valid(out) {
					t.Fatalf("bad error encoding %q", out)
				}
				return 1
			}
			switch m.Kind {
			case KindRequest:
				out := AppendResponse(nil, m.ID, []byte(`{}`))
				if !json.Valid(out) {
					t.Fatalf("bad response encoding %q", out)
				}
				return 1
			case KindNotification, KindResponse, KindErrorResponse:
				return 0
			}
			t.Fatalf("valid message of kind %v", m.Kind)
			return 0
		}
		m, err := d.Decode(data)
		if err == nil && m.Kind == KindRequest && m.ID.IsZero() {
			t.Fatal("request without id")
		}
		if n := answers(m, err); n > 1 {
			t.Fatal("more than one answer")
		}
		if IsBatch(data) {
			items, berr := d.DecodeBatch(data, 0)
			if berr != nil {
				if items != nil {
					t.Fatal("items with a batch error")
				}
				return
			}
			for _, it := range items {
				answers(it.Msg, it.Err)
			}
		}
	})
}
