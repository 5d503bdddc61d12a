package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"
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

// FuzzUnquoteEscaped unquotes tokens that escape a string's runes in
// every way JSON allows (\uXXXX for any rune, surrogate pairs above the
// BMP, the short forms), chosen by a bit mask.
func FuzzUnquoteEscaped(f *testing.F) {
	f.Add("a\"b\\c/d\be\ff\ng\rh\ti", uint64(0))
	f.Add("é😀\u2028x\x01", uint64(0x5555))
	f.Fuzz(func(t *testing.T, s string, mask uint64) {
		if !utf8.ValidString(s) {
			return
		}
		tok := []byte{'"'}
		for i, r := range []rune(s) {
			switch {
			case mask>>(uint(i)%64)&1 == 1:
				if r > 0xFFFF {
					r1, r2 := utf16.EncodeRune(r)
					tok = fmt.Appendf(tok, `\u%04x\u%04X`, r1, r2)
				} else {
					tok = fmt.Appendf(tok, `\u%04x`, r)
				}
			case r == '"' || r == '\\' || r < 0x20:
				b, _ := json.Marshal(string(r))
				tok = append(tok, b[1:len(b)-1]...)
			default:
				tok = utf8.AppendRune(tok, r)
			}
		}
		tok = append(tok, '"')
		require.True(t, valid(tok), "%s", tok)
		got, ok := unquote(tok)
		if !ok || got != s {
			t.Fatalf("unquote(%s) = %q, %v; want %q", tok, got, ok, s)
		}
	})
}

// FuzzTape holds walks with the tape to walks without it: the same
// members, the same values, over any valid body.
func FuzzTape(f *testing.F) {
	long := strings.Repeat("x\\\"y", 400)
	for _, s := range []string{
		`{"a":"` + long + `","b":[{"c":"` + long + `"},1,"` + long + `"],"d":{"e":"` + long + `"}}`,
		`[{"a":[` + `"` + long + `"]}, "` + long + `"]`,
		`{"params":{"name":"x","arguments":{"text":"` + long + `"}},"id":1}`,
		`{"id":1,"params":{"a":["` + long + `",{"b":"` + long + `\u00e9\ud83d\ude00"}],"c":"` + strings.Repeat("é", 600) + `"},"x":"` + long + `"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tape, ok := newTape(data)
		require.Equal(t, valid(data), ok)
		if !ok {
			return
		}
		var walk func(tp *Tape, v []byte, out *[]string)
		walk = func(tp *Tape, v []byte, out *[]string) {
			v = bytes.Trim(v, " \t\r\n")
			switch v[0] {
			case '{':
				_ = tp.EachMember(v, func(k, x []byte) error {
					*out = append(*out, string(k))
					walk(tp, x, out)
					return nil
				})
			case '[':
				_ = tp.EachElement(v, func(x []byte) error {
					walk(tp, x, out)
					return nil
				})
			default:
				*out = append(*out, string(v))
				if v[0] == '"' {
					got, ok1 := tp.Unquote(v)
					want, ok2 := unquote(v)
					if got != want || ok1 != ok2 {
						t.Fatalf("tape Unquote %q, %v; unquote %q, %v", got, ok1, want, ok2)
					}
				}
			}
			if end, ok := tp.End(v); ok && end != len(v) {
				t.Fatalf("tape end %d for a value of %d bytes", end, len(v))
			}
		}
		var with, without []string
		walk(tape, data, &with)
		walk(nil, data, &without)
		if !slices.Equal(with, without) {
			t.Fatalf("walks differ on %q", data)
		}
		// A copy of the body is not the body: the tape knows nothing of it.
		cp := append([]byte(nil), data...)
		if _, ok := tape.End(cp); ok {
			t.Fatal("the tape answered for a copy")
		}
	})
}

// FuzzScanDecode holds the decoder of long strings to the validator and
// to unquote: the same end (or -1) for any bytes between quotes, padded so
// that they cross the eight-byte loop, and the same value.
func FuzzScanDecode(f *testing.F) {
	for _, s := range validSeeds {
		f.Add([]byte(s), uint8(0))
	}
	f.Add([]byte(`a\"b\\c\/d\be\ff\ng\rh\ti\u00e9\ud83d\ude00\ud800x\udc00`), uint8(3))
	f.Fuzz(func(t *testing.T, body []byte, pad uint8) {
		checkScanDecode(t, body, int(pad%16))
	})
}

// TestScanDecode_EveryEscapeEveryPlace puts each escape, rune and bad
// byte at every place of a long string, alone and in runs.
func TestScanDecode_EveryEscapeEveryPlace(t *testing.T) {
	pieces := []string{`\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`, `\u00e9`, `\u2028`, `\ud83d\ude00`, `\ud800`,
		`\ud800\u0041`, `\udc00`, "é", "€", "😀", "\u2028", `\x`, `\u12`, `\uZZZZ`, "\x01", "\xff", "\xed\xa0\x80",
		"\xe2\x80", `"`, `\`}
	for _, p := range pieces {
		for pos := 0; pos < 24; pos++ {
			checkScanDecode(t, []byte(strings.Repeat("x", pos)+p+strings.Repeat("y", 24)), 0)
			checkScanDecode(t, []byte(strings.Repeat("x", pos)+strings.Repeat(p, 5)+strings.Repeat("y", 24)), 0)
		}
	}
	const code = `\tif x := m[\"clé\"]; x != nil {\n\t\treturn fmt.Errorf(\"naïve: %w\", err) // <é>\n\t}\n`
	checkScanDecode(t, []byte(strings.Repeat(code, 100)), 0)
}

func checkScanDecode(t *testing.T, body []byte, pad int) {
	t.Helper()
	tok := append([]byte{'"'}, bytes.Repeat([]byte("p"), pad)...)
	tok = append(append(tok, body...), '"')
	for _, data := range [][]byte{tok, append(slices.Clip(tok), `,"after"}`...)} {
		end := skipString(data, 0)
		got, str := scanDecode(data, 0, end)
		want := scanString(data, 0)
		if got != want {
			t.Fatalf("scanDecode(%q) ends at %d, scanString at %d", data, got, want)
		}
		if got < 0 {
			continue
		}
		if u, ok := unquote(data[:got]); !ok || u != str {
			t.Fatalf("scanDecode(%q) = %q, unquote %q, %v", data, str, u, ok)
		}
	}
}
