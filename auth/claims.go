package auth

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Claims is what a verified token says. The verifier fills it only after the
// signature, exp, nbf, iat, iss, aud and sub all checked out, and stores it
// in the request context (read it with [ClaimsFromContext]). Treat it as
// read-only: it is shared by everything that handles the request.
type Claims struct {
	Issuer    string
	Subject   string
	Audience  []string
	ExpiresAt time.Time
	NotBefore time.Time // zero when the token has no nbf
	IssuedAt  time.Time // zero when the token has no iat
	ID        string    // jti, not checked for replay
	ClientID  string    // client_id (RFC 9068), "" when absent

	// Scopes is the union, in token order without duplicates, of the
	// space-separated "scope" claim (RFC 8693, RFC 9068) and the "scp"
	// claim (a string or an array, as Entra ID and Okta send it).
	Scopes []string

	payload  string // the verified base64url payload, for Decode
	identity string // Identity, computed once for a verified token
}

// HasScope reports whether the token was granted scope s (exact match).
func (c *Claims) HasScope(s string) bool {
	return c != nil && slices.Contains(c.Scopes, s)
}

// Identity returns a stable identity for the token's principal: issuer and
// subject, each quoted, so the same subject at two issuers gives two
// identities and no choice of strings makes two pairs collide. It is ""
// for a nil Claims. See [Identity].
func (c *Claims) Identity() string {
	if c == nil || c.Subject == "" {
		return ""
	}
	if c.identity != "" {
		return c.identity
	}
	return identityOf(c.Issuer, c.Subject)
}

func identityOf(issuer, subject string) string {
	return strconv.Quote(issuer) + " " + strconv.Quote(subject)
}

// Decode unmarshals the token's verified JSON payload into dst, for claims
// this struct does not name (email, roles, tenant…). It fails for Claims
// that did not come from a verified token, such as ones built for
// [NewContext].
func (c *Claims) Decode(dst any) error {
	if c == nil || c.payload == "" {
		return errors.New("auth: claims carry no verified payload")
	}
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(c.payload, "="))
	if err != nil {
		return fmt.Errorf("auth: decode payload: %w", err)
	}
	if err := json.Unmarshal(b, dst); err != nil {
		return fmt.Errorf("auth: decode payload: %w", err)
	}
	return nil
}

// tokenClaims is the shape jwt.Parser decodes into. A claim of the wrong
// JSON type (scope as a number, scp as an object) makes the token malformed.
type tokenClaims struct {
	jwt.RegisteredClaims
	Scope    string   `json:"scope"`
	Scp      scpClaim `json:"scp"`
	ClientID string   `json:"client_id"`
}

// Validate runs after jwt's own checks (jwt.ClaimsValidator): a token
// without a subject has no identity, so it is refused.
func (c *tokenClaims) Validate() error {
	if c.Subject == "" {
		return fmt.Errorf("%w: sub", jwt.ErrTokenRequiredClaimMissing)
	}
	return nil
}

// scpClaim accepts "a b" or ["a","b"].
type scpClaim []string

func (s *scpClaim) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*s = strings.Fields(one)
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return errors.New("scp is neither a string nor an array of strings")
	}
	*s = many
	return nil
}

// claims converts the parsed token into the exported form.
func (c *tokenClaims) claims(raw string) *Claims {
	out := &Claims{
		Issuer:   c.Issuer,
		Subject:  c.Subject,
		Audience: slices.Clone([]string(c.Audience)),
		ID:       c.ID,
		ClientID: c.ClientID,
	}
	if c.ExpiresAt != nil {
		out.ExpiresAt = c.ExpiresAt.Time
	}
	if c.NotBefore != nil {
		out.NotBefore = c.NotBefore.Time
	}
	if c.IssuedAt != nil {
		out.IssuedAt = c.IssuedAt.Time
	}
	for _, s := range slices.Concat(strings.Fields(c.Scope), []string(c.Scp)) {
		if s != "" && !slices.Contains(out.Scopes, s) {
			out.Scopes = append(out.Scopes, s)
		}
	}
	if parts := strings.Split(raw, "."); len(parts) == 3 {
		out.payload = parts[1]
	}
	if out.Subject != "" {
		// Claims are read-only once built: the identity every request
		// asks for (session binding) is computed here, once per token.
		out.identity = identityOf(out.Issuer, out.Subject)
	}
	return out
}
