package origin

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
)

// request is a request that arrived at local (nil: no connection).
func request(local net.Addr, host string, origins ...string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	if local != nil {
		r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, local))
	}
	r.Host = host
	for _, o := range origins {
		r.Header.Add("Origin", o)
	}
	return r
}

var (
	loopback = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}
	lan      = &net.TCPAddr{IP: net.IPv4(10, 0, 0, 7), Port: 8080}
)

func TestRule(t *testing.T) {
	t.Parallel()
	listed, err := New([]string{"https://app.example.com", "http://localhost:6274/"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	hosts, err := New(nil, []string{"mcp.internal", "api.internal:8443", "[fd00::1]"})
	if err != nil {
		t.Fatal(err)
	}
	any, err := New([]string{"*"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		rule *Rule
		req  *http.Request
		want error
	}{
		{"no origin, loopback", listed, request(loopback, "127.0.0.1:8080"), nil},
		{"localhost any port", listed, request(loopback, "localhost:1"), nil},
		{"[::1]", listed, request(loopback, "[::1]"), nil},
		{"rebinding host", listed, request(loopback, "evil.example.com:8080"), ErrHostNotAllowed},
		{"rebinding host and origin", listed, request(loopback, "evil.example.com", "http://evil.example.com"), ErrHostNotAllowed},
		{"loopback-looking name", listed, request(loopback, "127.0.0.1.evil.example.com"), ErrHostNotAllowed},
		{"bad port", listed, request(loopback, "127.0.0.1:x"), ErrHostNotAllowed},
		{"LAN host unchecked", listed, request(lan, "anything.example:8080"), nil},
		{"no connection, host unchecked", listed, request(nil, "anything.example"), nil},
		{"listed origin", listed, request(lan, "api.example.com", "https://app.example.com"), nil},
		{"listed origin, case and port", listed, request(lan, "api.example.com", "HTTPS://App.Example.com:443"), nil},
		{"listed with slash", listed, request(lan, "api.example.com", "http://localhost:6274"), nil},
		{"other scheme", listed, request(lan, "api.example.com", "http://app.example.com"), ErrOriginNotAllowed},
		{"other port", listed, request(lan, "api.example.com", "https://app.example.com:8443"), ErrOriginNotAllowed},
		{"own origin", listed, request(lan, "api.example.com", "https://api.example.com"), nil},
		{"own origin, default port in Host", listed, request(lan, "api.example.com:443", "https://api.example.com"), nil},
		{"own origin, other port", listed, request(lan, "api.example.com:8080", "https://api.example.com"), ErrOriginNotAllowed},
		{"loopback origin on loopback", listed, request(loopback, "127.0.0.1:8080", "http://127.0.0.1:3000"), nil},
		{"loopback origin on LAN", listed, request(lan, "api.example.com", "http://127.0.0.1:3000"), ErrOriginNotAllowed},
		{"loopback-looking origin", listed, request(loopback, "127.0.0.1:8080", "http://localhost.evil.example.com"), ErrOriginNotAllowed},
		{"extension origin", listed, request(loopback, "127.0.0.1:8080", "chrome-extension://localhost"), ErrOriginNotAllowed},
		{"null origin", listed, request(lan, "api.example.com", "null"), ErrOriginNotAllowed},
		{"empty origin", listed, request(lan, "api.example.com", ""), ErrOriginNotAllowed},
		{"two origins", listed, request(lan, "api.example.com", "https://app.example.com", "https://app.example.com"), ErrOriginNotAllowed},
		{"origin with a path", listed, request(lan, "api.example.com", "https://app.example.com/x"), ErrOriginNotAllowed},
		{"listed host, any port", hosts, request(lan, "MCP.internal:9000"), nil},
		{"listed host:port", hosts, request(lan, "api.internal:8443"), nil},
		{"listed host, other port", hosts, request(lan, "api.internal:8080"), ErrHostNotAllowed},
		{"listed v6", hosts, request(lan, "[fd00::1]:80"), nil},
		{"hosts set: others refused", hosts, request(lan, "other.internal"), ErrHostNotAllowed},
		{"hosts set: loopback still fine on loopback", hosts, request(loopback, "localhost:8080"), nil},
		{"hosts set: loopback name on LAN", hosts, request(lan, "localhost:8080"), ErrHostNotAllowed},
		{"star", any, request(lan, "api.example.com", "https://evil.example.com"), nil},
		{"star still checks hosts", any, request(loopback, "evil.example.com", "https://evil.example.com"), ErrHostNotAllowed},
		{"star still refuses two origins", any, request(lan, "x", "https://a.example", "https://b.example"), ErrOriginNotAllowed},
	}
	for _, c := range cases {
		err := c.rule.Check(c.req)
		if c.want == nil && err != nil || c.want != nil && !errors.Is(err, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, err, c.want)
		}
	}
}

func TestNewRefusesMalformedEntries(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ origins, hosts []string }{
		{origins: []string{"https://*.example.com"}},
		{origins: []string{"app.example.com"}},
		{origins: []string{"https://app.example.com/path"}},
		{origins: []string{"https://user@app.example.com"}},
		{hosts: []string{""}},
		{hosts: []string{"host:http"}},
		{hosts: []string{"a/b"}},
		{hosts: []string{"[::1"}},
	} {
		if _, err := New(c.origins, c.hosts); err == nil {
			t.Errorf("%v %v: accepted", c.origins, c.hosts)
		}
	}
}
