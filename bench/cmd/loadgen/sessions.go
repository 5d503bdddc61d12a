package main

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/saguaro-go/saguaro/bench/internal/loop"
	"github.com/saguaro-go/saguaro/bench/internal/mcpconn"
	"github.com/saguaro-go/saguaro/bench/internal/probe"
)

// maxChurnSessions bounds the churn loop in count.
const maxChurnSessions = 2_000_000

// churnResult is the session churn workload for one configuration:
// initialize, notifications/initialized, one checked tools/call, then the
// session is abandoned (no DELETE), for a fixed time; then the server is
// left alone until its reaper should have run.
type churnResult struct {
	Sessions uint64
	Elapsed  time.Duration
	Base     probe.Snapshot // before, after GC
	End      probe.Snapshot // right after the churn, after GC
	Reaped   probe.Snapshot // after the wait, after GC
	Wait     time.Duration
	TTL      time.Duration
	LogLines int
	Fail     loop.Failures
}

func runChurn(s *server, conns int, dur, wait, ttl, timeout time.Duration) *churnResult {
	res := &churnResult{Wait: wait, TTL: ttl}
	var err error
	if res.Base, err = s.Probe(true); err != nil {
		res.Fail.Add(fmt.Errorf("probe: %w", err))
		return res
	}
	var (
		stop     atomic.Bool
		sessions atomic.Uint64
		wg       sync.WaitGroup
	)
	t0 := time.Now()
	wg.Add(conns)
	for w := 0; w < conns; w++ {
		go func(w int) {
			defer wg.Done()
			c, err := mcpconn.Dial(s.ep, timeout)
			if err != nil {
				res.Fail.Add(err)
				return
			}
			defer c.Close()
			var text []byte
			for i := int64(0); !stop.Load() && sessions.Load() < maxChurnSessions; i++ {
				if err := c.Initialize(1, true); err != nil {
					res.Fail.Add(err)
					return
				}
				text = mcpconn.EchoText(text, w, i)
				if err := c.Call(2, string(text)); err != nil {
					res.Fail.Add(err)
					return
				}
				sessions.Add(1)
				c.SetSession("") // abandon it
			}
		}(w)
	}
	time.Sleep(dur)
	stop.Store(true)
	wg.Wait()
	res.Elapsed = time.Since(t0)
	res.Sessions = sessions.Load()
	if res.End, err = s.Probe(true); err != nil {
		res.Fail.Add(fmt.Errorf("probe: %w", err))
		return res
	}
	time.Sleep(wait)
	if res.Reaped, err = s.Probe(true); err != nil {
		res.Fail.Add(fmt.Errorf("probe: %w", err))
	}
	res.LogLines = s.LogLines()
	return res
}

// idleResult is the idle sessions workload for one configuration: open n
// sessions (initialize + notifications/initialized), leave them idle,
// measure what the server retains, then prove a sample is still alive.
type idleResult struct {
	Wanted   int
	Sessions int
	Elapsed  time.Duration
	Base     probe.Snapshot
	Held     probe.Snapshot
	Checked  int
	Fail     loop.Failures
	// Limited is set when the time limit stopped the opening early; the
	// figures are then per session actually opened.
	Limited bool
}

func runIdle(s *server, n, conns int, limit, timeout time.Duration) *idleResult {
	res := &idleResult{Wanted: n}
	var err error
	if res.Base, err = s.Probe(true); err != nil {
		res.Fail.Add(fmt.Errorf("probe: %w", err))
		return res
	}
	ids := make([]string, n)
	var (
		next atomic.Int64
		made atomic.Int64
		wg   sync.WaitGroup
	)
	deadline := time.Now().Add(limit)
	t0 := time.Now()
	wg.Add(conns)
	for w := 0; w < conns; w++ {
		go func() {
			defer wg.Done()
			c, err := mcpconn.Dial(s.ep, timeout)
			if err != nil {
				res.Fail.Add(err)
				return
			}
			defer c.Close()
			for time.Now().Before(deadline) {
				i := next.Add(1) - 1
				if i >= int64(n) {
					return
				}
				if err := c.Initialize(1, true); err != nil {
					res.Fail.Add(err)
					return
				}
				ids[i] = c.Session()
				made.Add(1)
			}
		}()
	}
	wg.Wait()
	res.Elapsed = time.Since(t0)
	res.Sessions = int(made.Load())
	if res.Sessions < n && res.Fail.Total() == 0 {
		res.Limited = true // not wrong, only slow: reported, not failed
	}
	time.Sleep(500 * time.Millisecond)
	if res.Held, err = s.Probe(true); err != nil {
		res.Fail.Add(fmt.Errorf("probe: %w", err))
		return res
	}
	// Prove the sessions are still there: a checked call on a sample.
	c, err := mcpconn.Dial(s.ep, timeout)
	if err != nil {
		res.Fail.Add(err)
		return res
	}
	defer c.Close()
	step := max(1, len(ids)/100)
	var text []byte
	for i := 0; i < len(ids); i += step {
		if ids[i] == "" {
			continue
		}
		c.SetSession(ids[i])
		text = mcpconn.EchoText(text, 0, int64(i))
		if err := c.Call(int64(i)+2, string(text)); err != nil {
			res.Fail.Add(fmt.Errorf("session %d after idling: %w", i, err))
			break
		}
		res.Checked++
	}
	return res
}
