package oauth

import (
	"context"
	"time"
)

// sweepInterval is how often the server deletes what expired.
const sweepInterval = time.Minute

// startSweep starts the goroutine that runs sweep every sweepInterval
// until Close.
func (s *Server) startSweep() {
	ctx, stop := context.WithCancel(context.Background())
	s.stop, s.done = stop, make(chan struct{})
	go func() {
		defer close(s.done)
		t := time.NewTicker(sweepInterval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if err := s.sweep(ctx); err != nil && ctx.Err() == nil {
					s.opts.Logger.Warn("oauth: sweep", "error", err)
				}
			}
		}
	}()
}

// sweep deletes what has expired: authorization requests (and the codes
// they hold) past requestTTL, refresh tokens past their own or their
// family's expiry, cached client metadata documents past theirs, dynamic
// registrations never used within unusedClientTTL or unused for
// clientIdleTTL, and signing keys retired more than retiredKeyGrace ago;
// and it rotates the signing key once it is older than
// SigningKeyLifetime. Replicas may sweep at once: every step is an
// idempotent DELETE, and a rotation happens once (see addKey).
func (s *Server) sweep(ctx context.Context) error {
	db := s.db
	now := time.Now()
	steps := []struct {
		query string
		args  []any
	}{
		{`DELETE FROM oauth_requests WHERE created_at < ?`, []any{now.Add(-requestTTL).Unix()}},
		{`DELETE FROM oauth_refresh_tokens WHERE expires_at < ? OR family_expires_at < ?`, []any{now.Unix(), now.Unix()}},
		{`DELETE FROM oauth_clients WHERE kind = 'document' AND expires_at < ?`, []any{now.Unix()}},
		{`DELETE FROM oauth_clients WHERE kind = 'dynamic' AND last_used_at = 0 AND created_at < ?`, []any{now.Add(-unusedClientTTL).Unix()}},
		{`DELETE FROM oauth_clients WHERE kind = 'dynamic' AND last_used_at > 0 AND last_used_at < ?`, []any{now.Add(-clientIdleTTL).Unix()}},
		{`DELETE FROM oauth_signing_keys WHERE retired_at > 0 AND retired_at < ?`, []any{now.Add(-retiredKeyGrace).Unix()}},
	}
	for _, st := range steps {
		if _, err := db.ExecContext(ctx, db.Rebind(st.query), st.args...); err != nil {
			return err
		}
	}
	return s.rotateIfOld(ctx)
}
