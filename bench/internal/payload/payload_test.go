package payload

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestDocumentExactValidDeterministic(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 100, 1 << 10, 16 << 10, 256 << 10} {
		d := Document(n)
		if len(d) != n {
			t.Fatalf("Document(%d) has %d bytes", n, len(d))
		}
		if !utf8.ValidString(d) {
			t.Fatalf("Document(%d) is not valid UTF-8", n)
		}
		if g := generate(n); g != d {
			t.Fatalf("Document(%d) differs from a second generation", n)
		}
	}
	// Every size is cut from the same sequence.
	big := Document(16 << 10)
	if small := Document(1000); !strings.HasPrefix(big, strings.TrimRight(small, "\n")) {
		t.Fatal("Document(1000) is not a prefix of Document(16 KiB)")
	}
}

// A cut in the middle of a rune backs off to its start and pads with
// newlines.
func TestDocumentCutsRunesWhole(t *testing.T) {
	full := generate(4096)
	for n := 1; n < 4096; n++ {
		d := generate(n)
		if len(d) != n || !utf8.ValidString(d) {
			t.Fatalf("generate(%d): %d bytes, valid %v", n, len(d), utf8.ValidString(d))
		}
		if !strings.HasPrefix(full, strings.TrimRight(d, "\n")) {
			t.Fatalf("generate(%d) is not a prefix of the sequence", n)
		}
	}
}

// The text has what real file contents have, so its JSON form has their
// escapes.
func TestDocumentLooksLikeSource(t *testing.T) {
	d := Document(16 << 10)
	for _, want := range []string{"\t", "\n", `"`, `\`, "<", "&", "é", "日本語", "🚀"} {
		if !strings.Contains(d, want) {
			t.Errorf("16 KiB document without %q", want)
		}
	}
	enc := AppendString(nil, d)
	if len(enc) < len(d)+len(d)/50 {
		t.Errorf("JSON form %d bytes for %d bytes of text: too few escapes", len(enc), len(d))
	}
}

func TestAppendStringIsJSON(t *testing.T) {
	for _, s := range []string{"", "plain", "tab\tnew\nline \"q\" \\ <a&b> é 日本 🚀 \u2028 \x01"} {
		enc := AppendString([]byte("x"), s)
		var got string
		if err := json.Unmarshal(enc[1:], &got); err != nil || got != s {
			t.Fatalf("AppendString(%q) = %s: %v", s, enc[1:], err)
		}
		if strings.Contains(s, "<") && !strings.Contains(string(enc), "<") {
			t.Fatalf("HTML escaped: %s", enc)
		}
	}
}

func TestEcho(t *testing.T) {
	for _, kib := range append(DefaultSizesKiB, 1024) {
		e := NewEcho(kib << 10)
		if e.Size != kib<<10 || len(e.Body) != e.Size-HeadLen {
			t.Fatalf("%d KiB: size %d, body %d", kib, e.Size, len(e.Body))
		}
		seen := map[string]bool{}
		for _, tag := range []string{"hello from w0 #2", "hello from w15 #4999999", "hello from w1 #2"} {
			head := e.Head(nil, []byte(tag))
			if len(head) != HeadLen || !strings.HasSuffix(string(head), " */\n") || !strings.Contains(string(head), tag) {
				t.Fatalf("head %q", head)
			}
			enc := e.AppendJSON([]byte(`{"text":`), head)
			enc = append(enc, '}')
			var got struct{ Text string }
			if err := json.Unmarshal(enc, &got); err != nil {
				t.Fatalf("%d KiB: %v", kib, err)
			}
			if got.Text != string(head)+e.Body || len(got.Text) != e.Size {
				t.Fatalf("%d KiB: the encoded text is not head+body", kib)
			}
			if seen[got.Text] {
				t.Fatal("two tags made the same text")
			}
			seen[got.Text] = true
		}
	}
	// A tag longer than the line makes a longer line, never a cut tag.
	long := strings.Repeat("t", 100)
	if h := NewEcho(1024).Head(nil, []byte(long)); !strings.Contains(string(h), long) {
		t.Fatalf("long tag cut: %q", h)
	}
}

func TestDocURI(t *testing.T) {
	if DocURI(16) != "bench://doc/16" || DocName(256) != "doc-256KiB" {
		t.Fatal(DocURI(16), DocName(256))
	}
}
