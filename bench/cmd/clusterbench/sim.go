package main

import (
	"slices"
	"time"
)

// The cluster beyond what two cores hold: a model whose inputs are this
// run's measurements.
//
// A list change reaches every initialized session. Its cost:
//   - on each replica, one append to each session it runs (CPU cDeliver
//     per session), the last stream told when the replica is through:
//     latency ≈ tFixed + sessions per replica × tDeliver;
//   - on Redis, a few scripts on the {c} shard (cFixed), and one log
//     script per session with a GET stream (cAppend), in pipelined batches
//     of logBatch, spread over the shards by session;
//   - memory: a record per session, and a log per session with a GET
//     stream.

// simInputs are the measured constants.
type simInputs struct {
	Window       time.Duration // mcpredis's default ChangeWindow, in every latency
	TFixed       time.Duration // latency at the fewest sessions measured
	TDeliver     time.Duration // latency per session per replica, beyond that
	CDeliver     time.Duration // replica CPU per session a change reaches
	CFixed       time.Duration // Redis CPU per change, logs aside
	CAppend      time.Duration // Redis CPU per session log entry
	ScriptMean   time.Duration // a script's mean time at the most sessions
	MemRecord    float64       // bytes
	MemLog       float64       // bytes, a full log of changes
	HeapSession  float64       // bytes of a replica's heap per session
	WorstPing    time.Duration // the worst PING during a change, at the most sessions
	BasedOn      string        // which measurements
	SessionsSeen int
}

// simRow is one projected configuration.
type simRow struct {
	Sessions, Replicas, Shards int
	Streams                    float64 // the share of sessions with a GET stream
	Latency                    time.Duration
	ReplicaCPU                 time.Duration // per replica, per change
	RedisCPU                   time.Duration // the cluster's, per change
	RedisPerShard              time.Duration
	Memory                     float64 // bytes of Redis, the cluster's
	HeapPerReplica             float64
	LongestCall                time.Duration // a log batch
	Measured                   *time.Duration
}

type simResult struct {
	In   simInputs
	Rows []simRow
}

// simulate derives the inputs from the runs (nil when there are too few)
// and projects the configurations.
func simulate(runs []*scaleResult, lg *logResult) *simResult {
	var ok []*scaleResult
	for _, r := range runs {
		if len(r.Rounds) > 0 {
			ok = append(ok, r)
		}
	}
	if len(ok) == 0 || lg == nil || lg.Fail != "" {
		return nil
	}
	lo, hi := ok[0], ok[len(ok)-1]
	in := simInputs{Window: 100 * time.Millisecond, MemRecord: lg.MemRecord, MemLog: lg.MemLog, CAppend: lg.AppendCPU,
		HeapSession: hi.HeapPerSession, SessionsSeen: hi.Sessions, ScriptMean: hi.ScriptMean}
	in.TFixed = medianOf(lo.Rounds, func(a announceRound) time.Duration { return a.Last })
	if hi != lo {
		per := float64(hi.Sessions-lo.Sessions) / float64(hi.Replicas)
		d := medianOf(hi.Rounds, func(a announceRound) time.Duration { return a.Last }) - in.TFixed
		in.TDeliver = time.Duration(float64(max(d, 0)) / per)
	}
	in.CDeliver = time.Duration(float64(medianOf(hi.Rounds, func(a announceRound) time.Duration { return a.ReplicaCPU })) / float64(hi.Sessions))
	in.CFixed = max(0, medianOf(hi.Rounds, func(a announceRound) time.Duration { return a.RedisCPU })-time.Duration(hi.Streams)*in.CAppend)
	for _, a := range hi.Rounds {
		in.WorstPing = max(in.WorstPing, a.WorstPing)
	}
	s := &simResult{In: in}
	row := func(n, reps, shards int, streams float64, measured *time.Duration) simRow {
		perRep := float64(n) / float64(reps)
		logged := streams * float64(n)
		r := simRow{Sessions: n, Replicas: reps, Shards: shards, Streams: streams, Measured: measured,
			Latency:        in.TFixed + time.Duration(perRep*float64(in.TDeliver)),
			ReplicaCPU:     time.Duration(perRep * float64(in.CDeliver)),
			RedisCPU:       in.CFixed + time.Duration(logged*float64(in.CAppend)),
			Memory:         float64(n)*in.MemRecord + logged*in.MemLog,
			HeapPerReplica: perRep * in.HeapSession,
			LongestCall:    time.Duration(min(logged, logBatch) * float64(max(in.CAppend, in.ScriptMean))),
		}
		r.RedisPerShard = time.Duration(float64(r.RedisCPU-in.CFixed)/float64(shards)) + in.CFixed
		return r
	}
	for _, r := range ok {
		m := medianOf(r.Rounds, func(a announceRound) time.Duration { return a.Last })
		s.Rows = append(s.Rows, row(r.Sessions, r.Replicas, 1, float64(r.Streams)/float64(r.Sessions), &m))
	}
	for _, c := range []struct {
		n, reps, shards int
		streams         float64
	}{
		{100_000, 20, 3, 1}, {1_000_000, 50, 6, 0.01}, {1_000_000, 50, 6, 0.1}, {1_000_000, 50, 6, 1},
	} {
		s.Rows = append(s.Rows, row(c.n, c.reps, c.shards, c.streams, nil))
	}
	return s
}

func medianOf(rounds []announceRound, f func(announceRound) time.Duration) time.Duration {
	if len(rounds) == 0 {
		return 0
	}
	xs := make([]time.Duration, len(rounds))
	for i, a := range rounds {
		xs[i] = f(a)
	}
	slices.Sort(xs)
	return xs[len(xs)/2]
}
