package wire

import (
	"encoding/json"
	"testing"

	"github.com/saguaro-go/saguaro/internal/jsonstr"
)

var benchBody = []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello, world"},"_meta":{"progressToken":"tok-1"}}}`)

func BenchmarkDecode(b *testing.B) {
	d := NewDecoder("tools/call")
	b.ReportAllocs()
	b.SetBytes(int64(len(benchBody)))
	for b.Loop() {
		if _, err := d.Decode(benchBody); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeStdlib is the baseline: one encoding/json Unmarshal of the
// same envelope into a struct with raw params.
func BenchmarkDecodeStdlib(b *testing.B) {
	type env struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  string          `json:"method"`
		Params  json.RawMessage `json:"params"`
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(benchBody)))
	for b.Loop() {
		var e env
		if err := json.Unmarshal(benchBody, &e); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendResponse(b *testing.B) {
	result := []byte(`{"content":[{"type":"text","text":"hello, world"}]}`)
	b.ReportAllocs()
	for b.Loop() {
		buf := GetBuffer()
		*buf = AppendResponse(*buf, StringID("abc"), result)
		PutBuffer(buf)
	}
}

func BenchmarkAppendString(b *testing.B) {
	s := "a moderately long tool output line, with \"quotes\" and a newline\n"
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		buf = jsonstr.AppendString(buf[:0], s)
	}
}
