package auth

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// IntrospectionOptions configures RFC 7662 token introspection, the second
// way a [Verifier] checks tokens, for authorization servers that issue
// opaque tokens: each token the cache does not hold is sent to the
// introspection endpoint, and the answer is held to the same rules as a
// JWT's claims. Set it as Options.Introspection instead of Keys and JWKS.
//
// The answer must say "active": true; its exp, nbf and iat are checked
// with Options.Leeway; its iss, when present, must be Options.Issuer (an
// endpoint that leaves iss out speaks for the issuer it is configured
// for); its aud must contain Options.Resource (RFC 8707), and its sub must
// be present. A token that fails is answered 401 invalid_token, exactly
// as a JWT would be.
//
// Pitfalls: the endpoint is the source of truth, so when it is down,
// answers with anything but 200 and JSON (a 401 because the credentials
// below are wrong included), or is slower than Timeout, requests are
// answered 503 with Retry-After ([ErrIntrospection]), never let through
// and never told their token is bad. An answer that omits aud is refused:
// configure the authorization server to include it. A revoked token stays
// accepted for up to Options.CacheTTL, as long as its answer is cached.
type IntrospectionOptions struct {
	// URL is the introspection endpoint (required, absolute http or
	// https URL).
	URL string

	// ClientID and ClientSecret authenticate this resource server to the
	// endpoint with HTTP Basic (client_secret_basic), as most
	// authorization servers require. Both empty sends no credentials.
	ClientID     string
	ClientSecret string

	// Client sends the requests. Default: a client with its own
	// transport, closed by Verifier.Close. A client you pass is used as
	// is.
	Client *http.Client

	// Timeout bounds one introspection request. Default 3s.
	Timeout time.Duration
}

// maxIntrospectionBody bounds the endpoint's answer.
const maxIntrospectionBody = 64 << 10

// introspector calls the endpoint.
type introspector struct {
	url, id, secret string
	client          *http.Client
	timeout         time.Duration
	transport       *http.Transport // ours to close, or nil
	closeOnce       sync.Once
}

func newIntrospector(o *IntrospectionOptions) (*introspector, error) {
	u, err := url.Parse(o.URL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("%w: Introspection.URL %q is not an absolute http(s) URL", ErrOptions, o.URL)
	}
	if (o.ClientID == "") != (o.ClientSecret == "") {
		return nil, fmt.Errorf("%w: Introspection needs both ClientID and ClientSecret, or neither", ErrOptions)
	}
	switch {
	case o.Timeout == 0:
		o.Timeout = 3 * time.Second
	case o.Timeout < 0:
		return nil, fmt.Errorf("%w: Introspection.Timeout is negative", ErrOptions)
	}
	in := &introspector{url: o.URL, id: o.ClientID, secret: o.ClientSecret, client: o.Client, timeout: o.Timeout}
	if in.client == nil {
		in.transport = http.DefaultTransport.(*http.Transport).Clone()
		in.client = &http.Client{Transport: in.transport,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	return in, nil
}

func (in *introspector) close() {
	in.closeOnce.Do(func() {
		if in.transport != nil {
			in.transport.CloseIdleConnections()
		}
	})
}

// introspection is the part of an RFC 7662 answer the verifier reads.
type introspection struct {
	Active   *bool     `json:"active"`
	Scope    string    `json:"scope"`
	Scp      scpClaim  `json:"scp"`
	ClientID string    `json:"client_id"`
	Exp      *jsonTime `json:"exp"`
	Iat      *jsonTime `json:"iat"`
	Nbf      *jsonTime `json:"nbf"`
	Sub      string    `json:"sub"`
	Aud      audClaim  `json:"aud"`
	Iss      string    `json:"iss"`
	Jti      string    `json:"jti"`
}

// jsonTime is a NumericDate (seconds, possibly fractional).
type jsonTime struct{ time.Time }

func (t *jsonTime) UnmarshalJSON(b []byte) error {
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return errors.New("a time claim is not a number")
	}
	t.Time = time.Unix(0, int64(f*float64(time.Second)))
	return nil
}

// audClaim is aud: a string or an array of strings.
type audClaim []string

func (a *audClaim) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*a = []string{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return errors.New("aud is neither a string nor an array of strings")
	}
	*a = many
	return nil
}

