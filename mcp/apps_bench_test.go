package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
)

// What views cost tools/list: a server without them, and one with a view
// and a linked tool, listed to a client that renders views and to one
// that does not (which must read the extension's settings to know).
func BenchmarkToolsListViews(b *testing.B) {
	ui := &ClientCapabilities{Extensions: map[string]json.RawMessage{ExtUI: json.RawMessage(`{"mimeTypes":["text/html;profile=mcp-app"]}`)}}
	plain := &ClientCapabilities{}
	for _, c := range []struct {
		name   string
		views  bool
		client *ClientCapabilities
	}{{"no views", false, plain}, {"views, other client", true, plain}, {"views, UI client", true, ui}} {
		b.Run(c.name, func(b *testing.B) {
			s := NewServer(Implementation{Name: "bench", Version: "1"}, nil)
			meta := Meta(nil)
			if c.views {
				if err := s.AddView(&View{URI: "ui://bench/view", Name: "view", HTML: "<!DOCTYPE html><p>v</p>"}); err != nil {
					b.Fatal(err)
				}
				meta = Meta{"ui": &ToolUI{ResourceURI: "ui://bench/view"}}
			}
			err := AddTool(s, &Tool{Name: "echo", Description: "echoes", Meta: meta}, func(ctx context.Context, req *CallToolRequest, in EchoIn) (*CallToolResult, error) {
				return &CallToolResult{Content: []Content{Text(in.Text)}}, nil
			})
			if err != nil {
				b.Fatal(err)
			}
			e := newEngine(s, engineOptions{})
			body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
			var sink bytes.Buffer
			b.ReportAllocs()
			for b.Loop() {
				sink.Reset()
				m, derr := e.Decoder().Decode(body)
				if derr != nil {
					b.Fatal(derr)
				}
				call := testCall(&m, Rev20251125)
				call.Client = c.client
				r := e.Dispatch(context.Background(), &call, nil)
				_, _ = sink.Write(e.AppendReply(nil, m.ID, r))
			}
			if bytes.Contains(sink.Bytes(), []byte("resourceUri")) != (c.client == ui) {
				b.Fatalf("wrong list: %s", sink.Bytes())
			}
		})
	}
}
