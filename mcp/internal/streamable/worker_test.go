package streamable

import (
	"testing"
)

// chanJob signals done when it runs.
type chanJob struct{ done chan struct{} }

func (j *chanJob) run() { j.done <- struct{}{} }

// BenchmarkWorkerHandOff measures handing a call to an idle worker and
// waiting for it, the hop of a session's streaming call.
func BenchmarkWorkerHandOff(b *testing.B) {
	p := workerPool{work: make(chan job)}
	j := &chanJob{done: make(chan struct{}, 1)}
	b.ReportAllocs()
	for b.Loop() {
		p.run(j)
		<-j.done
	}
}
