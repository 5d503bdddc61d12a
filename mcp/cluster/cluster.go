// Package cluster holds the seams that let the replicas of an MCP server
// share their sessions behind a load balancer with no stickiness: a
// [Directory] of sessions and their owners, the [Log] that keeps each
// session's GET stream for a replica that takes it over, and the [Bus]
// that carries registry changes and notices between replicas. Package
// mcpredis provides all three on Redis; [Memory] provides them in this
// process's memory, and is what an endpoint uses when it is given none.
//
// # Ownership
//
// The model is ownership and relay. The replica that created a session
// (its owner) runs it in memory exactly as a single process does: its
// calls, its stateful callbacks one at a time, its response streams, the
// server→client requests that wait for the client's answer, and the
// events of its GET stream. The Directory holds the session's [Record]
// (revision, client capabilities, identity, log level, subscriptions,
// and the handler's state when the handler can encode it). A request
// that lands on another replica is relayed over HTTP to the owner, and
// the owner's answer, JSON or an event stream, goes back through the
// replica the client talks to.
//
// When the owner is gone (it stopped beating, or a relay cannot connect),
// the replica that notices claims the session, rebuilds it from the
// record and serves the request itself: the session goes on with its
// metadata, its saved state and its GET stream's log. What the dead owner
// held only in memory is lost: calls in flight (a client that resumes
// such a call's stream is answered with its error), their streams, and
// server→client requests waiting for an answer. A request relayed over a
// kept-alive connection to an owner that dies at that instant may be
// served again by the replica that takes the session over. A handler that
// keeps state it cannot encode cannot move: its sessions end with 404 and
// the client initializes again, as the specification intends.
//
// # Relays
//
// A relay costs the relaying replica one HTTP exchange with the owner and,
// in the steady state, no store call: it remembers the owner of each
// session it relays, and each replica's URL, until the owner answers 421
// (the session moved: the store is asked again), 404 (it ended) or cannot
// be reached (it is gone: the session is taken over). An owner that
// accepts the relay and does not answer (a stopped process) is waited for
// until its lease lapses, then the session is taken over here; while it
// still beats, until it would have ended any call, then 502. A relayed
// event stream that goes silent (not even a keep-alive comment for twice
// their interval) is cut once its owner's lease has lapsed, and its client
// resumes it where the session is taken over. Relays become
// rare behind a balancer that sends each session's requests to the replica
// that answered its initialize (it reads the Mcp-Session-Id of the answer)
// and, for a session it did not see start, hashes the id, so that every
// balancer agrees and a session stays on the replica that took it over.
// Hashing the id alone does not make them rare: the replica that answers
// the initialize chooses the id after the balancer chose that replica, so
// R−1 sessions in R are relayed on every request, as with no stickiness.
// The example app's roundrobin balancer does both with -sticky.
//
// # Events and changes
//
// The owner numbers the events of each session's GET stream and keeps
// them in memory, where its clients read them; it also hands them to the
// Log ([Log.Append], which never waits for the store), so that a replica
// that takes the session over can replay what its client missed. No
// event of one session travels between replicas: all of them are made on
// its owner.
//
// A registry change (a list changed, a resource updated) is one small
// notice: the replica where it happened announces it ([Bus.Announce]),
// the store numbers it and tells every replica once ([NoticeChange]), and
// each replica expands it for the sessions it owns, from what it holds in
// memory: every initialized session for a list change, the sessions
// subscribed to the URI for an update. A session's log refers to the
// change by its number, so that the notification is stored once however
// many sessions hear it. Changes of one kind (the same notification and
// URI) announced close together, by one replica or several, make one
// notice: the same tool registered on every replica reaches each session
// once, and a burst of updates of one resource costs one notice, sent
// after the last of them.
//
// # Cost
//
// What each piece costs, whatever the store:
//
//   - per session, in the store: its record (a few hundred bytes: the
//     client's capabilities and the handler's state dominate) and its
//     log, the last few events of its GET stream, where a change costs a
//     reference (a few bytes), not a copy; a session whose client never
//     opened its GET stream logs nothing.
//   - per session, on its owner: the session in memory (its events
//     share the notification of a change), and no goroutine while idle.
//   - per change: one notice to each replica, and on each replica one
//     entry per session concerned, in memory, plus one reference per
//     session concerned with a GET stream in the store, written in
//     batches; never a store call whose length grows with the number of
//     sessions.
//   - per replica: a heartbeat, and one subscription to the bus.
//
// Package mcpredis gives the figures on Redis, and what a million
// sessions need.
//
// Implementations must be safe for concurrent use. Methods that take a
// context do network I/O and must honour its deadline; the endpoint gives
// each one a short one, so that a store that is down fails requests fast
// (503) instead of hanging them.
package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// Cluster is a store that provides the three seams, as mcpredis and
// Memory do.
type Cluster interface {
	Directory
	Log
	Bus
}

