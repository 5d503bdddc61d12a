package oauth

import (
	"net/url"

	"github.com/zitadel/oidc/v3/pkg/oidc"
)

// paramLimits bounds the parameters of one endpoint: how many there may
// be, the longest value of each (in bytes), and which may repeat. Every
// endpoint checks its own before anything stores, logs or echoes a value
// (op logs a refused request's state, and redirects it back), so that an
// oversized value is one short 400, not a row, a log line or a Location
// header of megabytes.
type paramLimits struct {
	max    map[string]int // by name; others: other
	other  int
	repeat map[string]int // how many times a name may appear (default once: RFC 6749 §3.1)
}

// maxParams bounds how many parameters one request may carry.
const maxParams = 32

var (
	authorizeParams = paramLimits{
		max: map[string]int{
			"response_type": 64, "client_id": 2000, "redirect_uri": 2000, "scope": 1000, "state": 2048,
			"nonce": 512, "code_challenge": 512, "code_challenge_method": 16, "resource": 2000,
			"response_mode": 32, "prompt": 64, "max_age": 16, "ui_locales": 128, "login_hint": 256,
			"display": 16, "acr_values": 256, "id_token_hint": 4096,
		},
		other:  256,
		repeat: map[string]int{"resource": 4},
	}
	callbackParams = paramLimits{max: map[string]int{"id": 64}, other: 64}
	tokenParams    = paramLimits{
		max: map[string]int{
			"grant_type": 64, "code": 512, "redirect_uri": 2000, "client_id": 2000, "client_secret": 512,
			"code_verifier": 512, "refresh_token": 512, "scope": 1000, "resource": 2000,
		},
		other:  256,
		repeat: map[string]int{"resource": 4},
	}
	revokeParams = paramLimits{
		max:   map[string]int{"token": 4096, "token_type_hint": 32, "client_id": 2000, "client_secret": 512},
		other: 256,
	}
	loginParams = paramLimits{
		max:   map[string]int{"id": 64, "username": 200, "password": 1024, "action": 16},
		other: 64,
	}
)

// check returns the invalid_request error for the first parameter of
// form that breaks l, or nil. Its description names only parameters l
// knows, never echoes a value, and so stays within the characters RFC
// 6749 allows in error_description.
func (l paramLimits) check(form url.Values) *oidc.Error {
	if len(form) > maxParams {
		return oidc.ErrInvalidRequest().WithDescription("more than %d parameters", maxParams)
	}
	for name, values := range form {
		limit, known := l.max[name]
		if !known {
			limit = l.other
		}
		what := "a parameter"
		if known {
			what = name
		}
		if len(name) > 64 {
			return oidc.ErrInvalidRequest().WithDescription("a parameter name is longer than 64 bytes")
		}
		times := l.repeat[name]
		if times == 0 {
			times = 1
		}
		if len(values) > times {
			return oidc.ErrInvalidRequest().WithDescription("%s is repeated", what)
		}
		for _, v := range values {
			if len(v) > limit {
				return oidc.ErrInvalidRequest().WithDescription("%s is longer than %d bytes", what, limit)
			}
		}
	}
	return nil
}
