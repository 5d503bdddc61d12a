package check

import (
	"encoding/json"
	"strings"
	"testing"
)

// longText has what the payload workload's text has: tabs, newlines,
// quotes, backslashes, HTML characters and non-ASCII letters.
var longText = strings.Repeat("\tif x := m[\"clé\"]; x != nil && y < 2 {\n\t\treturn `C:\\dir` // naïve 日本 🚀\n\t}\n", 200)

func echoBody(id, text string) string {
	t, _ := json.Marshal(text) // encoding/json escapes <, > and & as \u003c…: still the same text
	return `{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":` + string(t) + `}]}}`
}

func TestLongCall(t *testing.T) {
	head, body := "/* w1 #2 */\n", longText
	whole := head + body
	tests := []struct {
		name   string
		r      Response
		modern bool
		kind   string // "" = must pass
	}{
		{"ok", jsonResp(200, echoBody("7", whole)), false, ""},
		{"ok with other escapes", jsonResp(200, `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"\/* w1 #2 *\/\n`+
			strings.ReplaceAll(strings.TrimPrefix(echoBody("7", body), `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"`), "é", `\u00e9`)), false, ""},
		{"ok as an event stream after a notification", Response{200, "text/event-stream", []byte(
			"event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n" +
				"event: message\ndata: " + echoBody("7", whole) + "\n\n")}, false, ""},
		{"ok modern", jsonResp(200, strings.Replace(echoBody("7", whole), `"result":{`, `"result":{"resultType":"complete",`, 1)), true, ""},
		{"modern without resultType", jsonResp(200, echoBody("7", whole)), true, "result"},
		{"modern input_required", jsonResp(200, strings.Replace(echoBody("7", whole), `"result":{`, `"result":{"resultType":"input_required",`, 1)), true, "result"},
		{"last byte differs", jsonResp(200, echoBody("7", whole[:len(whole)-1]+"X")), false, "echo"},
		{"truncated", jsonResp(200, echoBody("7", whole[:len(whole)-1])), false, "echo"},
		{"longer", jsonResp(200, echoBody("7", whole+" ")), false, "echo"},
		{"another request's head", jsonResp(200, echoBody("7", "/* w1 #3 */\n"+body)), false, "echo"},
		{"body only", jsonResp(200, echoBody("7", body)), false, "echo"},
		{"wrong id", jsonResp(200, echoBody("8", whole)), false, "id"},
		{"jsonrpc error", jsonResp(200, `{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"too big"}}`), false, "jsonrpc-error"},
		{"isError", jsonResp(200, strings.Replace(echoBody("7", whole), `"result":{`, `"result":{"isError":true,`, 1)), false, "result"},
		{"two blocks", jsonResp(200, strings.Replace(echoBody("7", whole), `"content":[`, `"content":[{"type":"text","text":"x"},`, 1)), false, "result"},
		{"null result", jsonResp(200, `{"jsonrpc":"2.0","id":7,"result":null}`), false, "result"},
		{"invalid JSON string", jsonResp(200, `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"a`+"\t"+`b"}]}}`), false, "json"},
		{"status 413", jsonResp(413, `request too large`), false, "status"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := LongCall(tt.r, 7, tt.modern, head, body)
			if tt.kind == "" {
				if err != nil {
					t.Fatalf("LongCall: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("LongCall accepted a bad answer, want %q", tt.kind)
			}
			if got := Kind(err); got != tt.kind {
				t.Fatalf("Kind = %q (%v), want %q", got, err, tt.kind)
			}
		})
	}
}

func readBody(id, uri, mime, text string) string {
	c, _ := json.Marshal(map[string]string{"uri": uri, "mimeType": mime, "text": text})
	return `{"jsonrpc":"2.0","id":` + id + `,"result":{"contents":[` + string(c) + `]}}`
}

func TestResourceRead(t *testing.T) {
	const uri, mime = "bench://doc/16", "text/x-go"
	tests := []struct {
		name   string
		r      Response
		modern bool
		kind   string
	}{
		{"ok", jsonResp(200, readBody("7", uri, mime, longText)), false, ""},
		{"ok modern with caching hints", jsonResp(200, strings.Replace(readBody("7", uri, mime, longText), `"result":{`,
			`"result":{"resultType":"complete","ttlMs":0,"cacheScope":"private",`, 1)), true, ""},
		{"modern without resultType", jsonResp(200, readBody("7", uri, mime, longText)), true, "result"},
		{"text differs", jsonResp(200, readBody("7", uri, mime, longText[1:])), false, "text"},
		{"wrong uri", jsonResp(200, readBody("7", "bench://doc/1", mime, longText)), false, "result"},
		{"wrong media type", jsonResp(200, readBody("7", uri, "text/plain", longText)), false, "result"},
		{"no media type", jsonResp(200, `{"jsonrpc":"2.0","id":7,"result":{"contents":[{"uri":"`+uri+`","text":"x"}]}}`), false, "result"},
		{"blob", jsonResp(200, `{"jsonrpc":"2.0","id":7,"result":{"contents":[{"uri":"`+uri+`","mimeType":"`+mime+`","blob":"eA=="}]}}`), false, "result"},
		{"two entries", jsonResp(200, strings.Replace(readBody("7", uri, mime, longText), `"contents":[`, `"contents":[{"uri":"x:y","text":""},`, 1)), false, "result"},
		{"no entries", jsonResp(200, `{"jsonrpc":"2.0","id":7,"result":{"contents":[]}}`), false, "result"},
		{"wrong id", jsonResp(200, readBody("9", uri, mime, longText)), false, "id"},
		{"not found", jsonResp(200, `{"jsonrpc":"2.0","id":7,"error":{"code":-32002,"message":"Resource not found"}}`), false, "jsonrpc-error"},
		{"tool answer", jsonResp(200, echoBody("7", longText)), false, "result"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ResourceRead(tt.r, 7, tt.modern, uri, mime, longText)
			if tt.kind == "" {
				if err != nil {
					t.Fatalf("ResourceRead: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("ResourceRead accepted a bad answer, want %q", tt.kind)
			}
			if got := Kind(err); got != tt.kind {
				t.Fatalf("Kind = %q (%v), want %q", got, err, tt.kind)
			}
		})
	}
}
