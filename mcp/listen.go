package mcp

import (
	"context"
	"encoding/json"
	"sort"
	"sync"

	"go.opentelemetry.io/otel/trace"

	"github.com/saguaro-go/saguaro/internal/jsonstr"
	"github.com/saguaro-go/saguaro/mcp/internal/protocol"
	"github.com/saguaro-go/saguaro/mcp/internal/wire"
)

// subscriptions/listen (2026-07-28): a request answered with a long-lived
// stream of list changes and resource updates. It opens with
// notifications/subscriptions/acknowledged naming the part of the
// client's filter this server honours; every notification carries
// _meta["io.modelcontextprotocol/subscriptionId"] = the request's id; only
// the kinds the client asked for are sent. With the tasks extension, a
// filter's taskIds asks for notifications/tasks (the task as tasks/get
// shows it) each time one of the caller's tasks changes status, starting
// with its state when the stream opens. The client ends the subscription
// by closing the stream.
//
// A subscription never queues without bound: list changes coalesce into
// one pending flag per kind, resource updates into a set of pending URIs
// (bounded by the filter), task changes into the latest state per task,
// and the transport is woken once until it takes what is pending.

// ListenOptions bounds subscriptions/listen ([Options.Listen]), the
// 2026-07-28 long-lived stream of list changes and resource updates a
// client asks for in place of a session's notifications. Zero fields take
// the defaults.
type ListenOptions struct {
	// MaxStreams bounds the open streams of the endpoint; one more is
	// answered 429. Default 10,000. Limits.Streams bounds one caller's.
	MaxStreams int
	// MaxResourceURIs bounds resourceSubscriptions (and taskIds) in one
	// filter (InvalidParams beyond it); default 256.
	MaxResourceURIs int
}

func (o *ListenOptions) withDefaults() ListenOptions {
	var c ListenOptions
	if o != nil {
		c = *o
	}
	if c.MaxStreams <= 0 {
		c.MaxStreams = 10_000
	}
	if c.MaxResourceURIs <= 0 {
		c.MaxResourceURIs = 256
	}
	return c
}

// listenFilter is a SubscriptionFilter.
type listenFilter struct {
	Tools     bool     `json:"toolsListChanged,omitempty"`
	Prompts   bool     `json:"promptsListChanged,omitempty"`
	Resources bool     `json:"resourcesListChanged,omitempty"`
	URIs      []string `json:"resourceSubscriptions,omitempty"`
	// TaskIDs (the tasks extension) asks for notifications/tasks about
	// these tasks of the caller.
	TaskIDs []string `json:"taskIds,omitempty"`
}

// listener is one open subscription.
type listener struct {
	id    wire.ID
	uris  map[string]bool
	tasks map[string]bool
	owner string // the caller: only its tasks are reported
	store *taskStore
	wake  func()
	// want says which list changes were granted.
	want    [protocol.ResourceUpdated + 1]bool
	unwatch func()
	// tel traces what the subscription sends (nil: nothing), each
	// message a child of parent: the trace context of the listen
	// request's _meta, else of the request's transport.
	tel    *telemetry
	parent context.Context

	mu      sync.Mutex
	ack     []byte // the acknowledgement, until taken
	kinds   [protocol.ResourceUpdated + 1]bool
	updated map[string]bool
	changed map[string]*task // tasks whose status changed
	woken   bool
}

// Listen implements protocol.Engine: it reads the filter, grants what the
// handler can report, and watches the caller's named tasks.
func (e *engine) Listen(ctx context.Context, call *protocol.Call, wake func()) (protocol.Listener, *wire.Error) {
	var want listenFilter
	hasFilter := false
	perr := protocol.EachParam(call.Params, func(key, val []byte) *wire.Error {
		if !wire.KeyIs(key, "notifications") {
			return nil
		}
		hasFilter = true
		if val[0] != '{' || json.Unmarshal(val, &want) != nil {
			return protocol.InvalidParams(`"notifications" must be a SubscriptionFilter object`)
		}
		return nil
	})
	if perr == nil && !hasFilter {
		perr = protocol.Missing("notifications")
	}
	if max := e.listen.MaxResourceURIs; perr == nil && (len(want.URIs) > max || len(want.TaskIDs) > max) {
		perr = protocol.InvalidParams("at most %d resourceSubscriptions or taskIds", max)
	}
	if perr != nil {
		return nil, perr
	}
	var got listenFilter
	if e.notifier != nil {
		caps := e.Capabilities(Rev20260728)
		got.Tools = want.Tools && caps.Tools != nil && caps.Tools.ListChanged
		got.Prompts = want.Prompts && caps.Prompts != nil && caps.Prompts.ListChanged
		got.Resources = want.Resources && caps.Resources != nil && caps.Resources.ListChanged
		if caps.Resources != nil && caps.Resources.Subscribe {
			got.URIs = want.URIs
		}
	}
	if e.tasks != nil && clientHasExtension(clientOf(call), ExtTasks) {
		got.TaskIDs = want.TaskIDs
	}
	l := &listener{id: call.ID, uris: map[string]bool{}, tasks: map[string]bool{},
		owner: call.Identity, store: e.tasks, wake: wake, unwatch: func() {}}
	if e.tel != nil && e.tel.tracer != nil {
		l.tel, l.parent = e.tel, ctx
		if tg := targetOf(call); !tg.meta.empty() {
			l.parent = e.tel.prop.Extract(ctx, &tg.meta)
		}
	}
	l.want[protocol.ToolsChanged] = got.Tools
	l.want[protocol.PromptsChanged] = got.Prompts
	l.want[protocol.ResourcesChanged] = got.Resources
	for _, u := range got.URIs {
		l.uris[u] = true
	}
	for _, id := range got.TaskIDs {
		l.tasks[id] = true
	}
	ack, _ := wire.Marshal(&got)
	p := append([]byte(`{"notifications":`), ack...)
	p = l.appendMeta(append(p, ','))
	l.ack = wire.AppendNotification(nil, "notifications/subscriptions/acknowledged", append(p, '}'))
	if len(l.tasks) > 0 {
		// Watch first, then report each named task's current state, so
		// no change falls between the client's tools/call and its listen.
		l.unwatch = e.tasks.watch(l)
		for id := range l.tasks {
			e.tasks.mu.Lock()
			tk := e.tasks.m[id]
			e.tasks.mu.Unlock()
			if tk != nil {
				l.onTask(tk)
			}
		}
	}
	return l, nil
}

