package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"mime"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/saguaro-go/saguaro/sse"

	"github.com/saguaro-go/saguaro/bench/internal/check"
	"github.com/saguaro-go/saguaro/bench/internal/fanout"
	"github.com/saguaro-go/saguaro/bench/internal/hist"
	"github.com/saguaro-go/saguaro/bench/internal/loop"
	"github.com/saguaro-go/saguaro/bench/internal/probe"
	"github.com/saguaro-go/saguaro/bench/internal/report"
)

// Fan-out variants: events published at a fixed rate, or back to back.
const (
	fanPaced = "paced"
	fanBurst = "burst"
)

// fanClient is one SSE connection of the load generator: its own goroutine
// reads the stream with sse.Reader and checks that the events come in
// order, each exactly once. Its counters are harvested (under mu) at the
// end of each slice.
type fanClient struct {
	id int
	nc net.Conn

	mu      sync.Mutex
	last    int64 // highest sequence number received
	warm    bool  // a warm-up event (seq 0) arrived
	dead    bool
	reached int // the slice whose last event this client has
	inSlice int // the last slice this client was live at the start of
	ok      uint64
	lost    uint64 // events skipped over: a gap in the sequence
	dups    uint64 // an event at or below the last one: duplicate or reordered
	h       hist.H
}

// fanSet is the clients of one server and the slice they are in.
type fanSet struct {
	s       *server
	clients []*fanClient
	// idleFail collects what clients report between slices.
	idleFail *loop.Failures
	stop     atomic.Bool
	wg       sync.WaitGroup
	warmN    atomic.Int64
	nextSeq  int64

	mu        sync.Mutex
	slice     int   // current slice number, from 1
	target    int64 // the slice's last sequence number; 0 between slices
	targetA   atomic.Int64
	remaining int // live clients that have not got target yet
	lastAt    time.Time
	done      chan struct{}
	// sliceFail collects what clients report during the current slice.
	sliceFail *loop.Failures
	// dropped counts the clients that disconnected during the slice.
	dropped int
}

// dialFanSet opens n SSE connections to the server, at most 64 being set
// up at once, and starts each one's reader.
func dialFanSet(s *server, n int, timeout time.Duration) (*fanSet, error) {
	u, err := url.Parse(s.Ready.EventsURL)
	if err != nil || s.Ready.EventsURL == "" || s.Ready.PublishURL == "" {
		return nil, fmt.Errorf("%s: no events/publish URL on the ready line", s.cfg.Name)
	}
	host, _, err := net.SplitHostPort(u.Host)
	if err != nil {
		return nil, err
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return nil, fmt.Errorf("refusing non-loopback target %s", u.Host)
	}
	fs := &fanSet{s: s, nextSeq: 1, idleFail: &loop.Failures{}}
	req := []byte("GET " + u.EscapedPath() + " HTTP/1.1\r\nHost: " + u.Host + "\r\nAccept: text/event-stream\r\nCache-Control: no-cache\r\n\r\n")
	sem := make(chan struct{}, 64)
	var mu sync.Mutex
	var firstErr error
	var setup sync.WaitGroup
	fs.clients = make([]*fanClient, n)
	for i := range n {
		sem <- struct{}{}
		setup.Add(1)
		go func(i int) {
			defer setup.Done()
			defer func() { <-sem }()
			nc, err := net.DialTimeout("tcp", u.Host, timeout)
			if err == nil {
				_ = nc.SetWriteDeadline(time.Now().Add(timeout))
				_, err = nc.Write(req)
				_ = nc.SetWriteDeadline(time.Time{})
			}
			if err != nil {
				if nc != nil {
					nc.Close()
				}
				mu.Lock()
				if firstErr == nil {
					firstErr = fmt.Errorf("client %d: %w", i, err)
				}
				mu.Unlock()
				return
			}
			fs.clients[i] = &fanClient{id: i, nc: nc}
		}(i)
	}
	setup.Wait()
	if firstErr != nil {
		for _, c := range fs.clients {
			if c != nil {
				c.nc.Close()
			}
		}
		return nil, firstErr
	}
	fs.wg.Add(n)
	for _, c := range fs.clients {
		go fs.read(c, timeout)
	}
	return fs, nil
}

