package middleware

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRedactQuery(t *testing.T) {
	t.Parallel()
	keep := map[string]bool{"cursor": true}
	for in, want := range map[string]string{
		"":                             "",
		"access_token=SECRET":          "access_token=REDACTED",
		"a=1&b=2":                      "a=REDACTED&b=REDACTED",
		"cursor=abc&token=x":           "cursor=abc&token=REDACTED",
		"SECRETBARE":                   "REDACTED",
		"cursor":                       "cursor",
		"k%3DSECRET=v":                 "REDACTED",
		"a=&b":                         "a=REDACTED&REDACTED",
		"a=1&&b=2":                     "a=REDACTED&&b=REDACTED",
		"ids[]=1&ids[]=2":              "ids[]=REDACTED&ids[]=REDACTED",
		"x=a=b":                        "x=REDACTED",
		"with space=1":                 "REDACTED",
		"a;b=1":                        "REDACTED",
		strings.Repeat("k", 65) + "=1": "REDACTED",
	} {
		assert.Equal(t, want, redactQuery(in, keep), "query %q", in)
	}
}

func TestRedactCredential(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"Bearer abc.def.ghi": "Bearer REDACTED",
		"bearer  abc":        "bearer REDACTED",
		"Basic dXNlcjpwdw==": "Basic REDACTED",
		"abc.def.ghi":        "REDACTED",
		"":                   "REDACTED",
		"Bearer":             "REDACTED",
		"Bea/rer secret":     "REDACTED",
	} {
		assert.Equal(t, want, redactCredential(in), "credential %q", in)
	}
}

func TestRedactHeader(t *testing.T) {
	t.Parallel()
	plain := http.Header{"Content-Type": {"application/json"}, "Referer": {"https://app.example/page"}}
	same, copied := redactHeader(plain, nil)
	assert.False(t, copied, "nothing to redact: the same map, no copy")
	assert.Equal(t, plain, same)

	h := http.Header{
		"Authorization": {"Bearer T1", "Bearer T2"},
		"Cookie":        {"a=1", "b=2"},
		"Referer":       {"https://u:p@app.example/x?code=C#f"},
	}
	got, copied := redactHeader(h, nil)
	assert.True(t, copied)
	assert.Equal(t, []string{"Bearer REDACTED", "Bearer REDACTED"}, got["Authorization"])
	assert.Equal(t, []string{"REDACTED", "REDACTED"}, got["Cookie"])
	assert.Equal(t, "https://app.example/x?code=REDACTED", got.Get("Referer"))
	assert.Equal(t, "Bearer T1", h.Get("Authorization"), "the original is untouched")

	bad := http.Header{"Referer": {"http://[::1%zz/?x=1"}}
	got, _ = redactHeader(bad, nil)
	assert.Equal(t, "REDACTED", got.Get("Referer"))
}
