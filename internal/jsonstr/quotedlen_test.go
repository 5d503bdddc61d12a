package jsonstr

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzQuotedLen holds QuotedLen to the length of AppendString's output,
// where it is exact.
func FuzzQuotedLen(f *testing.F) {
	for _, s := range []string{"", "plain", "tab\there \"q\" \\ \n\r", "\x00\x01\x1fé😀", "12345678\"\x7f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) || strings.ContainsAny(s, "\u2028\u2029") {
			return
		}
		if got, want := QuotedLen(s), len(AppendString(nil, s)); got != want {
			t.Fatalf("QuotedLen(%q) = %d, want %d", s, got, want)
		}
	})
}
