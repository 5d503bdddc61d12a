package oauth

import (
	"net/http"
	"runtime"
	"strconv"
	"time"

	"github.com/go-chi/httprate"
	"github.com/zitadel/oidc/v3/pkg/oidc"

	"github.com/saguaro-go/saguaro/middleware"
)

// The bounds on what one client may make the server do. The counters are
// httprate's sliding windows, in memory: each replica counts what reaches
// it (a client spread by a balancer over N replicas gets up to N times
// the per-address and per-user allowances), except the per-request count
// of failed sign-ins, which lives in the request's row and holds across
// replicas.
const (
	// maxRequestFailures wrong passwords end a pending request: the
	// client gets access_denied and the request id is dead.
	maxRequestFailures = 5
	// maxUserFailures wrong passwords for one user name within
	// userFailureWindow make further sign-ins as that user wait (429).
	maxUserFailures   = 10
	userFailureWindow = 15 * time.Minute
	// maxAddressLogins sign-in attempts (any outcome) from one client
	// address within a minute; past it, 429. Each costs a bcrypt
	// comparison (tens of milliseconds of CPU), so one address costs
	// the server at most a few seconds of CPU a minute.
	maxAddressLogins = 20
	// maxAddressRegistrations dynamic registrations from one client
	// address within a minute; past it, 429.
	maxAddressRegistrations = 20
	// maxAddressAuthorizations authorization requests from one client
	// address within a minute; past it, 429. Each stores a row (a few
	// KiB at most, for requestTTL), so one address holds at most a few
	// tens of MiB of them; a person signs in a few times a minute.
	maxAddressAuthorizations = 120
)

// limits holds the server's rate limiters and the bound on concurrent
// bcrypt work.
type limits struct {
	logins       *httprate.RateLimiter // attempts per client address
	userFailures *httprate.RateLimiter // failed attempts per user name
	register     *httprate.RateLimiter // registrations per client address
	authorize    *httprate.RateLimiter // authorization requests per client address
	// bcrypt bounds the password comparisons that run at once to half
	// the CPUs (at least one), so that sign-ins from many addresses
	// still leave the rest of the server its share.
	bcrypt chan struct{}
}

func newLimits() *limits {
	tooMany := func(what string) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			writeOAuthError(w, http.StatusTooManyRequests, (&oidc.Error{ErrorType: "temporarily_unavailable"}).WithDescription("too many %s from this address; try again later", what))
		}
	}
	return &limits{
		logins:       httprate.NewRateLimiter(maxAddressLogins, time.Minute, httprate.WithKeyFuncs(middleware.KeyByClientIP)),
		userFailures: httprate.NewRateLimiter(maxUserFailures, userFailureWindow),
		register: httprate.NewRateLimiter(maxAddressRegistrations, time.Minute,
			httprate.WithKeyFuncs(middleware.KeyByClientIP), httprate.WithLimitHandler(tooMany("registrations"))),
		authorize: httprate.NewRateLimiter(maxAddressAuthorizations, time.Minute,
			httprate.WithKeyFuncs(middleware.KeyByClientIP), httprate.WithLimitHandler(tooMany("authorization requests"))),
		bcrypt: make(chan struct{}, max(1, runtime.GOMAXPROCS(0)/2)),
	}
}

// userLocked reports whether user has had maxUserFailures failed
// sign-ins within the window.
func (l *limits) userLocked(user string) bool {
	_, rate, err := l.userFailures.Status("user:" + user)
	return err != nil || rate >= maxUserFailures
}

// userFailed counts a failed sign-in of user.
func (l *limits) userFailed(r *http.Request, user string) {
	l.userFailures.OnLimit(discardHeaders{}, r, "user:"+user)
}

// retryAfter sets Retry-After to d, in whole seconds.
func retryAfter(w http.ResponseWriter, d time.Duration) {
	w.Header().Set("Retry-After", strconv.Itoa(int((d+time.Second-1)/time.Second)))
}

// discardHeaders is a ResponseWriter whose headers go nowhere: httprate's
// OnLimit counts and sets headers in one call, and a failure is counted
// after its answer has been chosen.
type discardHeaders struct{}

func (discardHeaders) Header() http.Header         { return http.Header{} }
func (discardHeaders) Write(b []byte) (int, error) { return len(b), nil }
func (discardHeaders) WriteHeader(int)             {}
