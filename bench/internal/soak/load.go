package soak

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// The kinds of load, as the report names them.
const (
	kindLegacyInit = "legacy initialize"
	kindLegacyCall = "legacy call"
	kindDelete     = "session DELETE"
	kindModernCall = "2026-07-28 call"
	kindProgress   = "progress stream"
	kindResume     = "GET stream resumed"
	kindFeed       = "/events fan-out"
	kindSlowBody   = "slow body"
	kindNeverRead  = "never-reading client"
)

// target is one system under load: the single process, or the cluster
// behind its balancer.
type target struct {
	name  string
	base  string // where clients go: the process, or the balancer
	token string
	apps  []*appProc
	http  *http.Client
	led   *ledger
	seq   *atomic.Int64 // unique task titles
	cfg   *Config
	pause time.Duration // between one worker's calls
}

func (t *target) mcp() *mcpClient {
	return &mcpClient{http: t.http, url: t.base + "/mcp", token: t.token}
}

// title returns a task title no other call of the run uses.
func (t *target) title() string {
	return fmt.Sprintf("soak %s %d", t.name, t.seq.Add(1))
}

// record books an answer: a success, or a failure; it returns whether the
// answer was a success. Nothing is booked once the load is over (its
// requests end cancelled).
func (t *target) record(ctx context.Context, kind string, a *answer, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	if o, failed := a.failure(kind, t.name, err); failed {
		t.led.fail(o)
		return false
	}
	t.led.success(kind, t.name)
	return true
}

func (t *target) sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// legacy runs sessions of the 2025 era one after another: initialize, a
// few tool calls (some with a progress stream, some adding tasks), then
// DELETE for half of them; the other half are abandoned, for the idle
// timeout to reap.
func (t *target) legacy(ctx context.Context) {
	c := t.mcp()
	for ctx.Err() == nil {
		s, a, err := c.initialize(ctx)
		if s == nil {
			t.record(ctx, kindLegacyInit, a, orBad(err, a))
			t.sleep(ctx, 200*time.Millisecond)
			continue
		}
		t.led.success(kindLegacyInit, t.name)
		calls := 3 + rand.IntN(6)
		gone := false
		for range calls {
			if ctx.Err() != nil {
				return
			}
			if !t.oneCall(ctx, func(name string, args map[string]any, progress bool) (*answer, error) {
				return s.tool(ctx, name, args, progress)
			}, kindLegacyCall) {
				gone = true
			}
			t.sleep(ctx, t.pause)
			if gone {
				break
			}
		}
		if !gone && rand.IntN(2) == 0 {
			a, err := s.end(ctx)
			if ctx.Err() != nil {
				return
			}
			if err == nil && a.Status == http.StatusNoContent {
				t.led.success(kindDelete, t.name)
			} else {
				t.record(ctx, kindDelete, a, err)
			}
		}
	}
}

func orBad(err error, a *answer) error {
	if err == nil && a != nil && a.Status/100 == 2 {
		return fmt.Errorf("%w: unexpected answer", errBadAnswer)
	}
	return err
}

// oneCall makes one tool call of the mix through do and books it; false
// means the session is gone (404) or the call failed.
func (t *target) oneCall(ctx context.Context, do func(string, map[string]any, bool) (*answer, error), kind string) bool {
	r := rand.IntN(100)
	switch {
	case r < 15:
		title := t.title()
		a, err := do("add_task", map[string]any{"title": title}, false)
		if t.record(ctx, kind, a, err) {
			t.led.created(t.name, title)
			return true
		}
		return false
	case r < 25:
		titles := []string{t.title(), t.title(), t.title()}
		a, err := do("import_tasks", map[string]any{"titles": titles}, true)
		if err == nil && a.Status == http.StatusOK && a.Response != nil && a.Response.Error == nil && a.Progress != len(titles) {
			err = fmt.Errorf("%w: %d progress notifications for %d tasks", errBadAnswer, a.Progress, len(titles))
		}
		if t.record(ctx, kindProgress, a, err) {
			t.led.created(t.name, titles...)
			return true
		}
		return false
	case r < 65:
		a, err := do("list_tasks", map[string]any{"done": true}, false)
		return t.record(ctx, kind, a, err)
	default:
		a, err := do("search_tasks", map[string]any{"query": "no task has this " + strconv.Itoa(r)}, false)
		return t.record(ctx, kind, a, err)
	}
}

