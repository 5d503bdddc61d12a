package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/saguaro-go/saguaro/bench/internal/configs"
	"github.com/saguaro-go/saguaro/bench/internal/payload"
	"github.com/saguaro-go/saguaro/bench/internal/report"
)

// The targets the payload section judges saguaro's configurations by, at
// sizes of at least payloadTargetKiB: server CPU per call at most
// payloadCPUTarget times the bare encoding/json handler's, and bytes
// allocated per call at most payloadBytesTarget times the payload (the
// request and response bodies).
const (
	payloadTargetKiB   = 16
	payloadCPUTarget   = 0.5
	payloadBytesTarget = 1.5
)

func payloadKindTitle(kind string) string {
	if kind == payloadRead {
		return "resources/read"
	}
	return "tools/call echo"
}

// payloadSettings is the payload workload's line of the settings list.
func payloadSettings(o *options) string {
	p := o.payload
	return fmt.Sprintf("text of %s KiB, tools/call echo and resources/read, %d round%s × %s connection%s × one slice per configuration, each slice %v warm-up + %v measured (then the calls in flight end); per-request timeout %v",
		report.JoinInts(p.sizes), p.rounds, report.Plural(p.rounds), report.JoinInts(p.conns), report.Plural(p.conns[len(p.conns)-1]), p.warmup, p.slice, p.timeout)
}

// payloadFailures are a configuration's failed payload cells, for the
// status column.
func payloadFailures(r *runResult, name string) []string {
	var out []string
	for _, kib := range r.Opts.payload.sizes {
		for _, kind := range payloadKinds {
			for _, conns := range r.Opts.payload.conns {
				if a := r.Payload[payloadKey(name, kind, kib, conns)]; a != nil && a.Fail.Total() > 0 {
					out = append(out, fmt.Sprintf("payload %s %d KiB c=%d: %d of %d calls wrong, first: %s", payloadKindTitle(kind), kib, conns,
						a.Fail.Total(), uint64(a.Fail.Total())+a.OK, a.Fail.FirstMessage()))
				}
			}
		}
	}
	return out
}

// payloadCell is what a table row and a target line need of one cell.
type payloadCell struct {
	a          *payloadAgg
	cpu        float64 // ns per call
	bytes      float64 // allocated per call
	in, out    float64 // body bytes per call
	cpuRatio   float64 // to bare's CPU per call, 0 when unknown
	bytesRatio float64 // to in + out
}

// payloadFigures are the figures of one cell, nil when it did not run or
// failed (the caller tells which by r.Payload).
func payloadFigures(r *runResult, name, kind string, kib, conns int) *payloadCell {
	a := r.Payload[payloadKey(name, kind, kib, conns)]
	if a == nil || a.Fail.Total() > 0 || a.OK == 0 {
		return nil
	}
	c := &payloadCell{a: a, cpu: a.perReq(float64(a.CPUNS)), bytes: a.perReq(float64(a.Bytes))}
	c.in, c.out = a.bodies()
	if c.in+c.out > 0 {
		c.bytesRatio = c.bytes / (c.in + c.out)
	}
	if b := r.Payload[payloadKey(configs.Bare, kind, kib, conns)]; b != nil && b.Fail.Total() == 0 && b.OK > 0 && b.CPUNS > 0 {
		c.cpuRatio = c.cpu / b.perReq(float64(b.CPUNS))
	}
	return c
}

// payloadVerdict says whether one saguaro cell meets the targets.
func payloadVerdict(r *runResult, name, kind string, kib, conns int) string {
	c := payloadFigures(r, name, kind, kib, conns)
	if c == nil {
		if a := r.Payload[payloadKey(name, kind, kib, conns)]; a != nil && a.Fail.Total() > 0 {
			return fmt.Sprintf("`%s` **FAILED**", name)
		}
		return fmt.Sprintf("`%s` not run", name)
	}
	figures := fmt.Sprintf("%s bare's CPU, %s the payload allocated", report.FmtRatio(c.cpuRatio), report.FmtRatio(c.bytesRatio))
	if kib < payloadTargetKiB {
		return fmt.Sprintf("`%s` %s", name, figures)
	}
	var missed []string
	if c.cpuRatio <= 0 || c.cpuRatio > payloadCPUTarget {
		missed = append(missed, "CPU")
	}
	if c.bytesRatio <= 0 || c.bytesRatio > payloadBytesTarget {
		missed = append(missed, "bytes")
	}
	if len(missed) == 0 {
		return fmt.Sprintf("`%s` meets both (%s)", name, figures)
	}
	return fmt.Sprintf("`%s` **misses %s** (%s)", name, strings.Join(missed, " and "), figures)
}

