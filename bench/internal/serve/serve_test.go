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

func TestParseKiB(t *testing.T) {
	got, err := ParseKiB(" 1, 16,256 ")
	if err != nil || len(got) != 3 || got[0] != 1 || got[1] != 16 || got[2] != 256 {
		t.Fatalf("ParseKiB = %v, %v", got, err)
	}
	if got, err := ParseKiB(""); err != nil || got != nil {
		t.Fatalf("ParseKiB(\"\") = %v, %v", got, err)
	}
	for _, bad := range []string{"0", "-1", "x", "1.5", "65537"} {
		if _, err := ParseKiB(bad); err == nil {
			t.Errorf("ParseKiB(%q) accepted it", bad)
		}
	}
}
