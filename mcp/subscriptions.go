package mcp

import (
	"encoding/json"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/saguaro-go/saguaro/controller"
	"github.com/saguaro-go/saguaro/mcp/internal/wire"
	"github.com/saguaro-go/saguaro/sse"
)

// subscriptions/listen (2026-07-28): a POST whose response is a
// long-lived event stream of list changes and resource updates, served as
// a controller loop. The stream opens with
// notifications/subscriptions/acknowledged naming the part of the
// client's filter this server honours; every notification carries
// _meta["io.modelcontextprotocol/subscriptionId"] = the request's id; only
// the kinds the client asked for are sent. With the tasks extension, a
// filter's taskIds asks for notifications/tasks (the task as tasks/get
// shows it) each time one of the caller's tasks changes status, starting
// with its state when the stream opens. Keep-alive comments go out while
// nothing happens. The client ends the subscription by closing the
// stream.
//
// A subscriber never queues without bound: list changes coalesce into one
// pending flag per kind, resource updates into a set of pending URIs
// (bounded by the filter), and one wake-up message at a time sits in the
// connection's mailbox.

// ListenOptions bounds subscriptions/listen ([Options.Listen]). Zero
// fields take the defaults.
type ListenOptions struct {
	// MaxPerIdentity bounds the open streams of one caller (by
	// Options.Identity; everyone is one caller without it); one more is
	// answered 429. Default 16.
	MaxPerIdentity int
	// MaxStreams bounds the open streams of the endpoint; default 10,000.
	MaxStreams int
	// MaxResourceURIs bounds resourceSubscriptions in one filter (400
	// beyond it); default 256.
	MaxResourceURIs int
	// KeepAlive is the interval of keep-alive comments on modern event
	// streams; default 25s.
	KeepAlive time.Duration
}

