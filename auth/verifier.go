package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// NoLeeway, as Options.Leeway, turns the clock-skew allowance off.
const NoLeeway time.Duration = -1

// Options configures a [Verifier]. Pass it by pointer to [NewVerifier]; it
// is copied, never modified, and may be reused. A nil *Options is the zero
// Options, which NewVerifier refuses: Resource, Issuer and at least one key
// source have no safe default.
type Options struct {
	// Resource is this server's canonical resource URL, e.g.
	// "https://api.example.com/mcp" (RFC 8707). A token is accepted only
	// if its aud equals it or is an array containing it. Compared
	// exactly: "https://api.example.com/mcp/" is another resource.
	// Required.
	Resource string

	// Issuer is the authorization server's issuer identifier (RFC 8414):
	// its absolute http(s) URL, with a host and no query or fragment, e.g.
	// "https://login.example.com". A token's iss must equal it exactly,
	// and [Verifier.ResourceMetadata] names it as the authorization server
	// clients discover. Required; a name such as "mysrv-dev" is refused.
	// Pitfall: compared exactly, so "https://login.example.com/" is
	// another issuer; copy the authorization server's own issuer value.
	Issuer string

	// Keys are static verification keys (see [Key]).
	Keys []Key

	// JWKS, if set, adds a remote key set (see [JWKSOptions]).
	JWKS *JWKSOptions

	// Introspection, if set, checks tokens with RFC 7662 token
	// introspection instead of signatures (see [IntrospectionOptions]),
	// for authorization servers that issue opaque tokens. It excludes
	// Keys and JWKS: a verifier checks tokens one way.
	Introspection *IntrospectionOptions

	// ResourceMetadataURL is sent as resource_metadata in every challenge.
	// Default: [MetadataURL] of Resource, which is where [MountMetadata]
	// serves the RFC 9728 document.
	ResourceMetadataURL string

	// Leeway is the clock skew allowed on exp, nbf and iat. Default 30s;
	// at most 5m; [NoLeeway] for none.
	Leeway time.Duration

	// MaxTokenBytes bounds the token length; longer tokens are refused as
	// malformed before any decoding. Default 8192.
	MaxTokenBytes int

	// CacheSize bounds the cache of tokens that verified (see CacheTTL);
	// default 4096, negative turns the cache off.
	CacheSize int

	// CacheTTL is how long a verified token is trusted without checking
	// its signature again (or asking the introspection endpoint again): a
	// client sends the same token on every request, and an RS256 or ES256
	// check costs more than the rest of a typical request (about 50 µs
	// against 0.15 µs for a cache hit, BenchmarkVerify), an
	// introspection a network round trip. The cache is indexed by a
	// per-process seeded hash, and a hit needs the very token. Default 1
	// minute; never past
	// the token's exp; negative turns the cache off. A JWKS refresh that
	// drops a key sends every cached token back to a full check, so a
	// token of the removed key fails from that refresh on. Pitfall: a
	// token revoked at the authorization server stays accepted for up to
	// CacheTTL.
	CacheTTL time.Duration

	// Now replaces time.Now, for tests.
	Now func() time.Time
}

// Verifier checks bearer tokens. Build one at startup with [NewVerifier],
// install [Verifier.Handler] as middleware, and put an enforcer
// ([Required], [RequireScopes]) where a route needs a token. It is safe for
// concurrent use. Call [Verifier.Close] when done if it has a JWKS.
type Verifier struct {
	cache        *tokenCache
	keys         []Key
	jwks         *keySet
	introspector *introspector
	leeway       time.Duration
	now          func() time.Time
	parser       *jwt.Parser
	challenge    *challenger
	maxToken     int
	resource     string
	issuer       string
}