// read is one client's goroutine: the response head, then every event.
func (fs *fanSet) read(c *fanClient, timeout time.Duration) {
	defer fs.wg.Done()
	err := fs.readStream(c, timeout)
	if fs.stop.Load() {
		return
	}
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		err = fanErr("transport", "client %d: the server ended the stream", c.id)
	}
	fs.died(c, err)
}

func (fs *fanSet) readStream(c *fanClient, timeout time.Duration) error {
	br := bufio.NewReaderSize(c.nc, 16<<10)
	// The head may come only with the first event (go-sse), so no
	// deadline here: the warm-up phase has its own.
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return fanErr("transport", "client %d: %v", c.id, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fanErr("status", "client %d: HTTP %d", c.id, resp.StatusCode)
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		return fanErr("media-type", "client %d: Content-Type %q", c.id, resp.Header.Get("Content-Type"))
	}
	rd := sse.NewReader(resp.Body)
	for {
		ev, err := rd.Next()
		if err != nil {
			return err
		}
		now := time.Now().UnixNano()
		seq, ts, err := fanout.ParsePayload(ev.Data)
		if err != nil {
			fs.report(fanErr("payload", "client %d: %q", c.id, ev.Data))
			continue
		}
		fs.deliver(c, seq, time.Duration(now-ts))
	}
}

// deliver checks one event against the client's sequence.
func (fs *fanSet) deliver(c *fanClient, seq int64, lat time.Duration) {
	c.mu.Lock()
	switch {
	case seq == 0:
		if c.last != 0 {
			c.dups++ // a warm-up event after measured ones: reordered
		} else if !c.warm {
			c.warm = true
			fs.warmN.Add(1)
		}
	case seq == c.last+1:
		c.ok++
		c.h.Record(lat)
		c.last = seq
	case seq > c.last+1:
		c.lost += uint64(seq - c.last - 1)
		c.ok++
		c.h.Record(lat)
		c.last = seq
	default:
		c.dups++
	}
	last := c.last
	c.mu.Unlock()
	if t := fs.targetA.Load(); t == 0 || last < t {
		return
	}
	fs.mu.Lock()
	if fs.target != 0 && last >= fs.target && c.reached != fs.slice {
		c.reached = fs.slice
		fs.remaining--
		if fs.remaining == 0 {
			fs.lastAt = time.Now()
			close(fs.done)
		}
	}
	fs.mu.Unlock()
}

// died marks a client gone; it no longer holds up the slice.
func (fs *fanSet) died(c *fanClient, err error) {
	c.mu.Lock()
	already := c.dead
	c.dead = true
	c.mu.Unlock()
	if already {
		return
	}
	fs.report(err)
	fs.mu.Lock()
	fs.dropped++
	if fs.target != 0 && c.reached != fs.slice {
		c.reached = fs.slice
		fs.remaining--
		if fs.remaining == 0 {
			fs.lastAt = time.Now()
			close(fs.done)
		}
	}
	fs.mu.Unlock()
}

func (fs *fanSet) report(err error) {
	fs.mu.Lock()
	f := fs.sliceFail
	if f == nil {
		f = fs.idleFail
	}
	fs.mu.Unlock()
	f.Add(err)
}

// publish asks the server to publish event seq.
func (fs *fanSet) publish(ctx context.Context, seq int64) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, fs.s.Ready.PublishURL+"?seq="+strconv.FormatInt(seq, 10), nil)
	if err != nil {
		return err
	}
	resp, err := fs.s.HTTP.Do(req)
	if err != nil {
		return fanErr("transport", "publish %d: %v", seq, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fanErr("status", "publish %d: HTTP %d", seq, resp.StatusCode)
	}
	return nil
}

