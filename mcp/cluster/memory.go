package cluster

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync"
	"time"
)

// MemoryMaxEvents bounds each session's GET stream log in a Memory store.
const MemoryMaxEvents = 128

// Memory is a cluster store held in this process's memory. An endpoint
// that is given no cluster uses one of its own with itself as the only
// replica; several endpoints in one process (tests, or a server that
// mounts the same MCP server twice) can share one, each with its own
// [Memory.Join], and then relay to each other over HTTP exactly as
// replicas on Redis do.
//
// It keeps records until their ttl passes without a Create, Save or
// Touch, or until End; expired records are dropped when next looked at,
// and swept from time to time. Notices are delivered on the goroutine of
// the call that caused them, one at a time per replica: a change
// reaches every replica's sessions before Announce returns, and is never
// merged with another.
//
// Pitfall: nothing survives the process, so Memory shares sessions only
// among endpoints of one process.
type Memory struct {
	mu       sync.Mutex
	sessions map[string]*memSession
	members  map[string]*Member
	joined   int
	creates  int
	changes  int64 // the number of the last change announced
}

type memSession struct {
	rec     Record
	expires time.Time
	log     []Event
}

// NewMemory returns an empty store.
func NewMemory() *Memory {
	return &Memory{sessions: map[string]*memSession{}, members: map[string]*Member{}}
}

// Join adds a replica whose endpoint other replicas reach at url ("" when
// none does: a store with one replica never relays) and returns its view
// of the store, for [mcp.Options.Cluster]. The replica is alive until
// Leave.
//
// Replica ids are "m1", "m2", … in the order replicas join: unique in the
// store, which is all a replica id must be.
func (m *Memory) Join(url string) *Member {
	r := &Member{m: m, watchers: map[int]func(Notice){}}
	m.mu.Lock()
	m.joined++
	r.self = Replica{ID: "m" + strconv.Itoa(m.joined), URL: url}
	m.members[r.self.ID] = r
	m.mu.Unlock()
	return r
}

// Member is one replica's Cluster on a Memory store.
type Member struct {
	m    *Memory
	self Replica

	mu       sync.Mutex // guards watchers and nextW
	watchers map[int]func(Notice)
	nextW    int
	deliver  sync.Mutex // one notice at a time
}

var _ Cluster = (*Member)(nil)

// Leave makes the replica gone: Locate reports ErrReplicaGone for it, and
// its sessions are claimed by the next replica that gets a request for
// them. It no longer hears notices.
func (r *Member) Leave() {
	r.m.mu.Lock()
	delete(r.m.members, r.self.ID)
	r.m.mu.Unlock()
	r.mu.Lock()
	clear(r.watchers)
	r.mu.Unlock()
}

// Self implements Directory.
func (r *Member) Self() Replica { return r.self }

// live returns session id unless it is missing or expired; m.mu is held.
func (m *Memory) live(id string, now time.Time) *memSession {
	s := m.sessions[id]
	if s != nil && now.After(s.expires) {
		delete(m.sessions, id)
		return nil
	}
	return s
}

// sweep drops expired sessions, every 1,024 creates; m.mu is held.
func (m *Memory) sweep(now time.Time) {
	if m.creates++; m.creates%1024 != 0 {
		return
	}
	for id, s := range m.sessions {
		if now.After(s.expires) {
			delete(m.sessions, id)
		}
	}
}

func (s *memSession) set(rec *Record, owner string) {
	keep := s.rec.Seq
	s.rec = *rec
	s.rec.Owner, s.rec.OwnerURL = owner, ""
	s.rec.Client = slices.Clone(rec.Client)
	s.rec.Subscriptions = slices.Clone(rec.Subscriptions)
	s.rec.State = slices.Clone(rec.State)
	s.rec.Seq = max(keep, rec.Seq)
}

// Create implements Directory.
func (r *Member) Create(_ context.Context, rec *Record, ttl time.Duration) error {
	m, now := r.m, time.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweep(now)
	s := m.live(rec.ID, now)
	if s != nil && s.rec.Owner != "" && s.rec.Owner != r.self.ID {
		return ErrSessionMoved
	}
	if s == nil {
		s = &memSession{}
		m.sessions[rec.ID] = s
	}
	s.set(rec, r.self.ID)
	s.expires = now.Add(ttl)
	return nil
}

// Save implements Directory.
func (r *Member) Save(_ context.Context, rec *Record, ttl time.Duration) error {
	m, now := r.m, time.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.live(rec.ID, now)
	switch {
	case s == nil:
		return ErrSessionUnknown
	case s.rec.Owner != r.self.ID:
		return ErrSessionMoved
	}
	s.set(rec, r.self.ID)
	s.expires = now.Add(ttl)
	return nil
}