// NewVerifier validates opts and builds a Verifier. Every configuration
// mistake is reported here, wrapped in [ErrOptions]; nothing is checked per
// request. With JWKSOptions.RequireInitialFetch, an unreachable key set is
// reported too, wrapped in [ErrKeySource].
//
// When opts.JWKS is set, NewVerifier fetches the key set once (bounded by
// JWKSOptions.FetchTimeout) and starts its background refresher, which runs
// until ctx is done or Close is called. Pitfall: pass a context that lives
// as long as the server (not a request's), or the refresher stops early;
// tokens then still verify against the cached keys and unknown kids still
// refresh on demand.
func NewVerifier(ctx context.Context, opts *Options) (*Verifier, error) {
	if ctx == nil {
		return nil, fmt.Errorf("%w: nil context", ErrOptions)
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if err := checkResourceURL(o.Resource); err != nil {
		return nil, fmt.Errorf("%w: Resource: %w", ErrOptions, err)
	}
	if err := checkIssuerURL(o.Issuer); err != nil {
		return nil, fmt.Errorf("%w: Issuer %q: %w", ErrOptions, o.Issuer, err)
	}
	if len(o.Keys) == 0 && o.JWKS == nil && o.Introspection == nil {
		return nil, fmt.Errorf("%w: no keys: set Keys, JWKS or Introspection", ErrOptions)
	}
	if o.Introspection != nil && (len(o.Keys) > 0 || o.JWKS != nil) {
		return nil, fmt.Errorf("%w: Introspection excludes Keys and JWKS", ErrOptions)
	}
	switch {
	case o.Leeway == NoLeeway:
		o.Leeway = 0
	case o.Leeway == 0:
		o.Leeway = 30 * time.Second
	case o.Leeway < 0 || o.Leeway > 5*time.Minute:
		return nil, fmt.Errorf("%w: Leeway %v is outside 0..5m", ErrOptions, o.Leeway)
	}
	switch {
	case o.MaxTokenBytes == 0:
		o.MaxTokenBytes = 8192
	case o.MaxTokenBytes < 0:
		return nil, fmt.Errorf("%w: MaxTokenBytes is negative", ErrOptions)
	}
	if o.ResourceMetadataURL == "" {
		u, err := MetadataURL(o.Resource)
		if err != nil {
			return nil, err
		}
		o.ResourceMetadataURL = u
	} else if u, err := url.Parse(o.ResourceMetadataURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("%w: ResourceMetadataURL %q is not an absolute http(s) URL", ErrOptions, o.ResourceMetadataURL)
	}

	v := &Verifier{
		leeway:    o.Leeway,
		now:       o.Now,
		keys:      slices.Clone(o.Keys),
		maxToken:  o.MaxTokenBytes,
		resource:  o.Resource,
		issuer:    o.Issuer,
		challenge: &challenger{resourceMetadata: o.ResourceMetadataURL},
	}
	if v.now == nil {
		v.now = time.Now
	}
	if o.Introspection != nil {
		in, err := newIntrospector(o.Introspection)
		if err != nil {
			return nil, err
		}
		v.introspector = in
	}
	var algs []string
	for _, k := range v.keys {
		if err := k.validate(); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrOptions, err)
		}
		algs = append(algs, k.alg)
	}
	if o.JWKS != nil {
		ks, err := newKeySet(ctx, o.JWKS)
		if err != nil {
			return nil, err
		}
		v.jwks = ks
		algs = append(algs, ks.algs...)
	}
	slices.Sort(algs)
	popts := []jwt.ParserOption{
		jwt.WithValidMethods(slices.Compact(algs)),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithLeeway(o.Leeway),
		jwt.WithIssuer(o.Issuer),
		jwt.WithAudience(o.Resource),
	}
	if o.Now != nil {
		popts = append(popts, jwt.WithTimeFunc(o.Now))
	}
	v.parser = jwt.NewParser(popts...)
	size, ttl := o.CacheSize, o.CacheTTL
	if size == 0 {
		size = 4096
	}
	if ttl == 0 {
		ttl = time.Minute
	}
	v.cache = newTokenCache(size, ttl, o.Now)
	if v.cache != nil && v.jwks != nil {
		v.cache.gen = v.jwks.gen.Load
	}
	return v, nil
}

