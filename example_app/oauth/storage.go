package oauth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/saguaro-go/saguaro/example_app/database"
)

// Lifetimes of what the server issues.
const (
	requestTTL      = 30 * time.Minute // an authorization request waiting for the user
	codeTTL         = time.Minute      // a code waiting for its exchange
	accessTokenTTL  = 15 * time.Minute
	refreshTokenTTL = 30 * 24 * time.Hour // unused this long, a refresh token expires
	// refreshFamilyTTL is the absolute lifetime of a refresh token family
	// (the tokens one sign-in leads to): rotation renews a token, never
	// the family, so a stolen and rotated family ends too.
	refreshFamilyTTL = 90 * 24 * time.Hour
)

// errNotFound is what storage lookups return for an unknown id, code or
// token; op turns it into invalid_grant or invalid_client.
var errNotFound = errors.New("oauth: not found")

// storage implements op.Storage on the app's database.
type storage struct {
	s *Server
}

func (st *storage) db() *database.DB { return st.s.db }

// hash is how codes, refresh tokens and client secrets are stored.
func hash(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// randomToken is 32 random bytes, base64url.
func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// CreateAuthRequest implements op.AuthStorage. The request was validated
// by validateAuthRequest, which put its resource in the context.
func (st *storage) CreateAuthRequest(ctx context.Context, r *oidc.AuthRequest, _ string) (op.AuthRequest, error) {
	c, err := st.s.client(ctx, r.ClientID)
	if err != nil {
		return nil, err
	}
	a := &authRequest{
		ID: randomToken(), ClientID: r.ClientID, RedirectURI: r.RedirectURI, Scopes: r.Scopes,
		State: r.State, Nonce: r.Nonce, ResponseType: r.ResponseType, ResponseMode: r.ResponseMode,
		Challenge: r.CodeChallenge, Method: string(r.CodeChallengeMethod),
		Resource: resourceFrom(ctx), RefreshTokens: c.refreshTokens(),
	}
	data, _ := json.Marshal(a)
	now := time.Now()
	db := st.db()
	_, err = db.ExecContext(ctx, db.Rebind(`INSERT INTO oauth_requests (id, client_id, data, created_at) VALUES (?, ?, ?, ?)`),
		a.ID, a.ClientID, string(data), now.Unix())
	if err != nil {
		return nil, fmt.Errorf("oauth: save request: %w", err)
	}
	return a, nil
}

const requestColumns = `data, subject, auth_time, state`

func scanRequest(row *sql.Row) (*authRequest, error) {
	var (
		data, subject, state string
		authTime             int64
	)
	if err := row.Scan(&data, &subject, &authTime, &state); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, errNotFound
		}
		return nil, fmt.Errorf("oauth: %w", err)
	}
	a := &authRequest{}
	if err := json.Unmarshal([]byte(data), a); err != nil {
		return nil, fmt.Errorf("oauth: request data: %w", err)
	}
	a.subject, a.done = subject, state == "approved"
	if authTime > 0 {
		a.authTime = time.Unix(authTime, 0).UTC()
	}
	return a, nil
}

// AuthRequestByID implements op.AuthStorage: a request still waiting for
// the user or just approved, not one whose code was issued or denied.
func (st *storage) AuthRequestByID(ctx context.Context, id string) (op.AuthRequest, error) {
	return st.requestByID(ctx, id)
}

func (st *storage) requestByID(ctx context.Context, id string) (*authRequest, error) {
	db := st.db()
	return scanRequest(db.QueryRowContext(ctx, db.Rebind(`SELECT `+requestColumns+` FROM oauth_requests
		WHERE id = ? AND state IN ('pending', 'approved') AND created_at >= ?`), id, time.Now().Add(-requestTTL).Unix()))
}