// Load implements Directory.
func (r *Member) Load(_ context.Context, id string) (*Record, error) {
	m := r.m
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.live(id, time.Now())
	if s == nil {
		return nil, ErrSessionUnknown
	}
	rec := s.rec
	if n := len(s.log); n > 0 {
		rec.Seq = max(rec.Seq, s.log[n-1].Seq)
	}
	rec.Client = slices.Clone(rec.Client)
	rec.Subscriptions = slices.Clone(rec.Subscriptions)
	rec.State = slices.Clone(rec.State)
	if o := m.members[rec.Owner]; o != nil {
		rec.OwnerURL = o.self.URL
	}
	return &rec, nil
}

// Touch implements Directory.
func (r *Member) Touch(_ context.Context, id string, ttl time.Duration) error {
	m, now := r.m, time.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.live(id, now)
	if s == nil {
		return ErrSessionUnknown
	}
	s.expires = now.Add(ttl)
	return nil
}

// Claim implements Directory.
func (r *Member) Claim(_ context.Context, id, from string) (bool, error) {
	m := r.m
	m.mu.Lock()
	s := m.live(id, time.Now())
	if s == nil || s.rec.Owner != from {
		m.mu.Unlock()
		return false, nil
	}
	s.rec.Owner = r.self.ID
	old := m.members[from]
	m.mu.Unlock()
	if old != nil && old != r {
		old.notify(Notice{Kind: NoticeMoved, Session: id})
	}
	return true, nil
}

// Release implements Directory. A session released by the store's only
// replica ends: no other replica could ever take it.
func (r *Member) Release(_ context.Context, ids ...string) error {
	m, now := r.m, time.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, id := range ids {
		if s := m.live(id, now); s != nil && s.rec.Owner == r.self.ID {
			s.rec.Owner = ""
			if len(m.members) == 1 {
				delete(m.sessions, id)
			}
		}
	}
	return nil
}

// End implements Directory.
func (r *Member) End(_ context.Context, id string) error {
	m := r.m
	m.mu.Lock()
	delete(m.sessions, id)
	m.mu.Unlock()
	return nil
}

// Locate implements Directory.
func (r *Member) Locate(_ context.Context, replica string) (string, error) {
	m := r.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if o := m.members[replica]; o != nil {
		return o.self.URL, nil
	}
	return "", ErrReplicaGone
}

// Append implements Log. The store keeps each event's Data: do not
// modify it after.
func (r *Member) Append(events ...Event) {
	m, now := r.m, time.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, ev := range events {
		s := m.live(ev.Session, now)
		if s == nil || s.rec.Owner != r.self.ID || len(s.log) > 0 && ev.Seq <= s.log[len(s.log)-1].Seq {
			continue
		}
		if len(s.log) == MemoryMaxEvents {
			copy(s.log, s.log[1:])
			s.log = s.log[:len(s.log)-1]
		}
		s.log = append(s.log, Event{Seq: ev.Seq, Data: ev.Data, Change: ev.Change})
	}
}

// Events implements Log.
func (r *Member) Events(_ context.Context, session string, after int64) ([]Event, error) {
	m := r.m
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.live(session, time.Now())
	if s == nil {
		return nil, nil
	}
	var out []Event
	for _, ev := range s.log {
		if ev.Seq > after {
			out = append(out, ev)
		}
	}
	return out, nil
}

// Recover implements Directory.
func (r *Member) Recover(ctx context.Context, recs []*Record, ttl time.Duration) (moved []string, err error) {
	for _, rec := range recs {
		if err := r.Create(ctx, rec, ttl); errors.Is(err, ErrSessionMoved) {
			moved = append(moved, rec.ID)
		}
	}
	return moved, nil
}

// Announce implements Bus: every replica of the store, this one
// included, hears the change before Announce returns, numbered in the
// order of the calls.
func (r *Member) Announce(c Change, data []byte) {
	m := r.m
	m.mu.Lock()
	m.changes++
	n := Notice{Kind: NoticeChange, Change: c, Data: data, Seq: m.changes}
	to := make([]*Member, 0, len(m.members))
	for _, o := range m.members {
		to = append(to, o)
	}
	m.mu.Unlock()
	for _, o := range to {
		o.notify(n)
	}
}

// Watch implements Bus.
func (r *Member) Watch(fn func(Notice)) (stop func()) {
	r.mu.Lock()
	id := r.nextW
	r.nextW++
	r.watchers[id] = fn
	r.mu.Unlock()
	return func() {
		r.mu.Lock()
		delete(r.watchers, id)
		r.mu.Unlock()
	}
}

func (r *Member) notify(n Notice) {
	r.deliver.Lock()
	defer r.deliver.Unlock()
	r.mu.Lock()
	fns := make([]func(Notice), 0, len(r.watchers))
	for _, fn := range r.watchers {
		fns = append(fns, fn)
	}
	r.mu.Unlock()
	for _, fn := range fns {
		fn(n)
	}
}
