package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/saguaro-go/saguaro/bench/internal/configs"
	"github.com/saguaro-go/saguaro/bench/internal/report"
)

// fanPeer is the configuration the fan-out section compares saguaro with.
const fanPeer = "sse-gosse"

// fanFailure says what went wrong in a fan-out cell, with counts.
func fanFailure(a *fanAgg) string {
	var parts []string
	if a.Expected > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d deliveries in order", a.Deliveries, a.Expected))
	}
	if a.Lost > 0 {
		parts = append(parts, fmt.Sprintf("%d lost", a.Lost))
	}
	if a.Dups > 0 {
		parts = append(parts, fmt.Sprintf("%d duplicated or out of order", a.Dups))
	}
	if a.Dropped > 0 {
		parts = append(parts, fmt.Sprintf("%d client disconnections", a.Dropped))
	}
	parts = append(parts, "first: "+a.Fail.FirstMessage())
	return strings.Join(parts, ", ")
}

func fanOK(a *fanAgg) bool { return a != nil && a.Fail.Total() == 0 && a.Deliveries > 0 }

// renderFanout writes the fan-out section of the results page.
func renderFanout(r *runResult, p func(string, ...any)) {
	counts := fanCounts(r.Opts)
	var names []string
	for _, fc := range counts {
		names = append(names, fmt.Sprintf("%d", fc.Clients))
	}
	p("## SSE fan-out\n\n")
	p("One event published to every connected client, repeatedly, at %s clients in turn. Every `sse-*` configuration runs in "+
		"its own process, started afresh for each client count, with its clients connected all along: each client is a raw "+
		"HTTP/1.1 connection of the load generator, `GET /events`, read by its own goroutine with saguaro's `sse.Reader` (the "+
		"browser's parsing rules). An event's data is `{\"seq\":N,\"ts\":T}`: the load generator asks for event N with "+
		"`POST /publish?seq=N`, and the server stamps T (its wall clock) just before the library's publish call. Every client "+
		"checks that every event arrives exactly once and in order; a configuration that loses, duplicates or reorders an event, "+
		"or drops a client, is reported FAILED with the counts. Before measuring, warm-up events are published until every client "+
		"has one, which proves every subscription is in place; then, once memory is read (below), one burst that no slice counts, so "+
		"that what a server sets up once for its working size (queues and pools filled by the first burst it absorbs) does not "+
		"fall on whichever slice comes first as a cost per delivery.\n\n", strings.Join(names, " and "))
	p("At each client count, interleaved rounds: in each, every configuration gets a paced slice and then a burst slice, in an " +
		"order that rotates from round to round. When the open-file limit does not let every configuration's clients be connected " +
		"at once, the configurations take turns in groups and reconnect for each round (the run's log says so).\n\n")
	p("- **paced**: events at a fixed rate that offers %.0f deliveries/s at every client count (%.4g events/s at %d clients). A "+
		"configuration that keeps up delivers that rate, so here the figures that tell them apart are the latency and the server "+
		"CPU per delivery.\n", counts[0].Rate*float64(counts[0].Clients), counts[0].Rate, counts[0].Clients)
	p("- **burst**: %d events published back to back (the load generator waits for each publish's answer), fewer than the "+
		"64-event queue saguaro's Hub and the bare server give each client, so no correct server drops anyone. deliveries/s = "+
		"clients × events ÷ (first publish → the last client's receipt of the last event): how fast the server empties a burst. "+
		"go-sse's `Publish` returns once its provider has taken the event, and the provider writes to every client in turn before "+
		"it takes the next one, so its publisher waits; saguaro's `Hub.Publish` only queues. Latency includes the wait in the queues.\n\n",
		counts[0].BurstEvents)
	p("deliveries/s is the median over the slices; × sse-bare and × %s are medians over rounds of the ratio to that configuration's "+
		"slice in the same round (higher is better). Latency is receipt minus T over every delivery of every slice. Server CPU "+
		"(user+sys), allocations and bytes are the server process's own, read from its probe endpoint before and after each slice, "+
		"divided by the deliveries; they include the publish requests.\n\n", fanPeer)
	p("**Memory per connected client** is what the server process holds for its idle, subscribed clients: the probe's readings " +
		"(each after two forced collections) before the clients connect and once every client has had its warm-up event, the " +
		"difference divided by the clients. RSS is the resident set (Go keeps freed memory for a while, so it also counts the " +
		"garbage of the connecting phase); heap is the live heap after collection; stacks are the goroutine stacks; neither " +
		"counts the kernel's socket buffers, the same for every configuration.\n\n")
	for _, fc := range counts {
		renderFanCount(r, p, fc)
	}
	var selfNS int64
	var n uint64
	for _, a := range r.Fanout {
		selfNS += a.SelfCPUNS
		n += a.Deliveries
	}
	if n > 0 {
		p("The load generator's own CPU per delivery (reading and checking, all its threads): %.2f µs. It shares the cores "+
			"with the server, so the burst rates are bounded by both; the server CPU columns are the server's alone.\n\n", float64(selfNS)/float64(n)/1000)
	}
}

