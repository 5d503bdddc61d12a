package auth_test

import (
	"context"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/saguaro-go/saguaro/auth"
)

func TestScopeParsing(t *testing.T) {
	t.Parallel()
	v := newVerifier(t, defaultOptions())
	cases := []struct {
		name  string
		scope any // nil: absent
		scp   any // nil: absent
		want  []string
	}{
		{"scope string", "a b  c", nil, []string{"a", "b", "c"}},
		{"scp string", nil, "a b", []string{"a", "b"}},
		{"scp array", nil, []string{"a", "b"}, []string{"a", "b"}},
		{"both, union without duplicates", "a b", []string{"b", "c"}, []string{"a", "b", "c"}},
		{"none", nil, nil, nil},
		{"empty", "", []string{}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tok := rsaToken(t, func(m jwt.MapClaims) {
				delete(m, "scope")
				if c.scope != nil {
					m["scope"] = c.scope
				}
				if c.scp != nil {
					m["scp"] = c.scp
				}
			})
			got, err := v.Verify(context.Background(), tok)
			require.NoError(t, err)
			assert.Equal(t, c.want, got.Scopes)
			for _, s := range c.want {
				assert.True(t, got.HasScope(s))
			}
			assert.False(t, got.HasScope("z"))
		})
	}
	for name, bad := range map[string]func(jwt.MapClaims){
		"scope array": func(m jwt.MapClaims) { m["scope"] = []string{"a"} },
		"scp number":  func(m jwt.MapClaims) { m["scp"] = 7 },
		"scp object":  func(m jwt.MapClaims) { m["scp"] = map[string]any{"a": 1} },
	} {
		_, err := v.Verify(context.Background(), rsaToken(t, bad))
		assert.ErrorIs(t, err, auth.ErrMalformed, name)
	}
}

func TestClaimsFields(t *testing.T) {
	t.Parallel()
	v := newVerifier(t, defaultOptions())
	exp := time.Now().Add(time.Minute).Truncate(time.Second)
	tok := rsaToken(t, func(m jwt.MapClaims) {
		m["exp"] = exp.Unix()
		m["nbf"] = exp.Add(-time.Hour).Unix()
		m["jti"] = "id-1"
		m["client_id"] = "cli"
		m["aud"] = []string{testResource, "https://other"}
		m["email"] = "alice@example.com"
	})
	c, err := v.Verify(context.Background(), tok)
	require.NoError(t, err)
	assert.Equal(t, testIssuer, c.Issuer)
	assert.Equal(t, "alice", c.Subject)
	assert.Equal(t, []string{testResource, "https://other"}, c.Audience)
	assert.True(t, exp.Equal(c.ExpiresAt))
	assert.True(t, exp.Add(-time.Hour).Equal(c.NotBefore))
	assert.False(t, c.IssuedAt.IsZero())
	assert.Equal(t, "id-1", c.ID)
	assert.Equal(t, "cli", c.ClientID)

	var extra struct {
		Email string `json:"email"`
	}
	require.NoError(t, c.Decode(&extra))
	assert.Equal(t, "alice@example.com", extra.Email)
	assert.Error(t, c.Decode(make(chan int)), "a bad destination is an error, not a panic")
	assert.Error(t, (&auth.Claims{Subject: "x"}).Decode(&extra), "hand-built claims have no payload")
}

func TestClaimsIdentity(t *testing.T) {
	t.Parallel()
	a := &auth.Claims{Issuer: "https://one.example", Subject: "alice"}
	b := &auth.Claims{Issuer: "https://two.example", Subject: "alice"}
	assert.Equal(t, `"https://one.example" "alice"`, a.Identity())
	assert.NotEqual(t, a.Identity(), b.Identity(), "same subject at two issuers")

	// Strings chosen to collide under naive concatenation do not.
	x := &auth.Claims{Issuer: `a" "b`, Subject: "c"}
	y := &auth.Claims{Issuer: "a", Subject: `b" "c`}
	assert.NotEqual(t, x.Identity(), y.Identity())

	var none *auth.Claims
	assert.Equal(t, "", none.Identity())
	assert.False(t, none.HasScope("a"))
	assert.Equal(t, "", (&auth.Claims{Issuer: "i"}).Identity(), "no subject, no identity")
}
