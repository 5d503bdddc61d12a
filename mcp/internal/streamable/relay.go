package streamable

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/textproto"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/saguaro-go/saguaro/controller"
	"github.com/saguaro-go/saguaro/mcp/cluster"
	"github.com/saguaro-go/saguaro/mcp/internal/protocol"
	"github.com/saguaro-go/saguaro/mcp/internal/wire"
)

// relayHeader marks a request one replica relays to the owner of its
// session, with the owner's replica id. A replica never relays a request
// that carries it (no loops), and answers 421 when it is not the replica
// named (another process now listens at the owner's old address) or no
// longer runs the session; its 421 names itself in the same header, so
// that the relaying replica tells the two apart. A client that sends it
// gains nothing: the worst it gets is a 421 or 503.
const relayHeader = "Saguaro-Relay"

var (
	// errMisdirected: the owner's address now belongs to another
	// replica.
	errMisdirected = errors.New("mcp: relay reached another replica")
	// errMoved: the owner answered that it no longer runs the session.
	errMoved = errors.New("mcp: the session moved to another replica")
	// errOwnerStalled: the owner stopped beating while a relayed request
	// waited for its answer (a stopped or wedged process).
	errOwnerStalled = errors.New("mcp: the session's replica stopped beating while a relayed request waited")
	// errOwnerSilent: the owner still beats but sent no answer within
	// the time it gives any call.
	errOwnerSilent = errors.New("mcp: the session's replica did not answer a relayed request in time")
	errBadRelayURL = errors.New("mcp: not an absolute http(s) URL")
)

var (
	errRelayFailed = wire.NewError(wire.InternalError, "Bad Gateway: the replica that runs this session did not answer")
	errNotHere     = wire.NewError(wire.InvalidRequest, "Misdirected Request: this replica does not run the session")
)

// relayCheckEvery is how long a relayed request waits for the headers of
// its answer before asking the store whether the owner still beats, and
// then how often it asks again. A stopped owner (SIGSTOP, a frozen VM)
// still accepts connections, so only its lapsed lease tells that it is
// gone; a plain response-header timeout would instead cut every call
// that runs longer than it before answering.
const relayCheckEvery = time.Second

// relayIdlePerPeer bounds the idle connections kept to each other
// replica: as many as relays to one replica run at once in a busy
// replica, so that a burst does not end in connections closed and dialed
// again.
const relayIdlePerPeer = 256

// newRelayTransport is the HTTP client side of relays, one per Transport
// for its whole life: keep-alive connections to the other replicas over
// HTTP/1.1, no overall timeout (a relayed event stream lasts as long as
// the client listens; the owner watch bounds the wait for headers), a
// short dial timeout (a dead owner is noticed fast).
func newRelayTransport() *http.Transport {
	return &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConnsPerHost: relayIdlePerPeer,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
}

type relayDepthKey struct{}

// relayCached answers a request for session id from what this replica
// remembers of its owner: a relay there, or 404 when the session is bound
// to another identity. nil when nothing is remembered, or when the
// request was relayed here (it is never relayed again): the caller then
// loads the session's record.
func (tab *sessionTable) relayCached(r *http.Request, id string) controller.Reply {
	if r.Header.Get(relayHeader) != "" {
		return nil
	}
	e := tab.t.owners.get(id)
	if e == nil {
		return nil
	}
	if tab.t.cfg.Identity != nil && tab.t.cfg.Identity(r) != e.identity {
		return errorReply(http.StatusNotFound, errSessionNotFound)
	}
	return controller.Handler(&relay{tab: tab, id: id, e: e})
}

// relay answers a request for a session that another replica runs, as
// rec says, by relaying it to target, that replica's URL; the owner is
// remembered for the session's next requests.
func (tab *sessionTable) relay(rec *cluster.Record, target string) controller.Reply {
	e := tab.t.owners.put(rec.ID, rec.Owner, target, rec.Identity)
	return controller.Handler(&relay{tab: tab, id: rec.ID, e: e})
}

