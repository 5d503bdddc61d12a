package jsonstr

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

var appendSeeds = []string{"", "plain ascii text, long enough", "tab\there \"quoted\" back\\slash\n",
	"é😀\u2028\u2029", "\xff\xfeab", "\x00\x01\x1f\x7f", "12345678\"", "1234567\xe2\x80\xa8x", "<html>&amp;",
	"\xed\xa0\x80", "a\xc3", "\uFFFD", "1234567\xe2\x80", "q\"b\\s/", "\x00\x01\x1f\n\r\t\b\f", "é€😀", "<&>", "\xff"}

// SpecialMask agrees with a byte-by-byte look on every byte at every
// place of a word, and so the escaping agrees with slog's whatever the
// place of a byte that needs it.
func TestAppendString_EveryByteEveryPlace(t *testing.T) {
	needsLook := func(c byte) bool { return c < 0x20 || c == '"' || c == '\\' || c >= 0x80 }
	for c := 0; c < 256; c++ {
		for pos := 0; pos < 8; pos++ {
			word := []byte("abcdefgh")
			word[pos] = byte(c)
			var w uint64
			for i := 7; i >= 0; i-- {
				w = w<<8 | uint64(word[i])
			}
			want := uint64(0)
			if needsLook(byte(c)) {
				want = 0x80 << (8 * pos)
			}
			if got := SpecialMask(w); got != want {
				t.Fatalf("SpecialMask, byte %#x at %d: %#x, want %#x", c, pos, got, want)
			}
		}
	}
	for _, special := range []string{"\x00", "\x1f", `"`, `\`, "\x7f", "é", "\xff", "\u2028", "\u2029", "🌵", "\xe2\x80"} {
		for pos := 0; pos < 20; pos++ {
			s := strings.Repeat("x", pos) + special + strings.Repeat("y", 20-pos)
			checkLikeSlog(t, s)
		}
	}
}

// FuzzAppendString holds the eight-bytes-at-a-time encoder to the plain
// byte-by-byte one below, and AppendStringValid's answer to
// utf8.ValidString.
func FuzzAppendString(f *testing.F) {
	for _, s := range appendSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkShapes(t, s)
		// Past the eight-byte loop's tail, at two alignments.
		checkShapes(t, strings.Repeat("x", 70)+s+strings.Repeat("y", 70))
		checkShapes(t, strings.Repeat("x", 75)+s+strings.Repeat("\t", 40))
	})
}

// checkShapes holds AppendStringValid to the byte-by-byte encoder and to
// utf8.ValidString, into a dst with no room, one with room to spare, and
// one sized exactly, which it must fill without growing it.
func checkShapes(t *testing.T, s string) {
	t.Helper()
	want := appendStringByteByByte([]byte("x"), s)
	roomy := make([]byte, 1, len(s)*6+100)
	exact := make([]byte, 1, len(want))
	for _, dst := range [][]byte{[]byte("x"), roomy, exact} {
		dst[0] = 'x'
		got, ok := AppendStringValid(dst, s)
		if string(got) != string(want) {
			t.Fatalf("AppendString(%q) into cap %d = %s, want %s", s, cap(dst), got, want)
		}
		if ok != utf8.ValidString(s) {
			t.Fatalf("AppendStringValid(%q) reports valid %v", s, ok)
		}
		if cap(dst) >= len(want) && &got[0] != &dst[0] {
			t.Fatalf("AppendString(%q) grew a dst of cap %d for %d bytes", s, cap(dst), len(want))
		}
	}
}

// TestAppendString_LongText puts every byte that needs a look at every
// place of long strings, alone and in runs, where the eight-byte loop
// writes it.
func TestAppendString_LongText(t *testing.T) {
	specials := []string{"\x00", "\x1f", `"`, `\`, "\n", "\t", "\x7f", "é", "\xff", "\u2028", "\u2029", "🌵", "€",
		"\xe2\x80", "\xe2\x80\xa8", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xc0\x80"}
	for _, sp := range specials {
		for pos := 0; pos < 90; pos++ {
			checkShapes(t, strings.Repeat("x", pos)+sp+strings.Repeat("y", 90-pos))
			checkShapes(t, strings.Repeat("x", pos)+strings.Repeat(sp, 9)+strings.Repeat("y", 90-pos))
		}
	}
	for _, sp := range specials {
		for _, sp2 := range specials {
			checkShapes(t, strings.Repeat("ab"+sp+"c"+sp2, 30))
		}
	}
	const code = "\tif x := m[\"clé\"]; x != nil {\n\t\treturn fmt.Errorf(\"naïve: %w\", err) // <é>\n\t}\n"
	checkShapes(t, strings.Repeat(code, 200))
}

// FuzzAppendStringLikeSlog holds AppendString's output to what it
// promises: valid UTF-8 and JSON that encoding/json decodes back to the
// string with each invalid UTF-8 byte replaced by U+FFFD, written byte
// for byte as slog.JSONHandler writes the string.
func FuzzAppendStringLikeSlog(f *testing.F) {
	for _, s := range appendSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := AppendString(nil, s)
		var back string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatalf("%q: %s does not decode: %v", s, got, err)
		}
		if want := string([]rune(s)); back != want {
			t.Fatalf("%q round-tripped as %q, want %q", s, back, want)
		}
		if !utf8.Valid(got) {
			t.Fatalf("%q: invalid UTF-8 out: %q", s, got)
		}
		checkLikeSlog(t, s)
	})
}

// checkLikeSlog fails t unless AppendString writes s as slog.JSONHandler
// writes it, as a message and as an attribute's key and value.
func checkLikeSlog(t *testing.T, s string) {
	t.Helper()
	var out bytes.Buffer
	r := slog.NewRecord(time.Time{}, slog.LevelInfo, s, 0)
	r.AddAttrs(slog.String("k", s), slog.Int(s+"!", 1))
	if err := slog.NewJSONHandler(&out, nil).Handle(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	e := string(AppendString(nil, s))
	k := string(AppendString(nil, s+"!"))
	if want := `{"level":"INFO","msg":` + e + `,"k":` + e + "," + k + ":1}\n"; out.String() != want {
		t.Fatalf("%q: slog writes %s, AppendString %s", s, out.String(), want)
	}
}

// appendStringByteByByte is AppendString the plain way, with
// unicode/utf8, one byte at a time.
func appendStringByteByByte(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
