package middleware_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/saguaro-go/saguaro/auth"
	"github.com/saguaro-go/saguaro/middleware"
)

// TestRequestLogger_AuthScope checks what the verifier's outcome looks like
// when the verifier stores it in the logger's per-request scope instead of
// a context node of its own: the handler sees it, a value set closer to the
// handler wins over it, and a value set before the verifier never hides
// the verifier's own outcome.
func TestRequestLogger_AuthScope(t *testing.T) {
	v, err := auth.NewVerifier(context.Background(), &auth.Options{
		Resource: "https://mcp.example.com/mcp", Issuer: "https://issuer.example.com",
		Introspection: &auth.IntrospectionOptions{URL: "https://issuer.example.com/introspect", ClientID: "c", ClientSecret: "s"},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = v.Close() }()
	logged := middleware.RequestLogger(slog.New(middleware.NewJSONHandler(io.Discard, nil)), nil)
	serve := func(h http.Handler) {
		r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		h.ServeHTTP(httptest.NewRecorder(), r)
	}
	preset := &auth.Claims{Issuer: "i", Subject: "preset"}
	inner := &auth.Claims{Issuer: "i", Subject: "inner"}

	// No token: the verifier's outcome is ErrNoToken, in the scope.
	var got error
	serve(logged(v.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = auth.ErrorFromContext(r.Context())
	}))))
	if got != auth.ErrNoToken {
		t.Fatalf("behind the logger: error %v, want ErrNoToken", got)
	}

	// Claims set before the verifier: the verifier's outcome hides them.
	var claims *auth.Claims
	setBefore := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			next.ServeHTTP(w, r.WithContext(auth.NewContext(r.Context(), preset)))
		})
	}
	serve(logged(setBefore(v.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		claims, got = auth.ClaimsFromContext(r.Context()), auth.ErrorFromContext(r.Context())
	})))))
	if claims != nil || got != auth.ErrNoToken {
		t.Fatalf("claims set before the verifier: got %v, %v; want the verifier's ErrNoToken", claims, got)
	}

	// Claims set after the verifier win below that point.
	serve(logged(v.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		claims = auth.ClaimsFromContext(auth.NewContext(r.Context(), inner))
	}))))
	if claims != inner {
		t.Fatalf("claims set after the verifier: got %v, want them", claims)
	}

	// A second verifier below the first shadows it for its handler.
	var subject string
	serve(logged(setBefore(v.Handler(setAfter(inner, v.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, subject = auth.ErrorFromContext(r.Context()), auth.Subject(r.Context())
	})))))))
	if got != auth.ErrNoToken || subject != "" {
		t.Fatalf("second verifier: got %v, %q; want its own ErrNoToken", got, subject)
	}
}

func setAfter(c *auth.Claims, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(auth.NewContext(r.Context(), c)))
	})
}
