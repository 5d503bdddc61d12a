package wire

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var validSeeds = []string{
	`{}`, `[]`, `""`, `0`, `-0`, `1.5e-3`, `true`, `false`, `null`, ` {"a" : [1, "b", {"c":null}] } `,
	`"\u00e9\ud83d\ude00\ud800x\udc00"`, `"\"\\\/\b\f\n\r\t"`, `"é😀"`, "\"\xff\"", "\"\xed\xa0\x80\"",
	`{"a":1,}`, `[1,]`, `[1 2]`, `{"a" 1}`, `01`, `1.`, `.5`, `1e`, `-`, `"\x"`, `"\u12"`, "\"a\x01\"",
	`{"a":1}}`, `[`, `{`, `"`, `tru`, `nul`, `[[[]]]`, `{"a":{"b":{"c":[]}}}`, "\xef\xbb\xbf{}", `[1]x`,
	`"aaaaaaaaaaaaaaaa\"aaaaaaaa\\"`, `"aaaaaaa` + "\x1f" + `aaaaaaaa"`, `"aaaaaaaé\u0041aaaaaaaaa"`,
}

func FuzzValid(f *testing.F) {
	for _, s := range validSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		want := utf8.Valid(data) && json.Valid(data)
		if got := valid(data); got != want {
			t.Fatalf("valid(%q) = %v, want %v", data, got, want)
		}
	})
}

func FuzzUnquote(f *testing.F) {
	for _, s := range validSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		data = bytes.Trim(data, " \t\r\n")
		if !valid(data) || len(data) == 0 || data[0] != '"' {
			_, _ = unquote(data) // never panics
			return
		}
		var want string
		require.NoError(t, json.Unmarshal(data, &want))
		got, ok := unquote(data)
		if !ok || got != want {
			t.Fatalf("unquote(%q) = %q, %v; want %q", data, got, ok, want)
		}
		// skipString finds the end of the token, whatever follows.
		tail := append(append([]byte{}, data...), `,"x"]`...)
		if end := skipString(tail, 0); end != len(data) {
			t.Fatalf("skipString(%q) = %d, want %d", tail, end, len(data))
		}
	})
}

func TestValidDepth(t *testing.T) {
	for _, depth := range []int{maxDepth - 1, maxDepth, maxDepth + 1} {
		for _, open := range []string{"[", `{"a":`} {
			closeTok := "]"
			if open != "[" {
				closeTok = "}"
			}
			doc := strings.Repeat(open, depth) + "1" + strings.Repeat(closeTok, depth)
			assert.Equal(t, json.Valid([]byte(doc)), valid([]byte(doc)), "depth %d %s", depth, open)
			empty := strings.Repeat("[", depth) + strings.Repeat("]", depth)
			assert.Equal(t, json.Valid([]byte(empty)), valid([]byte(empty)), "empty at depth %d", depth)
		}
	}
}

func TestValidSeeds(t *testing.T) {
	for _, s := range validSeeds {
		assert.Equal(t, utf8.ValidString(s) && json.Valid([]byte(s)), valid([]byte(s)), "%q", s)
	}
}