// SaveAuthCode implements op.AuthStorage: the code op made for an approved
// request. A request gets one code, once.
func (st *storage) SaveAuthCode(ctx context.Context, id, code string) error {
	db := st.db()
	res, err := db.ExecContext(ctx, db.Rebind(`UPDATE oauth_requests SET code_hash = ?, code_at = ?, state = 'code'
		WHERE id = ? AND state = 'approved'`), hash(code), time.Now().Unix(), id)
	if err != nil {
		return fmt.Errorf("oauth: save code: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return oidc.ErrInvalidRequest().WithDescription("the authorization request was already answered")
	}
	return nil
}

// AuthRequestByCode implements op.AuthStorage. It consumes the code in one
// UPDATE, so that two exchanges, on any replicas, cannot both succeed. A
// code presented again (or after its minute) fails, and a replayed code
// revokes the refresh tokens it led to (OAuth 2.1 §4.1.3).
func (st *storage) AuthRequestByCode(ctx context.Context, code string) (op.AuthRequest, error) {
	db := st.db()
	h := hash(code)
	a, err := scanRequest(db.QueryRowContext(ctx, db.Rebind(`UPDATE oauth_requests SET state = 'exchanged'
		WHERE code_hash = ? AND state = 'code' AND code_at >= ? RETURNING `+requestColumns), h, time.Now().Add(-codeTTL).Unix()))
	if errors.Is(err, errNotFound) {
		var id string
		if db.QueryRowContext(ctx, db.Rebind(`SELECT id FROM oauth_requests WHERE code_hash = ? AND state = 'exchanged'`), h).Scan(&id) == nil {
			_, _ = db.ExecContext(ctx, db.Rebind(`DELETE FROM oauth_refresh_tokens WHERE family = ?`), id)
		}
	}
	if err != nil {
		return nil, err
	}
	return a, nil
}

// DeleteAuthRequest implements op.AuthStorage. op calls it once the
// tokens are issued; the row stays (as "exchanged") until it expires, so
// that a replay of its code is recognised.
func (st *storage) DeleteAuthRequest(ctx context.Context, id string) error { return nil }

// approve records the user's consent; deny their refusal.
func (st *storage) approve(ctx context.Context, id, subject string) error {
	db := st.db()
	res, err := db.ExecContext(ctx, db.Rebind(`UPDATE oauth_requests SET subject = ?, auth_time = ?, state = 'approved'
		WHERE id = ? AND state = 'pending'`), subject, time.Now().Unix(), id)
	if err != nil {
		return fmt.Errorf("oauth: approve: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return errNotFound
	}
	return nil
}

// failed counts a wrong password for a pending request and returns the
// count; the maxRequestFailures-th ends the request (denied), in the
// same UPDATE, so that replicas count together.
func (st *storage) failed(ctx context.Context, id string) (int, error) {
	db := st.db()
	var n int
	err := db.QueryRowContext(ctx, db.Rebind(`UPDATE oauth_requests SET failures = failures + 1,
		state = CASE WHEN failures + 1 >= ? THEN 'denied' ELSE state END
		WHERE id = ? AND state = 'pending' RETURNING failures`), maxRequestFailures, id).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, errNotFound
	}
	if err != nil {
		return 0, fmt.Errorf("oauth: %w", err)
	}
	return n, nil
}

func (st *storage) deny(ctx context.Context, id string) error {
	db := st.db()
	_, err := db.ExecContext(ctx, db.Rebind(`UPDATE oauth_requests SET state = 'denied' WHERE id = ? AND state = 'pending'`), id)
	return err
}

// CreateAccessToken implements op.AuthStorage: a JWT access token needs
// no row, only an id and an expiry.
func (st *storage) CreateAccessToken(ctx context.Context, _ op.TokenRequest) (string, time.Time, error) {
	return randomToken(), time.Now().Add(accessTokenTTL).UTC(), nil
}

// CreateAccessAndRefreshTokens implements op.AuthStorage. After a code
// exchange it starts a refresh token family (the authorization request's
// id), which ends refreshFamilyTTL later whatever happens; on a refresh it
// rotates: the presented token is marked used in one UPDATE (a concurrent
// second use finds it used and fails) and a new one of the same family
// replaces it. Either way the client is marked used now, which keeps its
// registration from being swept.
func (st *storage) CreateAccessAndRefreshTokens(ctx context.Context, req op.TokenRequest, current string) (string, string, time.Time, error) {
	var (
		family, clientID string
		authTime         time.Time
		familyExpires    time.Time
	)
	now := time.Now()
	switch r := req.(type) {
	case *authRequest:
		family, clientID, authTime, familyExpires = r.ID, r.ClientID, r.authTime, now.Add(refreshFamilyTTL)
	case *refreshRequest:
		family, clientID, authTime, familyExpires = r.family, r.clientID, r.authTime, r.familyExpires
	default:
		return "", "", time.Time{}, oidc.ErrUnsupportedGrantType()
	}
	expires := now.Add(refreshTokenTTL)
	if familyExpires.Before(expires) {
		expires = familyExpires
	}
	token := randomToken()
	scopes, _ := json.Marshal(req.GetScopes())
	aud, _ := json.Marshal(req.GetAudience())
	db := st.db()
	err := db.Tx(ctx, func(tx *sql.Tx) error {
		if current != "" {
			res, err := tx.ExecContext(ctx, db.Rebind(`UPDATE oauth_refresh_tokens SET used = TRUE
				WHERE token_hash = ? AND used = FALSE AND expires_at >= ?`), hash(current), time.Now().Unix())
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n != 1 {
				return oidc.ErrInvalidGrant().WithDescription("the refresh token was already used")
			}
		}
		_, err := tx.ExecContext(ctx, db.Rebind(`INSERT INTO oauth_refresh_tokens
			(token_hash, family, client_id, subject, scopes, audience, auth_time, expires_at, family_expires_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`),
			hash(token), family, clientID, req.GetSubject(), string(scopes), string(aud), authTime.Unix(),
			expires.Unix(), familyExpires.Unix())
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, db.Rebind(`UPDATE oauth_clients SET last_used_at = ? WHERE id = ?`), now.Unix(), clientID)
		return err
	})
	if err != nil {
		var oe *oidc.Error
		if errors.As(err, &oe) {
			return "", "", time.Time{}, oe
		}
		return "", "", time.Time{}, fmt.Errorf("oauth: refresh token: %w", err)
	}
	return randomToken(), token, time.Now().Add(accessTokenTTL).UTC(), nil
}

