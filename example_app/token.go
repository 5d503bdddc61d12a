package main

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"os"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// The example's token settings.
const (
	tokenIssuer = "saguaro-example"
	secretEnv   = "EXAMPLE_JWT_SECRET"
)

// jwtSecret returns the HS256 secret from EXAMPLE_JWT_SECRET, or a random
// one (and whether it was generated).
func jwtSecret() ([]byte, bool, error) {
	if s := os.Getenv(secretEnv); s != "" {
		if len(s) < 32 {
			return nil, false, fmt.Errorf("%s must be at least 32 bytes for HS256", secretEnv)
		}
		return []byte(s), false, nil
	}
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return nil, false, err
	}
	return []byte(base64.RawURLEncoding.EncodeToString(b)), true, nil
}

// devToken mints a token for the example's own users: subject, audience
// (the canonical MCP URL), scopes, valid for ttl.
func devToken(secret []byte, audience, subject string, scopes string, ttl time.Duration) (string, error) {
	now := time.Now()
	claims := jwt.MapClaims{
		"iss":   tokenIssuer,
		"sub":   subject,
		"aud":   audience,
		"scope": scopes,
		"iat":   now.Unix(),
		"nbf":   now.Unix(),
		"exp":   now.Add(ttl).Unix(),
	}
	return jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(secret)
}