// renderPayload writes the payload section of the results page.
func renderPayload(r *runResult, p func(string, ...any)) {
	o := r.Opts.payload
	p("## Payloads: big text in and out\n\n")
	p("MCP traffic is dominated by big text: file contents as tool arguments, long tool outputs, resources/read of documents. "+
		"At each size (%s KiB), every configuration gets interleaved slices of two kinds of call: **tools/call echo** with a text of "+
		"that size, which the tool returns as one text block, and **resources/read** of a document of that size "+
		"(`bench://doc/<KiB>`, media type `%s`), which each server registers as a static resource the way its library's "+
		"documentation does; bare decodes the request and encodes the echoed text, or the read's result, with encoding/json on "+
		"every request. The text is source code (package `internal/payload`, shared by the load generator and the servers): tabs, "+
		"newlines, quotes, backslashes, `<`, `&`, and non-ASCII letters of two, three and four bytes, the same in every process. "+
		"An echo's text is a %d-byte head line naming the request, then the same body, so every text is distinct; the load "+
		"generator JSON-encodes it with encoding/json (HTML characters as they are, as JSON.stringify writes them). Every answer "+
		"is checked in full: HTTP 200, a JSON-RPC result for the request's id, the echoed text equal to the text sent, or one "+
		"contents entry with the document's URI, media type and text; for the 2026-07-28 configuration also "+
		"`resultType: \"complete\"`. Stateful configurations initialize each connection's session first.\n\n",
		report.JoinInts(o.sizes), payload.MIMEType, payload.HeadLen)
	p("%d interleaved round%s; in each, for each size and kind, every configuration gets one slice at %s connection%s "+
		"(%v warm-up, %v measured), in an order that rotates from round to round. 16 connections, as in the tools/call "+
		"summary, keep both cores busy, which is where CPU per call decides the rate; the figures per call do move with the "+
		"concurrency (at 1 connection every server spends more CPU per call, and bare allocates less, its encoder's pooled "+
		"buffers being reused), so `-payload-conns 1,16` measures both when that matters, at twice the time. Server CPU (user+sys), allocations and bytes are the server process's own, "+
		"read from its probe endpoint with no call in flight: at the end of the warm-up every connection finishes its call and "+
		"waits, the probe is read, all start again, and when the measured time is up every connection finishes its call before "+
		"the probe is read again; the differences are divided by the calls made in between, all checked. (Calls of 256 KiB take "+
		"long next to a slice, so reading the probe while calls are in flight would count some calls' work without the calls.) "+
		"req/s is those calls over that time, the median over the slices. **in + out** is the payload: the mean size of a call's "+
		"request body plus its response body, the JSON on the wire without HTTP headers, as each configuration was sent and "+
		"answered (encoding/json writes `<` as `\\u003c`, so bare's answers are a little longer). **bytes / payload** is bytes "+
		"allocated per call ÷ in + out. × bare: req/s as the median over rounds of the ratio to bare's slice in the same round "+
		"(higher is better); server CPU as the ratio of CPU per call (lower is better).\n\n",
		o.rounds, report.Plural(o.rounds), report.JoinInts(o.conns), report.Plural(o.conns[len(o.conns)-1]), o.warmup, o.slice)

	var saguaros []string
	for _, c := range r.Configs {
		if c.Library == "saguaro" && !c.IsSSE() && !isPending(c) && c.Runs("payload") {
			saguaros = append(saguaros, c.Name)
		}
	}
	p("### Targets\n\n")
	p("At %d KiB and more, saguaro's server CPU per call at most %.1f× the bare encoding/json handler's, and bytes allocated "+
		"per call at most %.1f× the payload (in + out), for each kind and each saguaro configuration:\n\n",
		payloadTargetKiB, payloadCPUTarget, payloadBytesTarget)
	for _, kib := range o.sizes {
		for _, conns := range o.conns {
			var kinds []string
			for _, kind := range payloadKinds {
				var vs []string
				for _, name := range saguaros {
					vs = append(vs, payloadVerdict(r, name, kind, kib, conns))
				}
				kinds = append(kinds, payloadKindTitle(kind)+": "+strings.Join(vs, ", "))
			}
			note := ""
			if kib < payloadTargetKiB {
				note = " (no target at this size; for reference)"
			}
			p("- **%d KiB**, %d connection%s%s: %s.\n", kib, conns, report.Plural(conns), note, strings.Join(kinds, "; "))
		}
	}
	p("\n")

	for _, kind := range payloadKinds {
		p("### %s\n\n", payloadKindTitle(kind))
		for _, kib := range o.sizes {
			for _, conns := range o.conns {
				renderPayloadTable(r, p, kind, kib, conns)
			}
		}
	}
	var parts []string
	for _, kib := range o.sizes {
		var ns int64
		var ok uint64
		for _, c := range r.Configs {
			for _, kind := range payloadKinds {
				for _, conns := range o.conns {
					if a := r.Payload[payloadKey(c.Name, kind, kib, conns)]; a != nil {
						ns += a.SelfCPUNS
						ok += a.OK
					}
				}
			}
		}
		if ok > 0 {
			parts = append(parts, fmt.Sprintf("%s at %d KiB", report.Dur(durNS(float64(ns)/float64(ok))), kib))
		}
	}
	if len(parts) > 0 {
		p("The load generator's own CPU per checked call (building the request, decoding and comparing the answer in full): %s. "+
			"It shares the cores with the servers, so it bounds the rates at the larger sizes; the server CPU and bytes columns "+
			"are the servers' own.\n\n", strings.Join(parts, ", "))
	}
}

