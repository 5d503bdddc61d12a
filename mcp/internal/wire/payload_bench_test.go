package wire

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/saguaro-go/saguaro/internal/jsonstr"
)

// The passes a big string argument goes through, each on its own, on
// 256 KiB of source-like text.

func benchText() (string, []byte) {
	const line = "\tif x := m[\"clé\"]; x != nil {\n\t\treturn fmt.Errorf(\"naïve: %w\", err) // <é>\n\t}\n"
	s := strings.Repeat(line, (256<<10)/len(line))
	tok, _ := json.Marshal(s)
	return s, tok
}

func BenchmarkPassValid(b *testing.B) {
	_, tok := benchText()
	b.SetBytes(int64(len(tok)))
	loopCPU(b, func() {
		if !valid(tok) {
			b.Fatal("invalid")
		}
	})
}

func BenchmarkPassSkip(b *testing.B) {
	_, tok := benchText()
	b.SetBytes(int64(len(tok)))
	loopCPU(b, func() {
		if skipString(tok, 0) != len(tok) {
			b.Fatal("skip")
		}
	})
}

func BenchmarkPassUnquote(b *testing.B) {
	s, tok := benchText()
	b.SetBytes(int64(len(tok)))
	loopCPU(b, func() {
		if got, _ := unquote(tok); len(got) != len(s) {
			b.Fatal("unquote")
		}
	})
}

func BenchmarkPassScanDecode(b *testing.B) {
	s, tok := benchText()
	b.SetBytes(int64(len(tok)))
	loopCPU(b, func() {
		if end, got := scanDecode(tok, 0, len(tok)); end != len(tok) || len(got) != len(s) {
			b.Fatal("scanDecode")
		}
	})
}

func BenchmarkPassAppendString(b *testing.B) {
	s, tok := benchText()
	buf := make([]byte, 0, len(tok)+16)
	b.SetBytes(int64(len(s)))
	loopCPU(b, func() { buf = jsonstr.AppendString(buf[:0], s) })
}

// loopCPU runs fn as the benchmark's loop and reports the process's CPU
// time per call (cpu-ns/op), which other work on the machine does not
// inflate as it does wall time.
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