// warmUp publishes warm-up events (seq 0) every 20 ms until every client
// has one: then every subscription is in place.
func (fs *fanSet) warmUp(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	for i := 0; time.Now().Before(deadline) && i < 100_000; i++ {
		if err := fs.publish(ctx, 0); err != nil {
			return err
		}
		t := time.Now().Add(20 * time.Millisecond)
		for time.Now().Before(t) {
			if int(fs.warmN.Load()) >= fs.live() {
				return nil
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
	return fanErr("setup", "only %d of %d clients had an event after %v", fs.warmN.Load(), len(fs.clients), limit)
}

func (fs *fanSet) live() int {
	n := 0
	for _, c := range fs.clients {
		c.mu.Lock()
		if !c.dead {
			n++
		}
		c.mu.Unlock()
	}
	return n
}

// close ends every connection and waits for the readers.
func (fs *fanSet) close() {
	fs.stop.Store(true)
	for _, c := range fs.clients {
		c.nc.Close()
	}
	fs.wg.Wait()
}

// fanSpec is one slice: events published back to back (Rate 0) or at Rate
// per second.
type fanSpec struct {
	Events int
	Rate   float64
}

// fanSlice is one measured slice of one configuration.
type fanSlice struct {
	Clients    int // live when the slice began
	Events     int
	Deliveries uint64 // events received in order, exactly once
	Expected   uint64 // clients × events
	Lost       uint64
	Dups       uint64
	Dropped    int // clients that disconnected during the slice
	Window     time.Duration
	PublishDur time.Duration // first publish to the last publish's answer
	Hist       hist.H
	Before     probe.Snapshot
	After      probe.Snapshot
	SelfCPUNS  int64
	Fail       loop.Failures
}

// runFanSlice publishes spec.Events events and waits until every live
// client has all of them (or the timeout).
func runFanSlice(fs *fanSet, spec fanSpec, timeout time.Duration) *fanSlice {
	res := &fanSlice{Events: spec.Events}
	first := fs.nextSeq
	target := first + int64(spec.Events) - 1
	fs.nextSeq = target + 1

	var err error
	if res.Before, err = fs.s.Probe(false); err != nil {
		res.Fail.Add(fmt.Errorf("probe: %w", err))
	}
	fs.mu.Lock()
	fs.slice++
	fs.target = target
	fs.targetA.Store(target)
	fs.sliceFail = &res.Fail
	fs.done = make(chan struct{})
	fs.dropped = 0
	fs.remaining = 0
	for _, c := range fs.clients {
		c.mu.Lock()
		if !c.dead {
			fs.remaining++
			c.inSlice = fs.slice
		}
		c.mu.Unlock()
	}
	res.Clients = fs.remaining
	done := fs.done
	if fs.remaining == 0 {
		close(fs.done)
	}
	fs.mu.Unlock()

	limit := timeout
	if spec.Rate > 0 {
		limit += time.Duration(float64(spec.Events) / spec.Rate * float64(time.Second))
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	self0 := selfCPU()
	t0 := time.Now()
	for i := 0; i < spec.Events; i++ {
		if spec.Rate > 0 {
			at := t0.Add(time.Duration(float64(i) / spec.Rate * float64(time.Second)))
			if d := time.Until(at); d > 0 {
				time.Sleep(d)
			}
		}
		if err := fs.publish(ctx, first+int64(i)); err != nil {
			res.Fail.Add(err)
			break
		}
	}
	res.PublishDur = time.Since(t0)
	timedOut := false
	select {
	case <-done:
	case <-ctx.Done():
		timedOut = true
	}
	fs.mu.Lock()
	lastAt := fs.lastAt
	slice := fs.slice
	fs.target = 0
	fs.targetA.Store(0)
	fs.sliceFail = nil
	res.Dropped = fs.dropped
	fs.mu.Unlock()
	if timedOut {
		lastAt = time.Now()
	}
	res.Window = lastAt.Sub(t0)
	res.SelfCPUNS = selfCPU() - self0
	if res.After, err = fs.s.Probe(false); err != nil {
		res.Fail.Add(fmt.Errorf("probe: %w", err))
	}

	res.Expected = uint64(res.Clients) * uint64(spec.Events)
	short := 0
	for _, c := range fs.clients {
		c.mu.Lock()
		res.Deliveries += c.ok
		res.Lost += c.lost
		res.Dups += c.dups
		res.Hist.Merge(&c.h)
		if c.inSlice == slice && c.last < target {
			short++
			res.Lost += uint64(target - c.last)
			c.last = target // count the next slice from here
		}
		c.ok, c.lost, c.dups = 0, 0, 0
		c.h = hist.H{}
		c.mu.Unlock()
	}
	if res.Lost > 0 {
		res.Fail.Add(fanErr("lost", "%d of %d deliveries never arrived (%d clients short of the last event, %d disconnected during the slice; limit %v)",
			res.Lost, res.Expected, short, res.Dropped, limit))
	}
	if res.Dups > 0 {
		res.Fail.Add(fanErr("order", "%d events arrived twice or out of order", res.Dups))
	}
	return res
}

// fanAgg sums the slices of one configuration and variant.
type fanAgg struct {
	Slices     int
	Clients    int
	Events     int
	Deliveries uint64
	Expected   uint64
	Lost       uint64
	Dups       uint64
	Dropped    int
	Window     time.Duration
	PublishDur time.Duration
	Hist       hist.H
	CPUNS      int64
	Allocs     uint64
	Bytes      uint64
	GCs        uint64
	SelfCPUNS  int64
	// SliceRate is deliveries per second of each slice, in round order.
	SliceRate []float64
	Fail      loop.Failures
}

func (a *fanAgg) add(r *fanSlice) {
	a.Slices++
	a.Clients = max(a.Clients, r.Clients)
	a.Events += r.Events
	a.Deliveries += r.Deliveries
	a.Expected += r.Expected
	a.Lost += r.Lost
	a.Dups += r.Dups
	a.Dropped += r.Dropped
	a.Window += r.Window
	a.PublishDur += r.PublishDur
	a.SelfCPUNS += r.SelfCPUNS
	a.Hist.Merge(&r.Hist)
	if r.After.UnixNano != 0 && r.Before.UnixNano != 0 {
		a.CPUNS += r.After.CPUNS() - r.Before.CPUNS()
		a.Allocs += r.After.AllocObjs - r.Before.AllocObjs
		a.Bytes += r.After.AllocBytes - r.Before.AllocBytes
		a.GCs += r.After.GCCycles - r.Before.GCCycles
	}
	if r.Window > 0 {
		a.SliceRate = append(a.SliceRate, float64(r.Deliveries)/r.Window.Seconds())
	}
	a.Fail.Merge(&r.Fail)
}

func (a *fanAgg) perDelivery(v float64) float64 {
	if a.Deliveries == 0 {
		return 0
	}
	return v / float64(a.Deliveries)
}

func (a *fanAgg) medianRate() float64 { return loop.Median(a.SliceRate) }

// ratioTo is the median over rounds of the rate divided by base's rate in
// the same round.
func (a *fanAgg) ratioTo(base *fanAgg) float64 { return loop.RoundRatio(a.SliceRate, base.SliceRate) }

// raiseFDLimit lifts this process's open-file limit to its hard limit and
// reports whether need descriptors fit.
func raiseFDLimit(need int) error {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return err
	}
	if rl.Cur < rl.Max {
		rl.Cur = rl.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
			return err
		}
	}
	if uint64(need) > rl.Cur {
		return fmt.Errorf("the open-file limit is %d, the fan-out workload needs about %d (raise ulimit -n, or lower -fanout-clients)", rl.Cur, need)
	}
	return nil
}

// runFanoutPhase starts every fan-out configuration, connects the clients
// to each, then interleaves slices: in each round every configuration gets
// a paced slice and a burst slice, in an order that rotates per round.
func runFanoutPhase(o *options, run *runResult) {
	run.Fanout = map[string]*fanAgg{}
	var cfgs []int
	for i, c := range run.Configs {
		if c.IsSSE() && !isPending(c) {
			cfgs = append(cfgs, i)
		}
	}
	if len(cfgs) == 0 {
		return
	}
	if err := raiseFDLimit(len(cfgs)*o.fanClients + 256); err != nil {
		log.Printf("fanout: %v", err)
		for _, i := range cfgs {
			run.setStartError(run.Configs[i].Name, err)
		}
		return
	}
	type entry struct {
		s  *server
		fs *fanSet
	}
	var ents []entry
	defer func() {
		for _, e := range ents {
			if e.fs != nil {
				e.fs.close()
			}
		}
		for _, e := range ents {
			e.s.Stop()
		}
	}()
	for _, i := range cfgs {
		c := run.Configs[i]
		s, err := startServer(o, "fanout", c)
		if err != nil {
			log.Printf("%s: %v", c.Name, err)
			run.setStartError(c.Name, err)
			continue
		}
		run.noteReady(c.Name, s.Ready)
		t0 := time.Now()
		fs, err := dialFanSet(s, o.fanClients, o.timeout)
		if err == nil {
			err = fs.warmUp(30 * time.Second)
		}
		if err != nil {
			log.Printf("fanout %s: %v", c.Name, err)
			a := &fanAgg{}
			if check.Kind(err) == "transport" {
				err = fanErr("setup", "%v", err)
			}
			a.Fail.Add(err)
			run.Fanout[c.Name+"@"+fanPaced] = a
			if fs != nil {
				fs.close()
			}
			s.Stop()
			continue
		}
		log.Printf("fanout %-18s %d clients subscribed in %v", c.Name, len(fs.clients), time.Since(t0).Round(time.Millisecond))
		ents = append(ents, entry{s: s, fs: fs})
	}
	if len(ents) == 0 {
		return
	}
	variants := []struct {
		name string
		spec fanSpec
	}{
		{fanPaced, fanSpec{Events: o.fanPacedEvents, Rate: o.fanRate}},
		{fanBurst, fanSpec{Events: o.fanBurstEvents}},
	}
	n, total := 0, o.fanRounds*len(variants)*len(ents)
	for round := 0; round < o.fanRounds; round++ {
		for _, v := range variants {
			for i := range ents {
				e := ents[(i+round)%len(ents)]
				n++
				r := runFanSlice(e.fs, v.spec, o.timeout)
				if f := e.fs.takeFailures(); f != nil {
					r.Fail.Merge(f)
				}
				k := e.s.cfg.Name + "@" + v.name
				a := run.Fanout[k]
				if a == nil {
					a = &fanAgg{}
					run.Fanout[k] = a
				}
				a.add(r)
				status := ""
				if f := r.Fail.Total(); f > 0 {
					status = fmt.Sprintf(" FAILED: %s", r.Fail.FirstMessage())
				}
				log.Printf("[%d/%d] fanout round %d %-5s %-18s %9.0f deliveries/s p50 %s p99 %s%s", n, total, round+1, v.name,
					e.s.cfg.Name, float64(r.Deliveries)/r.Window.Seconds(), report.Dur(r.Hist.Quantile(0.5)), report.Dur(r.Hist.Quantile(0.99)), status)
				// Let the server settle (the last writes, the GC) before
				// the next configuration's slice.
				time.Sleep(50 * time.Millisecond)
			}
		}
	}
	if o.fanProfile != "" {
		for _, e := range ents {
			profileFanout(o.fanProfile, o.fanProfileSecs, e.s, e.fs, fanSpec{Events: o.fanBurstEvents}, o.timeout)
		}
	}
}

// profileFanout runs burst slices against each configuration for secs
// seconds while its server records a CPU profile, then saves the server's
// allocation profile (cumulative since it started), both into dir for
// go tool pprof. Nothing of it is reported.
func profileFanout(dir string, secs int, s *server, fs *fanSet, spec fanSpec, timeout time.Duration) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		log.Printf("profile: %v", err)
		return
	}
	base := strings.TrimSuffix(s.Ready.ProbeURL, probe.Path)
	get := func(path, file string) error {
		resp, err := http.Get(base + path)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s: HTTP %d", path, resp.StatusCode)
		}
		f, err := os.Create(filepath.Join(dir, file))
		if err != nil {
			return err
		}
		_, err = io.Copy(f, resp.Body)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	}
	done := make(chan error, 1)
	go func() { done <- get("/debug/pprof/profile?seconds="+strconv.Itoa(secs), s.cfg.Name+".cpu.pprof") }()
	var deliveries uint64
	t0 := time.Now()
	for i := 0; i < 100_000; i++ {
		select {
		case err := <-done:
			if err == nil {
				err = get("/debug/pprof/allocs", s.cfg.Name+".allocs.pprof")
			}
			if err != nil {
				log.Printf("profile %s: %v", s.cfg.Name, err)
				return
			}
			log.Printf("profile %-18s %d deliveries in %v; wrote %s/%s.{cpu,allocs}.pprof", s.cfg.Name, deliveries,
				time.Since(t0).Round(time.Millisecond), dir, s.cfg.Name)
			return
		default:
		}
		deliveries += runFanSlice(fs, spec, timeout).Deliveries
	}
}

// takeFailures returns, and forgets, the failures reported outside a
// slice.
func (fs *fanSet) takeFailures() *loop.Failures {
	fs.mu.Lock()
	f := fs.idleFail
	fs.idleFail = &loop.Failures{}
	fs.mu.Unlock()
	if f.Total() == 0 {
		return nil
	}
	return f
}

// fanErr is a failed check of the fan-out workload, grouped by kind.
func fanErr(kind, format string, args ...any) error {
	return &check.Error{Kind: kind, Detail: fmt.Sprintf(format, args...)}
}