func renderPayloadTable(r *runResult, p func(string, ...any), kind string, kib, conns int) {
	p("#### %s, %d KiB, %d connection%s\n\n", payloadKindTitle(kind), kib, conns, report.Plural(conns))
	p("| configuration | req/s | × bare | p50 | p99 | server CPU/call | × bare | allocs/call | bytes/call | in + out | bytes / payload | checked OK |\n")
	p("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	base := r.Payload[payloadKey(configs.Bare, kind, kib, conns)]
	for _, c := range r.Configs {
		if c.IsSSE() || !c.Runs("payload") {
			continue
		}
		a := r.Payload[payloadKey(c.Name, kind, kib, conns)]
		if a == nil {
			p("| %s | %s | | | | | | | | | | |\n", c.Name, notRun(c))
			continue
		}
		if f := a.Fail.Total(); f > 0 {
			p("| %s | **FAILED**: %d of %d calls wrong, first: %s | | | | | | | | | | |\n", c.Name, f, uint64(f)+a.OK,
				report.MDEscape(a.Fail.Summary()))
			continue
		}
		cell := payloadFigures(r, c.Name, kind, kib, conns)
		if cell == nil {
			p("| %s | no call completed | | | | | | | | | | |\n", c.Name)
			continue
		}
		rate := "–"
		if base != nil && base.Fail.Total() == 0 {
			rate = report.FmtRatio(a.ratioTo(&base.tpAgg))
		}
		p("| %s | %.0f | %s | %s | %s | %s | %s | %.0f | %s | %s | %s | %d |\n", c.Name, a.medianRPS(), rate,
			report.Dur(a.Hist.Quantile(0.5)), report.Dur(a.Hist.Quantile(0.99)), report.Dur(durNS(cell.cpu)), report.FmtRatio(cell.cpuRatio),
			a.perReq(float64(a.Allocs)), report.Bytes(cell.bytes), report.Bytes(cell.in+cell.out), report.FmtRatio(cell.bytesRatio), a.OK)
	}
	p("\n")
}

// payloadSummary is a configuration's payload figures for the summary:
// both kinds at the largest size, at the last concurrency.
func payloadSummary(r *runResult, name string) string {
	o := r.Opts.payload
	if len(r.Payload) == 0 || len(o.sizes) == 0 {
		return ""
	}
	kib, conns := o.sizes[0], o.conns[len(o.conns)-1]
	for _, s := range o.sizes {
		kib = max(kib, s)
	}
	var parts []string
	for _, kind := range payloadKinds {
		c := payloadFigures(r, name, kind, kib, conns)
		if c == nil {
			continue
		}
		cpu := ""
		if name != configs.Bare {
			cpu = fmt.Sprintf(", %s bare's", report.FmtRatio(c.cpuRatio))
		}
		parts = append(parts, fmt.Sprintf("%s %s of CPU per call%s, %s the payload allocated", payloadKindTitle(kind),
			report.Dur(durNS(c.cpu)), cpu, report.FmtRatio(c.bytesRatio)))
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("%d KiB payloads at %d connections: %s", kib, conns, strings.Join(parts, "; "))
}

// durNS is a duration of ns nanoseconds, for report.Dur.
func durNS(ns float64) time.Duration { return time.Duration(ns) }