// modern makes stateless 2026-07-28 calls of the same mix.
func (t *target) modern(ctx context.Context) {
	c := t.mcp()
	id := 0
	for ctx.Err() == nil {
		t.oneCall(ctx, func(name string, args map[string]any, progress bool) (*answer, error) {
			id++
			return c.modernCall(ctx, id, name, args, progress)
		}, kindModernCall)
		t.sleep(ctx, t.pause)
	}
}

// resume opens a session's GET stream, reads a while, drops the
// connection and comes back with Last-Event-ID, a few times per session;
// the ids must go on after the one it resumed from.
func (t *target) resume(ctx context.Context) {
	c := t.mcp()
	for ctx.Err() == nil {
		s, a, err := c.initialize(ctx)
		if s == nil {
			t.record(ctx, kindLegacyInit, a, orBad(err, a))
			t.sleep(ctx, 200*time.Millisecond)
			continue
		}
		t.led.success(kindLegacyInit, t.name)
		last := ""
		for range 4 {
			if ctx.Err() != nil {
				return
			}
			next, o, err := t.openGET(ctx, s, last)
			switch {
			case ctx.Err() != nil:
				return
			case err != nil:
				t.led.fail(o)
				t.sleep(ctx, 300*time.Millisecond)
				continue
			}
			t.led.success(kindResume, t.name)
			if next != "" {
				last = next
			}
		}
		_, _ = s.end(ctx)
	}
}

// openGET reads the session's GET stream for up to a second and returns
// the last event id it saw.
func (t *target) openGET(ctx context.Context, s *session, last string) (string, outcome, error) {
	o := outcome{Kind: kindResume, Target: t.name}
	// The answer's headers may take a while on a loaded machine; once
	// they are in, the stream is read for a second.
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodGet, s.c.url, nil)
	if err != nil {
		return "", o, err
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer "+s.c.token)
	for k, v := range s.headers() {
		req.Header.Set(k, v)
	}
	if last != "" {
		req.Header.Set("Last-Event-ID", last)
	}
	res, err := s.c.http.Do(req)
	if err != nil {
		o.Err = errClass(err)
		return "", o, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		o.Status, o.RetryAfter = res.StatusCode, res.Header.Get("Retry-After") != ""
		_, _ = io.Copy(io.Discard, res.Body)
		return "", o, fmt.Errorf("GET: %d", res.StatusCode)
	}
	readFor := time.AfterFunc(time.Second, cancel)
	defer readFor.Stop()
	seen := ""
	floor := seqOf(last)
	var bad error
	err = readStream(res.Body, func(id string, data []byte) bool {
		if id == "" || len(data) == 0 {
			return true // the priming event repeats the cursor it resumes from
		}
		if last != "" && streamOf(id) == streamOf(last) && seqOf(id) <= floor {
			bad = fmt.Errorf("%w: event %s replayed after Last-Event-ID %s", errBadAnswer, id, last)
			return false
		}
		seen = id
		return true
	})
	if bad != nil {
		o.Status, o.Err = res.StatusCode, bad.Error()
		return "", o, bad
	}
	if err != nil && rctx.Err() == nil {
		// The stream ended early: the owner died, or it was cut.
		o.Status, o.Err = res.StatusCode, errClass(err)
		return seen, o, err
	}
	return seen, o, nil
}

func streamOf(id string) string {
	i := strings.LastIndexByte(id, '-')
	if i < 0 {
		return ""
	}
	return id[:i]
}

func seqOf(id string) int64 {
	n, _ := strconv.ParseInt(id[strings.LastIndexByte(id, '-')+1:], 10, 64)
	return n
}

// feed is one /events reader: it reads everything, and on a dropped
// connection comes back with Last-Event-ID.
func (t *target) feed(ctx context.Context, events *atomic.Int64) {
	last := ""
	for ctx.Err() == nil {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, t.base+"/events", nil)
		if err != nil {
			return
		}
		req.Header.Set("Accept", "text/event-stream")
		if last != "" {
			req.Header.Set("Last-Event-ID", last)
		}
		res, err := t.http.Do(req)
		if err != nil {
			t.record(ctx, kindFeed, nil, err)
			t.sleep(ctx, 500*time.Millisecond)
			continue
		}
		if res.StatusCode != http.StatusOK {
			t.record(ctx, kindFeed, &answer{Status: res.StatusCode, RetryAfter: res.Header.Get("Retry-After") != ""}, nil)
			res.Body.Close()
			t.sleep(ctx, 500*time.Millisecond)
			continue
		}
		t.led.success(kindFeed, t.name)
		err = readStream(res.Body, func(id string, _ []byte) bool {
			if id != "" {
				last = id
			}
			events.Add(1)
			return true
		})
		res.Body.Close()
		t.record(ctx, kindFeed, &answer{Status: res.StatusCode}, err)
		t.sleep(ctx, 200*time.Millisecond)
	}
}

