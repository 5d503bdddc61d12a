package main

import (
	"fmt"
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
	o := r.Opts
	p("## SSE fan-out\n\n")
	p("One event published to %d connected clients, repeatedly. Every `sse-*` configuration runs in its own process for the whole "+
		"workload, with its %d clients connected all along: each client is a raw HTTP/1.1 connection of the load generator, "+
		"`GET /events`, read by its own goroutine with saguaro's `sse.Reader` (the browser's parsing rules). An event's data is "+
		"`{\"seq\":N,\"ts\":T}`: the load generator asks for event N with `POST /publish?seq=N`, and the server stamps T "+
		"(its wall clock) just before the library's publish call. Every client checks that every event arrives exactly once and in "+
		"order; a configuration that loses, duplicates or reorders an event, or drops a client, is reported FAILED with the counts. "+
		"Before measuring, warm-up events are published until every client has one, which proves every subscription is in place.\n\n",
		o.fanClients, o.fanClients)
	p("%d interleaved rounds; in each, every configuration gets a paced slice and then a burst slice, in an order that rotates "+
		"from round to round.\n\n", o.fanRounds)
	p("- **paced**: %d events at %.0f events/s, that is %.0f deliveries/s offered. A configuration that keeps up delivers "+
		"that rate, so here the figures that tell them apart are the latency and the server CPU per delivery.\n", o.fanPacedEvents, o.fanRate,
		o.fanRate*float64(o.fanClients))
	p("- **burst**: %d events published back to back (the load generator waits for each publish's answer), fewer than the "+
		"64-event queue saguaro's Hub and the bare server give each client, so no correct server drops anyone. deliveries/s = "+
		"clients × events ÷ (first publish → the last client's receipt of the last event): how fast the server empties a burst. "+
		"go-sse's `Publish` returns once its provider has taken the event, and the provider writes to every client in turn before "+
		"it takes the next one, so its publisher waits; saguaro's `Hub.Publish` only queues. Latency includes the wait in the queues.\n\n",
		o.fanBurstEvents)
	p("deliveries/s is the median over the slices; × sse-bare and × %s are medians over rounds of the ratio to that configuration's "+
		"slice in the same round (higher is better). Latency is receipt minus T over every delivery of every slice. Server CPU "+
		"(user+sys), allocations and bytes are the server process's own, read from its probe endpoint before and after each slice, "+
		"divided by the deliveries; they include the publish requests.\n\n", fanPeer)
	for _, v := range []string{fanBurst, fanPaced} {
		if v == fanBurst {
			p("### Burst: %d events back to back\n\n", o.fanBurstEvents)
		} else {
			p("### Paced: %.0f events/s\n\n", o.fanRate)
		}
		base := r.Fanout[configs.SSEBare+"@"+v]
		peer := r.Fanout[fanPeer+"@"+v]
		p("| configuration | deliveries/s | × sse-bare | × %s | p50 | p99 | server CPU/delivery | allocs/delivery | bytes/delivery | deliveries/s per slice (min–max) | checked deliveries |\n", fanPeer)
		p("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
		for _, c := range r.Configs {
			if !c.IsSSE() {
				continue
			}
			a := r.Fanout[c.Name+"@"+v]
			if a == nil {
				reason := notRun(c)
				if e, ok := r.StartErr[c.Name]; ok {
					reason = "did not start: " + report.MDEscape(e)
				}
				if s := r.Fanout[c.Name+"@"+fanPaced]; s != nil && s.Fail.Total() > 0 && v == fanBurst {
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
	if line := fanVerdict(r); line != "" {
		p("%s\n\n", line)
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

// fanVerdict compares saguaro's controller-loop configuration with go-sse
// in bursts, the target.
func fanVerdict(r *runResult) string {
	sag := r.Fanout["sse-saguaro@"+fanBurst]
	peer := r.Fanout[fanPeer+"@"+fanBurst]
	if !fanOK(sag) || !fanOK(peer) {
		return ""
	}
	x := sag.ratioTo(peer)
	word := "ahead of"
	if x < 1 {
		word = "behind"
	}
	return fmt.Sprintf("**Target (issue 8): saguaro ahead of go-sse in events delivered per second.** In bursts, `sse-saguaro` "+
		"delivers %s the rate of `%s` (median over rounds of the same-round ratio; %.0f against %.0f deliveries/s): %s go-sse.",
		report.FmtRatio(x), fanPeer, sag.medianRate(), peer.medianRate(), word)
}

// fanSummary is a configuration's fan-out line for the summary.
func fanSummary(r *runResult, name string) string {
	b := r.Fanout[name+"@"+fanBurst]
	pc := r.Fanout[name+"@"+fanPaced]
	if !fanOK(b) || !fanOK(pc) {
		return ""
	}
	line := fmt.Sprintf("SSE fan-out to %d clients: %.0f deliveries/s in bursts", b.Clients, b.medianRate())
	var rel []string
	if base := r.Fanout[configs.SSEBare+"@"+fanBurst]; fanOK(base) {
		rel = append(rel, report.FmtRatio(b.ratioTo(base))+" sse-bare's")
	}
	if peer := r.Fanout[fanPeer+"@"+fanBurst]; fanOK(peer) && name != fanPeer {
		rel = append(rel, report.FmtRatio(b.ratioTo(peer))+" go-sse's")
	}
	if len(rel) > 0 {
		line += " (" + strings.Join(rel, ", ") + ")"
	}
	return line + fmt.Sprintf(", p99 %s at %.0f events/s, %.2f µs of server CPU and %s allocated per delivery",
		report.Dur(pc.Hist.Quantile(0.99)), r.Opts.fanRate, pc.perDelivery(float64(pc.CPUNS))/1000, report.Bytes(pc.perDelivery(float64(pc.Bytes))))
}
