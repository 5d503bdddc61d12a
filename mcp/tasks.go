package mcp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"runtime/debug"
	"strconv"
	"sync"
	"time"

	"github.com/saguaro-go/saguaro/internal/jsonstr"
	"github.com/saguaro-go/saguaro/mcp/internal/protocol"
	"github.com/saguaro-go/saguaro/mcp/internal/wire"
)

// The 2026-07-28 tasks extension (io.modelcontextprotocol/tasks): a
// tools/call the server decides to run in the background is answered at
// once with a task ({resultType:"task", taskId, status, …}); the client
// polls tasks/get, which inlines the result or error once the task ends,
// answers the task's input requests with tasks/update, and may cancel it
// with tasks/cancel. Tasks live in memory in the Engine, bound to the
// caller's identity.

// ExtTasks is the identifier of the tasks extension.
const ExtTasks = "io.modelcontextprotocol/tasks"

// TaskSupport says whether a tool may run as a task (Tool.TaskSupport).
type TaskSupport uint8

// The task support levels.
const (
	// TaskForbidden: the tool always runs synchronously (the default).
	TaskForbidden TaskSupport = iota
	// TaskOptional: a task for clients that declare the extension,
	// synchronous for the others.
	TaskOptional
	// TaskRequired: only as a task; a client without the extension gets
	// MissingRequiredClientCapability (-32021).
	TaskRequired
)

// TaskOptions configures the tasks extension ([ServerOptions.Tasks]). Zero
// fields take the defaults.
//
// Experimental: the tasks extension still changes, and its API here
// (TaskOptions, [Tool.TaskSupport], [Tool.DeferTask],
// [CallToolRequest.StartTask]) may change with it in a minor release
// (docs/policies/protocol.md).
type TaskOptions struct {
	// TTL is how long a task stays readable with tasks/get after it
	// ended (its ttlMs); default 1 hour.
	TTL time.Duration
	// PollInterval is the polling interval suggested to clients
	// (pollIntervalMs); default 1 second.
	PollInterval time.Duration
	// Timeout bounds how long a task may run before its context is
	// cancelled; default 1 hour.
	Timeout time.Duration
	// MaxTasks bounds the tasks kept (running or ended, all callers); a
	// call that would start one more is answered InternalError "too many
	// tasks". Default 10,000.
	MaxTasks int
}

// taskSupporter is a handler that knows its tools' task support (the
// Server).
type taskSupporter interface {
	toolTaskSupport(ctx context.Context, req *Request, tool string) (support TaskSupport, deferred bool)
}

const (
	taskWorking       = "working"
	taskInputRequired = "input_required"
	taskCompleted     = "completed"
	taskFailed        = "failed"
	taskCancelled     = "cancelled"
)

type task struct {
	id, owner string
	created   time.Time

	// guarded by taskStore.mu
	status  string
	updated time.Time
	result  json.RawMessage
	err     *wire.Error
	pending []pendingInput
	waiters map[string]chan json.RawMessage
	seq     int
	cancel  context.CancelFunc
}

func (t *task) terminal() bool {
	return t.status == taskCompleted || t.status == taskFailed || t.status == taskCancelled
}

type taskStore struct {
	e        *engine
	opts     TaskOptions
	mu       sync.Mutex
	m        map[string]*task
	watchers map[*listener]bool // subscriptions/listen streams with taskIds
	now      func() time.Time
	prefix   string // engineOptions.TaskIDPrefix
}

func newTaskStore(e *engine, o *TaskOptions) *taskStore {
	s := &taskStore{e: e, opts: *o, m: map[string]*task{}, now: time.Now}
	if s.opts.TTL <= 0 {
		s.opts.TTL = time.Hour
	}
	if s.opts.PollInterval <= 0 {
		s.opts.PollInterval = time.Second
	}
	if s.opts.Timeout <= 0 {
		s.opts.Timeout = time.Hour
	}
	if s.opts.MaxTasks <= 0 {
		s.opts.MaxTasks = 10_000
	}
	return s
}

// extensions lists what Capabilities advertises under extensions
// (2026-07-28).
func (e *engine) extensions() map[string]json.RawMessage {
	var m map[string]json.RawMessage
	add := func(id string, settings string) {
		if m == nil {
			m = map[string]json.RawMessage{}
		}
		m[id] = json.RawMessage(settings)
	}
	if e.offers(capTasks) {
		add(ExtTasks, `{}`)
	}
	if e.offers(capSkills) {
		add(ExtSkills, `{}`)
	}
	return m
}

// clientHasExtension reports whether the client declared an extension.
func clientHasExtension(c *ClientCapabilities, id string) bool {
	if c == nil {
		return false
	}
	_, ok := c.Extensions[id]
	return ok
}

