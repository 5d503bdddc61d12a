package jsonstr

import (
	"testing"
	"unicode/utf8"
)

// FuzzSeqLen holds SeqLen, for strings and byte slices, to unicode/utf8.
func FuzzSeqLen(f *testing.F) {
	for _, s := range []string{"é", "😀", "\xed\xa0\x80", "\xe0\x80\x80", "\xf4\x90\x80\x80", "\xc0\x80", "\xe2\x80", "\x80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if s == "" || s[0] < utf8.RuneSelf {
			return
		}
		r, size := utf8.DecodeRuneInString(s)
		want := size
		if r == utf8.RuneError && size == 1 {
			want = 0
		}
		if got := SeqLen(s, 0); got != want {
			t.Fatalf("SeqLen(%q) = %d, want %d", s, got, want)
		}
		if got := SeqLen([]byte(s), 0); got != want {
			t.Fatalf("SeqLen([]byte %q) = %d, want %d", s, got, want)
		}
	})
}
