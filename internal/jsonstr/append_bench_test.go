package jsonstr

import (
	"strings"
	"testing"
)

// BenchmarkAppendString writes texts of the kinds a server sends: source
// code (an escape every few bytes, some accented letters), prose in
// Cyrillic and in Chinese (runes of two and three bytes), plain ASCII, and
// the short keys and values of a log line, into a buffer with room.
func BenchmarkAppendString(b *testing.B) {
	const code = "\tif x := m[\"clé\"]; x != nil {\n\t\treturn fmt.Errorf(\"naïve: %w\", err) // <é>\n\t}\n"
	const cyrillic = "Съешь же ещё этих мягких французских булок, да выпей чаю.\n"
	const chinese = "模型上下文协议让应用程序为大型语言模型提供上下文。\n"
	const ascii = "The quick brown fox jumps over the lazy dog, again and again. "
	cases := []struct{ name, s string }{
		{"code-16KiB", fill(code, 16<<10)},
		{"cyrillic-16KiB", fill(cyrillic, 16<<10)},
		{"chinese-16KiB", fill(chinese, 16<<10)},
		{"ascii-16KiB", fill(ascii, 16<<10)},
		{"key", "http.request.method"},
		{"url", "/mcp/session?id=9f86d081884c7d659a2feaa0c55ad015"},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			buf := make([]byte, 0, len(c.s)*2+64)
			b.SetBytes(int64(len(c.s)))
			for b.Loop() {
				buf = AppendString(buf[:0], c.s)
			}
		})
	}
}

// fill repeats unit to about n bytes.
func fill(unit string, n int) string { return strings.Repeat(unit, n/len(unit)) }
