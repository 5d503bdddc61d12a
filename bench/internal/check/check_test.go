package check

import (
	"testing"
)

const okBody = `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"hello"}]}}`

func jsonResp(status int, body string) Response {
	return Response{Status: status, ContentType: "application/json", Body: []byte(body)}
}

func TestCall(t *testing.T) {
	tests := []struct {
		name string
		r    Response
		kind string // "" = must pass
	}{
		{"ok", jsonResp(200, okBody), ""},
		{"ok with charset and structured extras", Response{200, "application/json; charset=utf-8",
			[]byte(`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"hello"}],"isError":false,"_meta":{}}}`)}, ""},
		{"ok as event stream after a priming event and a notification", Response{200, "text/event-stream",
			[]byte("id: 0\ndata:\n\n" +
				"event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n" +
				"event: message\r\ndata: " + okBody + "\r\n\r\n")}, ""},
		{"wrong echo", jsonResp(200, `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"hellO"}]}}`), "echo"},
		{"empty echo", jsonResp(200, `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":""}]}}`), "echo"},
		{"jsonrpc error", jsonResp(200, `{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"invalid params"}}`), "jsonrpc-error"},
		{"bad status", jsonResp(500, okBody), "status"},
		{"bad status 400 with error body", jsonResp(400, `{"jsonrpc":"2.0","id":7,"error":{"code":-32600,"message":"x"}}`), "status"},
		{"accepted is not an answer", jsonResp(202, ""), "status"},
		{"wrong id", jsonResp(200, `{"jsonrpc":"2.0","id":8,"result":{"content":[{"type":"text","text":"hello"}]}}`), "id"},
		{"string id for a numeric request", jsonResp(200, `{"jsonrpc":"2.0","id":"7","result":{"content":[{"type":"text","text":"hello"}]}}`), "id"},
		{"missing jsonrpc version", jsonResp(200, `{"id":7,"result":{"content":[{"type":"text","text":"hello"}]}}`), "json"},
		{"isError result", jsonResp(200, `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"hello"}],"isError":true}}`), "result"},
		{"no content", jsonResp(200, `{"jsonrpc":"2.0","id":7,"result":{"content":[]}}`), "result"},
		{"two blocks", jsonResp(200, `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"hello"},{"type":"text","text":"hello"}]}}`), "result"},
		{"image block", jsonResp(200, `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"image","data":"aGVsbG8=","mimeType":"image/png"}]}}`), "result"},
		{"null result", jsonResp(200, `{"jsonrpc":"2.0","id":7,"result":null}`), "result"},
		{"not json", jsonResp(200, `hello`), "json"},
		{"truncated json", jsonResp(200, okBody[:40]), "json"},
		{"wrong media type", Response{200, "text/plain", []byte(okBody)}, "media-type"},
		{"stream without the response", Response{200, "text/event-stream",
			[]byte("event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n")}, "result"},
		{"empty stream", Response{200, "text/event-stream", []byte(": ok\n\n")}, "result"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Call(tt.r, 7, "hello")
			if tt.kind == "" {
				if err != nil {
					t.Fatalf("Call: %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Call accepted a bad response, want a %q failure", tt.kind)
			}
			if got := Kind(err); got != tt.kind {
				t.Fatalf("Kind = %q (%v), want %q", got, err, tt.kind)
			}
		})
	}
}

