package auth

import (
	"errors"
	"fmt"

	"github.com/golang-jwt/jwt/v5"
)

// The errors a request can fail with. Every error this package returns or
// stores in a request context wraps exactly one of them with %w, so callers
// match them with [errors.Is]. The wrapped text names the cause for logs; it
// never contains the token. [WriteError] turns each into its HTTP answer (the
// one place that mapping lives):
//
//	ErrNoToken            401, challenge without an error code (RFC 6750 §3.1)
//	ErrInvalidRequest     400 invalid_request
//	ErrMalformed          401 invalid_token
//	ErrSignature          401 invalid_token
//	ErrUnknownKey         401 invalid_token
//	ErrExpired            401 invalid_token
//	ErrNotYetValid        401 invalid_token
//	ErrIssuer             401 invalid_token
//	ErrAudience           401 invalid_token
//	ErrMissingClaim       401 invalid_token
//	ErrInsufficientScope  403 insufficient_scope
//	ErrKeySource          503 with Retry-After, no challenge
//	ErrInactive           401 invalid_token (introspection)
//	ErrIntrospection      503 with Retry-After, no challenge
var (
	// ErrNoToken means the request carried no bearer credentials: no
	// Authorization header, or one with another scheme such as Basic (RFC
	// 6750 treats an unsupported scheme as no credentials at all).
	ErrNoToken = errors.New("auth: no bearer token")

	// ErrInvalidRequest means the Authorization header itself is malformed:
	// more than one Authorization header, the Bearer scheme with no token,
	// or a token with characters outside the RFC 6750 b64token alphabet.
	ErrInvalidRequest = errors.New("auth: invalid request")

	// ErrMalformed means the token is not a well-formed JWT: bad segments,
	// base64 or JSON, a claim of the wrong type, or a token longer than
	// Options.MaxTokenBytes.
	ErrMalformed = errors.New("auth: malformed token")

	// ErrSignature means the signature does not verify, or the token's alg
	// is not one this verifier accepts (alg "none" and alg confusion land
	// here).
	ErrSignature = errors.New("auth: invalid signature")

	// ErrUnknownKey means no configured key matches the token's kid and alg,
	// even after the JWKS was refreshed (or the refresh was rate-limited).
	ErrUnknownKey = errors.New("auth: unknown signing key")

	// ErrExpired means exp is in the past, beyond the leeway.
	ErrExpired = errors.New("auth: token expired")

	// ErrNotYetValid means nbf or iat is in the future, beyond the leeway.
	ErrNotYetValid = errors.New("auth: token not yet valid")

	// ErrIssuer means iss is not Options.Issuer.
	ErrIssuer = errors.New("auth: wrong issuer")

	// ErrAudience means aud does not contain Options.Resource.
	ErrAudience = errors.New("auth: wrong audience")

	// ErrMissingClaim means a required claim (exp, iss, aud or sub) is
	// absent.
	ErrMissingClaim = errors.New("auth: required claim missing")

	// ErrInsufficientScope means the token is valid but lacks a scope the
	// route requires (see [RequireScopes]).
	ErrInsufficientScope = errors.New("auth: insufficient scope")

	// ErrKeySource means the keys could not be obtained: the JWKS endpoint
	// is down, answered badly or was slower than JWKSOptions.LookupTimeout,
	// and the cached keys cannot verify the token. It is our failure, not
	// the client's, so it is answered 503 rather than 401: a 401 would tell
	// the client to throw away a token that may be perfectly good.
	ErrKeySource = errors.New("auth: signing keys unavailable")

	// ErrInactive means the introspection endpoint answered that the
	// token is not active: unknown, expired, revoked (RFC 7662 §2.2).
	ErrInactive = errors.New("auth: token not active")

	// ErrIntrospection means the introspection endpoint could not say:
	// it is down, slower than IntrospectionOptions.Timeout, or answered
	// with anything but 200 and an RFC 7662 JSON object. Like
	// [ErrKeySource] it is our failure, answered 503 with Retry-After, so
	// that clients keep their tokens and retry.
	ErrIntrospection = errors.New("auth: token introspection unavailable")

	// ErrOptions is wrapped by every configuration error of [NewVerifier],
	// [NewMetadataHandler], [MountMetadata] and [MetadataURL]. (A JWKS
	// that cannot be fetched at startup under
	// JWKSOptions.RequireInitialFetch is [ErrKeySource] instead.)
	ErrOptions = errors.New("auth: invalid options")
)

// classify maps an error from jwt.Parser to exactly one of our sentinels,
// keeping the original wrapped for logs. jwt joins several claim errors into
// one value (an expired token with a wrong audience matches both), so the
// order below is the precedence: the first match wins.
func classify(err error) error {
	if err == nil {
		return nil
	}
	for _, own := range []error{ErrKeySource, ErrUnknownKey, ErrMalformed} {
		if errors.Is(err, own) {
			return err
		}
	}
	var sentinel error
	switch {
	case errors.Is(err, jwt.ErrTokenMalformed):
		sentinel = ErrMalformed
	case errors.Is(err, jwt.ErrTokenSignatureInvalid),
		errors.Is(err, jwt.ErrTokenUnverifiable),
		errors.Is(err, jwt.ErrInvalidKeyType),
		errors.Is(err, jwt.ErrInvalidKey),
		errors.Is(err, jwt.ErrHashUnavailable):
		sentinel = ErrSignature
	case errors.Is(err, jwt.ErrTokenExpired):
		sentinel = ErrExpired
	case errors.Is(err, jwt.ErrTokenNotValidYet), errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		sentinel = ErrNotYetValid
	case errors.Is(err, jwt.ErrTokenInvalidIssuer):
		sentinel = ErrIssuer
	case errors.Is(err, jwt.ErrTokenInvalidAudience):
		sentinel = ErrAudience
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
		sentinel = ErrMissingClaim
	default:
		// Fail closed: anything we do not recognise is a bad token.
		sentinel = ErrMalformed
	}
	return fmt.Errorf("%w: %w", sentinel, err)
}
