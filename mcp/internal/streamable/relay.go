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
	"net/http/httputil"
	"net/url"
	"strings"
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
// named (another process now listens at the owner's old address). A
// client that sends it gains nothing: the worst it gets is a 421 or 503.
const relayHeader = "Saguaro-Relay"

// errMisdirected: the owner's address now belongs to another replica.
var errMisdirected = errors.New("mcp: relay reached another replica")

var errRelayFailed = wire.NewError(wire.InternalError, "Bad Gateway: the replica that runs this session did not answer")

// newRelayTransport is the HTTP client side of relays: keep-alive
// connections to the other replicas, no overall timeout (a relayed event
// stream lasts as long as the client listens), a short dial timeout (a
// dead owner is noticed fast).
func newRelayTransport() *http.Transport {
	return &http.Transport{
		Proxy:                 nil,
		DialContext:           (&net.Dialer{Timeout: time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:          256,
		MaxIdleConnsPerHost:   64,
		IdleConnTimeout:       90 * time.Second,
		ResponseHeaderTimeout: 0,
		DisableCompression:    true,
	}
}

type relayDepthKey struct{}

// relay answers a request for a session that another replica runs by
// relaying it there: the owner's answer, JSON or an event stream, flows
// back unchanged. When the owner cannot be reached the session is taken
// over here and the request served as if it had landed on its owner.
func (tab *sessionTable) relay(rec *cluster.Record, target string) controller.Reply {
	return controller.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tab.serveRelay(w, r, rec, target)
	}))
}

func (tab *sessionTable) serveRelay(w http.ResponseWriter, r *http.Request, rec *cluster.Record, target string) {
	t := tab.t
	// The body is kept, so that a relay that cannot connect can be
	// served here after all. It is bounded like every POST body.
	var body []byte
	if r.Body != nil && r.Body != http.NoBody {
		var err error
		body, err = io.ReadAll(io.LimitReader(r.Body, t.cfg.MaxBodyBytes+1))
		if err != nil {
			writeError(w, http.StatusBadRequest, errBodyRead)
			return
		}
		if int64(len(body)) > t.cfg.MaxBodyBytes {
			writeError(w, http.StatusRequestEntityTooLarge, errBodyTooLarge)
			return
		}
	}
	t.relayAttrs(r, body, rec)
	var failed error
	if obs := t.cfg.Observer; obs != nil {
		ctx, inject, end := obs.Relay(r.Context(), body, rec.Owner)
		sw := &statusWriter{ResponseWriter: w}
		failed = t.forwardWith(sw, r.WithContext(ctx), body, rec.Owner, rec.ID, target, inject)
		end(sw.status(failed))
	} else {
		failed = t.forward(w, r, body, rec.Owner, rec.ID, target)
	}
	if failed == nil || r.Context().Err() != nil {
		return
	}
	if !ownerGone(failed) || r.Context().Value(relayDepthKey{}) != nil {
		t.log.WarnContext(r.Context(), "mcp: relay to a session's replica failed",
			slog.String(protocol.AttrSession, rec.ID), slog.String("replica", rec.Owner), slog.Any("err", failed))
		writeError(w, http.StatusBadGateway, errRelayFailed)
		return
	}
	// The owner is gone: claim the session and serve the request again,
	// once; it now finds the session here (or relays to whoever claimed
	// it first).
	ctx, cancel := clusterContext(r.Context())
	_, err := tab.cluster.Claim(ctx, rec.ID, rec.Owner)
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

// relayAttrs reports a relayed request to the log hook: its session, its
// method (the owner's log line has the rest) and the replica it went to.
func (t *Transport) relayAttrs(r *http.Request, body []byte, rec *cluster.Record) {
	if t.cfg.Attrs == nil {
		return
	}
	attrs := make([]slog.Attr, 0, 3)
	attrs = append(attrs, slog.String(protocol.AttrSession, rec.ID))
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
	attrs = append(attrs, slog.String(protocol.AttrRelayedTo, rec.Owner))
	t.cfg.Attrs(r.Context(), attrs...)
}

// forward relays r, whose body is body, to target, the endpoint of the
// replica that owns session rec (nil for a task's replica, owner), and
// copies the answer back, streaming. It returns why the owner did not
// answer (nothing was written then), or nil. When the owner dies after
// its answer began, the client's answer is cut (http.ErrAbortHandler, as
// net/http expects) and a warning says which replica and session.
func (t *Transport) forward(w http.ResponseWriter, r *http.Request, body []byte, owner, session, target string) error {
	return t.forwardWith(w, r, body, owner, session, target, nil)
}

// forwardWith is forward with inject, when not nil, writing the relay's
// trace context into the relayed request's headers.
func (t *Transport) forwardWith(w http.ResponseWriter, r *http.Request, body []byte, owner, session, target string, inject func(http.Header)) error {
	u, err := url.Parse(target)
	if err != nil || u.Host == "" {
		t.log.ErrorContext(r.Context(), "mcp: a replica's relay URL is not a URL", slog.String("url", target))
		return fmt.Errorf("relay URL %q: %w", target, errBadRelayURL)
	}
	var failed error
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme, pr.Out.URL.Host = u.Scheme, u.Host
			pr.Out.URL.Path, pr.Out.URL.RawPath = u.Path, u.RawPath
			pr.Out.URL.RawQuery = pr.In.URL.RawQuery
			// The owner checks Host and Origin as this replica did.
			pr.Out.Host = pr.In.Host
			pr.Out.Header.Set(relayHeader, owner)
			// Replayable (the body is buffered): a kept-alive
			// connection to an owner that has just died fails
			// before any answer, and the transport then tries a new
			// connection, whose refusal tells that the owner is
			// gone. A nil value is not sent.
			pr.Out.Header["X-Idempotency-Key"] = nil
			if inject != nil {
				inject(pr.Out.Header)
			}
		},
		Transport:     t.relay,
		FlushInterval: -1,
		// A relayed stream cut short (the owner died, the client left)
		// is not news: debug level.
		ErrorLog: slog.NewLogLogger(t.log.Handler(), slog.LevelDebug),
		ModifyResponse: func(resp *http.Response) error {
			if resp.StatusCode == http.StatusMisdirectedRequest {
				resp.Body.Close()
				return errMisdirected
			}
			return nil
		},
	}
	proxy.ErrorHandler = func(_ http.ResponseWriter, _ *http.Request, err error) { failed = err }
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler && r.Context().Err() == nil {
				// The answer stopped mid-way while the client still
				// listened: the owner died or closed on it.
				t.log.WarnContext(r.Context(), "mcp: a relayed answer was cut: the replica that ran it went away",
					slog.String("replica", owner), slog.String(protocol.AttrSession, session))
			}
			panic(v)
		}
	}()
	proxy.ServeHTTP(w, withBody(r, body))
	return failed
}

