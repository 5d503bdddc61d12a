package auth_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/golang-jwt/jwt/v5"

	"github.com/saguaro-go/saguaro/auth"
)

// exampleSecret stands in for a secret shared with the issuer.
var exampleSecret = []byte("an-example-secret-of-32-bytes!!!")

// exampleToken mints what an authorization server would issue.
func exampleToken(sub, scope string) string {
	tok := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{
		"iss":   "https://login.example.com",
		"aud":   "https://api.example.com/mcp",
		"sub":   sub,
		"scope": scope,
		"exp":   time.Now().Add(time.Hour).Unix(),
	})
	s, err := tok.SignedString(exampleSecret)
	if err != nil {
		panic(err)
	}
	return s
}

func send(h http.Handler, method, path, token string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, path, nil)
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// A chi app that protects /mcp, serves its RFC 9728 metadata in the open,
// and hands the caller's identity to the handler.
func ExampleNewVerifier() {
	v, err := auth.NewVerifier(context.Background(), &auth.Options{
		Resource: "https://api.example.com/mcp",
		Issuer:   "https://login.example.com",
		Keys:     []auth.Key{auth.HMACKey("HS256", exampleSecret)},
		// In production: JWKS: &auth.JWKSOptions{URL: "https://login.example.com/jwks.json"},
	})
	if err != nil {
		panic(err)
	}
	defer v.Close()

	r := chi.NewRouter()
	md := v.ResourceMetadata()
	if err := auth.MountMetadata(r, &md); err != nil {
		panic(err)
	}
	r.With(v.Handler, auth.Required()).Post("/mcp", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "hello "+auth.Subject(r.Context()))
	})

	w := send(r, http.MethodPost, "/mcp", "")
	fmt.Println(w.Code, w.Header().Get("WWW-Authenticate"))

	w = send(r, http.MethodPost, "/mcp", exampleToken("alice", ""))
	fmt.Println(w.Code, w.Body.String())

	w = send(r, http.MethodGet, "/.well-known/oauth-protected-resource/mcp", "")
	fmt.Print(w.Code, " ", w.Body.String())
	// Output:
	// 401 Bearer resource_metadata="https://api.example.com/.well-known/oauth-protected-resource/mcp"
	// 200 hello alice
	// 200 {"resource":"https://api.example.com/mcp","authorization_servers":["https://login.example.com"],"bearer_methods_supported":["header"]}
}

// A route that needs a scope answers 403 insufficient_scope, naming it.
func ExampleRequireScopes() {
	v, err := auth.NewVerifier(context.Background(), &auth.Options{
		Resource: "https://api.example.com/mcp",
		Issuer:   "https://login.example.com",
		Keys:     []auth.Key{auth.HMACKey("HS256", exampleSecret)},
	})
	if err != nil {
		panic(err)
	}
	defer v.Close()

	r := chi.NewRouter()
	r.With(v.Handler, auth.RequireScopes("tools:call")).Post("/mcp", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "scopes:", auth.Scopes(r.Context()))
	})

	w := send(r, http.MethodPost, "/mcp", exampleToken("alice", "tools:read"))
	fmt.Println(w.Code, w.Header().Get("WWW-Authenticate"))

	w = send(r, http.MethodPost, "/mcp", exampleToken("alice", "tools:read tools:call"))
	fmt.Print(w.Code, " ", w.Body.String())
	// Output:
	// 403 Bearer error="insufficient_scope", error_description="the token lacks a required scope", scope="tools:call", resource_metadata="https://api.example.com/.well-known/oauth-protected-resource/mcp"
	// 200 scopes: [tools:read tools:call]
}

// Identity has the shape func(*http.Request) string, so a package that must
// not import auth (mcp) can take it as an option to bind sessions.
func ExampleIdentity() {
	var identify func(*http.Request) string = auth.Identity

	r := httptest.NewRequest(http.MethodGet, "/", nil)
	fmt.Printf("%q\n", identify(r))

	ctx := auth.NewContext(r.Context(), &auth.Claims{Issuer: "https://login.example.com", Subject: "alice"})
	fmt.Println(identify(r.WithContext(ctx)))
	// Output:
	// ""
	// "https://login.example.com" "alice"
}

func ExampleMetadataURL() {
	u, err := auth.MetadataURL("https://api.example.com/mcp")
	fmt.Println(u, err)
	// Output:
	// https://api.example.com/.well-known/oauth-protected-resource/mcp <nil>
}

// A handler with its own rule answers exactly as the enforcers do.
func ExampleWriteError() {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Tenant") == "" {
			auth.WriteError(w, r, fmt.Errorf("%w: no tenant", auth.ErrInsufficientScope))
			return
		}
	})
	w := send(h, http.MethodGet, "/", "")
	fmt.Print(w.Code, " ", w.Body.String())
	// Output:
	// 403 {"error":"insufficient_scope","error_description":"the token lacks a required scope"}
}

// Opaque tokens, checked with RFC 7662 introspection: the authorization
// server's answer meets the rules a JWT's claims meet, and a request
// whose token cannot be checked (the endpoint is down) is answered 503.
func ExampleIntrospectionOptions() {
	// The authorization server's introspection endpoint.
	as := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		w.Header().Set("Content-Type", "application/json")
		if r.PostForm.Get("token") != "opaque-abc" {
			_, _ = io.WriteString(w, `{"active":false}`)
			return
		}
		_, _ = io.WriteString(w, `{"active":true,"sub":"alice","scope":"mcp:read","aud":"https://api.example.com/mcp","exp":4102444800}`)
	}))
	defer as.Close()

	v, err := auth.NewVerifier(context.Background(), &auth.Options{
		Resource:      "https://api.example.com/mcp",
		Issuer:        "https://login.example.com",
		Introspection: &auth.IntrospectionOptions{URL: as.URL, ClientID: "api", ClientSecret: "api-secret"},
	})
	if err != nil {
		panic(err)
	}
	defer v.Close()
	r := chi.NewRouter()
	r.With(v.Handler, auth.RequireScopes("mcp:read")).Post("/mcp", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "hello "+auth.Subject(r.Context()))
	})

	w := send(r, http.MethodPost, "/mcp", "opaque-abc")
	fmt.Println(w.Code, w.Body.String())
	w = send(r, http.MethodPost, "/mcp", "opaque-xyz")
	fmt.Println(w.Code, w.Header().Get("WWW-Authenticate"))
	as.Close()
	w = send(r, http.MethodPost, "/mcp", "opaque-new")
	fmt.Println(w.Code, w.Header().Get("Retry-After"))
	// Output:
	// 200 hello alice
	// 401 Bearer error="invalid_token", error_description="the token is not active", scope="mcp:read", resource_metadata="https://api.example.com/.well-known/oauth-protected-resource/mcp"
	// 503 10
}