// Directory records the sessions of a cluster and the replica that owns
// each.
type Directory interface {
	// Self is this replica: its id and the URL of this endpoint that
	// other replicas relay to.
	Self() Replica
	// Create records a session owned by this replica, kept for ttl after
	// the last Create, Save or Touch: a new one, or one this replica
	// records again after the store lost it. It fails with
	// ErrSessionMoved when the store holds the session for another
	// replica.
	Create(ctx context.Context, rec *Record, ttl time.Duration) error
	// Load returns a session's record, or ErrSessionUnknown.
	Load(ctx context.Context, id string) (*Record, error)
	// Save records a session's changed metadata and state. Only the owner
	// saves: it fails with ErrSessionMoved when the store holds the
	// session for another replica, and ErrSessionUnknown when it holds
	// none (a late save never brings an ended session back).
	Save(ctx context.Context, rec *Record, ttl time.Duration) error
	// Touch keeps a session's record (and its log) for another ttl.
	Touch(ctx context.Context, id string, ttl time.Duration) error
	// Claim makes this replica the owner of session id if its owner is
	// still from, and reports whether it did. A replica that lost a
	// session this way hears NoticeMoved.
	Claim(ctx context.Context, id, from string) (bool, error)
	// Release gives up this replica's ownership of sessions without
	// ending them (the replica shuts down): the next request for each
	// claims it. Many ids are released in batches, each a few
	// milliseconds of the store's time; when ctx ends first, Release
	// returns its error and the sessions not released yet stay this
	// replica's, to be taken over once it stops beating, as after a
	// crash.
	Release(ctx context.Context, ids ...string) error
	// End forgets an ended session: its record and its log.
	End(ctx context.Context, id string) error
	// Locate returns the relay URL of a live replica, or ErrReplicaGone
	// when it has stopped beating.
	Locate(ctx context.Context, replica string) (string, error)
	// Recover records again, in batches, the sessions this replica runs,
	// after it heard NoticeReset (the store lost its records), and then
	// tells the store that it has. It returns the ids of the sessions
	// another replica holds now (the caller ends them here), or why it
	// could not finish (then the replica hears NoticeReset again, once
	// the store answers). A store that loses its records answers requests
	// for sessions it does not know with an error other than
	// ErrSessionUnknown (503, not 404) until every live replica has
	// recovered.
	Recover(ctx context.Context, recs []*Record, ttl time.Duration) (moved []string, err error)
}

// Log keeps the recent events of each session's GET stream, so that a
// replica that takes a session over can replay what its client missed.
type Log interface {
	// Append logs events of the GET streams of sessions this replica
	// owns, numbered by this replica (Event.Seq, growing per session). It
	// does not wait for the store: events are written in the background,
	// in the order of the calls for each session, and a store that does
	// not answer loses them (a replica that takes the session over then
	// replays less). Call it for each session in the order of its events.
	// The log is bounded: the oldest events are dropped. An event for a
	// session that another replica owns now is dropped.
	Append(events ...Event)
	// Events returns the logged events of a session after seq, oldest
	// first, a change's notification filled in (Event.Data).
	Events(ctx context.Context, session string, after int64) ([]Event, error)
}