var errTooManyTasks = wire.NewError(wire.InternalError, "Server overloaded: too many tasks")

func formatTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// taskCall runs a 2026-07-28 tools/call as a task when the tool and the
// client allow it; done is false when the call should run synchronously.
func (e *engine) taskCall(ctx context.Context, call *protocol.Call, req *CallToolRequest, state any) (protocol.Reply, bool) {
	if e.tasks == nil || e.taskTools == nil {
		return protocol.Reply{}, false
	}
	support, deferred := e.taskTools.toolTaskSupport(ctx, &req.Request, req.Name)
	if support == TaskForbidden {
		return protocol.Reply{}, false
	}
	if !clientHasExtension(clientOf(call), ExtTasks) {
		if support == TaskRequired {
			return protocol.Reply{State: state, Err: (&capabilityError{path: []string{"extensions", ExtTasks}}).rpcError()}, true
		}
		return protocol.Reply{}, false
	}
	return e.tasks.run(ctx, call, req, state, deferred), true
}

type handlerOutcome struct {
	res *CallToolResult
	err error
}

// run starts the tool on its own goroutine. Without deferral the task
// exists before the handler starts; with it, the handler runs in the call
// until it calls StartTask (the call is then answered with the task) or
// returns (the call is answered with its result).
func (s *taskStore) run(ctx context.Context, call *protocol.Call, req *CallToolRequest, state any, deferred bool) protocol.Reply {
	e := s.e
	started := make(chan *task, 1)
	done := make(chan handlerOutcome, 1)
	var t *task
	var tctx context.Context
	var once sync.Once
	var startErr *wire.Error
	start := func() context.Context {
		once.Do(func() {
			nt, c, jerr := s.create(ctx, call.Identity)
			if jerr != nil {
				startErr = jerr
				return
			}
			t, tctx = nt, c
			req.out = &taskOutbound{s: s, t: t}
			started <- t
		})
		if tctx == nil {
			return ctx
		}
		return tctx
	}
	hctx := ctx
	if deferred {
		hctx = context.WithValue(ctx, startTaskKey{}, start)
	} else {
		hctx = start()
		if startErr != nil {
			return protocol.Reply{State: state, Err: startErr}
		}
	}
	go func() {
		var out handlerOutcome
		func() {
			defer func() {
				if p := recover(); p != nil {
					e.log.Error("mcp: tool panicked", slog.String("tool", req.Name),
						slog.Any("panic", p), slog.String("stack", string(debug.Stack())))
					out = handlerOutcome{err: errInternal}
				}
			}()
			out.res, _, out.err = e.tools.CallTool(hctx, req, state)
		}()
		if t != nil {
			s.finish(t, out)
			return
		}
		done <- out
	}()
	select {
	case nt := <-started:
		return protocol.Reply{State: state, Result: s.created(nt), ResultType: resultTask}
	case out := <-done:
		if startErr != nil {
			return protocol.Reply{State: state, Err: startErr}
		}
		res, err := out.res, out.err
		if err != nil && !isProtocolError(err) && !errors.Is(err, ErrClientCapability) {
			res, err = ToolError(err), nil
		}
		return e.result(ctx, call, state, err, func() ([]byte, error) {
			if res == nil {
				res = &CallToolResult{}
			}
			return encodeCallTool(res)
		})
	}
}

// StartTask turns this call into a task, for a tool registered with
// DeferTask: the client is answered at once with the task, and the
// handler goes on in the background with the returned context, which
// tasks/cancel and the task timeout cancel and the client's disconnect
// does not. Its result becomes the task's result. Server→client requests
// made afterwards park the task in input_required until the client
// answers them with tasks/update.
//
// Anywhere else (a legacy session, a client without the tasks extension,
// a tool without DeferTask, a second call) it returns ctx unchanged and
// the call goes on as it was. Pitfall: keep using the returned context;
// the call's own context ends when its request is answered.
func (r *CallToolRequest) StartTask(ctx context.Context) context.Context {
	start, ok := ctx.Value(startTaskKey{}).(func() context.Context)
	if !ok {
		return ctx
	}
	return start()
}

// startTaskKey carries a deferred task call's StartTask in its context
// (rather than in every CallToolRequest, which must stay small).
type startTaskKey struct{}

// create registers a new working task for owner.
func (s *taskStore) create(parent context.Context, owner string) (*task, context.Context, *wire.Error) {
	var b [16]byte
	_, _ = rand.Read(b[:])
	now := s.now()
	t := &task{id: s.prefix + hex.EncodeToString(b[:]), owner: owner, created: now, status: taskWorking, updated: now}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(parent), s.opts.Timeout)
	t.cancel = cancel
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.m) >= s.opts.MaxTasks {
		cancel()
		return nil, nil, errTooManyTasks
	}
	s.m[t.id] = t
	return t, ctx, nil
}

