package oauth

import (
	"slices"
	"time"

	"github.com/zitadel/oidc/v3/pkg/oidc"
)

// authRequest is one authorization request, from /oauth/authorize to the
// code's exchange. It implements op.AuthRequest.
type authRequest struct {
	ID            string            `json:"id"`
	ClientID      string            `json:"client_id"`
	RedirectURI   string            `json:"redirect_uri"`
	Scopes        []string          `json:"scopes"`
	State         string            `json:"state"`
	Nonce         string            `json:"nonce"`
	ResponseType  oidc.ResponseType `json:"response_type"`
	ResponseMode  oidc.ResponseMode `json:"response_mode"`
	Challenge     string            `json:"code_challenge"`
	Method        string            `json:"code_challenge_method"`
	Resource      string            `json:"resource"`
	RefreshTokens bool              `json:"refresh_tokens"` // the client is registered for the refresh_token grant

	// From the row, not the JSON.
	subject  string
	authTime time.Time
	done     bool
}

func (a *authRequest) GetID() string                      { return a.ID }
func (a *authRequest) GetACR() string                     { return "" }
func (a *authRequest) GetAMR() []string                   { return []string{"pwd"} }
func (a *authRequest) GetAudience() []string              { return []string{a.Resource} }
func (a *authRequest) GetAuthTime() time.Time             { return a.authTime }
func (a *authRequest) GetClientID() string                { return a.ClientID }
func (a *authRequest) GetNonce() string                   { return a.Nonce }
func (a *authRequest) GetRedirectURI() string             { return a.RedirectURI }
func (a *authRequest) GetResponseType() oidc.ResponseType { return a.ResponseType }
func (a *authRequest) GetResponseMode() oidc.ResponseMode { return a.ResponseMode }
func (a *authRequest) GetState() string                   { return a.State }
func (a *authRequest) GetSubject() string                 { return a.subject }
func (a *authRequest) Done() bool                         { return a.done }

// GetScopes returns the granted scopes, plus offline_access when the
// client is registered for refresh tokens: op issues a refresh token only
// to requests that carry it, and this server's policy is to give one to
// every client that asked for the grant at registration.
func (a *authRequest) GetScopes() []string {
	if a.RefreshTokens && !slices.Contains(a.Scopes, oidc.ScopeOfflineAccess) {
		return append(slices.Clip(a.Scopes), oidc.ScopeOfflineAccess)
	}
	return a.Scopes
}

// GetCodeChallenge returns the PKCE challenge (always S256: see
// validateAuthRequest).
func (a *authRequest) GetCodeChallenge() *oidc.CodeChallenge {
	if a.Challenge == "" {
		return nil
	}
	return &oidc.CodeChallenge{Challenge: a.Challenge, Method: oidc.CodeChallengeMethod(a.Method)}
}

// refreshRequest is a refresh token's grant, as the token endpoint sees
// it. It implements op.RefreshTokenRequest.
type refreshRequest struct {
	token    string // the presented token, to rotate
	family   string
	clientID string
	subject  string
	scopes   []string
	audience []string
	authTime time.Time
	// familyExpires is when the token's family ends (refreshFamilyTTL
	// after its sign-in): the rotated token inherits it.
	familyExpires time.Time
}

func (r *refreshRequest) GetAMR() []string            { return []string{"pwd"} }
func (r *refreshRequest) GetAudience() []string       { return r.audience }
func (r *refreshRequest) GetAuthTime() time.Time      { return r.authTime }
func (r *refreshRequest) GetClientID() string         { return r.clientID }
func (r *refreshRequest) GetScopes() []string         { return r.scopes }
func (r *refreshRequest) GetSubject() string          { return r.subject }
func (r *refreshRequest) SetCurrentScopes(s []string) { r.scopes = s }
