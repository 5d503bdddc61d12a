package mcp

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/saguaro-go/saguaro/mcp/internal/wire"
)

func TestContentEncoding(t *testing.T) {
	size := int64(3)
	prio := 0.5
	tests := []struct {
		c    Content
		want string
	}{
		{Text("hi\n\"x\""), `{"type":"text","text":"hi\n\"x\""}`},
		{Text(""), `{"type":"text","text":""}`},
		{Image([]byte("png"), "image/png"), `{"type":"image","data":"cG5n","mimeType":"image/png"}`},
		{Audio([]byte("wav"), "audio/wav"), `{"type":"audio","data":"d2F2","mimeType":"audio/wav"}`},
		{&ResourceLink{URI: "x://a", Name: "a", MIMEType: "text/plain", Size: &size}, `{"type":"resource_link","uri":"x://a","name":"a","mimeType":"text/plain","size":3}`},
		{EmbeddedText("x://t", "text/plain", ""), `{"type":"resource","resource":{"uri":"x://t","mimeType":"text/plain","text":""}}`},
		{EmbeddedBlob("x://b", "", []byte{0xff}), `{"type":"resource","resource":{"uri":"x://b","blob":"/w=="}}`},
		{&TextContent{Text: "a", Annotations: &Annotations{Audience: []Role{RoleUser}, Priority: &prio}, Meta: Meta{"k": 1}},
			`{"type":"text","text":"a","annotations":{"audience":["user"],"priority":0.5},"_meta":{"k":1}}`},
		{Link("x://l", "l"), `{"type":"resource_link","uri":"x://l","name":"l"}`},
	}
	for _, tt := range tests {
		b, err := json.Marshal(tt.c)
		if err != nil || string(b) != tt.want {
			t.Errorf("got %s %v\nwant %s", b, err, tt.want)
			continue
		}
		back, err := DecodeContent(b)
		if err != nil {
			t.Errorf("%s: %v", b, err)
			continue
		}
		again, _ := json.Marshal(back)
		if string(again) != tt.want {
			t.Errorf("round trip: %s", again)
		}
	}
	if _, err := json.Marshal(Text("bad \xff")); !errors.Is(err, wire.ErrInvalidUTF8) {
		t.Errorf("invalid UTF-8 text: %v", err)
	}
	for _, bad := range []string{`{"type":"tool_use"}`, `{"type":"text"}`, `{"type":"resource"}`, `[]`} {
		if _, err := DecodeContent(json.RawMessage(bad)); err == nil {
			t.Errorf("%s decoded", bad)
		}
	}
	if _, err := json.Marshal(&EmbeddedResource{}); err == nil {
		t.Error("embedded resource without contents encoded")
	}
}

func TestCreateMessageResultArrayContent(t *testing.T) {
	var r CreateMessageResult
	if err := json.Unmarshal([]byte(`{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"tool_use","id":"x"}],"model":"m"}`), &r); err != nil {
		t.Fatal(err)
	}
	if r.Content.(*TextContent).Text != "a" || len(r.Raw) == 0 {
		t.Errorf("got %+v", r)
	}
	if err := json.Unmarshal([]byte(`{"content":{"type":"text","text":"a"}}`), &r); err == nil {
		t.Error("result without role accepted")
	}
}