// Bus carries what the replicas tell each other.
type Bus interface {
	// Announce tells every replica, this one included, of a registry
	// change: each hears NoticeChange, with data, the notification, and
	// expands it for the sessions it owns. It returns at once: the change
	// is queued for the store, and a change of the same kind already
	// queued is not queued again; none is ever dropped. Changes of the
	// same kind announced close together, here or on other replicas, may
	// make one notice, sent after the last of them.
	Announce(c Change, data []byte)
	// Watch delivers notices to fn, one at a time and in order, until
	// the returned function is called. fn must not block for long, and
	// must not call Announce or Claim (which may deliver notices).
	Watch(fn func(Notice)) (stop func())
}

// HealthChecker is what a store that can tell whether it answers
// implements (mcpredis does; Memory, which always answers, does not): a
// readiness probe asks it, so that a balancer stops sending requests to
// a replica whose store is unreachable.
type HealthChecker interface {
	// Healthy returns nil when the store answered recently, or why it
	// does not. It is cheap enough to call on every probe: it need not
	// reach the store when it heard from it a moment ago, and honours
	// ctx when it must.
	Healthy(ctx context.Context) error
}

// Replica names one replica of a cluster.
type Replica struct {
	// ID is unique per process (a restarted replica is a new one).
	ID string
	// URL is this endpoint as other replicas reach it, such as
	// "http://10.0.0.7:8080/mcp".
	URL string
}

// Record is what a Directory keeps of a session.
type Record struct {
	ID    string
	Owner string // the owning replica's ID; "" once released
	// OwnerURL is the owner's relay URL when Load found it alive ("": ask
	// Locate), saving a round trip on the relay path.
	OwnerURL string
	Identity string
	// Revision is the negotiated protocol version ("2025-11-25").
	Revision string
	// Client is the client's capabilities as it declared them; nil for
	// none.
	Client json.RawMessage
	// LogLevel is the level set with logging/setLevel ("warning"); ""
	// while unset.
	LogLevel string
	// Initialized is set once the client sent notifications/initialized:
	// list_changed notifications go to initialized sessions only.
	Initialized   bool
	Subscriptions []string
	// State is the handler's state as its codec encoded it; Movable is
	// false when the handler keeps state it cannot encode, and the
	// session cannot move to another replica.
	State   []byte
	Movable bool
	// Seq is the highest sequence number of the session's GET stream
	// when the record was saved; a replica that takes the session over
	// numbers its events after it and after the log's, so that event ids
	// never repeat.
	Seq int64
}

// Event is one message of a session's GET stream.
type Event struct {
	// Session is the session's id, for Append; Events leaves it empty.
	Session string
	Seq     int64
	Data    []byte
	// Change is the number of the registry change (Notice.Seq of its
	// NoticeChange) whose notification Data is, 0 for a message of the
	// session's own: the store keeps a change's notification once and
	// the session's log refers to it.
	Change int64
}

// Change is a registry change a replica announces.
type Change struct {
	// Notification is the method sessions are told with, such as
	// "notifications/tools/list_changed".
	Notification string
	// URI names the resource of "notifications/resources/updated": only
	// the sessions subscribed to it are told. "" for list changes, which
	// every initialized session hears.
	URI string
}

// NoticeKind says what a [Notice] is about.
type NoticeKind uint8

// The kinds of notice.
const (
	// NoticeChange: a registry change was announced (on this replica or
	// another): Change, its notification Data, and its number Seq, which
	// grows with each change the store numbers (an Event's Change).
	NoticeChange NoticeKind = iota + 1
	// NoticeMoved: another replica claimed session Session; this
	// replica's copy ends quietly.
	NoticeMoved
	// NoticeReset: the store lost this replica's records (it restarted
	// empty); the replica records its live sessions again (Recover).
	NoticeReset
)

// Notice is what a [Bus] tells the endpoints of this replica.
type Notice struct {
	Kind    NoticeKind
	Session string
	Seq     int64
	Data    []byte
	Change  Change
}

// Errors a Directory or Log returns.
var (
	// ErrSessionUnknown: the store has no record of the session (it never
	// existed, ended, or expired).
	ErrSessionUnknown = errors.New("cluster: session unknown")
	// ErrReplicaGone: the replica stopped beating.
	ErrReplicaGone = errors.New("cluster: replica gone")
	// ErrSessionMoved: the store holds the session for another replica.
	ErrSessionMoved = errors.New("cluster: session owned by another replica")
)
