package streamable

import (
	"net/url"
	"sync"
	"sync/atomic"
)

// owners remembers, for the sessions this replica relays, which replica
// owns each and where that replica listens, so that a relayed request in
// the steady state costs no store round trip: only the first request of
// a session that lands here, and the first after its owner changed, load
// its record.
//
// An entry is dropped when it proves wrong: the owner answers 421 (it no
// longer runs the session, or another process listens at its address),
// 404 (the session ended), or cannot be reached (every session of that
// replica then goes at once), when the session is deleted through this
// replica or taken over by it, and when the cluster says the session
// moved. A session whose identity is cached is checked against it exactly
// as against its record: the identity of a session never changes.
//
// Reads take no lock (sync.Map); the map is bounded, and sheds an eighth
// of its entries, whichever come first, when it is full.
type owners struct {
	max     int
	n       atomic.Int64
	shed    sync.Mutex // one shedder at a time
	entries sync.Map   // session id → *ownerEntry
	peers   sync.Map   // replica id → *peer
}

// ownerEntry is what a replica remembers of another replica's session.
type ownerEntry struct {
	peer     *peer
	identity string
}

// peer is another replica as this one relays to it.
type peer struct {
	id  string
	url string
	// scheme, host, path and rawPath are url's, parsed once; bad is set
	// when url is not an absolute URL.
	scheme, host, path, rawPath string
	bad                         bool
	// gone is set once a relay could not reach it: every session cached
	// with this peer is then looked up again.
	gone atomic.Bool
}

func newOwners(max int) *owners { return &owners{max: max} }

// ownersBound is how many sessions' owners a replica remembers: as many
// sessions as it may run itself (a replica relays for about as many as
// it runs when a balancer spreads sessions evenly), at least 1,024.
func ownersBound(c *SessionConfig) int {
	if c != nil && c.MaxSessions > 1024 {
		return c.MaxSessions
	}
	return 1024
}

// get returns the cached owner of session id, nil when none is known (or
// its replica was found gone).
func (o *owners) get(id string) *ownerEntry {
	v, ok := o.entries.Load(id)
	if !ok {
		return nil
	}
	e := v.(*ownerEntry)
	if e.peer.gone.Load() {
		o.drop(id, e)
		return nil
	}
	return e
}

// put remembers that replica owner, at url, runs session id, bound to
// identity, and returns the entry.
func (o *owners) put(id, owner, url, identity string) *ownerEntry {
	e := &ownerEntry{peer: o.peer(owner, url), identity: identity}
	if o.n.Load() >= int64(o.max) {
		o.shedSome()
	}
	if _, loaded := o.entries.Swap(id, e); !loaded {
		o.n.Add(1)
	}
	return e
}

// forget drops session id's entry.
func (o *owners) forget(id string) {
	if _, loaded := o.entries.LoadAndDelete(id); loaded {
		o.n.Add(-1)
	}
}

// drop drops session id's entry if it is still e: a request that found
// e wrong does not undo what a concurrent one learnt since.
func (o *owners) drop(id string, e *ownerEntry) {
	if o.entries.CompareAndDelete(id, e) {
		o.n.Add(-1)
	}
}

// shedSome drops entries until the map holds seven eighths of its bound.
func (o *owners) shedSome() {
	if !o.shed.TryLock() {
		return
	}
	defer o.shed.Unlock()
	keep := int64(o.max) - int64(o.max)/8
	o.entries.Range(func(k, _ any) bool {
		if o.n.Load() <= keep {
			return false
		}
		o.forget(k.(string))
		return true
	})
}

// peer returns replica id at url, one value per live replica. A replica
// found gone is replaced by a fresh value when the store names it again
// (the store knows better than one failed dial), as is one whose URL
// changed.
func (o *owners) peer(id, u string) *peer {
	if v, ok := o.peers.Load(id); ok {
		p := v.(*peer)
		if p.url == u && !p.gone.Load() {
			return p
		}
	}
	p := newPeer(id, u)
	o.peers.Store(id, p)
	return p
}

// known returns replica id as last seen alive, nil when it is not known.
func (o *owners) known(id string) *peer {
	if v, ok := o.peers.Load(id); ok {
		if p := v.(*peer); !p.gone.Load() {
			return p
		}
	}
	return nil
}

// lost marks p gone: the sessions cached with it are looked up again.
func (o *owners) lost(p *peer) {
	p.gone.Store(true)
	o.peers.CompareAndDelete(p.id, p)
}

func newPeer(id, u string) *peer {
	p := &peer{id: id, url: u}
	pu, err := url.Parse(u)
	if err != nil || pu.Host == "" || (pu.Scheme != "http" && pu.Scheme != "https") {
		p.bad = true
		return p
	}
	p.scheme, p.host, p.path, p.rawPath = pu.Scheme, pu.Host, pu.Path, pu.RawPath
	return p
}
