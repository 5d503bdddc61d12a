package oauth

import (
	"context"
	"errors"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
	"golang.org/x/crypto/bcrypt"

	"github.com/saguaro-go/saguaro/middleware"
)

var loginTemplate = template.Must(template.New("login").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign in · Team task board</title>
<style>
body{font:15px/1.45 system-ui,sans-serif;background:#f7f7f4;color:#1d2430;display:grid;place-items:center;min-height:100vh;margin:0}
form{background:#fff;border:1px solid #e3e3de;border-radius:8px;padding:1.5rem 2rem;max-width:28rem}
h1{font-size:1.3rem;margin:0 0 .8rem} label{display:block;margin:.6rem 0 .2rem} input{width:100%;padding:.4rem;box-sizing:border-box}
ul{padding-left:1.2rem} code{background:#eef0ea;padding:0 .3em;border-radius:3px;word-break:break-all} .err{color:#a3261e}
.badge{font-size:.8rem;background:#fdecc8;color:#6b4a00;border-radius:3px;padding:0 .35em;margin-left:.3em}
.note{font-size:.9rem;color:#4a5260}
button{margin-top:1rem;padding:.45rem 1rem;margin-right:.5rem}
</style></head><body>
<form method="post" action="{{.Action}}">
<h1>Sign in to the team task board</h1>
<p><strong>{{.Client}}</strong>{{if .Unverified}}<span class="badge" id="unverified">unverified</span>{{end}} asks for:</p>
<ul>{{range .Scopes}}<li><code>{{.Name}}</code>: {{.Description}}</li>{{end}}</ul>
{{if .Unverified}}<p class="note">This application registered itself: its name is its own claim, which this server has not checked. Allow it only if you have just started signing in to it.</p>{{end}}
{{if .Document}}<p class="note">It is identified by its metadata document on <code>{{.Document}}</code>.</p>{{end}}
<p class="note">When you answer, your browser goes back to <code id="redirect-host">{{.RedirectHost}}</code>.</p>
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
	if e := callbackParams.check(r.URL.Query()); e != nil {
		writeOAuthError(w, http.StatusBadRequest, e)
		return
	}
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

// renderLogin shows the consent page: who asks (a self-registered client
// is marked unverified, since anyone may register any name, the first
// party's included), for which scopes, and where the browser goes next.
func (s *Server) renderLogin(w http.ResponseWriter, r *http.Request, a *authRequest, user, msg string, status int) {
	name := a.ClientID
	var unverified bool
	var document string
	if c, err := s.client(r.Context(), a.ClientID); err == nil {
		if c.md.ClientName != "" {
			name = c.md.ClientName + " (" + a.ClientID + ")"
		}
		unverified = c.kind == kindDynamic
		if c.kind == kindDocument {
			if u, err := url.Parse(a.ClientID); err == nil {
				document = u.Host
			}
		}
	}
	var scopes []scopeLine
	for _, sc := range a.Scopes {
		scopes = append(scopes, scopeLine{sc, s.opts.ScopeDescriptions[sc]})
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'")
	w.WriteHeader(status)
	_ = loginTemplate.Execute(w, map[string]any{"Action": PathLogin, "ID": a.ID, "Client": name, "Unverified": unverified,
		"Document": document, "RedirectHost": redirectHost(a.RedirectURI), "Scopes": scopes, "User": user, "Error": msg})
}

// redirectHost names where a redirect URI leads, for the consent page.
func redirectHost(uri string) string {
	u, err := url.Parse(uri)
	switch {
	case err != nil:
		return uri
	case u.Host == "":
		return u.Scheme + ": (an application on your device)"
	}
	if ip, err := netip.ParseAddr(u.Hostname()); (err == nil && ip.IsLoopback()) || u.Hostname() == "localhost" {
		return u.Host + " (an application on your computer)"
	}
	return u.Host
}

// login handles the form: a correct password approves the request for
// that user, Deny refuses it (access_denied at the client). Attempts are
// bounded per client address (429), per user name (429 once it failed
// too often) and per request (the fifth failure ends the request with
// access_denied), and bcrypt runs on at most half the CPUs at once.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	if !parseForm(w, r) {
		return
	}
	if e := loginParams.check(r.Form); e != nil {
		writeOAuthError(w, http.StatusBadRequest, e)
		return
	}
	if key, err := middleware.KeyByClientIP(r); err != nil || s.limits.logins.OnLimit(w, r, key) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = io.WriteString(w, "Too many sign-in attempts from your address; try again in a minute.\n")
		return
	}
	ctx := r.Context()
	id := r.PostForm.Get("id")
	a, err := s.st.requestByID(ctx, id)
	if err != nil || a.done {
		http.Error(w, "This sign-in request is unknown or expired; start again from your app.", http.StatusBadRequest)
		return
	}
	if r.PostForm.Get("action") == "deny" {
		_ = s.st.deny(ctx, id)
		op.AuthRequestError(w, r, a, oidc.ErrAccessDenied().WithDescription("the user denied the request"), s.provider)
		return
	}
	user := strings.TrimSpace(r.PostForm.Get("username"))
	if s.limits.userLocked(user) {
		retryAfter(w, userFailureWindow)
		s.renderLogin(w, r, a, user, "Too many failed sign-ins as this user; try again later.", http.StatusTooManyRequests)
		return
	}
	ok, err := s.checkPassword(r, user, r.PostForm.Get("password"))
	if err != nil {
		retryAfter(w, time.Second)
		http.Error(w, "The server is busy; try again.", http.StatusServiceUnavailable)
		return
	}
	if !ok {
		s.limits.userFailed(r, user)
		n, err := s.st.failed(ctx, id)
		if err != nil {
			http.Error(w, "This sign-in request is unknown or expired; start again from your app.", http.StatusBadRequest)
			return
		}
		if n >= maxRequestFailures {
			op.AuthRequestError(w, r, a, oidc.ErrAccessDenied().WithDescription("too many failed sign-in attempts"), s.provider)
			return
		}
		s.renderLogin(w, r, a, user, fmt.Sprintf("Wrong user or password (%d more tries for this request).", maxRequestFailures-n), http.StatusUnauthorized)
		return
	}
	if err := s.st.approve(ctx, id, user); err != nil {
		http.Error(w, "This sign-in request was already answered.", http.StatusBadRequest)
		return
	}
	http.Redirect(w, r, s.callbackURL(id), http.StatusSeeOther)
}

// dummyHash keeps a wrong user as slow as a wrong password.
var dummyHash, _ = bcrypt.GenerateFromPassword([]byte("x"), bcrypt.DefaultCost)

// errBusy: no CPU came free for a password check in time.
var errBusy = errors.New("oauth: too many password checks at once")

// checkPassword compares password with user's hash, once a slot of the
// bcrypt bound is free (errBusy after 5 s without one).
func (s *Server) checkPassword(r *http.Request, user, password string) (bool, error) {
	var h string
	err := s.db.QueryRowContext(r.Context(), s.db.Rebind(`SELECT password_hash FROM oauth_users WHERE name = ?`), user).Scan(&h)
	if err != nil {
		h = string(dummyHash)
	}
	t := time.NewTimer(5 * time.Second)
	defer t.Stop()
	select {
	case s.limits.bcrypt <- struct{}{}:
	case <-t.C:
		return false, errBusy
	case <-r.Context().Done():
		return false, errBusy
	}
	match := bcrypt.CompareHashAndPassword([]byte(h), []byte(password)) == nil
	<-s.limits.bcrypt
	return err == nil && match, nil
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
