package mcp

// Big payloads: a tools/call whose text argument is echoed back, and a
// resources/read of a text document, at 1 KiB, 16 KiB and 256 KiB,
// through the engine (decode, validate, typed decode, dispatch, encode),
// against a bare encoding/json handler that echoes the same text.
//
//	go test -run '^$' -bench Payload -benchmem ./mcp/

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

var payloadSizes = []int{1 << 10, 16 << 10, 256 << 10}

// payloadText is n bytes of text that looks like a source file: code,
// quotes, tabs, newlines and some non-ASCII letters, so that the JSON
// form has the escapes real file contents have.
func payloadText(n int) string {
	const line = "\tif x := m[\"clé\"]; x != nil {\n\t\treturn fmt.Errorf(\"naïve: %w\", err) // <é>\n\t}\n"
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(line)
	}
	s := b.String()[:n]
	for !json.Valid([]byte(fmt.Sprintf("%q", s))) || !strings.HasSuffix(s, "\n") && len(s) > 0 && s[len(s)-1] >= 0x80 {
		s = s[:len(s)-1] // not in the middle of a rune
	}
	return s
}

func payloadCall(text string) []byte {
	args, _ := json.Marshal(map[string]string{"text": text})
	return []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"echo","arguments":` + string(args) + `}}`)
}

func payloadEngine(b *testing.B, doc string) *engine {
	s := NewServer(Implementation{Name: "bench", Version: "1"}, nil)
	err := AddTool(s, &Tool{Name: "echo", Description: "echoes"}, func(ctx context.Context, req *CallToolRequest, in EchoIn) (*CallToolResult, error) {
		return &CallToolResult{Content: []Content{Text(in.Text)}}, nil
	})
	if err != nil {
		b.Fatal(err)
	}
	err = s.AddResource(&Resource{URI: "file:///doc.go", Name: "doc", MIMEType: "text/x-go"}, func(ctx context.Context, r *ReadResourceRequest) (*ReadResourceResult, error) {
		return &ReadResourceResult{Contents: []*ResourceContents{{URI: r.URI, MIMEType: "text/x-go", Text: doc}}}, nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return newEngine(s, engineOptions{})
}

// echoed reads the text of a tools/call answer.
func echoed(b *testing.B, reply []byte) string {
	var r struct {
		Result struct {
			Content []struct{ Text string } `json:"content"`
		} `json:"result"`
	}
	if err := json.Unmarshal(reply, &r); err != nil || len(r.Result.Content) != 1 {
		b.Fatalf("reply %.200s: %v", reply, err)
	}
	return r.Result.Content[0].Text
}

func BenchmarkPayloadToolsCall(b *testing.B) {
	for _, n := range payloadSizes {
		b.Run(sizeName(n), func(b *testing.B) {
			text := payloadText(n)
			e := payloadEngine(b, "")
			call := payloadCall(text)
			ctx := context.Background()
			var sink bytes.Buffer
			serveEngine(e, ctx, call, &sink)
			if echoed(b, sink.Bytes()) != text {
				b.Fatal("the echo differs")
			}
			b.SetBytes(int64(len(call) + sink.Len()))
			loopCPU(b, func() {
				sink.Reset()
				serveEngine(e, ctx, call, &sink)
			})
		})
	}
}

func BenchmarkPayloadResourceRead(b *testing.B) {
	for _, n := range payloadSizes {
		b.Run(sizeName(n), func(b *testing.B) {
			doc := payloadText(n)
			e := payloadEngine(b, doc)
			call := []byte(`{"jsonrpc":"2.0","id":42,"method":"resources/read","params":{"uri":"file:///doc.go"}}`)
			ctx := context.Background()
			var sink bytes.Buffer
			serveEngine(e, ctx, call, &sink)
			var r struct {
				Result struct {
					Contents []struct{ Text string } `json:"contents"`
				} `json:"result"`
			}
			if err := json.Unmarshal(sink.Bytes(), &r); err != nil || len(r.Result.Contents) != 1 || r.Result.Contents[0].Text != doc {
				b.Fatalf("reply %.200s: %v", sink.Bytes(), err)
			}
			b.SetBytes(int64(len(call) + sink.Len()))
			loopCPU(b, func() {
				sink.Reset()
				serveEngine(e, ctx, call, &sink)
			})
		})
	}
}

// BenchmarkPayloadBare is the floor: encoding/json decodes the request
// (the text unescaped into a string) and encodes the echo.
func BenchmarkPayloadBare(b *testing.B) {
	type content struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	type reply struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  struct {
			Content []content `json:"content"`
		} `json:"result"`
	}
	serve := func(call []byte, sink *bytes.Buffer) {
		var req struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Method  string          `json:"method"`
			Params  struct {
				Name      string `json:"name"`
				Arguments struct {
					Text string `json:"text"`
				} `json:"arguments"`
			} `json:"params"`
		}
		if err := json.Unmarshal(call, &req); err != nil {
			b.Fatal(err)
		}
		out := reply{JSONRPC: "2.0", ID: req.ID}
		out.Result.Content = []content{{Type: "text", Text: req.Params.Arguments.Text}}
		_ = json.NewEncoder(sink).Encode(&out)
	}
	for _, n := range payloadSizes {
		b.Run(sizeName(n), func(b *testing.B) {
			text := payloadText(n)
			call := payloadCall(text)
			var sink bytes.Buffer
			serve(call, &sink)
			if echoed(b, sink.Bytes()) != text {
				b.Fatal("the echo differs")
			}
			b.SetBytes(int64(len(call) + sink.Len()))
			loopCPU(b, func() {
				sink.Reset()
				serve(call, &sink)
			})
		})
	}
}

func sizeName(n int) string { return fmt.Sprintf("%dKiB", n>>10) }

// loopCPU runs fn as the benchmark's loop and reports the process's CPU
// time per call (cpu-ns/op, the garbage collector's included): on a
// machine that other work shares, wall time per call measures the
// competition too, CPU time does not.
func loopCPU(b *testing.B, fn func()) {
	b.ReportAllocs()
	start, ok := processCPU()
	n := 0
	for b.Loop() {
		fn()
		n++
	}
	if end, ok2 := processCPU(); ok && ok2 && n > 0 {
		b.ReportMetric(float64(end-start)/float64(n), "cpu-ns/op")
	}
}

// A 1 MiB resources/read is encoded once: what a call allocates is the
// encoded response (written in place around the result) and little more.
func TestBigResourceEncodedOnce(t *testing.T) {
	doc := payloadText(1 << 20)
	e := payloadEngine(&testing.B{}, doc)
	call := []byte(`{"jsonrpc":"2.0","id":42,"method":"resources/read","params":{"uri":"file:///doc.go"}}`)
	var out countingWriter
	serveEngine(e, context.Background(), call, &out)
	res := testing.Benchmark(func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			serveEngine(e, context.Background(), call, &out)
		}
	})
	perOp := res.AllocedBytesPerOp()
	t.Logf("response %d bytes, allocated %d bytes per call", out.last, perOp)
	assert.Less(t, perOp, int64(out.last)*5/4, "more than one encoded copy")
}

// countingWriter keeps the size of the last write.
type countingWriter struct{ last int }

func (w *countingWriter) Write(p []byte) (int, error) { w.last = len(p); return len(p), nil }
