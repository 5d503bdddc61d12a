package main

// The payload workload: big text in and out. MCP traffic is dominated by
// file contents as tool arguments, long tool outputs and resources/read
// of documents, so each configuration is driven with tools/call echo of a
// long text and resources/read of a long document, at each size, in
// interleaved slices like the throughput workload's.

import (
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/saguaro-go/saguaro/bench/internal/cli"
	"github.com/saguaro-go/saguaro/bench/internal/mcpconn"
	"github.com/saguaro-go/saguaro/bench/internal/payload"
	"github.com/saguaro-go/saguaro/bench/internal/serve"
)

// Payload kinds.
const (
	payloadEcho = "echo" // tools/call echo of a long text, echoed back
	payloadRead = "read" // resources/read of a long document
)

var payloadKinds = []string{payloadEcho, payloadRead}

// payloadOptions are the payload workload's flags.
type payloadOptions struct {
	sizes         []int // KiB
	conns         []int
	rounds        int
	warmup, slice time.Duration
	timeout       time.Duration
	profile       string // folder for the servers' CPU profiles; "" for none
	profileSecs   int
}

// payloadFlags registers the payload workload's flags; the function it
// returns applies the defaults once the flags are parsed.
func payloadFlags(o *options) func() {
	var sizes, conns string
	flag.StringVar(&sizes, "payload-sizes", "1,16,256", "payload workload: comma-separated text sizes in KiB; the servers serve a document of each size")
	flag.StringVar(&conns, "payload-conns", "16", "payload workload: concurrent connections (comma-separated for several)")
	flag.IntVar(&o.payload.rounds, "payload-rounds", 0, "payload workload: interleaved rounds (default 3; quick 1)")
	flag.DurationVar(&o.payload.warmup, "payload-warmup", 0, "payload workload: unmeasured warm-up per slice (default 300ms; quick 100ms)")
	flag.DurationVar(&o.payload.slice, "payload-slice", 0, "payload workload: measured time per slice (default 1s; quick 300ms)")
	flag.DurationVar(&o.payload.timeout, "payload-timeout", 30*time.Second, "payload workload: per-request timeout (16 calls of 256 KiB in flight take seconds on the slower libraries)")
	flag.StringVar(&o.payload.profile, "payload-profile", "", "after the payload rounds, profile each server under each size and kind of call (the first -payload-conns) and write its CPU profile into this folder as <server>.<kind>.<KiB>.cpu.pprof (not reported)")
	flag.IntVar(&o.payload.profileSecs, "payload-profile-seconds", 8, "length of each payload CPU profile")
	return func() {
		p := &o.payload
		var err error
		if p.sizes, err = serve.ParseKiB(sizes); err != nil || len(p.sizes) == 0 {
			log.Fatalf("bad -payload-sizes %q: want sizes in KiB, e.g. 1,16,256", sizes)
		}
		if p.conns, err = cli.ParseConns(conns); err != nil {
			log.Fatal(err)
		}
		pick := func(quick, full int) int {
			if o.quick {
				return quick
			}
			return full
		}
		if p.rounds == 0 {
			p.rounds = pick(1, 3)
		}
		if p.warmup == 0 {
			p.warmup = time.Duration(pick(100, 300)) * time.Millisecond
		}
		if p.slice == 0 {
			p.slice = time.Duration(pick(300, 1000)) * time.Millisecond
		}
	}
}

func payloadKey(name, kind string, kib, conns int) string {
	return fmt.Sprintf("%s@%s@%d@%d", name, kind, kib, conns)
}

// payloadAgg is one cell of the payload tables: the slices' figures, and
// the sizes of the request and response bodies over every call of those
// slices (warm-up included: the sizes hardly vary from call to call).
type payloadAgg struct {
	tpAgg
	Calls    uint64
	InBytes  uint64
	OutBytes uint64
}

// bodies is the mean size of a call's request and response bodies, in
// bytes: the JSON the call put on the wire, without HTTP headers.
func (a *payloadAgg) bodies() (in, out float64) {
	if a.Calls == 0 {
		return 0, 0
	}
	return float64(a.InBytes) / float64(a.Calls), float64(a.OutBytes) / float64(a.Calls)
}

// bodyCount counts the bodies of one slice's calls.
type bodyCount struct{ calls, in, out atomic.Uint64 }

func (b *bodyCount) add(in, out int) {
	b.calls.Add(1)
	b.in.Add(uint64(in))
	b.out.Add(uint64(out))
}

// payloadCall makes the workers' calls of one slice: the echo of an
// e.Size-byte text (its head line made from the loop's per-request tag,
// so every text is distinct) or a read of the kib-KiB document, checked
// against payload.Document.
func payloadCall(kind string, kib int, e *payload.Echo, doc string, n *bodyCount) func(*mcpconn.Conn, int64) func(int64, []byte) error {
	uri := payload.DocURI(kib)
	return func(c *mcpconn.Conn, base int64) func(int64, []byte) error {
		var head []byte
		if kind == payloadRead {
			return func(seq int64, _ []byte) error {
				in, out, err := c.ReadResource(base+seq, uri, payload.MIMEType, doc)
				n.add(in, out)
				return err
			}
		}
		return func(seq int64, tag []byte) error {
			head = e.Head(head[:0], tag)
			in, out, err := c.CallEcho(base+seq, e, head)
			n.add(in, out)
			return err
		}
	}
}