// appendMeta appends `"_meta":{subscriptionId}`.
func (l *listener) appendMeta(p []byte) []byte {
	p = append(p, `"_meta":{"`+protocol.MetaSubscriptionID+`":`...)
	p = l.id.AppendJSON(p)
	return append(p, '}')
}

// Close implements protocol.Listener.
func (l *listener) Close() { l.unwatch() }

// poke wakes the transport once until it takes; l.mu is held.
func (l *listener) pokeLocked() func() {
	if l.woken {
		return func() {}
	}
	l.woken = true
	return l.wake
}

// onTask is the task store's hook: it must not block.
func (l *listener) onTask(t *task) {
	if !l.tasks[t.id] || t.owner != l.owner {
		return
	}
	l.mu.Lock()
	if l.changed == nil {
		l.changed = map[string]*task{}
	}
	l.changed[t.id] = t
	wake := l.pokeLocked()
	l.mu.Unlock()
	wake()
}

// Changed implements protocol.Listener.
func (l *listener) Changed(c protocol.Change) {
	l.mu.Lock()
	switch {
	case c.Kind == protocol.ResourceUpdated && l.uris[c.URI]:
		if l.updated == nil {
			l.updated = map[string]bool{}
		}
		l.updated[c.URI] = true
	case c.Kind < protocol.ResourceUpdated && l.want[c.Kind]:
		l.kinds[c.Kind] = true
	default:
		l.mu.Unlock()
		return
	}
	wake := l.pokeLocked()
	l.mu.Unlock()
	wake()
}

// Take implements protocol.Listener.
func (l *listener) Take(dst [][]byte) [][]byte {
	l.mu.Lock()
	ack := l.ack
	l.ack = nil
	kinds := l.kinds
	l.kinds = [protocol.ResourceUpdated + 1]bool{}
	uris := make([]string, 0, len(l.updated))
	for u := range l.updated {
		uris = append(uris, u)
	}
	l.updated = nil
	changed := l.changed
	l.changed = nil
	l.woken = false
	l.mu.Unlock()
	first := len(dst)
	if ack != nil {
		dst = append(dst, ack)
	}
	for _, k := range [...]protocol.ChangeKind{protocol.ToolsChanged, protocol.PromptsChanged, protocol.ResourcesChanged} {
		if kinds[k] {
			dst = append(dst, l.message(protocol.Change{Kind: k}.Notification(), ""))
		}
	}
	sort.Strings(uris)
	for _, u := range uris {
		dst = append(dst, l.message("notifications/resources/updated", u))
	}
	ids := make([]string, 0, len(changed))
	for id := range changed {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if m := l.taskMessage(changed[id]); m != nil {
			dst = append(dst, m)
		}
	}
	if l.tel != nil {
		// Each message's span ends as it is handed to the transport,
		// as a call's notifications' spans end once they are queued.
		for i := first; i < len(dst); i++ {
			var span trace.Span
			if dst[i], span = l.tel.unprompted(l.parent, protocol.Rev20260728, "", dst[i], false); span != nil {
				span.End()
			}
		}
	}
	return dst
}

// message encodes one notification of this subscription.
func (l *listener) message(method, uri string) []byte {
	p := []byte(`{`)
	if uri != "" {
		p = append(p, `"uri":`...)
		p = jsonstr.AppendString(p, uri)
		p = append(p, ',')
	}
	p = l.appendMeta(p)
	return wire.AppendNotification(nil, method, append(p, '}'))
}

// taskMessage encodes notifications/tasks: the task's current state, as
// tasks/get shows it, stamped with the subscription id.
func (l *listener) taskMessage(t *task) []byte {
	b, err := l.store.detail(t)
	if err != nil {
		return nil
	}
	p := append(b[:len(b)-1:len(b)-1], ',')
	p = l.appendMeta(p)
	return wire.AppendNotification(nil, "notifications/tasks", append(p, '}'))
}