// renderFanCount writes the tables of one client count.
func renderFanCount(r *runResult, p func(string, ...any), fc fanCount) {
	n := fc.Clients
	p("### %d clients\n\n", n)
	for _, v := range []string{fanBurst, fanPaced} {
		if v == fanBurst {
			p("#### Burst: %d events back to back, %d clients\n\n", fc.BurstEvents, n)
		} else {
			p("#### Paced: %d events at %.4g events/s, %d clients\n\n", fc.PacedEvents, fc.Rate, n)
		}
		base := r.Fanout[fanKey(configs.SSEBare, v, n)]
		peer := r.Fanout[fanKey(fanPeer, v, n)]
		p("| configuration | deliveries/s | × sse-bare | × %s | p50 | p99 | server CPU/delivery | allocs/delivery | bytes/delivery | deliveries/s per slice (min–max) | checked deliveries |\n", fanPeer)
		p("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
		for _, c := range r.Configs {
			if !c.IsSSE() {
				continue
			}
			a := r.Fanout[fanKey(c.Name, v, n)]
			if a == nil {
				reason := notRun(c)
				if e, ok := r.StartErr[c.Name]; ok {
					reason = "did not start: " + report.MDEscape(e)
				}
				if s := r.Fanout[fanKey(c.Name, fanPaced, n)]; s != nil && s.Fail.Total() > 0 && v == fanBurst {
					reason = "**FAILED**: " + report.MDEscape(fanFailure(s))
				}
				p("| %s | %s | | | | | | | | | |\n", c.Name, reason)
				continue
			}
			if a.Fail.Total() > 0 {
				p("| %s | **FAILED**: %s | | | | | | | | | |\n", c.Name, report.MDEscape(fanFailure(a)))
				continue
			}
			vsBase, vsPeer := "–", "–"
			if fanOK(base) {
				vsBase = report.FmtRatio(a.ratioTo(base))
			}
			if fanOK(peer) {
				vsPeer = report.FmtRatio(a.ratioTo(peer))
			}
			lo, hi := report.MinMax(a.SliceRate)
			p("| %s | %.0f | %s | %s | %s | %s | %.2f µs | %.2f | %s | %.0f–%.0f | %d |\n", c.Name, a.medianRate(), vsBase, vsPeer,
				report.Dur(a.Hist.Quantile(0.5)), report.Dur(a.Hist.Quantile(0.99)), a.perDelivery(float64(a.CPUNS))/1000,
				a.perDelivery(float64(a.Allocs)), report.Bytes(a.perDelivery(float64(a.Bytes))), lo, hi, a.Deliveries)
		}
		p("\n")
	}
	p("#### Memory per connected client, %d clients\n\n", n)
	p("| configuration | RSS per client | heap per client | stacks per client | goroutines per client | RSS for all clients |\n")
	p("|---|---:|---:|---:|---:|---:|\n")
	for _, c := range r.Configs {
		if !c.IsSSE() {
			continue
		}
		m := r.FanoutMem[c.Name+"@"+strconv.Itoa(n)]
		if m == nil {
			p("| %s | not measured | | | | |\n", c.Name)
			continue
		}
		p("| %s | %s | %s | %s | %.2f | %s |\n", c.Name, report.Bytes(m.RSS()), report.Bytes(m.Heap()), report.Bytes(m.Stacks()),
			m.Goroutines(), report.Bytes(m.RSS()*float64(n)))
	}
	p("\n")
	if line := fanTargets(r, n); line != "" {
		p("%s\n\n", line)
	}
}

// fanTargets compares saguaro's controller-loop configuration with go-sse
// at one client count: deliveries per second in bursts, server CPU and
// bytes per delivery, and memory per connected client.
func fanTargets(r *runResult, n int) string {
	const sagName = "sse-saguaro"
	var parts []string
	sag, peer := r.Fanout[fanKey(sagName, fanBurst, n)], r.Fanout[fanKey(fanPeer, fanBurst, n)]
	if fanOK(sag) && fanOK(peer) {
		x := sag.ratioTo(peer)
		parts = append(parts, fmt.Sprintf("in bursts `%s` delivers %s the rate of `%s` (%.0f against %.0f deliveries/s): %s",
			sagName, report.FmtRatio(x), fanPeer, sag.medianRate(), peer.medianRate(), aheadOrBehind(x >= 1)))
	}
	for _, v := range []string{fanBurst, fanPaced} {
		sag, peer := r.Fanout[fanKey(sagName, v, n)], r.Fanout[fanKey(fanPeer, v, n)]
		if !fanOK(sag) || !fanOK(peer) {
			continue
		}
		sc, pc := sag.perDelivery(float64(sag.CPUNS))/1000, peer.perDelivery(float64(peer.CPUNS))/1000
		parts = append(parts, fmt.Sprintf("%s server CPU per delivery %.2f µs against %.2f µs (%s), %s allocated per delivery",
			v, sc, pc, atOrBelow(sc <= pc), report.Bytes(sag.perDelivery(float64(sag.Bytes)))))
	}
	sm, pm := r.FanoutMem[sagName+"@"+strconv.Itoa(n)], r.FanoutMem[fanPeer+"@"+strconv.Itoa(n)]
	if sm != nil && pm != nil {
		parts = append(parts, fmt.Sprintf("memory per connected client %s RSS against %s (%s), %s of heap and stacks against %s (%s)",
			report.Bytes(sm.RSS()), report.Bytes(pm.RSS()), atOrBelow(sm.RSS() <= pm.RSS()),
			report.Bytes(sm.Heap()+sm.Stacks()), report.Bytes(pm.Heap()+pm.Stacks()), atOrBelow(sm.Heap()+sm.Stacks() <= pm.Heap()+pm.Stacks())))
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("**Against go-sse at %d clients** (saguaro's controller loops, what users write): %s.", n, strings.Join(parts, "; "))
}

func aheadOrBehind(ahead bool) string {
	if ahead {
		return "ahead of go-sse"
	}
	return "behind go-sse"
}

func atOrBelow(ok bool) string {
	if ok {
		return "at or below go-sse's"
	}
	return "above go-sse's"
}

// fanSummary is a configuration's fan-out line for the summary, at the
// first client count, with its memory per client at the last.
func fanSummary(r *runResult, name string) string {
	counts := fanCounts(r.Opts)
	n := counts[0].Clients
	b := r.Fanout[fanKey(name, fanBurst, n)]
	pc := r.Fanout[fanKey(name, fanPaced, n)]
	if !fanOK(b) || !fanOK(pc) {
		return ""
	}
	line := fmt.Sprintf("SSE fan-out to %d clients: %.0f deliveries/s in bursts", b.Clients, b.medianRate())
	var rel []string
	if base := r.Fanout[fanKey(configs.SSEBare, fanBurst, n)]; fanOK(base) {
		rel = append(rel, report.FmtRatio(b.ratioTo(base))+" sse-bare's")
	}
	if peer := r.Fanout[fanKey(fanPeer, fanBurst, n)]; fanOK(peer) && name != fanPeer {
		rel = append(rel, report.FmtRatio(b.ratioTo(peer))+" go-sse's")
	}
	if len(rel) > 0 {
		line += " (" + strings.Join(rel, ", ") + ")"
	}
	line += fmt.Sprintf(", %.2f µs of server CPU and %s allocated per delivery; p99 %s at %.4g events/s, %.2f µs of server CPU and %s allocated per delivery",
		b.perDelivery(float64(b.CPUNS))/1000, report.Bytes(b.perDelivery(float64(b.Bytes))),
		report.Dur(pc.Hist.Quantile(0.99)), counts[0].Rate, pc.perDelivery(float64(pc.CPUNS))/1000, report.Bytes(pc.perDelivery(float64(pc.Bytes))))
	last := counts[len(counts)-1].Clients
	if m := r.FanoutMem[name+"@"+strconv.Itoa(last)]; m != nil {
		line += fmt.Sprintf("; %s RSS and %s of heap and stacks per connected client at %d clients", report.Bytes(m.RSS()), report.Bytes(m.Heap()+m.Stacks()), last)
	}
	return line
}