// finish records a task's outcome and schedules its removal.
func (s *taskStore) finish(t *task, out handlerOutcome) {
	var result json.RawMessage
	var jerr *wire.Error
	res, err := out.res, out.err
	var je *wire.Error
	switch {
	case err == nil:
	case errors.As(err, &je):
		jerr = je
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		jerr = errCancelled
	case isProtocolError(err) || errors.Is(err, ErrClientCapability):
		jerr = s.e.handlerError(context.Background(), &protocol.Call{Method: "tools/call", Revision: protocol.Rev20260728}, err)
	default:
		res = ToolError(err)
	}
	if jerr == nil {
		if res == nil {
			res = &CallToolResult{}
		}
		b, eerr := encodeCallTool(res)
		if eerr != nil {
			jerr = errUnencoded
		} else {
			result = append([]byte(`{"resultType":"complete",`), b[1:]...)
			if len(b) == 2 {
				result = json.RawMessage(`{"resultType":"complete"}`)
			}
		}
	}
	s.mu.Lock()
	if !t.terminal() {
		t.updated = s.now()
		if jerr != nil {
			t.status, t.err = taskFailed, jerr
		} else {
			t.status, t.result = taskCompleted, result
		}
		t.pending, t.waiters = nil, nil
	}
	s.mu.Unlock()
	t.cancel()
	s.changed(t)
	time.AfterFunc(s.opts.TTL, func() {
		s.mu.Lock()
		delete(s.m, t.id)
		s.mu.Unlock()
	})
}

// appendTaskFields writes the members every task envelope shares.
func (s *taskStore) appendTaskFields(enc *encoder, t *task) {
	enc.strField("taskId", t.id)
	enc.strField("status", t.status)
	enc.strField("createdAt", formatTime(t.created))
	enc.strField("lastUpdatedAt", formatTime(t.updated))
	enc.key("ttlMs")
	enc.raw(strconv.AppendInt(nil, s.opts.TTL.Milliseconds(), 10))
	enc.key("pollIntervalMs")
	enc.raw(strconv.AppendInt(nil, s.opts.PollInterval.Milliseconds(), 10))
}

// created encodes the CreateTaskResult (the envelope adds resultType).
func (s *taskStore) created(t *task) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	var enc encoder
	enc.open()
	s.appendTaskFields(&enc, t)
	enc.close()
	return enc.b
}

