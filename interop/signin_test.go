package interop

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// noRedirect is a client that shows redirects instead of following them.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// signsIn reports whether user and password pass the app's login page for
// a dashboard sign-in (the code flow with PKCE): a 303 on to the client,
// not the page again with "Wrong user or password".
func signsIn(t *testing.T, base, user, password string) bool {
	t.Helper()
	verifier := rand.Text()
	sum := sha256.Sum256([]byte(verifier))
	q := url.Values{"response_type": {"code"}, "client_id": {"dashboard"}, "redirect_uri": {base + "/"},
		"scope": {"tasks:read"}, "state": {rand.Text()}, "code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])},
		"code_challenge_method": {"S256"}, "resource": {base + "/mcp"}}
	res, err := noRedirect.Get(base + "/oauth/authorize?" + q.Encode())
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusFound, res.StatusCode)
	login, err := url.Parse(res.Header.Get("Location"))
	require.NoError(t, err)
	require.Equal(t, "/oauth/login", login.Path)
	res, err = noRedirect.PostForm(base+"/oauth/login", url.Values{"id": {login.Query().Get("id")},
		"username": {user}, "password": {password}, "action": {"approve"}})
	require.NoError(t, err)
	res.Body.Close()
	require.Contains(t, []int{http.StatusSeeOther, http.StatusUnauthorized}, res.StatusCode)
	return res.StatusCode == http.StatusSeeOther
}

// newPassword is the password a "sign-in:" line prints when it made one.
var newPassword = regexp.MustCompile(`^sign-in: user demo, password (\S+) \(new[;,]`)

// TestExampleAppSignInLine starts the real binary three times on one
// -data file, as the quickstart does, and reads its "sign-in:" line each
// time: the first start prints a new password that signs in; a second
// start says how to sign in without printing it (the database keeps only
// its hash) and names -reset-password; a start with -reset-password
// prints a new one that signs in while the old one no longer does.
func TestExampleAppSignInLine(t *testing.T) {
	data := filepath.Join(t.TempDir(), "board.db")
	start := func(args ...string) *exampleApp {
		app := runExampleApp(t, nil, append([]string{"-addr", "127.0.0.1:0", "-data", data}, args...)...)
		require.NotEmpty(t, app.signIn, "every start prints a sign-in: line")
		return app
	}
	stop := func(app *exampleApp) {
		require.NoError(t, app.cmd.Process.Signal(syscall.SIGTERM))
		<-app.done
	}

	first := start()
	m := newPassword.FindStringSubmatch(first.signIn)
	require.NotNil(t, m, "first start: %q", first.signIn)
	firstPW := m[1]
	assert.True(t, signsIn(t, first.base, "demo", firstPW), "the printed password signs in")
	assert.False(t, signsIn(t, first.base, "demo", firstPW+"x"), "a wrong one does not")
	stop(first)

	second := start()
	assert.Nil(t, newPassword.FindStringSubmatch(second.signIn), "no new password on a later start: %q", second.signIn)
	assert.Contains(t, second.signIn, "sign-in: user demo, password as printed at the first start")
	assert.Contains(t, second.signIn, "-reset-password")
	assert.True(t, signsIn(t, second.base, "demo", firstPW), "the first password still signs in")
	stop(second)

	third := start("-reset-password")
	m = newPassword.FindStringSubmatch(third.signIn)
	require.NotNil(t, m, "-reset-password: %q", third.signIn)
	assert.True(t, strings.Contains(third.signIn, "-reset-password"), third.signIn)
	assert.NotEqual(t, firstPW, m[1])
	assert.True(t, signsIn(t, third.base, "demo", m[1]), "the new password signs in")
	assert.False(t, signsIn(t, third.base, "demo", firstPW), "the old one no longer does")
}