// TokenRequestByRefreshToken implements op.AuthStorage. A token used
// before (rotated out) means it leaked or was replayed: its whole family
// is revoked, the legitimate holder's newer token with it.
func (st *storage) TokenRequestByRefreshToken(ctx context.Context, token string) (op.RefreshTokenRequest, error) {
	db := st.db()
	var (
		r                                = &refreshRequest{token: token}
		scopes, aud                      string
		authTime, expires, familyExpires int64
		used                             bool
	)
	err := db.QueryRowContext(ctx, db.Rebind(`SELECT family, client_id, subject, scopes, audience, auth_time, expires_at, family_expires_at, used
		FROM oauth_refresh_tokens WHERE token_hash = ?`), hash(token)).
		Scan(&r.family, &r.clientID, &r.subject, &scopes, &aud, &authTime, &expires, &familyExpires, &used)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("oauth: %w", err)
	}
	if used {
		_, _ = db.ExecContext(ctx, db.Rebind(`DELETE FROM oauth_refresh_tokens WHERE family = ?`), r.family)
		return nil, errors.New("oauth: refresh token reused; its family is revoked")
	}
	if now := time.Now().Unix(); now > expires || now > familyExpires {
		return nil, errors.New("oauth: refresh token expired")
	}
	r.familyExpires = time.Unix(familyExpires, 0)
	_ = json.Unmarshal([]byte(scopes), &r.scopes)
	_ = json.Unmarshal([]byte(aud), &r.audience)
	r.authTime = time.Unix(authTime, 0).UTC()
	return r, nil
}

// TerminateSession implements op.AuthStorage: the server keeps no login
// session.
func (st *storage) TerminateSession(context.Context, string, string) error { return nil }

// RevokeToken implements op.AuthStorage: a refresh token's family goes;
// access tokens are JWTs and expire. op passes the id GetRefreshTokenInfo
// returned (the token's hash) for a refresh token, and a JWT's jti, which
// matches no row, for an access token.
func (st *storage) RevokeToken(ctx context.Context, tokenID, _, clientID string) *oidc.Error {
	db := st.db()
	_, err := db.ExecContext(ctx, db.Rebind(`DELETE FROM oauth_refresh_tokens WHERE family IN
		(SELECT family FROM oauth_refresh_tokens WHERE token_hash = ? AND client_id = ?)`), tokenID, clientID)
	if err != nil {
		return oidc.ErrServerError()
	}
	return nil
}