// introspect asks the endpoint about token and checks its answer.
func (v *Verifier) introspect(ctx context.Context, token string) (*Claims, error) {
	in := v.introspector
	ctx, cancel := context.WithTimeout(ctx, in.timeout)
	defer cancel()
	form := url.Values{"token": {token}, "token_type_hint": {"access_token"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, in.url, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrIntrospection, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if in.id != "" {
		// RFC 6749 §2.3.1: the credentials are form-encoded first.
		req.SetBasicAuth(url.QueryEscape(in.id), url.QueryEscape(in.secret))
	}
	res, err := in.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrIntrospection, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, maxIntrospectionBody+1))
	if err != nil {
		return nil, fmt.Errorf("%w: reading the answer: %w", ErrIntrospection, err)
	}
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%w: the endpoint answered %d", ErrIntrospection, res.StatusCode)
	}
	if mt, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type")); mt != "application/json" {
		return nil, fmt.Errorf("%w: the answer is %q, not JSON", ErrIntrospection, mt)
	}
	if len(body) > maxIntrospectionBody {
		return nil, fmt.Errorf("%w: the answer is over %d bytes", ErrIntrospection, maxIntrospectionBody)
	}
	var ans introspection
	if err := json.Unmarshal(body, &ans); err != nil || ans.Active == nil {
		return nil, fmt.Errorf("%w: the answer is not an RFC 7662 object", ErrIntrospection)
	}
	return v.checkIntrospection(&ans, body)
}

// checkIntrospection applies the rules a JWT's claims meet.
func (v *Verifier) checkIntrospection(ans *introspection, body []byte) (*Claims, error) {
	if !*ans.Active {
		return nil, fmt.Errorf("%w: the authorization server says the token is not active", ErrInactive)
	}
	now := v.now()
	if ans.Exp != nil && !now.Before(ans.Exp.Add(v.leeway)) {
		return nil, fmt.Errorf("%w: exp %s", ErrExpired, ans.Exp.UTC().Format(time.RFC3339))
	}
	if ans.Nbf != nil && now.Add(v.leeway).Before(ans.Nbf.Time) {
		return nil, fmt.Errorf("%w: nbf in the future", ErrNotYetValid)
	}
	if ans.Iat != nil && now.Add(v.leeway).Before(ans.Iat.Time) {
		return nil, fmt.Errorf("%w: iat in the future", ErrNotYetValid)
	}
	iss := ans.Iss
	if iss == "" {
		iss = v.issuer
	}
	if iss != v.issuer {
		return nil, fmt.Errorf("%w: %q", ErrIssuer, iss)
	}
	if len(ans.Aud) == 0 {
		return nil, fmt.Errorf("%w: aud", ErrMissingClaim)
	}
	if !slices.Contains(ans.Aud, v.resource) {
		return nil, fmt.Errorf("%w: %q", ErrAudience, []string(ans.Aud))
	}
	if ans.Sub == "" {
		return nil, fmt.Errorf("%w: sub", ErrMissingClaim)
	}
	c := &Claims{Issuer: iss, Subject: ans.Sub, Audience: slices.Clone([]string(ans.Aud)), ID: ans.Jti, ClientID: ans.ClientID,
		payload: base64.RawURLEncoding.EncodeToString(body)}
	if ans.Exp != nil {
		c.ExpiresAt = ans.Exp.Time
	}
	if ans.Nbf != nil {
		c.NotBefore = ans.Nbf.Time
	}
	if ans.Iat != nil {
		c.IssuedAt = ans.Iat.Time
	}
	for _, s := range slices.Concat(strings.Fields(ans.Scope), []string(ans.Scp)) {
		if s != "" && !slices.Contains(c.Scopes, s) {
			c.Scopes = append(c.Scopes, s)
		}
	}
	c.identity = identityOf(c.Issuer, c.Subject)
	return c, nil
}