// slowBody sends a POST whose body trickles (a byte every two seconds of
// the 1000 it declares) straight to one process, and waits for the cut.
func (t *target) slowBody(ctx context.Context, app *appProc) {
	for ctx.Err() == nil {
		if !app.up() {
			t.sleep(ctx, time.Second)
			continue
		}
		start := time.Now()
		status, err := trickle(ctx, app.addr, t.token, t.cfg.BodyTimeout+10*time.Second)
		if ctx.Err() != nil {
			return
		}
		took := time.Since(start)
		o := outcome{Kind: kindSlowBody, Target: t.name, Status: status}
		switch {
		case errors.Is(err, syscall.ECONNREFUSED):
			t.sleep(ctx, time.Second)
			continue
		case err != nil && status == 0 && !errors.Is(err, errNotCut):
			o.Err = "connection closed"
		case err != nil:
			o.Err = err.Error()
		}
		if took > t.cfg.BodyTimeout+5*time.Second {
			o.Err = "not cut within the body timeout"
		}
		t.led.fail(o)
		t.led.cut(kindSlowBody, took)
	}
}

var errNotCut = errors.New("not cut")

// trickle writes the headers of a POST to /mcp declaring a 1000-byte body,
// then one byte every two seconds, until the server answers or closes.
func trickle(ctx context.Context, addr, token string, limit time.Duration) (int, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	_ = conn.SetDeadline(time.Now().Add(limit))
	_, err = fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"+
		"Accept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{", addr, token)
	if err != nil {
		return 0, err
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(2 * time.Second):
				if _, err := conn.Write([]byte(" ")); err != nil {
					return
				}
			}
		}
	})
	defer wg.Wait()
	defer close(done)
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return 0, errNotCut
		}
		return 0, err
	}
	res.Body.Close()
	return res.StatusCode, nil
}

// neverRead opens a stream (/events, whose first event is the whole board)
// or a call whose answer is the whole board, straight to one process, and
// never reads it; it then checks that the server cut the connection.
func (t *target) neverRead(ctx context.Context, app *appProc, events bool) {
	for ctx.Err() == nil {
		if !app.up() {
			t.sleep(ctx, time.Second)
			continue
		}
		conn, err := dialSmall(ctx, app.addr)
		if err != nil {
			t.sleep(ctx, time.Second)
			continue
		}
		if events {
			_, err = fmt.Fprintf(conn, "GET /events HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\n\r\n", app.addr)
		} else {
			body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_tasks","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
			_, err = fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"+
				"Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: list_tasks\r\n"+
				"Content-Length: %d\r\n\r\n%s", app.addr, t.token, len(body), body)
		}
		if err != nil {
			conn.Close()
			continue
		}
		start := time.Now()
		// Stay away for longer than the write timeout, then see whether
		// the server gave up: what it sent is drained, then EOF.
		t.sleep(ctx, t.cfg.WriteTimeout+5*time.Second)
		if ctx.Err() != nil {
			conn.Close()
			return
		}
		cut := drainsToEOF(conn, 5*time.Second)
		conn.Close()
		what := "still open (its writes fit the socket buffers)"
		if cut {
			what = "cut by the server"
			t.led.cut(kindNeverRead, time.Since(start))
		}
		name := "/events"
		if !events {
			name = "tools/call list_tasks"
		}
		t.led.note(kindNeverRead+" on "+name, t.name, what)
	}
}

// drainsToEOF reads what the connection holds; true when it ends (EOF or
// reset) within d.
func drainsToEOF(conn net.Conn, d time.Duration) bool {
	_ = conn.SetReadDeadline(time.Now().Add(d))
	_, err := io.Copy(io.Discard, conn)
	var ne net.Error
	return !(errors.As(err, &ne) && ne.Timeout())
}

// dialSmall dials with a 4 KiB receive buffer, set before the connection
// exists, so the window it advertises stays small and the server's writes
// block after tens of kilobytes instead of megabytes.
func dialSmall(ctx context.Context, addr string) (net.Conn, error) {
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		err := rc.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4<<10)
		})
		if err != nil {
			return err
		}
		return serr
	}}
	return d.DialContext(ctx, "tcp", addr)
}
