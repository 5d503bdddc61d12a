package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/time/rate"
)

// JWKSOptions configures a remote JSON Web Key Set (the authorization
// server's jwks_uri) as a key source; set it as Options.JWKS. Zero fields
// take the defaults named on each. The keys are fetched once while
// [NewVerifier] runs, refreshed in the background, and refreshed on demand
// when a token names a kid the cache does not hold.
//
// Pitfalls handled for you: a refresh replaces the whole set, so a revoked
// key stops verifying; on-demand refreshes are rate-limited, so a stream of
// tokens with invented kids cannot hammer the authorization server; and no
// request ever waits on the JWKS endpoint longer than LookupTimeout. Keys of
// type "oct" (HMAC secrets) are never used from a key set, since a published
// set would let anyone mint tokens.
//
// The background refresher is a goroutine owned by the [Verifier]: it stops
// when the context given to NewVerifier ends or when [Verifier.Close] is
// called, whichever comes first.
type JWKSOptions struct {
	// URL is the JWKS endpoint (required, absolute http or https URL).
	URL string

	// Algorithms are the JWS algorithms accepted from this key set. A key
	// whose JWK carries "alg" is pinned to that value; one without is
	// pinned by its type (RSA: RS*/PS*; EC: the ES* of its curve; OKP:
	// EdDSA). Default: every asymmetric algorithm. HS* is refused.
	Algorithms []string

	// Client fetches the set. Default: a client with its own transport and
	// no keep-alives, so nothing lingers after Close. A client you pass is
	// used as is; give it a timeout.
	Client *http.Client

	// FetchTimeout bounds the first fetch and each background refresh.
	// Default 10s.
	FetchTimeout time.Duration

	// LookupTimeout bounds how long one request may wait for an on-demand
	// refresh (rate-limiter wait included). When it runs out, or the
	// endpoint fails, the request is answered 503 ([ErrKeySource]).
	// Default 3s.
	LookupTimeout time.Duration

	// RefreshInterval is the background refresh period. Default 1h.
	RefreshInterval time.Duration

	// RefreshRateLimit is the minimum gap between on-demand refreshes
	// triggered by unknown kids. Within it, an unknown kid fails at once
	// with [ErrUnknownKey]. Default 5m.
	RefreshRateLimit time.Duration

	// RequireInitialFetch makes NewVerifier fail when the first fetch
	// fails. By default the server starts anyway (an authorization server
	// being down must not stop a deploy) and answers 503 until a fetch
	// succeeds.
	RequireInitialFetch bool

	// OnRefreshError is told about every failed fetch. Default: a warning
	// on slog.Default(). It must not block.
	OnRefreshError func(ctx context.Context, err error)
}

// withDefaults returns a validated copy of o with defaults filled in.
func (o *JWKSOptions) withDefaults() (JWKSOptions, error) {
	c := *o
	c.Algorithms = slices.Clone(o.Algorithms)
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return c, fmt.Errorf("%w: JWKS.URL %q is not an absolute http(s) URL", ErrOptions, c.URL)
	}
	if len(c.Algorithms) == 0 {
		c.Algorithms = slices.Clone(asymmetricAlgs)
	}
	for _, a := range c.Algorithms {
		if !slices.Contains(asymmetricAlgs, a) {
			return c, fmt.Errorf("%w: JWKS.Algorithms: %q is not an asymmetric JWS algorithm", ErrOptions, a)
		}
	}
	for _, d := range []struct {
		p   *time.Duration
		def time.Duration
		nm  string
	}{
		{&c.FetchTimeout, 10 * time.Second, "FetchTimeout"},
		{&c.LookupTimeout, 3 * time.Second, "LookupTimeout"},
		{&c.RefreshInterval, time.Hour, "RefreshInterval"},
		{&c.RefreshRateLimit, 5 * time.Minute, "RefreshRateLimit"},
	} {
		if *d.p < 0 {
			return c, fmt.Errorf("%w: JWKS.%s is negative", ErrOptions, d.nm)
		}
		if *d.p == 0 {
			*d.p = d.def
		}
	}
	if c.OnRefreshError == nil {
		u := c.URL
		c.OnRefreshError = func(ctx context.Context, err error) {
			slog.Default().WarnContext(ctx, "auth: JWKS refresh failed", "url", u, "error", err)
		}
	}
	return c, nil
}

// keySet is a remote JWKS behind keyfunc, plus what keyfunc does not tell
// us: whether the last fetch failed.
type keySet struct {
	kf            keyfunc.Keyfunc
	algs          []string
	lookupTimeout time.Duration
	failing       atomic.Bool
	stop          context.CancelFunc
	transport     *http.Transport // ours to close, or nil
	closeOnce     sync.Once
	// gen grows each time a refresh drops a key that was in the set, so
	// that tokens verified before are checked again (see tokenCache).
	gen    atomic.Uint64
	mu     sync.Mutex
	prints map[string]bool // the keys of the current set, as JSON
}