// Close stops the JWKS refresher, if any, and closes the idle
// connections of the JWKS and introspection clients it made. It is safe to
// call more than once, and the Verifier keeps verifying with the keys it
// has.
func (v *Verifier) Close() error {
	if v.jwks != nil {
		v.jwks.close()
	}
	if v.introspector != nil {
		v.introspector.close()
	}
	return nil
}

// Handler is the verifier middleware. It reads the bearer token from the
// Authorization header, verifies it, and stores the outcome in the request
// context: the [Claims] on success, the error otherwise (see
// [ClaimsFromContext], [ErrorFromContext]). It never rejects a request by
// itself, so routes where a token is optional still see who is calling;
// put [Required] or [RequireScopes] after it to reject.
//
// Only the Authorization header is read, with a case-insensitive "Bearer"
// scheme. An access_token query or form parameter is ignored (it leaks
// into logs and caches), and so are cookies (CSRF). More than one
// Authorization header is an invalid request (RFC 6750 §3.1, 400), not a
// choice to make on the client's behalf.
func (v *Verifier) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		st := v.state(r)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), stateKey{}, st)))
	})
}

// state verifies r's bearer token. A token that verified within the cache
// TTL costs one hash, one map lookup and one comparison: its state is
// shared, and its syntax is not checked again (only well-formed tokens
// get into the cache).
func (v *Verifier) state(r *http.Request) *state {
	tok, err := v.extract(r)
	if err == nil && v.cache != nil && len(tok) <= v.maxToken {
		if st, _, ok := v.cache.get(tok); ok {
			return st
		}
	}
	if err == nil && !isB64Token(tok) {
		err = fmt.Errorf("%w: bearer token has characters outside b64token", ErrInvalidRequest)
	}
	if err != nil {
		return &state{err: err, challenge: v.challenge}
	}
	st, err := v.verify(r.Context(), tok)
	if err != nil {
		return &state{err: err, challenge: v.challenge}
	}
	return st
}

// extract returns the bearer token of r, or ErrNoToken or ErrInvalidRequest.
func (v *Verifier) extract(r *http.Request) (string, error) {
	vals := r.Header["Authorization"] // canonical already: Values would canonicalize it again
	switch len(vals) {
	case 0:
		return "", ErrNoToken
	case 1:
	default:
		return "", fmt.Errorf("%w: %d Authorization headers", ErrInvalidRequest, len(vals))
	}
	scheme, tok, _ := strings.Cut(strings.TrimSpace(vals[0]), " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return "", ErrNoToken
	}
	tok = strings.TrimLeft(tok, " ")
	if tok == "" {
		return "", fmt.Errorf("%w: Bearer scheme without a token", ErrInvalidRequest)
	}
	return tok, nil // state checks isB64Token, unless the token is cached
}

// isB64Token reports whether s matches RFC 6750's
// b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"=".
func isB64Token(s string) bool {
	body := strings.TrimRight(s, "=")
	if body == "" {
		return false
	}
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '-', c == '.', c == '_', c == '~', c == '+', c == '/':
		default:
			return false
		}
	}
	return true
}

// Verify checks one raw token (without the "Bearer " prefix) and returns
// its claims, or an error wrapping one of the Err sentinels. ctx bounds
// any JWKS refresh the token's kid triggers, and an introspection
// request. Handler calls it; call it directly for tokens that do not
// arrive in a header you control.
//
// A JWT must satisfy all of this:
//
//   - Its alg is pinned: only keys configured for exactly that alg are
//     tried, and "none" is never accepted. Static keys come from
//     [HMACKey], [RSAKey], [ECDSAKey], [Ed25519Key]; remote ones from a
//     JWKS ([JWKSOptions]), which never yields HMAC keys.
//   - exp is required; exp, nbf and iat are checked with Options.Leeway
//     (30s by default).
//   - iss equals Options.Issuer; aud equals Options.Resource or is an
//     array containing it; sub is present, so every verified token has
//     an [Identity].
//   - Scopes come from "scope" (a space-separated string) and "scp" (a
//     string or an array).
//
// Handler adds that the token arrives in exactly one Authorization
// header, scheme Bearer (any case); query parameters, form fields and
// cookies are ignored.
func (v *Verifier) Verify(ctx context.Context, token string) (*Claims, error) {
	st, err := v.verify(ctx, token)
	if err != nil {
		return nil, err
	}
	return st.claims, nil
}

