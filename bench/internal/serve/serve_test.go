package serve

import (
	"encoding/json"
	"testing"
)

func TestParseReady(t *testing.T) {
	in := Ready{Name: "x", Mode: "m", MCPURL: "http://127.0.0.1:1/mcp", ProbeURL: "http://127.0.0.1:2/debug/bench",
		Headers: map[string]string{"Authorization": "Bearer t"}}
	b, _ := json.Marshal(in)
	got, err := ParseReady(ReadyPrefix + string(b) + "\n")
	if err != nil {
		t.Fatal(err)
	}
	if got.MCPURL != in.MCPURL || got.ProbeURL != in.ProbeURL || got.Headers["Authorization"] != "Bearer t" {
		t.Fatalf("got %+v", got)
	}
	for _, bad := range []string{"", ReadyPrefix, ReadyPrefix + "{}", "panic: boom"} {
		if _, err := ParseReady(bad); err == nil {
			t.Errorf("ParseReady(%q) accepted it", bad)
		}
	}
}
