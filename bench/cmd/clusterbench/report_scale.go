package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/saguaro-go/saguaro/bench/internal/report"
)

// The targets of the cluster at scale.
const (
	// logBatch is mcpredis's batch of log scripts in one pipeline.
	logBatch          = 64
	longestCallTarget = 5 * time.Millisecond
	lastStreamTarget  = time.Second
	fullLogTarget     = 2048 // bytes of Redis per session, a full log of changes
)

// renderScale is the cluster-at-scale section of the results page.
func renderScale(r *runResult) string {
	if len(r.Scale) == 0 {
		return ""
	}
	o := r.Opts
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("## The cluster at scale\n\n")
	p("For each number of sessions: %d replicas (`servers/saguarocluster`, mcpredis defaults: heartbeat 1s, ChangeWindow 100ms) on a throwaway "+
		"redis-server of their own (so that its memory and CPU are this measurement's alone), the sessions opened round robin on the replicas "+
		"(each replica owns a third), then %d of them subscribed to `%s` with their GET stream open on their owner. "+
		"A list change (a tool added or removed) is made on one replica at a time (%d rounds, another replica each round, after one not measured); "+
		"the time is from the request that makes it to the arrival of `notifications/tools/list_changed` on each stream, read by the benchmark. "+
		"Meanwhile a client of its own PINGs Redis every millisecond: its worst wait is the longest Redis kept another client waiting (the longest "+
		"store call, batches included), through the change and half a second after the last stream heard it (the logs are written then). "+
		"Then the same change on every replica at once, and a burst of %d updates of `%s` on every replica at once (%d in all). "+
		"Chart: [%s](%s).\n\n",
		o.scaleReplicas, r.Scale[0].Streams, scaleURI, o.scaleRounds, o.scaleBurst, scaleURI, o.scaleBurst*o.scaleReplicas, chartName, chartName)
	p("![a list change against the number of sessions](%s)\n\n", chartName)
	p("The machine is shared and loaded: a PING also waits for the scheduler. So each round is preceded by an idle window as long as the round, "+
		"its worst PING beside; and Redis's own clock gives the longest single command of the round (SLOWLOG, commands of 200 µs or more; "+
		"a wall-clock time, so a command the scheduler preempted counts long: beside it the idle window's longest, and the longest of a second of "+
		"trivial scripts, `return 1`, in pipelines of %d: the scheduler's share) and the mean script call (INFO commandstats): a log batch is %d "+
		"of them, and what the design bounds.\n\n", logBatch, logBatch)
	p("| sessions | opened in | the last of the streams told (median, rounds) | median stream | worst PING during a change | worst PING idle, just before | longest command (Redis's clock) | mean script | Redis CPU per change | replicas' CPU per change | missed |\n")
	p("|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, s := range r.Scale {
		if len(s.Rounds) == 0 {
			p("| %d | | **failed**: %s | | | | | | |\n", s.Sessions, report.MDEscape(strings.Join(s.Fail, "; ")))
			continue
		}
		var lasts []string
		worst, idle, idleSlow, slowest, slowName, missed := time.Duration(0), time.Duration(0), time.Duration(0), time.Duration(0), "", 0
		for _, a := range s.Rounds {
			lasts = append(lasts, report.Dur(a.Last))
			worst, idle, idleSlow = max(worst, a.WorstPing), max(idle, a.IdlePing), max(idleSlow, a.IdleSlowest)
			if a.Slowest > slowest {
				slowest, slowName = a.Slowest, a.SlowestName
			}
			missed += a.Missed
		}
		slow := "< 200 µs"
		if slowest > 0 {
			slow = report.Dur(slowest) + " (" + report.MDEscape(slowName) + ")"
		}
		slow += "; idle: " + report.Dur(idleSlow) + "; a trivial script: " + report.Dur(s.Preempted)
		p("| %d | %s | **%s** (%s) | %s | **%s** | %s | %s | %s | %s | %s | %d of %d |\n", s.Sessions, s.Create.Round(100*time.Millisecond),
			report.Dur(medianOf(s.Rounds, func(a announceRound) time.Duration { return a.Last })), strings.Join(lasts, ", "),
			report.Dur(medianOf(s.Rounds, func(a announceRound) time.Duration { return a.Median })),
			report.Dur(worst), report.Dur(idle), slow, report.Dur(s.ScriptMean),
			report.Dur(medianOf(s.Rounds, func(a announceRound) time.Duration { return a.RedisCPU })),
			report.Dur(medianOf(s.Rounds, func(a announceRound) time.Duration { return a.ReplicaCPU })),
			missed, len(s.Rounds)*s.Streams)
	}
	p("\n")

	p("### Once per change, owners only\n\n")
	p("Notices each replica heard from the cluster per change the cluster sent (over the rounds, the change made on every replica, and the burst), " +
		"and Redis's PUBLISH and SPUBLISH calls per change (INFO commandstats, scripts' included). A session's own events are made on its owner and " +
		"cost no message. The change made on every replica at once: streams that heard it once, more than once, not at all.\n\n")
	p("| sessions | notices per change, per replica | (S)PUBLISH per change | one change on every replica: once | twice or more | never |\n|---:|---|---:|---:|---:|---:|\n")
	for _, s := range r.Scale {
		var per []string
		for _, n := range s.NoticesPerChange {
			per = append(per, fmt.Sprintf("%.2f", n))
		}
		p("| %d | %s | %.2f | %d | %d | %d |\n", s.Sessions, report.OrDash(strings.Join(per, ", ")), s.PublishesPerChange, s.Dedup.Heard, s.Dedup.Twice, s.Dedup.Missed)
	}
	p("\n")

	p("### A burst of updates\n\n")
	p("The burst's updates coalesce (changes of one kind wait ChangeWindow for each other, on every replica); every notice the cluster sent must " +
		"reach every stream. Worst PING: during the burst and until it settled.\n\n")
	p("| sessions | updates | made in | notices sent | each stream heard (min–max) | settled after | worst PING |\n|---:|---:|---:|---:|---|---:|---:|\n")
	for _, s := range r.Scale {
		bu := s.Burst
		verdict := "all"
		if int64(bu.MinHeard) < bu.Published || bu.Published == 0 {
			verdict = "**not all**"
		}
		p("| %d | %d | %s | %d | %d–%d (%s) | %s | %s |\n", s.Sessions, bu.Updates, report.Dur(bu.Took), bu.Published, bu.MinHeard, bu.MaxHeard, verdict,
			report.Dur(bu.Settled), report.Dur(bu.WorstPing))
	}
	p("\n")

	p("### Memory\n\n")
	p("Redis, per session: its record with an empty log (INFO used_memory's growth over the sessions, and MEMORY USAGE of sampled records); " +
		"replicas' live heap per session after a collection.\n\n")
	p("| sessions | Redis per session (used_memory) | a record (MEMORY USAGE) | replicas' heap per session |\n|---:|---:|---:|---:|\n")
	for _, s := range r.Scale {
		p("| %d | %.0f B | %.0f B | %.1f KiB |\n", s.Sessions, s.MemRecord, s.MemRecordKey, s.HeapPerSession/1024)
	}
	p("\n")
	if lg := r.Log; lg != nil {
		if lg.Fail != "" {
			p("A full log: **failed**: %s\n\n", report.MDEscape(lg.Fail))
		} else {
			p("A full log: %d sessions on one replica (ChangeWindow none), each with its GET stream open and subscribed, and %d updates spaced 25 ms "+
				"apart, each its own notice (more than the %d events a log keeps). MEMORY USAGE (every element counted) of a record: %.0f B; of its full log: "+
				"**%.0f B**; so **%.0f B** per session with a full log of changes (target ≤ %d B); used_memory grew %.0f B per session. "+
				"Redis CPU per logged event (the change's own scripts included): %s.\n\n",
				lg.Sessions, lg.Changes, 128, lg.MemRecord, lg.MemLog, lg.MemRecord+lg.MemLog, fullLogTarget, lg.MemPerSession, report.Dur(lg.AppendCPU))
		}
	}
	if sm := r.Sim; sm != nil {
		in := sm.In
		p("### Beyond two cores: the model\n\n")
		p("Inputs, from this run: latency at %d sessions %s (ChangeWindow 100 ms included), plus %s per session per replica beyond it; "+
			"a replica's CPU per session a change reaches %s; Redis CPU per change %s, plus %s per session log entry; a record %.0f B, a full log %.0f B; "+
			"%.1f KiB of heap per session; the worst PING during a change at %d sessions %s. Projection: latency = fixed + sessions per replica × per "+
			"session; Redis CPU = per change + sessions with a stream × per entry, the entries spread over the shards by session; the longest store call "+
			"is one batch of %d log scripts at the larger of the per-entry cost and the mean script time measured at the most sessions.\n\n",
			r.Scale[0].Sessions, report.Dur(in.TFixed), report.Dur(in.TDeliver), report.Dur(in.CDeliver), report.Dur(in.CFixed), report.Dur(in.CAppend),
			in.MemRecord, in.MemLog, in.HeapSession/1024, in.SessionsSeen, report.Dur(in.WorstPing), logBatch)
		p("| sessions | replicas | Redis shards | with a stream | last stream told | measured | CPU per replica per change | Redis CPU per change (per shard) | longest store call | Redis memory | heap per replica |\n")
		p("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
		for _, row := range sm.Rows {
			measured := "model"
			if row.Measured != nil {
				measured = report.Dur(*row.Measured)
			}
			p("| %d | %d | %d | %.0f%% | %s | %s | %s | %s (%s) | %s | %s | %s |\n", row.Sessions, row.Replicas, row.Shards, row.Streams*100,
				report.Dur(row.Latency), measured, report.Dur(row.ReplicaCPU), report.Dur(row.RedisCPU), report.Dur(row.RedisPerShard),
				report.Dur(row.LongestCall), bytesStr(row.Memory), bytesStr(row.HeapPerReplica))
		}
		p("\n")
	}
	return b.String()
}

// scaleSummary is the summary's lines about the cluster at scale.
func scaleSummary(r *runResult) []string {
	var out []string
	for _, s := range r.Scale {
		if len(s.Rounds) == 0 {
			out = append(out, fmt.Sprintf("At %d sessions: **failed** (%s).", s.Sessions, report.MDEscape(strings.Join(s.Fail, "; "))))
			continue
		}
		worst, idle, slowest, missed := time.Duration(0), time.Duration(0), time.Duration(0), 0
		for _, a := range s.Rounds {
			worst, idle, slowest = max(worst, a.WorstPing), max(idle, a.IdlePing), max(slowest, a.Slowest)
			missed += a.Missed
		}
		// The longest store call: a batch of scripts, by Redis's clock;
		// a single command seen longer is the scheduler's when a trivial
		// script was seen as long.
		call := logBatch * s.ScriptMean
		last := time.Duration(0)
		for _, a := range s.Rounds {
			last = max(last, a.Last)
		}
		out = append(out, fmt.Sprintf("At %d sessions over %d replicas: the last of %d open GET streams heard a list change **%s** after it was made "+
			"(median; worst round %s; target ≤ %s: %s); the longest store call **%s** by Redis's clock (a log batch: %d "+
			"scripts of %s each; target ≤ %s: %s; the longest single command seen %s, and a trivial script %s: the scheduler's); a concurrent PING's worst wait %s during a change, %s in an idle window just before (the machine's "+
			"scheduler); streams that missed a change: %d; a change made on every replica heard once by %d of %d streams, twice by %d; a burst of %d "+
			"updates: %d notices, every stream heard %d–%d.",
			s.Sessions, s.Replicas, s.Streams, report.Dur(medianOf(s.Rounds, func(a announceRound) time.Duration { return a.Last })), report.Dur(last),
			report.Dur(lastStreamTarget), verdict(last <= lastStreamTarget), report.Dur(call), logBatch, report.Dur(s.ScriptMean), report.Dur(longestCallTarget),
			verdict(call <= longestCallTarget), report.Dur(slowest), report.Dur(s.Preempted), report.Dur(worst), report.Dur(idle),
			missed, s.Dedup.Heard, s.Streams, s.Dedup.Twice, s.Burst.Updates, s.Burst.Published, s.Burst.MinHeard, s.Burst.MaxHeard))
	}
	if lg := r.Log; lg != nil && lg.Fail == "" {
		out = append(out, fmt.Sprintf("Redis per session with a full log of changes: **%.0f B** (a record %.0f B + its log %.0f B; target ≤ %d B: %s).",
			lg.MemRecord+lg.MemLog, lg.MemRecord, lg.MemLog, fullLogTarget, verdict(lg.MemRecord+lg.MemLog <= fullLogTarget)))
	}
	return out
}

func verdict(ok bool) string {
	if ok {
		return "**met**"
	}
	return "**missed**"
}

func bytesStr(b float64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.1f GiB", b/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.0f MiB", b/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.0f KiB", b/(1<<10))
	}
	return fmt.Sprintf("%.0f B", b)
}
