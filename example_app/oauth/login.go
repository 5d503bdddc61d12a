package oauth

import (
	"context"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"strings"

	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
	"golang.org/x/crypto/bcrypt"
)

var loginTemplate = template.Must(template.New("login").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign in · Team task board</title>
<style>
body{font:15px/1.45 system-ui,sans-serif;background:#f7f7f4;color:#1d2430;display:grid;place-items:center;min-height:100vh;margin:0}
form{background:#fff;border:1px solid #e3e3de;border-radius:8px;padding:1.5rem 2rem;max-width:26rem}
h1{font-size:1.3rem;margin:0 0 .8rem} label{display:block;margin:.6rem 0 .2rem} input{width:100%;padding:.4rem;box-sizing:border-box}
ul{padding-left:1.2rem} code{background:#eef0ea;padding:0 .3em;border-radius:3px} .err{color:#a3261e}
button{margin-top:1rem;padding:.45rem 1rem;margin-right:.5rem}
</style></head><body>
<form method="post" action="{{.Action}}">
<h1>Sign in to the team task board</h1>
<p><strong>{{.Client}}</strong> asks for:</p>
<ul>{{range .Scopes}}<li><code>{{.Name}}</code>: {{.Description}}</li>{{end}}</ul>
{{if .Error}}<p class="err">{{.Error}}</p>{{end}}
<input type="hidden" name="id" value="{{.ID}}">
<label for="username">User</label><input id="username" name="username" autocomplete="username" value="{{.User}}" required>
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit" name="action" value="approve">Sign in and allow</button>
<button type="submit" name="action" value="deny" formnovalidate>Deny</button>
</form></body></html>`))

type scopeLine struct{ Name, Description string }

// loginPage shows the request's client and scopes and asks the user to
// sign in. In development mode it approves at once for the fixed user.
func (s *Server) loginPage(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("id")
	a, err := s.st.requestByID(r.Context(), id)
	if err != nil || a.done {
		http.Error(w, "This sign-in request is unknown or expired; start again from your app.", http.StatusBadRequest)
		return
	}
	if s.opts.DevUser != "" {
		if err := s.st.approve(r.Context(), id, s.opts.DevUser); err != nil {
			http.Error(w, "This sign-in request was already answered.", http.StatusBadRequest)
			return
		}
		http.Redirect(w, r, s.callbackURL(id), http.StatusFound)
		return
	}
	s.renderLogin(w, r, a, "", "", http.StatusOK)
}

func (s *Server) renderLogin(w http.ResponseWriter, r *http.Request, a *authRequest, user, msg string, status int) {
	name := a.ClientID
	if c, err := s.client(r.Context(), a.ClientID); err == nil && c.md.ClientName != "" {
		name = c.md.ClientName + " (" + a.ClientID + ")"
	}
	var scopes []scopeLine
	for _, sc := range a.Scopes {
		scopes = append(scopes, scopeLine{sc, s.opts.ScopeDescriptions[sc]})
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'")
	w.WriteHeader(status)
	_ = loginTemplate.Execute(w, map[string]any{"Action": PathLogin, "ID": a.ID, "Client": name, "Scopes": scopes, "User": user, "Error": msg})
}

// login handles the form: a correct password approves the request for
// that user, Deny refuses it (access_denied at the client).
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	if err := r.ParseForm(); err != nil {
		if tooSlow(w, err) {
			return
		}
		http.Error(w, "bad form", http.StatusBadRequest)
		return
	}
	id := r.PostForm.Get("id")
	a, err := s.st.requestByID(r.Context(), id)
	if err != nil || a.done {
		http.Error(w, "This sign-in request is unknown or expired; start again from your app.", http.StatusBadRequest)
		return
	}
	if r.PostForm.Get("action") == "deny" {
		_ = s.st.deny(r.Context(), id)
		op.AuthRequestError(w, r, a, oidc.ErrAccessDenied().WithDescription("the user denied the request"), s.provider)
		return
	}
	user := strings.TrimSpace(r.PostForm.Get("username"))
	if !s.checkPassword(r, user, r.PostForm.Get("password")) {
		s.renderLogin(w, r, a, user, "Wrong user or password.", http.StatusUnauthorized)
		return
	}
	if err := s.st.approve(r.Context(), id, user); err != nil {
		http.Error(w, "This sign-in request was already answered.", http.StatusBadRequest)
		return
	}
	http.Redirect(w, r, s.callbackURL(id), http.StatusSeeOther)
}

// dummyHash keeps a wrong user as slow as a wrong password.
var dummyHash, _ = bcrypt.GenerateFromPassword([]byte("x"), bcrypt.DefaultCost)

func (s *Server) checkPassword(r *http.Request, user, password string) bool {
	var h string
	err := s.db.QueryRowContext(r.Context(), s.db.Rebind(`SELECT password_hash FROM oauth_users WHERE name = ?`), user).Scan(&h)
	if err != nil {
		_ = bcrypt.CompareHashAndPassword(dummyHash, []byte(password))
		return false
	}
	return bcrypt.CompareHashAndPassword([]byte(h), []byte(password)) == nil
}

// ErrUser is returned by SetPassword for an empty user or a short
// password.
var ErrUser = errors.New("oauth: a user name and a password of at least 8 characters are required")

// SetPassword creates user, or changes their password.
func (s *Server) SetPassword(ctx context.Context, user, password string) error {
	if user == "" || len(password) < 8 {
		return ErrUser
	}
	h, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.DefaultCost)
	if err != nil {
		return fmt.Errorf("oauth: %w", err)
	}
	_, err = s.db.ExecContext(ctx, s.db.Rebind(`INSERT INTO oauth_users (name, password_hash) VALUES (?, ?)
		ON CONFLICT (name) DO UPDATE SET password_hash = excluded.password_hash`), user, string(h))
	if err != nil {
		return fmt.Errorf("oauth: set password: %w", err)
	}
	return nil
}

// EnsureUser creates user with a random password unless they exist, and
// returns the password it set ("" when the user existed).
func (s *Server) EnsureUser(ctx context.Context, user string) (string, error) {
	var n int
	if err := s.db.QueryRowContext(ctx, s.db.Rebind(`SELECT COUNT(*) FROM oauth_users WHERE name = ?`), user).Scan(&n); err != nil {
		return "", fmt.Errorf("oauth: %w", err)
	}
	if n > 0 {
		return "", nil
	}
	return s.ResetPassword(ctx, user)
}

// ResetPassword gives user (created if missing) a new random password
// and returns it; the old one no longer signs in.
func (s *Server) ResetPassword(ctx context.Context, user string) (string, error) {
	pw := randomToken()[:16]
	return pw, s.SetPassword(ctx, user, pw)
}