// verify is Verify returning the state Handler leaves in the context,
// shared by every request with the same cached token.
func (v *Verifier) verify(ctx context.Context, token string) (*state, error) {
	if len(token) > v.maxToken {
		return nil, fmt.Errorf("%w: token is %d bytes, limit %d", ErrMalformed, len(token), v.maxToken)
	}
	var key uint64
	if v.cache != nil {
		var st *state
		var ok bool
		if st, key, ok = v.cache.get(token); ok {
			return st, nil
		}
	}
	var gen uint64
	if v.cache != nil {
		gen = v.cache.generation() // before the keys are looked at
	}
	var claims *Claims
	if v.introspector != nil {
		c, err := v.introspect(ctx, token)
		if err != nil {
			return nil, err
		}
		claims = c
	} else {
		var tc tokenClaims
		if _, err := v.parser.ParseWithClaims(token, &tc, v.keyfunc(ctx)); err != nil {
			return nil, classify(err)
		}
		claims = tc.claims(token)
	}
	st := &state{claims: claims, challenge: v.challenge}
	if v.cache != nil {
		v.cache.put(key, token, st, gen)
	}
	return st, nil
}

// keyfunc picks the keys that may verify a token: the parser has already
// refused any alg outside the configured set, and here only keys pinned
// to the token's exact alg are offered.
func (v *Verifier) keyfunc(ctx context.Context) jwt.Keyfunc {
	return func(t *jwt.Token) (any, error) {
		alg := t.Method.Alg()
		kid := ""
		if raw, ok := t.Header["kid"]; ok {
			s, ok := raw.(string)
			if !ok {
				return nil, fmt.Errorf("%w: kid is not a string", ErrMalformed)
			}
			kid = s
		}
		var keys []jwt.VerificationKey
		for _, k := range v.keys {
			if k.alg != alg {
				continue
			}
			if kid != "" && k.id == kid {
				return k.key, nil // an exact kid match is the only candidate
			}
			if k.id == "" || kid == "" {
				keys = append(keys, k.key)
			}
		}
		if v.jwks != nil {
			more, err := v.jwks.lookup(ctx, t)
			if err != nil && len(keys) == 0 {
				return nil, err
			}
			keys = append(keys, more...)
		}
		switch len(keys) {
		case 0:
			return nil, fmt.Errorf("%w: no %s key with kid %q", ErrUnknownKey, alg, kid)
		case 1:
			return keys[0], nil
		}
		return jwt.VerificationKeySet{Keys: keys}, nil
	}
}

// checkIssuerURL accepts what RFC 8414 §2 calls an issuer identifier (a
// URL with no query or fragment), over http as well as https so that a
// development server on loopback works. It is checked here because the
// issuer is also the authorization server a client discovers through the
// resource metadata, which must be a URL.
func checkIssuerURL(s string) error {
	const want = `an issuer is the authorization server's URL, e.g. "https://login.example.com" (RFC 8414)`
	if s == "" {
		return errors.New("required: " + want)
	}
	u, err := url.Parse(s)
	switch {
	case err != nil, u.Scheme != "https" && u.Scheme != "http", u.Host == "":
		return errors.New("not an absolute http(s) URL: " + want)
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(s, "#"):
		return errors.New("an issuer URL has no query or fragment (RFC 8414)")
	}
	return nil
}

// checkResourceURL accepts an absolute http(s) URL without a fragment.
func checkResourceURL(s string) error {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return err
	case u.Scheme != "https" && u.Scheme != "http", u.Host == "":
		return fmt.Errorf("%q is not an absolute http(s) URL", s)
	case u.Fragment != "" || strings.Contains(s, "#"):
		return errors.New("a resource URL has no fragment (RFC 8707)")
	}
	return nil
}
