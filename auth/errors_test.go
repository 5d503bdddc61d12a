package auth

import (
	"errors"
	"testing"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
)

func TestClassify(t *testing.T) {
	t.Parallel()
	assert.NoError(t, classify(nil))

	joined := func(errs ...error) error { return errors.Join(errs...) }
	cases := []struct {
		name string
		in   error
		want error
	}{
		{"malformed", jwt.ErrTokenMalformed, ErrMalformed},
		{"signature", jwt.ErrTokenSignatureInvalid, ErrSignature},
		{"unverifiable", jwt.ErrTokenUnverifiable, ErrSignature},
		{"key type", jwt.ErrInvalidKeyType, ErrSignature},
		{"expired", joined(jwt.ErrTokenInvalidClaims, jwt.ErrTokenExpired), ErrExpired},
		{"expiry beats audience", joined(jwt.ErrTokenInvalidClaims, jwt.ErrTokenInvalidAudience, jwt.ErrTokenExpired), ErrExpired},
		{"nbf", jwt.ErrTokenNotValidYet, ErrNotYetValid},
		{"iat", jwt.ErrTokenUsedBeforeIssued, ErrNotYetValid},
		{"issuer beats audience", joined(jwt.ErrTokenInvalidAudience, jwt.ErrTokenInvalidIssuer), ErrIssuer},
		{"audience", jwt.ErrTokenInvalidAudience, ErrAudience},
		{"missing", jwt.ErrTokenRequiredClaimMissing, ErrMissingClaim},
		{"ours survive jwt wrapping", joined(jwt.ErrTokenUnverifiable, ErrUnknownKey), ErrUnknownKey},
		{"key source", joined(jwt.ErrTokenUnverifiable, ErrKeySource), ErrKeySource},
		{"unknown fails closed", errors.New("?"), ErrMalformed},
	}
	for _, c := range cases {
		got := classify(c.in)
		assert.ErrorIs(t, got, c.want, c.name)
		assert.ErrorIs(t, got, c.in, "%s: the cause stays wrapped", c.name)
	}
}