// misdirected answers a relayed request that reached a replica that does
// not run its session: 421, naming this replica.
func misdirected(self string, e *wire.Error) controller.Reply {
	h := jsonHeader()
	h.Set(relayHeader, self)
	return controller.Buffered(http.StatusMisdirectedRequest, h, wire.AppendErrorResponse(nil, wire.ID{}, e))
}

// relay is a relayed request's reply: the owner's answer, JSON or an
// event stream, flows back unchanged. When the owner turns out to be
// gone the session is taken over here and the request served as if it
// had landed on its owner.
type relay struct {
	tab *sessionTable
	id  string
	e   *ownerEntry
}

func (rl *relay) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	tab, t, id, e := rl.tab, rl.tab.t, rl.id, rl.e
	// The body is kept, so that a relay that cannot connect can be
	// served here after all.
	buf, ok := t.readRelayBody(w, r)
	if !ok {
		return
	}
	defer wire.PutBuffer(buf)
	body := *buf
	owner := e.peer.id
	t.relayAttrs(r, body, id, owner)
	var res relayResult
	if obs := t.cfg.Observer; obs != nil {
		ctx, inject, end := obs.Relay(r.Context(), body, owner)
		defer func() { end(res.spanStatus()) }()
		t.forward(w, r.WithContext(ctx), body, e.peer, id, inject, &res)
	} else {
		t.forward(w, r, body, e.peer, id, nil, &res)
	}
	failed := res.err
	if failed == nil {
		if res.status == http.StatusNotFound || (r.Method == http.MethodDelete && res.status < 300) {
			t.owners.drop(id, e) // the session ended
		}
		return
	}
	if r.Context().Err() != nil {
		return // the client left
	}
	t.owners.drop(id, e)
	if errors.Is(failed, errMoved) && r.Context().Value(relayDepthKey{}) == nil {
		// Its owner is alive and knows it runs the session no more:
		// serve it again, which finds the new owner in the store.
		t.serveHere(w, r, body)
		return
	}
	if !ownerGone(failed) || r.Context().Value(relayDepthKey{}) != nil {
		t.log.WarnContext(r.Context(), "mcp: relay to a session's replica failed",
			slog.String(protocol.AttrSession, id), slog.String("replica", owner), slog.Any("err", failed))
		writeError(w, http.StatusBadGateway, errRelayFailed)
		return
	}
	// The owner is gone: claim the session and serve the request again,
	// once; it now finds the session here (or relays to whoever claimed
	// it first).
	t.owners.lost(e.peer)
	ctx, cancel := clusterContext(r.Context())
	_, err := tab.cluster.Claim(ctx, id, owner)
	cancel()
	if err != nil {
		t.log.WarnContext(r.Context(), "mcp: session store unavailable", slog.Any("err", err))
		writeError(w, http.StatusServiceUnavailable, errStoreUnavailable)
		return
	}
	t.serveHere(w, r, body)
}

// serveHere serves a request that could not be relayed on this replica
// after all, marked so that it is not relayed again.
func (t *Transport) serveHere(w http.ResponseWriter, r *http.Request, body []byte) {
	again := withBody(r.WithContext(context.WithValue(r.Context(), relayDepthKey{}, true)), body)
	again.Header = r.Header.Clone()
	again.Header.Del(relayHeader)
	t.handler.ServeHTTP(w, again)
}

// readRelayBody reads the body of a request to relay, bounded as every
// POST body is, into a pooled buffer that the caller returns with
// wire.PutBuffer; false when it answered the request instead (413, 408
// with the connection closed, 400). net/http lifts the body's read
// deadline itself once the body is read to its end, so a relayed event
// stream may last longer than the body was allowed to take.
//
// The whole body is read before anything is relayed, so the server side
// needs no full duplex (an HTTP/1 handler cannot read its request once
// its answer has begun; golang.org/issue/40747).
func (t *Transport) readRelayBody(w http.ResponseWriter, r *http.Request) (*[]byte, bool) {
	buf := wire.GetBuffer()
	if r.Body == nil || r.Body == http.NoBody {
		return buf, true
	}
	if r.ContentLength > t.cfg.MaxBodyBytes {
		wire.PutBuffer(buf)
		writeError(w, http.StatusRequestEntityTooLarge, errBodyTooLarge)
		return nil, false
	}
	b := *buf
	if n := r.ContentLength + 1; n > 1 && int64(cap(b)) < n {
		b = make([]byte, 0, n) // +1: the read that finds EOF needs room
	}
	body := http.MaxBytesReader(nil, r.Body, t.cfg.MaxBodyBytes)
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := body.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			*buf = b
			wire.PutBuffer(buf)
			var tooLarge *http.MaxBytesError
			switch {
			case errors.As(err, &tooLarge):
				writeError(w, http.StatusRequestEntityTooLarge, errBodyTooLarge)
			case timedOut(err):
				t.slowBody(r, len(b))
				w.Header().Set("Connection", "close")
				writeError(w, http.StatusRequestTimeout, errBodyTimeout)
			default:
				writeError(w, http.StatusBadRequest, errBodyRead)
			}
			return nil, false
		}
	}
	*buf = b
	return buf, true
}

