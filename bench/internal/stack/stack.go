// Package stack is the "realistic stack" a production saguaro deployment
// puts around its MCP endpoint, for the saguaro-stack configuration: a chi
// router with chi's RequestID, saguaro's logging preset
// (middleware.RequestLogger, JSON lines formatted in full and written to
// io.Discard, so the formatting is paid and disk I/O is not), chi's
// Recoverer, and saguaro's JWT bearer verifier (auth.Verifier.Handler +
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

	pub *rsa.PublicKey // the verification key, for the split benchmarks
}

// TokenLifetime is how long the minted token is valid: longer than any run.
const TokenLifetime = 2 * time.Hour

// Wrap mounts inner at path behind the stack. logOut receives the log lines
// (io.Discard in the benchmark; a buffer in tests).
func Wrap(path string, inner http.Handler, logOut io.Writer) (*Stack, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	v, err := auth.NewVerifier(context.Background(), &auth.Options{
		Resource: Resource,
		Issuer:   Issuer,
		Keys:     []auth.Key{auth.RSAKey("RS256", &key.PublicKey).WithID("bench")},
	})
	if err != nil {
		return nil, fmt.Errorf("verifier: %w", err)
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
		_ = v.Close()
		return nil, fmt.Errorf("mint token: %w", err)
	}

	logger := slog.New(slog.NewJSONHandler(logOut, nil))
	r := chi.NewRouter()
	r.Use(chimw.RequestID)
	r.Use(middleware.RequestLogger(logger, nil))
	r.Use(chimw.Recoverer)
	r.With(v.Handler, auth.Required()).Mount(path, inner)
	return &Stack{Handler: r, Token: signed, Close: func() { _ = v.Close() }, pub: &key.PublicKey}, nil
}

// wrapLoggerOnly is the stack without authentication (benchmarks only).
func wrapLoggerOnly(path string, inner http.Handler, logOut io.Writer) (http.Handler, error) {
	r := chi.NewRouter()
	r.Use(chimw.RequestID)
	r.Use(middleware.RequestLogger(slog.New(slog.NewJSONHandler(logOut, nil)), nil))
	r.Use(chimw.Recoverer)
	r.Mount(path, inner)
	return r, nil
}

// wrapVerifierOnly is the stack without logging (benchmarks only); it
// verifies tokens of the key s was built with.
func wrapVerifierOnly(path string, inner http.Handler, s *Stack) (http.Handler, func(), error) {
	v, err := auth.NewVerifier(context.Background(), &auth.Options{
		Resource: Resource,
		Issuer:   Issuer,
		Keys:     []auth.Key{auth.RSAKey("RS256", s.pub).WithID("bench")},
	})
	if err != nil {
		return nil, nil, err
	}
	r := chi.NewRouter()
	r.With(v.Handler, auth.Required()).Mount(path, inner)
	return r, func() { _ = v.Close() }, nil
}
