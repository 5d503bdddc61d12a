package middleware

import (
	"net/http"
	"net/url"
	"strings"
)

// Redacted is what [RequestLogger] logs in place of a secret: a query value,
// an Authorization token, a cookie.
const Redacted = "REDACTED"

// redactQuery returns raw with every value replaced by Redacted, except the
// values of the parameters in keep. A parameter whose name is not a plain
// identifier (it could smuggle a value, e.g. "access_token%3DSECRET") and a
// bare segment without "=" (it could be the secret itself) become Redacted
// as a whole.
func redactQuery(raw string, keep map[string]bool) string {
	if raw == "" {
		return ""
	}
	segs := strings.Split(raw, "&")
	for i, seg := range segs {
		if seg == "" {
			continue
		}
		key, _, hasValue := strings.Cut(seg, "=")
		switch {
		case !plainName(key):
			segs[i] = Redacted
		case keep[key]:
			// logged as sent
		case hasValue:
			segs[i] = key + "=" + Redacted
		default:
			segs[i] = Redacted
		}
	}
	return strings.Join(segs, "&")
}

// plainName reports whether s is a short name made of letters, digits and
// "_.-[]", so that it needs no escaping and hides nothing.
func plainName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '_', c == '.', c == '-', c == '[', c == ']':
		default:
			return false
		}
	}
	return true
}

// redactHeader returns h, or a copy of it (copied is true) with credentials
// redacted and the Referer's query redacted. The handler keeps the original;
// only the logger sees the copy.
func redactHeader(h http.Header, keep map[string]bool) (_ http.Header, copied bool) {
	_, auth := h["Authorization"]
	_, proxyAuth := h["Proxy-Authorization"]
	_, cookie := h["Cookie"]
	ref := h.Get("Referer")
	refSecret := strings.ContainsAny(ref, "?#@")
	if !auth && !proxyAuth && !cookie && !refSecret {
		return h, false
	}
	c := h.Clone()
	for _, k := range []string{"Authorization", "Proxy-Authorization"} {
		for i, v := range c[k] {
			c[k][i] = redactCredential(v)
		}
	}
	for i := range c["Cookie"] {
		c["Cookie"][i] = Redacted
	}
	if refSecret {
		c.Set("Referer", redactReferer(ref, keep))
	}
	return c, true
}

// redactCredential keeps the auth scheme ("Bearer", "Basic") and redacts the
// rest: "Bearer REDACTED".
func redactCredential(v string) string {
	scheme, _, ok := strings.Cut(strings.TrimSpace(v), " ")
	if ok && len(scheme) <= 20 && plainName(scheme) {
		return scheme + " " + Redacted
	}
	return Redacted
}

// redactReferer drops the userinfo and fragment of a Referer and redacts its
// query values. An unparsable Referer is redacted whole.
func redactReferer(ref string, keep map[string]bool) string {
	u, err := url.Parse(ref)
	if err != nil {
		return Redacted
	}
	u.User = nil
	u.Fragment, u.RawFragment = "", ""
	u.RawQuery = redactQuery(u.RawQuery, keep)
	return u.String()
}