// relayAttrs reports a relayed request to the log hook: its session, its
// method (the owner's log line has the rest) and the replica it went to.
func (t *Transport) relayAttrs(r *http.Request, body []byte, session, owner string) {
	if t.cfg.Attrs == nil {
		return
	}
	attrs := make([]slog.Attr, 0, 3)
	attrs = append(attrs, slog.String(protocol.AttrSession, session))
	if len(body) > 0 && body[0] == '{' {
		_ = wire.EachMember(body, func(k, v []byte) error {
			if wire.KeyIs(k, "method") {
				if m, ok := wire.Unquote(v); ok {
					attrs = append(attrs, slog.String(protocol.AttrMethod, m))
				}
			}
			return nil
		})
	}
	attrs = append(attrs, slog.String(protocol.AttrRelayedTo, owner))
	t.cfg.Attrs(r.Context(), attrs...)
}

// relayResult is how a relay went: the status of the owner's answer once
// its headers arrived, or why none came (nothing was written then).
type relayResult struct {
	status int
	err    error
}

// spanStatus is the status a relay's telemetry reports: the owner's, or
// 502 when it did not answer.
func (res *relayResult) spanStatus() int {
	if res.status == 0 {
		return http.StatusBadGateway
	}
	return res.status
}

// forward relays r, whose body is body, to replica p, about session
// ("" for a task's replica), and copies the answer back: a JSON answer in
// one piece (net/http sends it with the rest when the handler returns),
// an event stream flushed as it comes. inject, when not nil, writes the
// relay's trace context into the relayed request's headers. When the
// owner dies after its answer began, the client's answer is cut
// (http.ErrAbortHandler, as net/http expects) and a warning says which
// replica and session.
func (t *Transport) forward(w http.ResponseWriter, r *http.Request, body []byte, p *peer, session string, inject func(http.Header), res *relayResult) {
	if p.bad {
		t.log.ErrorContext(r.Context(), "mcp: a replica's relay URL is not a URL", slog.String("url", p.url))
		res.err = fmt.Errorf("relay URL %q: %w", p.url, errBadRelayURL)
		return
	}
	ctx, cancel := context.WithCancelCause(r.Context())
	defer cancel(nil)
	out := relayRequest(ctx, r, body, p)
	if inject != nil {
		inject(out.Header)
	}
	watch := t.watchOwner(p.id, cancel)
	resp, err := t.relay.RoundTrip(out)
	watch.stop()
	if err != nil {
		if cause := context.Cause(ctx); errors.Is(cause, errOwnerStalled) || errors.Is(cause, errOwnerSilent) {
			err = cause
		}
		res.err = err
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusMisdirectedRequest {
		res.err = errMisdirected
		if resp.Header.Get(relayHeader) == p.id {
			res.err = errMoved
		}
		return
	}
	res.status = resp.StatusCode
	dst := w.Header()
	for k, vv := range resp.Header {
		if !hopByHop(k) {
			dst[k] = vv
		}
	}
	for _, c := range resp.Header["Connection"] {
		for f := range strings.SplitSeq(c, ",") {
			delete(dst, textproto.CanonicalMIMEHeaderKey(strings.TrimSpace(f)))
		}
	}
	stream := isEventStream(resp.Header.Get("Content-Type"))
	w.WriteHeader(resp.StatusCode)
	var rerr error
	if stream {
		quiet := t.watchStream(p.id, cancel)
		rerr = t.copyStream(w, resp.Body, quiet)
		quiet.stop()
	} else {
		rerr = copyAnswer(w, resp.Body)
	}
	if rerr != nil && r.Context().Err() == nil {
		// The answer stopped mid-way while the client still listened:
		// the owner died or closed on it, or stopped beating while its
		// stream was silent. The client resumes with Last-Event-ID,
		// and finds the session taken over.
		if errors.Is(context.Cause(ctx), errOwnerStalled) {
			t.owners.lost(p)
		}
		t.log.WarnContext(r.Context(), "mcp: a relayed answer was cut: the replica that ran it went away",
			slog.String("replica", p.id), slog.String(protocol.AttrSession, session))
		panic(http.ErrAbortHandler)
	}
}

// relayRequest is the request relayed to p: r's method, query, Host and
// end-to-end headers (the owner checks Host and Origin as this replica
// did), the relay header naming p, and body, which the transport may send
// again on a fresh connection (a kept-alive connection to an owner that
// has just died fails before any answer, and the fresh one's refusal
// tells that the owner is gone).
func relayRequest(ctx context.Context, r *http.Request, body []byte, p *peer) *http.Request {
	h := make(http.Header, len(r.Header)+3)
	for k, vv := range r.Header {
		if !hopByHop(k) && !forwarded(k) {
			h[k] = vv // shared: neither side changes them
		}
	}
	for _, c := range r.Header["Connection"] {
		for f := range strings.SplitSeq(c, ",") {
			delete(h, textproto.CanonicalMIMEHeaderKey(strings.TrimSpace(f)))
		}
	}
	h[relayHeader] = []string{p.id}
	if _, ok := h["User-Agent"]; !ok {
		h["User-Agent"] = nil // present and empty: Go's default is not sent
	}
	h["X-Idempotency-Key"] = nil // replayable; a nil value is not sent
	out := &http.Request{
		Method:     r.Method,
		URL:        &url.URL{Scheme: p.scheme, Host: p.host, Path: p.path, RawPath: p.rawPath, RawQuery: r.URL.RawQuery},
		Proto:      "HTTP/1.1",
		ProtoMajor: 1,
		ProtoMinor: 1,
		Header:     h,
		Host:       r.Host,
		Body:       http.NoBody,
	}
	if len(body) > 0 {
		// A bytes.Reader in a NopCloser is what net/http knows to be in
		// memory: it writes it with the headers in one piece, so that a
		// write to a connection the owner closed fails with nothing
		// sent, and is tried again on a fresh one.
		out.Body = io.NopCloser(bytes.NewReader(body))
		out.ContentLength = int64(len(body))
		out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	}
	return out.WithContext(ctx)
}

// hopByHop reports whether header k belongs to one connection only
// (RFC 9110, 7.6.1), and is not relayed.
func hopByHop(k string) bool {
	switch k {
	case "Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization",
		"Te", "Trailer", "Transfer-Encoding", "Upgrade":
		return true
	}
	return false
}

// forwarded reports whether header k is one a proxy adds about the
// client: the owner sees the relayed request as it would see any request
// from this replica, without them.
func forwarded(k string) bool {
	switch k {
	case "Forwarded", "X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto":
		return true
	}
	return false
}

func isEventStream(contentType string) bool {
	mt, _, _ := strings.Cut(contentType, ";")
	return strings.EqualFold(strings.TrimSpace(mt), "text/event-stream")
}

// relayBufs hold the buffers answers are copied through.
var relayBufs = sync.Pool{New: func() any { b := make([]byte, 16<<10); return &b }}

// copyAnswer copies a JSON answer to w without flushing: net/http writes
// it, with its Content-Length, when the handler returns. It returns the
// error that stopped the read from the owner; a failed write (the client
// left) ends the copy quietly.
func copyAnswer(w http.ResponseWriter, body io.Reader) error {
	bp := relayBufs.Get().(*[]byte)
	defer relayBufs.Put(bp)
	b := *bp
	for {
		n, err := body.Read(b)
		if n > 0 {
			if _, werr := w.Write(b[:n]); werr != nil {
				return nil
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// copyStream copies an event stream to w, flushing what each read
// brought, each write bounded by the endpoint's write timeout (a client
// that stops reading does not hold the relay, nor the owner's stream,
// forever), and tells quiet when the owner last sent something. It
// returns the error that stopped the read from the owner.
func (t *Transport) copyStream(w http.ResponseWriter, body io.Reader, quiet *ownerWatch) error {
	rc := http.NewResponseController(w)
	if rc.Flush() != nil {
		return nil
	}
	bp := relayBufs.Get().(*[]byte)
	defer relayBufs.Put(bp)
	b := *bp
	for {
		n, err := body.Read(b)
		if n > 0 {
			quiet.heard()
			if t.cfg.WriteTimeout > 0 {
				_ = rc.SetWriteDeadline(time.Now().Add(t.cfg.WriteTimeout))
			}
			if _, werr := w.Write(b[:n]); werr != nil {
				return nil
			}
			if rc.Flush() != nil {
				return nil
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// ownerWatch asks the store whether a relay's owner still beats, while
// the owner is silent: while the relay waits for the headers of its
// answer, every relayCheckEvery, cancelling the relay with
// errOwnerStalled once the owner's lease has lapsed, or errOwnerSilent
// when the owner beats but has not answered by the time it would have
// ended any call; and while a relayed event stream has brought nothing
// (not even a keep-alive comment) for twice the keep-alive interval,
// cancelling it with errOwnerStalled once the lease has lapsed, so that
// its client resumes the stream where the session is taken over.
type ownerWatch struct {
	t      *Transport
	owner  string
	cancel context.CancelCauseFunc
	every  time.Duration
	limit  time.Time    // zero: none
	last   atomic.Int64 // a stream's: when the owner last sent, Unix ns
	stream bool
	timer  atomic.Pointer[time.Timer]
	done   atomic.Bool
}

func (t *Transport) watchOwner(owner string, cancel context.CancelCauseFunc) *ownerWatch {
	ow := &ownerWatch{t: t, owner: owner, cancel: cancel, every: relayCheckEvery}
	if d := t.relayLimit(); d > 0 {
		ow.limit = time.Now().Add(d)
	}
	ow.timer.Store(time.AfterFunc(ow.every, ow.check))
	return ow
}

func (t *Transport) watchStream(owner string, cancel context.CancelCauseFunc) *ownerWatch {
	ow := &ownerWatch{t: t, owner: owner, cancel: cancel, every: 2 * t.keepAlive(), stream: true}
	ow.heard()
	ow.timer.Store(time.AfterFunc(ow.every, ow.check))
	return ow
}

// heard notes that the owner sent something.
func (ow *ownerWatch) heard() { ow.last.Store(time.Now().UnixNano()) }

func (ow *ownerWatch) check() {
	if ow.done.Load() {
		return
	}
	if ow.stream {
		if quiet := time.Since(time.Unix(0, ow.last.Load())); quiet < ow.every {
			ow.again(ow.every - quiet)
			return
		}
	}
	ctx, cancel := clusterContext(context.Background())
	_, err := ow.t.cluster.Locate(ctx, ow.owner)
	cancel()
	switch {
	case ow.done.Load():
		return
	case errors.Is(err, cluster.ErrReplicaGone):
		ow.cancel(errOwnerStalled)
		return
	case !ow.limit.IsZero() && time.Now().After(ow.limit):
		ow.cancel(errOwnerSilent)
		return
	}
	// Alive, or the store cannot say: wait on.
	ow.again(ow.every)
}

func (ow *ownerWatch) again(d time.Duration) {
	if tm := ow.timer.Load(); tm != nil {
		tm.Reset(d)
	}
}

func (ow *ownerWatch) stop() {
	ow.done.Store(true)
	if tm := ow.timer.Load(); tm != nil {
		tm.Stop()
	}
}

// relayLimit is how long a relayed request waits for its answer from an
// owner that still beats: the time the owner gives any call, and one
// check more; 0 for no limit.
func (t *Transport) relayLimit() time.Duration {
	if t.sessions == nil || t.sessions.opts.RequestTimeout <= 0 {
		return 0
	}
	return t.sessions.opts.RequestTimeout + relayCheckEvery
}

// withBody is r with a fresh reader over body.
func withBody(r *http.Request, body []byte) *http.Request {
	r2 := r.Clone(r.Context())
	if len(body) == 0 {
		r2.Body = http.NoBody
		r2.ContentLength = 0
		return r2
	}
	r2.Body = io.NopCloser(bytes.NewReader(body))
	r2.ContentLength = int64(len(body))
	r2.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	return r2
}

// ownerGone reports whether a relay failed because nothing runs at the
// owner's address any more (or another replica does), or because the
// owner stopped beating while the request waited.
func ownerGone(err error) bool {
	if errors.Is(err, errMisdirected) || errors.Is(err, errOwnerStalled) || errors.Is(err, syscall.ECONNREFUSED) {
		return true
	}
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// writeError answers with an HTTP status and a JSON-RPC error with a null
// id, written directly (errorReply is the controller's form).
func writeError(w http.ResponseWriter, status int, e *wire.Error) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	if status == http.StatusServiceUnavailable {
		h.Set("Retry-After", "1")
	}
	w.WriteHeader(status)
	_, _ = w.Write(wire.AppendErrorResponse(nil, wire.ID{}, e))
}

// taskReplica returns the replica that runs the task a 2026-07-28
// request is about (its task id starts with the replica's id and a dot),
// when that is another replica: tasks live in the process that runs
// them. For subscriptions/listen it is the replica of the first task
// named; the stream then hears that replica's task notifications, and
// every replica's list changes and resource updates, as any stream does.
func (t *Transport) taskReplica(r *http.Request, msg *wire.Message) string {
	if !t.tasks || msg.Kind != wire.KindRequest ||
		r.Header.Get(relayHeader) != "" || r.Context().Value(relayDepthKey{}) != nil {
		return ""
	}
	var id string
	switch msg.Method {
	case "tasks/get", "tasks/update", "tasks/cancel":
		var p struct {
			TaskID string `json:"taskId"`
		}
		if json.Unmarshal(msg.Params, &p) != nil {
			return ""
		}
		id = p.TaskID
	case "subscriptions/listen":
		var p struct {
			Notifications struct {
				TaskIDs []string `json:"taskIds"`
			} `json:"notifications"`
		}
		if json.Unmarshal(msg.Params, &p) != nil || len(p.Notifications.TaskIDs) == 0 {
			return ""
		}
		id = p.Notifications.TaskIDs[0]
	default:
		return ""
	}
	i := strings.LastIndexByte(id, '.')
	if i <= 0 || id[:i] == t.self.ID {
		return ""
	}
	return id[:i]
}

// relayTask answers a request about another replica's task by relaying
// it there, at the address this replica remembers for it or, the first
// time, the one the store gives. When that replica is gone its tasks are
// gone with it: the request is served here, where the task is unknown.
func (t *Transport) relayTask(replica string, body []byte) controller.Reply {
	body = append([]byte(nil), body...) // the request's buffer is reused once Handle returns
	return controller.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := t.owners.known(replica)
		if p == nil {
			ctx, cancel := clusterContext(r.Context())
			target, err := t.cluster.Locate(ctx, replica)
			cancel()
			switch {
			case errors.Is(err, cluster.ErrReplicaGone):
				t.serveHere(w, r, body)
				return
			case err != nil:
				t.log.WarnContext(r.Context(), "mcp: session store unavailable", slog.Any("err", err))
				writeError(w, http.StatusServiceUnavailable, errStoreUnavailable)
				return
			}
			p = t.owners.peer(replica, target)
		}
		var res relayResult
		t.forward(w, r, body, p, "", nil, &res)
		failed := res.err
		switch {
		case failed == nil || r.Context().Err() != nil:
		case ownerGone(failed):
			t.owners.lost(p)
			t.serveHere(w, r, body)
		default:
			t.log.WarnContext(r.Context(), "mcp: relay to a task's replica failed",
				slog.String("replica", replica), slog.Any("err", failed))
			writeError(w, http.StatusBadGateway, errRelayFailed)
		}
	}))
}