// GetRefreshTokenInfo implements op.AuthStorage: the subject and the
// token's id, its hash, which op hands to RevokeToken.
func (st *storage) GetRefreshTokenInfo(ctx context.Context, clientID, token string) (string, string, error) {
	db := st.db()
	var subject string
	err := db.QueryRowContext(ctx, db.Rebind(`SELECT subject FROM oauth_refresh_tokens WHERE token_hash = ? AND client_id = ?`),
		hash(token), clientID).Scan(&subject)
	if err != nil {
		return "", "", op.ErrInvalidRefreshToken
	}
	return subject, hash(token), nil
}

// SigningKey implements op.AuthStorage: the key that signs now.
func (st *storage) SigningKey(ctx context.Context) (op.SigningKey, error) { return st.s.signer(ctx) }

// SignatureAlgorithms implements op.AuthStorage.
func (st *storage) SignatureAlgorithms(context.Context) ([]jose.SignatureAlgorithm, error) {
	return []jose.SignatureAlgorithm{jose.ES256}, nil
}

// KeySet implements op.AuthStorage: the public keys, for /oauth/keys: the
// one that signs and those retired recently enough that tokens they
// signed may still be alive.
func (st *storage) KeySet(ctx context.Context) ([]op.Key, error) { return st.s.publishedKeys(ctx) }

// GetClientByClientID implements op.OPStorage.
func (st *storage) GetClientByClientID(ctx context.Context, id string) (op.Client, error) {
	return st.s.client(ctx, id)
}

// AuthorizeClientIDSecret implements op.OPStorage.
func (st *storage) AuthorizeClientIDSecret(ctx context.Context, id, secret string) error {
	c, err := st.s.client(ctx, id)
	if err != nil {
		return err
	}
	if c.secretHash == "" || subtle.ConstantTimeCompare([]byte(c.secretHash), []byte(hash(secret))) != 1 {
		return errors.New("oauth: wrong client secret")
	}
	return nil
}

// SetUserinfoFromScopes implements op.OPStorage (deprecated by op; empty).
func (st *storage) SetUserinfoFromScopes(context.Context, *oidc.UserInfo, string, string, []string) error {
	return nil
}

// SetUserinfoFromToken implements op.OPStorage: the subject only.
func (st *storage) SetUserinfoFromToken(_ context.Context, info *oidc.UserInfo, _, subject, _ string) error {
	info.Subject = subject
	return nil
}

// SetIntrospectionFromToken implements op.OPStorage (the server does not
// route introspection).
func (st *storage) SetIntrospectionFromToken(context.Context, *oidc.IntrospectionResponse, string, string, string) error {
	return errNotFound
}

// GetPrivateClaimsFromScopes implements op.OPStorage.
func (st *storage) GetPrivateClaimsFromScopes(_ context.Context, _, _ string, scopes []string) (map[string]any, error) {
	return scopeClaim(scopes), nil
}

// GetPrivateClaimsFromRequest implements op.CanGetPrivateClaimsFromRequest:
// the access token carries its scopes as "scope" (RFC 9068), which is
// what package auth reads.
func (st *storage) GetPrivateClaimsFromRequest(_ context.Context, _ op.TokenRequest, scopes []string) (map[string]any, error) {
	return scopeClaim(scopes), nil
}

func scopeClaim(scopes []string) map[string]any {
	var out []string
	for _, s := range scopes {
		if s != oidc.ScopeOfflineAccess && s != oidc.ScopeOpenID {
			out = append(out, s)
		}
	}
	return map[string]any{"scope": strings.Join(out, " ")}
}

// GetKeyByIDAndClientID implements op.OPStorage (private_key_jwt is not
// offered).
func (st *storage) GetKeyByIDAndClientID(context.Context, string, string) (*jose.JSONWebKey, error) {
	return nil, errNotFound
}

// ValidateJWTProfileScopes implements op.OPStorage (the JWT profile grant
// is not offered).
func (st *storage) ValidateJWTProfileScopes(context.Context, string, []string) ([]string, error) {
	return nil, oidc.ErrUnsupportedGrantType()
}

// Health implements op.Storage.
func (st *storage) Health(ctx context.Context) error { return st.db().PingContext(ctx) }