// runPayloadPhase starts every MCP configuration with the documents of
// every size, then for each round, size, kind and concurrency gives every
// configuration one slice, in an order that rotates from round to round.
func runPayloadPhase(o *options, run *runResult) {
	p := o.payload
	run.Payload = map[string]*payloadAgg{}
	var sizes []string
	for _, kib := range p.sizes {
		sizes = append(sizes, fmt.Sprint(kib))
	}
	var servers []*server
	defer func() { stopAll(servers) }()
	for _, c := range run.Configs {
		if isPending(c) || c.IsSSE() || !c.Runs("payload") {
			continue
		}
		s, err := startServer(o, "payload", c, "-idle-timeout", o.serverIdleTTL.String(), "-payload-docs", strings.Join(sizes, ","))
		if err != nil {
			log.Printf("%s: %v", c.Name, err)
			run.setStartError(c.Name, err)
			continue
		}
		run.noteReady(c.Name, s.Ready)
		servers = append(servers, s)
	}
	if len(servers) == 0 {
		return
	}
	echoes := map[int]*payload.Echo{}
	for _, kib := range p.sizes {
		echoes[kib] = payload.NewEcho(kib << 10)
	}
	total := p.rounds * len(p.sizes) * len(payloadKinds) * len(p.conns) * len(servers)
	n := 0
	for round := 0; round < p.rounds; round++ {
		for _, kib := range p.sizes {
			for _, kind := range payloadKinds {
				for _, conns := range p.conns {
					for i := range servers {
						s := servers[(i+round)%len(servers)]
						n++
						var count bodyCount
						spec := sliceSpec{Conns: conns, Drain: true, Call: payloadCall(kind, kib, echoes[kib], payload.Document(kib<<10), &count)}
						r := runSlice(s, spec, p.warmup, p.slice, p.timeout)
						k := payloadKey(s.cfg.Name, kind, kib, conns)
						a := run.Payload[k]
						if a == nil {
							a = &payloadAgg{}
							run.Payload[k] = a
						}
						a.add(r)
						a.Calls += count.calls.Load()
						a.InBytes += count.in.Load()
						a.OutBytes += count.out.Load()
						status := ""
						if f := r.Fail.Total(); f > 0 {
							status = fmt.Sprintf(" FAILED x%d %v", f, r.Fail.First)
						}
						log.Printf("payload [%d/%d] round %d %4d KiB %-4s c=%-3d %-18s %8.0f req/s%s", n, total, round+1, kib, kind, conns,
							s.cfg.Name, float64(r.OK)/r.Window.Seconds(), status)
					}
				}
			}
		}
	}
	if p.profile != "" {
		profilePayload(o, servers, echoes)
	}
}

// profilePayload gives every server, after the measured rounds, one slice
// of each size and kind at the first concurrency, long enough for a CPU
// profile taken meanwhile from its admin listener, and logs the slice's
// server CPU per call beside the file, so that a profile's shares can be
// turned into time per call.
func profilePayload(o *options, servers []*server, echoes map[int]*payload.Echo) {
	p := o.payload
	if err := os.MkdirAll(p.profile, 0o755); err != nil {
		log.Printf("payload profile: %v", err)
		return
	}
	for _, s := range servers {
		for _, kib := range p.sizes {
			for _, kind := range payloadKinds {
				file := filepath.Join(p.profile, fmt.Sprintf("%s.%s.%d.cpu.pprof", s.cfg.Name, kind, kib))
				done := make(chan error, 1)
				go func() {
					done <- fetchProfile(s, "/debug/pprof/profile?seconds="+strconv.Itoa(p.profileSecs), file)
				}()
				var count bodyCount
				spec := sliceSpec{Conns: p.conns[0], Drain: true, Call: payloadCall(kind, kib, echoes[kib], payload.Document(kib<<10), &count)}
				// The profile starts with the slice's warm-up and ends
				// before its measured time does.
				r := runSlice(s, spec, p.warmup, time.Duration(p.profileSecs)*time.Second+time.Second, p.timeout)
				err := <-done
				if err == nil && r.Fail.Total() > 0 {
					err = fmt.Errorf("%d calls failed: %v", r.Fail.Total(), r.Fail.First)
				}
				if err != nil {
					log.Printf("payload profile %s %s %d KiB: %v", s.cfg.Name, kind, kib, err)
					continue
				}
				perCall := time.Duration(0)
				if r.OK > 0 {
					perCall = time.Duration((r.After.CPUNS() - r.Before.CPUNS()) / int64(r.OK))
				}
				log.Printf("payload profile %-18s %4d KiB %-4s c=%d: %d calls, %v of server CPU per call; wrote %s",
					s.cfg.Name, kib, kind, p.conns[0], r.OK, perCall, file)
			}
		}
	}
}
