package streamable

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestDecodeHeaderValue(t *testing.T) {
	cases := []struct {
		in, want string
		ok       bool
	}{
		{"plain", "plain", true},
		{"  padded\t", "padded", true},
		{"inner space", "inner space", true},
		{"=?base64?SGVsbG8=?=", "Hello", true},
		{" =?base64?SGVsbG8=?= ", "Hello", true},
		{"=?base64?IGxlYWRpbmc=?=", " leading", true},
		{"=?base64??=", "", true},
		{"=?base64?SGVsbG8?=", "", false},  // no padding
		{"=?base64?SGVsbG9=?=", "", false}, // non-zero padding bits
		{"=?base64?SGVs!!!bG8=?=", "", false},
		{"=?base64?/w==?=", "", false}, // not UTF-8
		{"=?base64?SGVsbG8=", "=?base64?SGVsbG8=", true},
		{"SGVsbG8=?=", "SGVsbG8=?=", true},
		{"caf\xc3\xa9", "", false},
		{"a\x01b", "", false},
	}
	for _, c := range cases {
		got, ok := decodeHeaderValue(c.in)
		assert.Equal(t, c.ok, ok, "%q", c.in)
		if c.ok {
			assert.Equal(t, c.want, got, "%q", c.in)
		}
	}
}

func TestWantsProgress(t *testing.T) {
	t.Parallel()
	for params, want := range map[string]bool{
		`{"name":"x","_meta":{"progressToken":1}}`:  true,
		`{"_meta":{"other":1,"progressToken":"a"}}`: true,
		`{"name":"x"}`:              false,
		`{"_meta":{}}`:              false,
		`{"_meta":"progressToken"}`: false,
		`{"arguments":{"_meta":{"progressToken":1}}}`:    false,
		`{"_meta":{"nested":{"progressToken":1}},"x":1}`: false,
	} {
		assert.Equal(t, want, wantsProgress([]byte(params)), params)
	}
}
