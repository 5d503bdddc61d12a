// Package stack is the "realistic stack" a production saguaro deployment
// puts around its MCP endpoint, for the saguaro-stack configuration: a chi
// router with chi's RequestID, saguaro's logging preset (middleware.Logging:
// httplog's RequestLogger, which also recovers panics, through
// slog.JSONHandler with the ECS schema's ReplaceAttr, as the package
// documents; JSON lines formatted in full and written to io.Discard, so
// the formatting is paid and disk I/O is not), chi's Recoverer, and
// saguaro's JWT bearer verifier (auth.Verifier.Handler +
// auth.Required) with an RS256 key, the usual choice of OAuth
// authorization servers.
//
// The key pair is generated at start-up; the server mints one token for the
// load generator (see Wrap), which sends it on every request, so every
// request pays a full RS256 verification as it would in production.
package stack

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
	chimw "github.com/go-chi/chi/v5/middleware"
	"github.com/go-chi/httplog/v3"
	"github.com/golang-jwt/jwt/v5"

	"github.com/saguaro-go/saguaro/auth"
	"github.com/saguaro-go/saguaro/middleware"
)

const (
	// Resource is the canonical resource URL tokens are minted for.
	Resource = "http://127.0.0.1/mcp"
	// Issuer is the (fictitious) authorization server.
	Issuer = "https://login.bench.invalid"
	// Subject is the caller the minted token names.
	Subject = "bench-client"
)

// Stack is a built stack.
type Stack struct {
	// Handler serves the wrapped endpoint at MCPPath.
	Handler http.Handler
	// Token is a valid bearer token for it, good for TokenLifetime.
	Token string
	// Close stops the verifier.
	Close func()
}

// TokenLifetime is how long the minted token is valid: longer than any run.
const TokenLifetime = 2 * time.Hour

// layers selects the parts of the stack; the benchmarks take it apart.
type layers struct {
	chi    bool // chi's RequestID and Recoverer
	logger bool // the logging preset
	auth   bool // the verifier and auth.Required
	// silent sets the logger's level above every request line's: the
	// logger's bookkeeping without its lines.
	silent bool
}

var all = layers{chi: true, logger: true, auth: true}

// Wrap mounts inner at path behind the stack. logOut receives the log lines
// (io.Discard in the benchmark; a buffer in tests).
func Wrap(path string, inner http.Handler, logOut io.Writer) (*Stack, error) {
	return build(path, inner, logOut, all)
}

// Token mints a bearer token like the one Wrap's stack verifies, signed by
// a key of its own: for a server without the stack, so that its requests
// are as large as the stack's (net/http reads and parses the header
// whether or not anything checks it).
func Token() (string, error) {
	_, signed, err := mint()
	return signed, err
}

// mint generates an RS256 key pair and a token signed by it.
func mint() (*rsa.PrivateKey, string, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, "", err
	}
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{
		"iss":   Issuer,
		"aud":   Resource,
		"sub":   Subject,
		"scope": "mcp",
		"iat":   time.Now().Unix(),
		"exp":   time.Now().Add(TokenLifetime).Unix(),
	})
	tok.Header["kid"] = "bench"
	signed, err := tok.SignedString(key)
	if err != nil {
		return nil, "", fmt.Errorf("mint token: %w", err)
	}
	return key, signed, nil
}

// build mounts inner at path on a chi router behind the layers l selects,
// in the order of the full stack. Without auth, Token is still minted (and
// ignored), so every variant sees the same request.
func build(path string, inner http.Handler, logOut io.Writer, l layers) (*Stack, error) {
	key, signed, err := mint()
	if err != nil {
		return nil, err
	}

	r := chi.NewRouter()
	if l.chi {
		r.Use(chimw.RequestID)
	}
	if l.logger {
		var lo *httplog.Options // nil: httplog's defaults
		if l.silent {
			lo = &httplog.Options{Level: slog.LevelError + 1, RecoverPanics: true}
		}
		h := slog.NewJSONHandler(logOut, &slog.HandlerOptions{ReplaceAttr: httplog.SchemaECS.ReplaceAttr})
		r.Use(middleware.Logging(slog.New(h), lo))
	}
	if l.chi {
		r.Use(chimw.Recoverer)
	}
	closeFn := func() {}
	if l.auth {
		v, err := auth.NewVerifier(context.Background(), &auth.Options{
			Resource: Resource,
			Issuer:   Issuer,
			Keys:     []auth.Key{auth.RSAKey("RS256", &key.PublicKey).WithID("bench")},
		})
		if err != nil {
			return nil, fmt.Errorf("verifier: %w", err)
		}
		closeFn = func() { _ = v.Close() }
		r.With(v.Handler, auth.Required()).Mount(path, inner)
	} else {
		r.Mount(path, inner)
	}
	return &Stack{Handler: r, Token: signed, Close: closeFn}, nil
}