var errBadRelayURL = errors.New("mcp: not an absolute URL")

// statusWriter remembers the status of the answer it carries.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Flush passes flushes on, so that relayed streams are not held back.
func (w *statusWriter) Flush() { _ = http.NewResponseController(w.ResponseWriter).Flush() }

// status is the relayed answer's status: 502 when the relay failed before
// any answer.
func (w *statusWriter) status(failed error) int {
	if failed != nil && w.code == 0 {
		return http.StatusBadGateway
	}
	return w.code
}

// withBody is r with a fresh reader over body.
func withBody(r *http.Request, body []byte) *http.Request {
	r2 := r.Clone(r.Context())
	if body == nil {
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
// owner's address any more (or another replica does).
func ownerGone(err error) bool {
	if errors.Is(err, errMisdirected) || errors.Is(err, syscall.ECONNREFUSED) {
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
// it there. When that replica is gone its tasks are gone with it: the
// request is served here, where the task is unknown.
func (t *Transport) relayTask(replica string, body []byte) controller.Reply {
	body = append([]byte(nil), body...) // the request's buffer is reused once Handle returns
	return controller.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
		failed := t.forward(w, r, body, replica, "", target)
		switch {
		case failed == nil || r.Context().Err() != nil:
		case ownerGone(failed):
			t.serveHere(w, r, body)
		default:
			t.log.WarnContext(r.Context(), "mcp: relay to a task's replica failed",
				slog.String("replica", replica), slog.Any("err", failed))
			writeError(w, http.StatusBadGateway, errRelayFailed)
		}
	}))
}