// lookup finds a task of the caller for a tasks/* request.
func (e *engine) taskRequest(call *protocol.Call) (*task, json.RawMessage, *wire.Error) {
	if !clientHasExtension(clientOf(call), ExtTasks) {
		return nil, nil, (&capabilityError{path: []string{"extensions", ExtTasks}}).rpcError()
	}
	var id string
	var responses json.RawMessage
	hasID := false
	err := protocol.EachParam(call.Params, func(key, val []byte) *wire.Error {
		switch {
		case wire.KeyIs(key, "taskId"):
			s, ok := wire.Unquote(val)
			if !ok {
				return protocol.InvalidParams(`"taskId" must be a string`)
			}
			id, hasID = s, true
		case wire.KeyIs(key, "inputResponses"):
			responses = val
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if !hasID {
		return nil, nil, protocol.Missing("taskId")
	}
	e.tasks.mu.Lock()
	t := e.tasks.m[id]
	e.tasks.mu.Unlock()
	if t == nil || t.owner != call.Identity {
		return nil, nil, &wire.Error{Code: wire.InvalidParams, Message: "Invalid params: unknown task",
			Data: map[string]string{"taskId": id}}
	}
	return t, responses, nil
}

func (e *engine) tasksGet(_ context.Context, call *protocol.Call, _ Revision, state any) protocol.Reply {
	t, _, jerr := e.taskRequest(call)
	if jerr != nil {
		return protocol.Reply{State: state, Err: jerr}
	}
	b, err := e.tasks.detail(t)
	if err != nil {
		return protocol.Reply{State: state, Err: errUnencoded}
	}
	return protocol.Reply{State: state, Result: b}
}

// detail encodes a task as tasks/get shows it (a DetailedTask): the task
// fields and, by status, its inlined result, error or inputRequests.
func (s *taskStore) detail(t *task) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var enc encoder
	enc.open()
	s.appendTaskFields(&enc, t)
	switch t.status {
	case taskCompleted:
		enc.key("result")
		enc.raw(t.result)
	case taskFailed:
		enc.key("error")
		enc.value(t.err)
	case taskInputRequired:
		enc.key("inputRequests")
		enc.raw([]byte{'{'})
		for i, p := range t.pending {
			if i > 0 {
				enc.raw([]byte{','})
			}
			enc.raw(jsonstr.AppendString(nil, p.key))
			enc.raw([]byte(`:{"method":`))
			enc.raw(jsonstr.AppendString(nil, p.method))
			enc.raw([]byte(`,"params":`))
			if len(p.params) == 0 {
				enc.raw([]byte("{}"))
			} else {
				enc.raw(p.params)
			}
			enc.raw([]byte{'}'})
		}
		enc.raw([]byte{'}'})
	}
	enc.close()
	return enc.b, enc.err
}

// watch registers a subscriptions/listen stream for status changes of
// the tasks it names; the returned function removes it.
func (s *taskStore) watch(l *listener) func() {
	s.mu.Lock()
	if s.watchers == nil {
		s.watchers = map[*listener]bool{}
	}
	s.watchers[l] = true
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		delete(s.watchers, l)
		s.mu.Unlock()
	}
}

// changed tells the watching streams that t's status changed. Call it
// without s.mu held.
func (s *taskStore) changed(t *task) {
	s.mu.Lock()
	ws := make([]*listener, 0, len(s.watchers))
	for l := range s.watchers {
		ws = append(ws, l)
	}
	s.mu.Unlock()
	for _, l := range ws {
		l.onTask(t)
	}
}

func (e *engine) tasksUpdate(_ context.Context, call *protocol.Call, _ Revision, state any) protocol.Reply {
	t, raw, jerr := e.taskRequest(call)
	if jerr != nil {
		return protocol.Reply{State: state, Err: jerr}
	}
	if raw == nil || raw[0] != '{' {
		return protocol.Reply{State: state, Err: protocol.InvalidParams(`"inputResponses" must be an object`)}
	}
	s := e.tasks
	s.mu.Lock()
	defer s.mu.Unlock()
	_ = wire.EachMember(raw, func(k, v []byte) error {
		key, ok := wire.Unquote(k)
		ch := t.waiters[key]
		if !ok || ch == nil || v[0] != '{' {
			return nil // unknown or already answered keys are ignored
		}
		ch <- append(json.RawMessage(nil), v...)
		delete(t.waiters, key)
		for i, p := range t.pending {
			if p.key == key {
				t.pending = append(t.pending[:i:i], t.pending[i+1:]...)
				break
			}
		}
		return nil
	})
	if t.status == taskInputRequired && len(t.pending) == 0 {
		t.status, t.updated = taskWorking, s.now()
		go s.changed(t) // s.mu is held until return
	}
	return protocol.Reply{State: state, Result: resultEmpty}
}

func (e *engine) tasksCancel(_ context.Context, call *protocol.Call, _ Revision, state any) protocol.Reply {
	t, _, jerr := e.taskRequest(call)
	if jerr != nil {
		return protocol.Reply{State: state, Err: jerr}
	}
	s := e.tasks
	s.mu.Lock()
	cancel := false
	if !t.terminal() {
		t.status, t.updated = taskCancelled, s.now()
		t.pending, t.waiters = nil, nil
		cancel = true
	}
	s.mu.Unlock()
	if cancel {
		t.cancel()
		s.changed(t)
	}
	return protocol.Reply{State: state, Result: resultEmpty}
}

// taskOutbound is the back channel of a running task: notifications are
// dropped (nobody holds the call's stream any more); a server→client
// request parks the task in input_required until tasks/update answers it.
type taskOutbound struct {
	s *taskStore
	t *task
}

func (o *taskOutbound) Notify(context.Context, string, json.RawMessage) error { return nil }

func (o *taskOutbound) Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	s, t := o.s, o.t
	s.mu.Lock()
	if t.terminal() {
		s.mu.Unlock()
		return nil, context.Canceled
	}
	t.seq++
	key := inputKeyOf(ctx)
	if key == "" {
		key = "input-" + strconv.Itoa(t.seq)
	}
	ch := make(chan json.RawMessage, 1)
	if t.waiters == nil {
		t.waiters = map[string]chan json.RawMessage{}
	}
	t.waiters[key] = ch
	t.pending = append(t.pending, pendingInput{key: key, method: method, params: append(json.RawMessage(nil), params...)})
	t.status, t.updated = taskInputRequired, s.now()
	s.mu.Unlock()
	s.changed(t)
	select {
	case a := <-ch:
		return a, nil
	case <-ctx.Done():
		s.mu.Lock()
		delete(t.waiters, key)
		for i, p := range t.pending {
			if p.key == key {
				t.pending = append(t.pending[:i:i], t.pending[i+1:]...)
				break
			}
		}
		s.mu.Unlock()
		return nil, ctx.Err()
	}
}