func (o *ListenOptions) withDefaults() ListenOptions {
	var c ListenOptions
	if o != nil {
		c = *o
	}
	if c.MaxPerIdentity <= 0 {
		c.MaxPerIdentity = 16
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

// listenLimits counts open streams.
type listenLimits struct {
	mu    sync.Mutex
	by    map[string]int
	total int
}

func (l *listenLimits) acquire(id string, o ListenOptions) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.by == nil {
		l.by = map[string]int{}
	}
	if l.total >= o.MaxStreams || l.by[id] >= o.MaxPerIdentity {
		return false
	}
	l.total++
	l.by[id]++
	return true
}

func (l *listenLimits) release(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.total--
	if l.by[id]--; l.by[id] <= 0 {
		delete(l.by, id)
	}
}

var errTooManyListeners = wire.NewError(wire.InternalError, "Too many subscriptions: close one first")

// listener is one open subscriptions/listen stream: the loop's state.
type listener struct {
	id     wire.ID
	filter listenFilter
	uris   map[string]bool
	tasks  map[string]bool
	owner  string // the caller: only its tasks are reported
	store  *taskStore
	mb     *controller.Mailbox

	mu      sync.Mutex
	kinds   [ResourceUpdated + 1]bool
	updated map[string]bool
	changed map[string]*task // tasks whose status changed
	woken   bool
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
	wake := !l.woken
	l.woken = true
	l.mu.Unlock()
	if wake {
		_ = l.mb.Send(listenWake{})
	}
}

// taskFrame encodes notifications/tasks: the task's current state, as
// tasks/get shows it, stamped with the subscription id.
func (l *listener) taskFrame(t *task) []byte {
	b, err := l.store.detail(t)
	if err != nil {
		return nil
	}
	p := append(b[:len(b)-1:len(b)-1], `,"_meta":{"`+metaSubscriptionID+`":`...)
	p = l.id.AppendJSON(p)
	p = append(p, "}}"...)
	ev := sse.Event{Data: wire.AppendNotification(nil, "notifications/tasks", p)}
	f, _ := ev.AppendTo(nil)
	return f
}

type listenWake struct{}

// onChange is the Server's change hook: it must not block.
func (l *listener) onChange(c Change) {
	l.mu.Lock()
	switch {
	case c.Kind == ToolsChanged && l.filter.Tools,
		c.Kind == PromptsChanged && l.filter.Prompts,
		c.Kind == ResourcesChanged && l.filter.Resources:
		l.kinds[c.Kind] = true
	case c.Kind == ResourceUpdated && l.uris[c.URI]:
		if l.updated == nil {
			l.updated = map[string]bool{}
		}
		l.updated[c.URI] = true
	default:
		l.mu.Unlock()
		return
	}
	wake := !l.woken
	l.woken = true
	l.mu.Unlock()
	if wake {
		_ = l.mb.Send(listenWake{})
	}
}

// frame encodes one notification of this subscription.
func (l *listener) frame(method, uri string) []byte {
	p := []byte(`{`)
	if uri != "" {
		p = append(p, `"uri":`...)
		p = wire.AppendString(p, uri)
		p = append(p, ',')
	}
	p = append(p, `"_meta":{"`+metaSubscriptionID+`":`...)
	p = l.id.AppendJSON(p)
	p = append(p, "}}"...)
	ev := sse.Event{Data: wire.AppendNotification(nil, method, p)}
	f, _ := ev.AppendTo(nil)
	return f
}

// handleListen is the loop of a subscription stream.
func handleListen(info any, push controller.Push, l *listener) (*listener, controller.Action) {
	switch m := info.(type) {
	case modernFrame:
		ev := sse.Event{Data: m.data}
		f, _ := ev.AppendTo(nil)
		_ = push(f)
	case listenWake:
		l.mu.Lock()
		kinds := l.kinds
		l.kinds = [ResourceUpdated + 1]bool{}
		uris := make([]string, 0, len(l.updated))
		for u := range l.updated {
			uris = append(uris, u)
		}
		l.updated = nil
		changed := l.changed
		l.changed = nil
		l.woken = false
		l.mu.Unlock()
		sort.Strings(uris)
		if kinds[ToolsChanged] {
			_ = push(l.frame("notifications/tools/list_changed", ""))
		}
		if kinds[PromptsChanged] {
			_ = push(l.frame("notifications/prompts/list_changed", ""))
		}
		if kinds[ResourcesChanged] {
			_ = push(l.frame("notifications/resources/list_changed", ""))
		}
		for _, u := range uris {
			_ = push(l.frame("notifications/resources/updated", u))
		}
		ids := make([]string, 0, len(changed))
		for id := range changed {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			if f := l.taskFrame(changed[id]); f != nil {
				_ = push(f)
			}
		}
	case keepAlive:
		_ = push(sse.AppendComment(nil, ""))
	}
	return l, controller.Continue
}

// listen serves subscriptions/listen.
func (t *transport) listen(r *controller.Request, msg *wire.Message, mc *modernCall) controller.Reply {
	o := t.opts.Listen.withDefaults()
	var want listenFilter
	hasFilter := false
	perr := eachParam(msg.Params, func(key, val []byte) *wire.Error {
		if !wire.KeyIs(key, "notifications") {
			return nil
		}
		hasFilter = true
		if val[0] != '{' || json.Unmarshal(val, &want) != nil {
			return invalidParams(`"notifications" must be a SubscriptionFilter object`)
		}
		return nil
	})
	if perr == nil && !hasFilter {
		perr = missing("notifications")
	}
	if perr == nil && (len(want.URIs) > o.MaxResourceURIs || len(want.TaskIDs) > o.MaxResourceURIs) {
		perr = invalidParams("at most %d resourceSubscriptions or taskIds", o.MaxResourceURIs)
	}
	if perr != nil {
		return modernErrorReply(http.StatusBadRequest, msg.ID, perr)
	}
	e := t.engine
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
	if e.tasks != nil && clientHasExtension(mc.client, ExtTasks) {
		got.TaskIDs = want.TaskIDs
	}
	ident := ""
	if t.opts.Identity != nil {
		ident = t.opts.Identity(r.Request)
	}
	if !e.listeners.acquire(ident, o) {
		h := jsonHeader()
		h.Set("Retry-After", "5")
		return controller.Buffered(http.StatusTooManyRequests, h, appendModernError(nil, msg.ID, errTooManyListeners))
	}
	mb := r.Mailbox()
	l := &listener{id: msg.ID, filter: got, mb: mb, uris: map[string]bool{}, tasks: map[string]bool{}, owner: ident, store: e.tasks}
	for _, u := range got.URIs {
		l.uris[u] = true
	}
	for _, id := range got.TaskIDs {
		l.tasks[id] = true
	}
	mb.Defer(func() { e.listeners.release(ident) })

	ack, _ := wire.Marshal(&got)
	p := append([]byte(`{"notifications":`), ack...)
	p = append(p, `,"_meta":{"`+metaSubscriptionID+`":`...)
	p = msg.ID.AppendJSON(p)
	p = append(p, "}}"...)
	_ = mb.Send(modernFrame{data: wire.AppendNotification(nil, "notifications/subscriptions/acknowledged", p)})
	if e.notifier != nil {
		mb.Defer(t.changes.OnChange(l.onChange))
	}
	if len(l.tasks) > 0 {
		// Watch first, then report each named task's current state, so
		// no change falls between the client's tools/call and its listen.
		mb.Defer(e.tasks.watch(l))
		for id := range l.tasks {
			e.tasks.mu.Lock()
			tk := e.tasks.m[id]
			e.tasks.mu.Unlock()
			if tk != nil {
				l.onTask(tk)
			}
		}
	}
	mb.Every(t.keepAlive(), keepAlive{})
	h := http.Header{}
	sse.Headers(h)
	return controller.Loop(http.StatusOK, h, l, handleListen)
}
