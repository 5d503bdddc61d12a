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
	"github.com/saguaro-go/saguaro/bench/internal/configs"
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
	// Each client's read buffer: 16 KiB holds a whole burst; with many
	// clients, 4 KiB keeps the load generator's memory in bounds.
	bufSize := 16 << 10
	if n > 2000 {
		bufSize = 4 << 10
	}
	fs.wg.Add(n)
	for _, c := range fs.clients {
		go fs.read(c, bufSize, timeout)
	}
	return fs, nil
}

// read is one client's goroutine: the response head, then every event.
func (fs *fanSet) read(c *fanClient, bufSize int, timeout time.Duration) {
	defer fs.wg.Done()
	err := fs.readStream(c, bufSize, timeout)
	if fs.stop.Load() {
		return
	}
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		err = fanErr("transport", "client %d: the server ended the stream", c.id)
	}
	fs.died(c, err)
}

func (fs *fanSet) readStream(c *fanClient, bufSize int, timeout time.Duration) error {
	br := bufio.NewReaderSize(c.nc, bufSize)
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

// warmUp publishes warm-up events (seq 0) until every client has one: then
// every subscription is in place. They are published every 20 ms per
// thousand clients: a server that writes each event to every client in
// turn before it takes a new subscription (go-sse) would spend most of
// its time on warm-up events otherwise.
func (fs *fanSet) warmUp(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	every := max(20*time.Millisecond, time.Duration(len(fs.clients))*20*time.Microsecond)
	for i := 0; time.Now().Before(deadline) && i < 100_000; i++ {
		if err := fs.publish(ctx, 0); err != nil {
			return err
		}
		t := time.Now().Add(every)
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

// close ends every connection and waits for the readers. The connections
// are reset rather than closed, so that thousands of them leave no
// TIME_WAIT sockets holding local ports for the next round.
func (fs *fanSet) close() {
	fs.stop.Store(true)
	for _, c := range fs.clients {
		if tc, ok := c.nc.(*net.TCPConn); ok {
			_ = tc.SetLinger(0)
		}
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

	// The timeout, plus the publishing time of a paced slice, plus the
	// slice's deliveries at a pessimistic 10,000 per second.
	limit := timeout + time.Duration(float64(res.Clients)*float64(spec.Events)/10_000*float64(time.Second))
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

// raiseFDLimit lifts this process's open-file limit towards need: the soft
// limit up to the hard one, then both (which only a privileged process
// may do). It returns the soft limit it ends with. Servers started
// afterwards inherit it.
func raiseFDLimit(need int) (int, error) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0, err
	}
	if rl.Cur < rl.Max {
		rl.Cur = rl.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
			return 0, err
		}
	}
	if uint64(need) > rl.Cur {
		up := syscall.Rlimit{Cur: uint64(need), Max: max(rl.Max, uint64(need))}
		if syscall.Setrlimit(syscall.RLIMIT_NOFILE, &up) == nil {
			rl = up
		}
	}
	return int(min(rl.Cur, 1<<30)), nil
}

// fanReserve is the descriptors kept aside for everything but the fan-out
// clients: the servers' pipes and probes, the publish connections, logs.
const fanReserve = 256

// fanGroupSize says how many configurations can have their n clients
// connected at once, within the open-file limit (raised as far as this
// process may) and -fanout-max-conns.
func fanGroupSize(o *options, configs, n int) (int, error) {
	limit, err := raiseFDLimit(configs*n + fanReserve)
	if err != nil {
		return 0, err
	}
	room := limit - fanReserve
	if o.fanMaxConns > 0 {
		room = min(room, o.fanMaxConns)
	}
	k := min(configs, room/n)
	if k < 1 {
		return 0, fmt.Errorf("the open-file limit is %d and -fanout-max-conns %d; %d clients need about %d (raise ulimit -n, or lower -fanout-clients)",
			limit, o.fanMaxConns, n, n+fanReserve)
	}
	return k, nil
}

// fanCount is the fan-out workload at one client count: paced slices
// offer the same deliveries per second at every count (the first count's
// rate, scaled), so the larger counts are not merely overloaded.
type fanCount struct {
	Clients     int
	Rounds      int
	PacedEvents int
	Rate        float64
	BurstEvents int
}

// fanCounts lists the client counts of the run with their settings.
func fanCounts(o *options) []fanCount {
	var out []fanCount
	first := o.fanClients[0]
	for i, n := range o.fanClients {
		scale := float64(first) / float64(n)
		out = append(out, fanCount{
			Clients:     n,
			Rounds:      o.fanRounds[min(i, len(o.fanRounds)-1)],
			PacedEvents: max(5, int(float64(o.fanPacedEvents)*scale+0.5)),
			Rate:        o.fanRate * scale,
			BurstEvents: o.fanBurstEvents,
		})
	}
	return out
}

// fanKey is the results key of a configuration's variant at a client
// count.
func fanKey(name, variant string, clients int) string {
	return name + "@" + variant + "@" + strconv.Itoa(clients)
}

// fanMem is what a configuration's process holds for its connected,
// subscribed, idle clients: two probe readings, each after forced
// collections, before the clients connected and once every one of them
// had its warm-up event.
type fanMem struct {
	Clients    int
	Base, Held probe.Snapshot
}

func (m *fanMem) per(held, base uint64) float64 {
	return (float64(held) - float64(base)) / float64(m.Clients)
}

// RSS, Heap (live heap after collection), Stacks and Goroutines are per
// client.
func (m *fanMem) RSS() float64        { return m.per(m.Held.RSS, m.Base.RSS) }
func (m *fanMem) Heap() float64       { return m.per(m.Held.HeapLive, m.Base.HeapLive) }
func (m *fanMem) Stacks() float64     { return m.per(m.Held.StackBytes, m.Base.StackBytes) }
func (m *fanMem) Goroutines() float64 { return m.per(m.Held.Goroutines, m.Base.Goroutines) }

// fanEntry is one fan-out server and, while connected, its clients.
type fanEntry struct {
	s        *server
	fs       *fanSet
	failed   bool
	measured bool
}

// runFanoutPhase runs the fan-out workload at each client count in turn.
func runFanoutPhase(o *options, run *runResult) {
	run.Fanout = map[string]*fanAgg{}
	run.FanoutMem = map[string]*fanMem{}
	var cfgs []configs.Config
	for _, c := range run.Configs {
		if c.IsSSE() && !isPending(c) {
			cfgs = append(cfgs, c)
		}
	}
	if len(cfgs) == 0 {
		return
	}
	for _, fc := range fanCounts(o) {
		runFanoutCount(o, run, cfgs, fc)
	}
}

// runFanoutCount starts every fan-out configuration, connects fc.Clients
// clients to each, then interleaves slices: in each round every
// configuration gets a paced slice and a burst slice, in an order that
// rotates per round. When the open-file limit does not allow every
// configuration's clients at once, the configurations take turns in
// groups, each group connecting afresh for each round.
func runFanoutCount(o *options, run *runResult, cfgs []configs.Config, fc fanCount) {
	n := fc.Clients
	per, err := fanGroupSize(o, len(cfgs), n)
	if err != nil {
		log.Printf("fanout: %v", err)
		for _, c := range cfgs {
			a := &fanAgg{}
			a.Fail.Add(fanErr("setup", "%v", err))
			run.Fanout[fanKey(c.Name, fanPaced, n)] = a
		}
		return
	}
	var ents []*fanEntry
	defer func() {
		for _, e := range ents {
			if e.fs != nil {
				e.fs.close()
			}
			e.s.Stop()
		}
	}()
	for _, c := range cfgs {
		s, err := startServer(o, fmt.Sprintf("fanout-%d", n), c)
		if err != nil {
			log.Printf("%s: %v", c.Name, err)
			run.setStartError(c.Name, err)
			continue
		}
		run.noteReady(c.Name, s.Ready)
		ents = append(ents, &fanEntry{s: s})
	}
	if len(ents) == 0 {
		return
	}
	var groups [][]*fanEntry
	for i := 0; i < len(ents); i += per {
		groups = append(groups, ents[i:min(i+per, len(ents))])
	}
	if len(groups) > 1 {
		log.Printf("fanout %d clients: the open-file limit allows %d configurations connected at once; %d groups take turns, reconnecting each round", n, per, len(groups))
	}
	done, total := 0, fc.Rounds*2*len(ents)
	for round := 0; round < fc.Rounds; round++ {
		for gi := range groups {
			g := groups[(gi+round)%len(groups)]
			var live []*fanEntry
			for _, e := range g {
				if e.fs == nil && !e.failed {
					connectFan(o, run, e, n, fc.BurstEvents)
				}
				if e.fs != nil {
					live = append(live, e)
				}
			}
			runFanRound(o, run, live, fc, round, &done, total)
			if len(groups) > 1 {
				for _, e := range live {
					e.fs.close()
					e.fs = nil
				}
			}
		}
	}
	if o.fanProfile != "" && n == o.fanClients[0] {
		for _, e := range ents {
			if e.fs == nil && !e.failed {
				connectFan(o, run, e, n, fc.BurstEvents)
			}
			if e.fs != nil {
				profileFanout(o.fanProfile, o.fanProfileSecs, e.s, e.fs, fanSpec{Events: fc.BurstEvents}, o.timeout)
				if len(groups) > 1 {
					e.fs.close()
					e.fs = nil
				}
			}
		}
	}
}

// connectFan connects n clients to the entry's server and waits until
// each has had a warm-up event. The first time, it also measures what the
// server holds per connected client. Then it publishes one burst of burst
// events that no slice counts: what a server sets up once for its working
// size (queues and pools filled by the first burst it absorbs) is not a
// cost per delivery, and would otherwise fall on whichever slice came
// first. The memory per client was read before it.
func connectFan(o *options, run *runResult, e *fanEntry, n, burst int) {
	name := e.s.cfg.Name
	var base probe.Snapshot
	var err error
	if !e.measured {
		base, err = e.s.Probe(true)
	}
	t0 := time.Now()
	var fs *fanSet
	if err == nil {
		fs, err = dialFanSet(e.s, n, o.timeout)
	}
	if err == nil {
		err = fs.warmUp(30*time.Second + time.Duration(n)*time.Millisecond)
	}
	if err == nil && !e.measured {
		var held probe.Snapshot
		if held, err = e.s.Probe(true); err == nil {
			run.FanoutMem[name+"@"+strconv.Itoa(n)] = &fanMem{Clients: n, Base: base, Held: held}
			e.measured = true
		}
	}
	if err == nil {
		if w := runFanSlice(fs, fanSpec{Events: burst}, o.timeout); w.Fail.Total() > 0 {
			err = fmt.Errorf("warm-up burst: %s", w.Fail.FirstMessage())
		}
	}
	if err != nil {
		log.Printf("fanout %s: %v", name, err)
		a := &fanAgg{}
		if check.Kind(err) == "transport" {
			err = fanErr("setup", "%v", err)
		}
		a.Fail.Add(err)
		run.Fanout[fanKey(name, fanPaced, n)] = a
		if fs != nil {
			fs.close()
		}
		e.failed = true
		return
	}
	e.fs = fs
	log.Printf("fanout %-18s %d clients subscribed in %v", name, len(fs.clients), time.Since(t0).Round(time.Millisecond))
}

// runFanRound gives every connected entry a paced slice, then a burst
// slice, in an order that rotates with the round.
func runFanRound(o *options, run *runResult, ents []*fanEntry, fc fanCount, round int, done *int, total int) {
	variants := []struct {
		name string
		spec fanSpec
	}{
		{fanPaced, fanSpec{Events: fc.PacedEvents, Rate: fc.Rate}},
		{fanBurst, fanSpec{Events: fc.BurstEvents}},
	}
	for _, v := range variants {
		for i := range ents {
			e := ents[(i+round)%len(ents)]
			*done++
			r := runFanSlice(e.fs, v.spec, o.timeout)
			if f := e.fs.takeFailures(); f != nil {
				r.Fail.Merge(f)
			}
			k := fanKey(e.s.cfg.Name, v.name, fc.Clients)
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
			log.Printf("[%d/%d] fanout %d clients round %d %-5s %-18s %9.0f deliveries/s p50 %s p99 %s%s", *done, total, fc.Clients, round+1, v.name,
				e.s.cfg.Name, float64(r.Deliveries)/r.Window.Seconds(), report.Dur(r.Hist.Quantile(0.5)), report.Dur(r.Hist.Quantile(0.99)), status)
			// Let the server settle (the last writes, the GC) before
			// the next configuration's slice.
			time.Sleep(50 * time.Millisecond)
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
	get := func(path, file string) error { return fetchProfile(s, path, filepath.Join(dir, file)) }
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

// fetchProfile writes what the server's admin listener answers at path
// (one of net/http/pprof's) to file.
func fetchProfile(s *server, path, file string) error {
	base := strings.TrimSuffix(s.Ready.ProbeURL, probe.Path)
	resp, err := http.Get(base + path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: HTTP %d", path, resp.StatusCode)
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	_, err = io.Copy(f, resp.Body)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