// replaced notes a successful replacement of the set by given: the source
// is healthy, and if a key of the old set is gone the generation grows.
func (ks *keySet) replaced(given []jwkset.JWK) {
	ks.failing.Store(false)
	prints := make(map[string]bool, len(given))
	for _, k := range given {
		b, err := json.Marshal(k.Marshal())
		if err != nil { // cannot tell this key apart: treat the set as changed
			ks.gen.Add(1)
			continue
		}
		prints[string(b)] = true
	}
	ks.mu.Lock()
	defer ks.mu.Unlock()
	for p := range ks.prints {
		if !prints[p] {
			ks.gen.Add(1)
			break
		}
	}
	ks.prints = prints
}

// newKeySet starts the refresher; it runs until ctx ends or close is called.
func newKeySet(ctx context.Context, o *JWKSOptions) (*keySet, error) {
	opts, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	ctx, stop := context.WithCancel(ctx)
	ks := &keySet{algs: opts.Algorithms, lookupTimeout: opts.LookupTimeout, stop: stop}
	client := opts.Client
	if client == nil {
		ks.transport = http.DefaultTransport.(*http.Transport).Clone()
		// Fetches are rare; an idle pool would only leave goroutines behind.
		ks.transport.DisableKeepAlives = true
		client = &http.Client{Transport: ks.transport, Timeout: opts.FetchTimeout}
	}
	// Every fetch either replaces the set (success) or reaches the error
	// handler (failure); watching both tells us the source's health.
	ks.failing.Store(true)
	store := trackedStorage{Storage: jwkset.NewMemoryStorage(), ok: ks.replaced}
	onErr := func(ctx context.Context, err error) {
		ks.failing.Store(true)
		opts.OnRefreshError(ctx, err)
	}
	remote, err := jwkset.NewStorageFromHTTP(opts.URL, jwkset.HTTPClientStorageOptions{
		Client:                    client,
		Ctx:                       ctx,
		HTTPTimeout:               opts.FetchTimeout,
		NoErrorReturnFirstHTTPReq: !opts.RequireInitialFetch,
		RefreshErrorHandler:       onErr,
		RefreshInterval:           opts.RefreshInterval,
		Storage:                   store,
	})
	if err != nil {
		ks.close()
		return nil, fmt.Errorf("%w: JWKS %q: %w", ErrKeySource, opts.URL, err)
	}
	client2, err := jwkset.NewHTTPClient(jwkset.HTTPClientOptions{
		HTTPURLs:          map[string]jwkset.Storage{opts.URL: remote},
		RateLimitWaitMax:  opts.LookupTimeout,
		RefreshUnknownKID: rate.NewLimiter(rate.Every(opts.RefreshRateLimit), 1),
	})
	if err != nil {
		ks.close()
		return nil, fmt.Errorf("%w: JWKS %q: %w", ErrOptions, opts.URL, err)
	}
	ks.kf, err = keyfunc.New(keyfunc.Options{
		Ctx:          ctx,
		Storage:      client2,
		UseWhitelist: []jwkset.USE{jwkset.UseSig, ""},
	})
	if err != nil {
		ks.close()
		return nil, fmt.Errorf("%w: JWKS %q: %w", ErrOptions, opts.URL, err)
	}
	return ks, nil
}

// lookup returns the keys that may verify t, never waiting longer than the
// lookup timeout. An unknown kid triggers a rate-limited refresh inside
// keyfunc. A miss is ErrKeySource when the source is failing (or the wait
// ran out), ErrUnknownKey otherwise.
func (ks *keySet) lookup(ctx context.Context, t *jwt.Token) ([]jwt.VerificationKey, error) {
	alg := t.Method.Alg()
	if !slices.Contains(ks.algs, alg) {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, ks.lookupTimeout)
	defer cancel()
	got, err := ks.kf.KeyfuncCtx(ctx)(t)
	var keys []jwt.VerificationKey
	if err == nil {
		switch got := got.(type) {
		case jwt.VerificationKeySet:
			keys = got.Keys
		default:
			keys = []jwt.VerificationKey{got}
		}
		keys = slices.DeleteFunc(keys, func(k jwt.VerificationKey) bool { return !fits(k, alg) })
	}
	if len(keys) > 0 {
		return keys, nil
	}
	if err == nil {
		err = errors.New("no key in the set fits the token")
	}
	if ks.failing.Load() || ctx.Err() != nil {
		return nil, fmt.Errorf("%w: %w", ErrKeySource, err)
	}
	return nil, fmt.Errorf("%w: %w", ErrUnknownKey, err)
}

// close stops the refresher and releases our idle connections. Safe to call
// more than once.
func (ks *keySet) close() {
	ks.closeOnce.Do(func() {
		ks.stop()
		if ks.transport != nil {
			ks.transport.CloseIdleConnections()
		}
	})
}

// trackedStorage reports every successful replacement of the key set.
type trackedStorage struct {
	jwkset.Storage
	ok func(given []jwkset.JWK)
}

func (s trackedStorage) KeyReplaceAll(ctx context.Context, given []jwkset.JWK) error {
	err := s.Storage.KeyReplaceAll(ctx, given)
	if err == nil {
		s.ok(given)
	}
	return err
}
