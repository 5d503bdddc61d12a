package mcp

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/saguaro-go/saguaro/internal/version"
)

func TestServerChangesAreObservableAndConcurrent(t *testing.T) {
	s := NewServer(Implementation{Name: "c", Version: "1"}, nil)
	var mu sync.Mutex
	counts := map[ChangeKind]int{}
	var updated []string
	remove := s.OnChange(func(c Change) {
		mu.Lock()
		defer mu.Unlock()
		counts[c.Kind]++
		if c.Kind == ResourceUpdated {
			updated = append(updated, c.URI)
		}
	})
	h := func(ctx context.Context, req *CallToolRequest) (*CallToolResult, error) {
		return &CallToolResult{Content: []Content{Text(req.Name)}}, nil
	}
	if err := s.AddToolRaw(&Tool{Name: "stable"}, h); err != nil {
		t.Fatal(err)
	}
	e := newEngine(s, engineOptions{})

	var wg sync.WaitGroup
	var calls atomic.Int64
	stop := make(chan struct{})
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				for _, body := range []string{req("1", "tools/call", `{"name":"stable"}`), req("2", "tools/list", "")} {
					m, _ := e.Decoder().Decode([]byte(body))
					c := testCall(&m, Rev20251125)
					if r := e.Dispatch(context.Background(), &c, nil); r.Err != nil {
						t.Errorf("%s: %v", body, r.Err)
						return
					}
					calls.Add(1)
				}
			}
		}()
	}
	for i := range 100 {
		name := fmt.Sprintf("t%d", i)
		if err := s.AddToolRaw(&Tool{Name: name}, h); err != nil {
			t.Error(err)
		}
		if i%2 == 0 {
			s.RemoveTools(name)
		}
	}
	_ = s.AddResource(&Resource{URI: "x://r", Name: "r"}, func(ctx context.Context, req *ReadResourceRequest) (*ReadResourceResult, error) { return nil, nil })
	_ = s.AddPrompt(&Prompt{Name: "p"}, func(ctx context.Context, req *GetPromptRequest) (*GetPromptResult, error) { return nil, nil })
	s.ResourceUpdated("x://r")
	close(stop)
	wg.Wait()
	remove()
	_ = s.AddToolRaw(&Tool{Name: "after"}, h)

	mu.Lock()
	defer mu.Unlock()
	if counts[ToolsChanged] != 151 || counts[ResourcesChanged] != 1 || counts[PromptsChanged] != 1 || fmt.Sprint(updated) != "[x://r]" {
		t.Errorf("changes %v %v", counts, updated)
	}
	if calls.Load() == 0 {
		t.Error("no calls ran")
	}
	if got := len(s.snap.Load().tools); got != 52 {
		t.Errorf("%d tools", got)
	}
}

func TestServerCapabilitiesFollowRegistration(t *testing.T) {
	s := NewServer(Implementation{Name: "c", Version: "1"}, nil)
	e := newEngine(s, engineOptions{})
	caps := func() string {
		out, _ := roundTrip(t, e, 0, req("1", "initialize", fmt.Sprintf(initParams, "2025-11-25")), nil)
		return out
	}
	if got := caps(); got != resultOf("1", `{"protocolVersion":"2025-11-25","capabilities":{"logging":{}},"serverInfo":{"name":"c","version":"1"}}`) {
		t.Errorf("empty server: %s", got)
	}
	if out, _ := roundTrip(t, e, Rev20251125, req("2", "tools/list", ""), nil); errorOf(t, out) != -32601 {
		t.Errorf("tools/list before any tool: %s", out)
	}
	h := func(ctx context.Context, req *CallToolRequest) (*CallToolResult, error) { return nil, nil }
	_ = s.AddToolRaw(&Tool{Name: "a"}, h)
	s.RemoveTools("a")
	if got := caps(); got != resultOf("1", `{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true},"logging":{}},"serverInfo":{"name":"c","version":"1"}}`) {
		t.Errorf("after a tool came and went: %s", got)
	}
	if out, _ := roundTrip(t, e, Rev20251125, req("2", "tools/list", ""), nil); out != resultOf("2", `{"tools":[]}`) {
		t.Errorf("empty tools/list: %s", out)
	}
}

// unnamed is a Handler whose initialize answer names no server.
type unnamed struct{}

func (unnamed) Initialize(context.Context, *InitializeRequest, any) (*InitializeResult, any, error) {
	return &InitializeResult{}, nil, nil
}

// A server that names no one else is the library at its release, in the
// initialize answer and in 2026-07-28's serverInfo alike: MCP requires a
// name and a version.
func TestUnnamedServerIsTheLibrary(t *testing.T) {
	want := `"serverInfo":{"name":"saguaro","version":"` + version.Version + `"}`
	e := newEngine(NewServer(Implementation{}, nil), engineOptions{})
	out, _ := roundTrip(t, e, 0, req("1", "initialize", fmt.Sprintf(initParams, "2025-11-25")), nil)
	if !strings.Contains(out, want) {
		t.Errorf("NewServer with no name: %s", out)
	}
	info, _ := newEngine(unnamed{}, engineOptions{}).identity()
	if string(info) != `{"name":"saguaro","version":"`+version.Version+`"}` {
		t.Errorf("a handler that names no server: %s", info)
	}
	named := NewServer(Implementation{Name: "tasks"}, nil)
	out, _ = roundTrip(t, newEngine(named, engineOptions{}), 0, req("1", "initialize", fmt.Sprintf(initParams, "2025-11-25")), nil)
	if !strings.Contains(out, `"serverInfo":{"name":"tasks","version":""}`) {
		t.Errorf("a named server keeps its own identity, even without a version: %s", out)
	}
}
