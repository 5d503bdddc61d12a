package controller

import (
	"net/http"
	"sync"
	"time"
)

// headLinger is how long the head writer waits for more work before it
// ends: long enough to stay up through a burst of connections, short enough
// that a server at rest holds no goroutine for it.
const headLinger = 100 * time.Millisecond

// heads writes the response heads of a handler's loop replies (the status,
// the headers, the first flush) on a goroutine of their own, one at a time,
// while the connection's goroutine waits.
//
// The reason is memory. net/http's header writer needs more stack than a
// connection's goroutine otherwise uses: run there, it doubles that
// goroutine's stack, 4 KiB to 8 KiB, for the whole life of a stream, and
// goroutine stacks never shrink back while the stream is idle. Run on
// short-lived helpers, one per stream, it makes the runtime's estimate of
// how large new goroutines' stacks should start (the average it sees at
// each collection) grow, and other goroutines then start larger. One
// goroutine that writes heads while there are heads to write, and ends
// when there are none, costs neither. The pushes and flushes that follow
// fit in the smaller stack.
//
// A head is written into a fresh connection's empty send buffer, so the
// writer never waits on a client; only HTTP/1 heads go through it (HTTP/2
// writes frames through its connection, which may be busy).
type heads struct {
	mu      sync.Mutex
	queue   []*headJob // queue[next:] wait to be written
	next    int
	running bool
	kick    chan struct{} // wakes a lingering writer; made with the first writer
}

// headJob is one response head and its outcome. The connection's
// goroutine waits for it on done, a WaitGroup rather than a channel, and
// jobs are reused (headJobs): a head costs no allocation that outlives
// it, so a burst of connecting streams leaves no garbage behind in the
// size classes its long-lived objects use.
type headJob struct {
	c      *Request
	status int
	header http.Header
	err    error
	panic  any // a panic while writing, re-raised on the connection's goroutine
	done   sync.WaitGroup
}

var headJobs = sync.Pool{New: func() any { return new(headJob) }}

// write writes the head of c's response and flushes it, on the writer
// goroutine for HTTP/1, and returns the flush's error. A panic while
// writing is raised again here.
func (h *heads) write(c *Request, status int, header http.Header) error {
	if c.Request.ProtoMajor != 1 {
		c.writeHead(status, header)
		return c.write(nil)
	}
	j := headJobs.Get().(*headJob)
	j.c, j.status, j.header = c, status, header
	j.done.Add(1)
	h.mu.Lock()
	h.queue = append(h.queue, j)
	if !h.running {
		h.running = true
		if h.kick == nil {
			h.kick = make(chan struct{}, 1)
		}
		go h.run(h.kick)
	} else {
		signal(h.kick)
	}
	h.mu.Unlock()
	j.done.Wait()
	err, p := j.err, j.panic
	j.c, j.status, j.header, j.err, j.panic = nil, 0, nil, nil, nil
	headJobs.Put(j)
	if p != nil {
		panic(p)
	}
	return err
}

// run writes queued heads until none has come for headLinger.
func (h *heads) run(kick chan struct{}) {
	var idle *time.Timer
	for {
		h.mu.Lock()
		if h.next == len(h.queue) {
			h.mu.Unlock()
			if idle == nil {
				idle = time.NewTimer(headLinger)
			} else {
				idle.Reset(headLinger)
			}
			select {
			case <-kick:
				continue
			case <-idle.C:
			}
			h.mu.Lock()
			if h.next == len(h.queue) {
				h.running = false
				h.queue, h.next = nil, 0 // a burst's backing array goes too
				h.mu.Unlock()
				return
			}
		}
		j := h.queue[h.next]
		h.queue[h.next] = nil
		if h.next++; h.next == len(h.queue) {
			h.queue, h.next = h.queue[:0], 0 // the next heads reuse the array
		}
		h.mu.Unlock()
		j.run()
	}
}

func (j *headJob) run() {
	defer j.done.Done()
	defer func() { j.panic = recover() }()
	j.c.writeHead(j.status, j.header)
	j.err = j.c.write(nil)
}
