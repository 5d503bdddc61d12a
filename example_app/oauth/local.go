package oauth

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// KeysClient returns an HTTP client that fetches this server's key set
// (JWKSURL) from the server itself, in process: package auth's verifier
// reads the JWKS document through it while the app is still starting,
// before it listens, and replicas need no request to each other, since
// they share the key through the database. Any other URL fails.
func (s *Server) KeysClient() *http.Client {
	return &http.Client{Transport: keysTransport{s}, Timeout: 5 * time.Second}
}

type keysTransport struct{ s *Server }

func (t keysTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_ = r.Body.Close()
	}
	if r.URL.String() != t.s.JWKSURL() {
		return nil, fmt.Errorf("oauth: KeysClient serves %s only", t.s.JWKSURL())
	}
	keys, err := t.s.st.KeySet(r.Context())
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := writeKeySet(&buf, keys); err != nil {
		return nil, err
	}
	return &http.Response{
		StatusCode: http.StatusOK, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:        http.Header{"Content-Type": {"application/json"}},
		Body:          io.NopCloser(&buf),
		ContentLength: int64(buf.Len()),
		Request:       r,
	}, nil
}

// DevToken mints an access token for subject with scopes, valid for ttl,
// signed with the server's key exactly as the token endpoint signs: the
// development shortcut for curl, which has no browser to sign in with.
// Pitfall: whoever can run this can be anyone; it is for a developer's own
// machine.
func (s *Server) DevToken(ctx context.Context, subject, scopes string, ttl time.Duration) (string, error) {
	now := time.Now()
	t := jwt.NewWithClaims(jwt.SigningMethodES256, jwt.MapClaims{
		"iss": s.opts.Issuer, "sub": subject, "aud": s.opts.Resource, "scope": scopes,
		"client_id": "dev-token", "jti": randomToken(),
		"iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(ttl).Unix(),
	})
	k, err := s.signer(ctx)
	if err != nil {
		return "", err
	}
	t.Header["kid"] = k.id
	return t.SignedString(k.key)
}
