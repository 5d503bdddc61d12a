package protocol

import (
	"fmt"
	"testing"
)

// ReadModern's pass reads a tools/call's params as ReadToolCall does,
// errors and duplicates included.
func TestReadModernReadsToolCall(t *testing.T) {
	t.Parallel()
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"progressToken":%s}`
	for _, p := range []string{
		`{"name":"echo","arguments":{"text":"a"},` + fmt.Sprintf(meta, `"t"`) + `}`,
		`{"name":"echo","arguments":null,` + fmt.Sprintf(meta, `1`) + `}`,
		`{"name":"echo","arguments":[1],` + fmt.Sprintf(meta, `2`) + `}`,
		`{"name":"x","arguments":{},` + fmt.Sprintf(meta, `true`) + `,"name":"echo"}`,
		`{"arguments":{},` + fmt.Sprintf(meta, `"t"`) + `}`,
		`{"name":"echo","name":"echo","arguments":{},"arguments":{"text":"b"},` + fmt.Sprintf(meta, `"t"`) + `}`,
	} {
		m, err := ReadModern(nil, "tools/call", []byte(p))
		if err != nil {
			t.Fatal(p, err)
		}
		want := ReadToolCall(nil, []byte(p))
		got := m.Tool
		if !m.IsTool || got.Name != want.Name || string(got.Args) != string(want.Args) || string(got.Meta) != string(want.Meta) ||
			got.Progress != want.Progress || fmt.Sprint(got.Check()) != fmt.Sprint(want.Check()) {
			t.Errorf("%s:\nReadToolCall %+v\nReadModern   %+v", p, want, got)
		}
	}
}

func TestReadModern(t *testing.T) {
	t.Parallel()
	m, err := ReadModern(nil, "resources/read", []byte(`{"uri":"test://x","requestState":"s","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"roots":{}},"io.modelcontextprotocol/logLevel":"info"}}`))
	if err != nil || !m.HasVersion || m.Version != "2026-07-28" || string(m.Caps) != `{"roots":{}}` ||
		string(m.LogLevel) != `"info"` || !m.HasName || m.Name != "test://x" || !m.Input || m.IsTool || m.Progress {
		t.Errorf("%+v %v", m, err)
	}
	if _, err := ReadModern(nil, "ping", []byte(`{"_meta":[]}`)); err == nil {
		t.Error("a _meta that is not an object was accepted")
	}
	if _, err := ReadModern(nil, "ping", []byte(`{"_meta":{"io.modelcontextprotocol/protocolVersion":5}}`)); err == nil {
		t.Error("a protocolVersion that is not a string was accepted")
	}
	if m, _ := ReadModern(nil, "tools/list", []byte(`{}`)); !m.Input || m.HasVersion {
		t.Errorf("a method without a name field: %+v", m)
	}
}

func TestRevisions(t *testing.T) {
	t.Parallel()
	for r := Rev20250326; r < RevEnd; r++ {
		if got, ok := ParseRevision(r.String()); !ok || got != r {
			t.Errorf("%v does not round-trip", r)
		}
	}
	if Revision(0).OrDefault() != Rev20250326 || !RevisionSet(Rev20250326).Has(0) {
		t.Error("the zero revision is not 2025-03-26")
	}
	if Negotiate("2024-11-05") != LatestLegacy || Negotiate("2025-06-18") != Rev20250618 || Negotiate("2026-07-28") != LatestLegacy {
		t.Error("Negotiate")
	}
	if Rev20260728.Legacy() || !Rev20251125.Legacy() {
		t.Error("Legacy")
	}
}

func TestChangeNotifications(t *testing.T) {
	t.Parallel()
	for k := ToolsChanged; k <= ResourceUpdated; k++ {
		c := Change{Kind: k, URI: "u"}
		got, ok := ChangeOf(c.Notification(), "u")
		if !ok || got.Kind != k || (k == ResourceUpdated) != (got.URI == "u") {
			t.Errorf("%v: %+v %v", k, got, ok)
		}
	}
	if _, ok := ChangeOf("notifications/message", ""); ok {
		t.Error("a method that is no change")
	}
}

func TestLogLevels(t *testing.T) {
	t.Parallel()
	for l := LogDebug; l <= LogEmergency; l++ {
		if got, ok := ParseLogLevel(l.String()); !ok || got != l {
			t.Errorf("%d does not round-trip", l)
		}
	}
	if LogOff.Passes(LogEmergency) || !LogLevel(0).Passes(LogDebug) || LogWarning.Passes(LogInfo) {
		t.Error("Passes")
	}
}