func TestCallEscapedText(t *testing.T) {
	text := "a \"quoted\" \\ line\nwith unicode é and <html>"
	body := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"a \"quoted\" \\ line\nwith unicode \u00e9 and \u003chtml\u003e"}]}}`
	if err := Call(jsonResp(200, body), 1, text); err != nil {
		t.Fatalf("Call: %v", err)
	}
}

func TestInitialize(t *testing.T) {
	const ok = `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}`
	if err := Initialize(jsonResp(200, ok), 1, "abc-123", true, "2025-11-25"); err != nil {
		t.Fatalf("Initialize: %v", err)
	}
	if err := Initialize(jsonResp(200, ok), 1, "", false, "2025-11-25"); err != nil {
		t.Fatalf("Initialize stateless: %v", err)
	}
	bad := []struct {
		name      string
		r         Response
		sessionID string
		kind      string
	}{
		{"stateful without session id", jsonResp(200, ok), "", "session"},
		{"session id with a space", jsonResp(200, ok), "a b", "session"},
		{"other version", jsonResp(200, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-03-26","capabilities":{},"serverInfo":{}}}`), "s", "result"},
		{"no serverInfo", jsonResp(200, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{}}}`), "s", "result"},
		{"error", jsonResp(200, `{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"no"}}`), "s", "jsonrpc-error"},
		{"status", jsonResp(404, ok), "s", "status"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			err := Initialize(tt.r, 1, tt.sessionID, true, "2025-11-25")
			if err == nil || Kind(err) != tt.kind {
				t.Fatalf("Initialize = %v, want a %q failure", err, tt.kind)
			}
		})
	}
}

func TestAccepted(t *testing.T) {
	if err := Accepted(Response{Status: 202}); err != nil {
		t.Fatalf("Accepted(202): %v", err)
	}
	for _, st := range []int{200, 204, 400, 404, 500} {
		if err := Accepted(Response{Status: st}); err == nil || Kind(err) != "status" {
			t.Fatalf("Accepted(%d) = %v, want a status failure", st, err)
		}
	}
}

func TestKindOfOtherErrors(t *testing.T) {
	if got := Kind(errString("io")); got != "transport" {
		t.Fatalf("Kind = %q, want transport", got)
	}
}

type errString string

func (e errString) Error() string { return string(e) }

func sse(msgs ...string) Response {
	var b []byte
	b = append(b, "id: 0\ndata:\n\n"...) // a priming event
	for _, m := range msgs {
		b = append(b, "event: message\ndata: "+m+"\n\n"...)
	}
	return Response{Status: 200, ContentType: "text/event-stream", Body: b}
}

func prog(tok string, p int) string {
	return `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"` + tok + `","progress":` + string(rune('0'+p)) + `,"total":3}}`
}

func TestProgress(t *testing.T) {
	tests := []struct {
		name string
		r    Response
		kind string
	}{
		{"ok", sse(prog("t1", 1), prog("t1", 2), prog("t1", 3), okBody), ""},
		{"ok with a log notification between", sse(prog("t1", 1),
			`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`,
			prog("t1", 2), prog("t1", 3), okBody), ""},
		{"another request's progress", sse(prog("t1", 1), prog("t2", 1), prog("t1", 2), prog("t1", 3), okBody), "crosstalk"},
		{"a numeric token is not the string sent", sse(
			`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`, okBody), "crosstalk"},
		{"missing notifications", sse(prog("t1", 1), prog("t1", 2), okBody), "progress"},
		{"extra notification", sse(prog("t1", 1), prog("t1", 2), prog("t1", 3), prog("t1", 4), okBody), "progress"},
		{"not increasing", sse(prog("t1", 1), prog("t1", 1), prog("t1", 3), okBody), "progress"},
		{"progress after the response", sse(prog("t1", 1), prog("t1", 2), okBody, prog("t1", 3)), "progress"},
		{"answered as JSON, notifications lost", jsonResp(200, okBody), "media-type"},
		{"wrong echo after good progress", sse(prog("t1", 1), prog("t1", 2), prog("t1", 3),
			`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"nope"}]}}`), "echo"},
		{"error after progress", sse(prog("t1", 1), `{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"x"}}`), "jsonrpc-error"},
		{"no response", sse(prog("t1", 1), prog("t1", 2), prog("t1", 3)), "result"},
		{"bad status", Response{Status: 404, ContentType: "text/event-stream"}, "status"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Progress(tt.r, 7, "hello", "t1", 3)
			if tt.kind == "" {
				if err != nil {
					t.Fatalf("Progress: %v, want nil", err)
				}
				return
			}
			if err == nil || Kind(err) != tt.kind {
				t.Fatalf("Progress = %v, want a %q failure", err, tt.kind)
			}
		})
	}
}

func TestCallComplete(t *testing.T) {
	const modern = `{"jsonrpc":"2.0","id":7,"result":{"resultType":"complete","content":[{"type":"text","text":"hello"}],"_meta":{}}}`
	tests := []struct {
		name string
		r    Response
		kind string // "" = must pass
	}{
		{"ok", jsonResp(200, modern), ""},
		{"no resultType", jsonResp(200, okBody), "result"},
		{"input_required", jsonResp(200, `{"jsonrpc":"2.0","id":7,"result":{"resultType":"input_required","content":[{"type":"text","text":"hello"}]}}`), "result"},
		{"wrong echo", jsonResp(200, `{"jsonrpc":"2.0","id":7,"result":{"resultType":"complete","content":[{"type":"text","text":"hellO"}]}}`), "echo"},
		{"wrong id", jsonResp(200, `{"jsonrpc":"2.0","id":8,"result":{"resultType":"complete","content":[{"type":"text","text":"hello"}]}}`), "id"},
		{"400 header mismatch", jsonResp(400, `{"jsonrpc":"2.0","id":7,"error":{"code":-32020,"message":"x"}}`), "status"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CallComplete(tt.r, 7, "hello")
			if got := kindOf(err); got != tt.kind {
				t.Fatalf("kind %q, want %q (err %v)", got, tt.kind, err)
			}
		})
	}
}

func kindOf(err error) string {
	if err == nil {
		return ""
	}
	return Kind(err)
}
