// Package cluster holds the seams that let the replicas of an MCP server
// share their sessions behind a load balancer with no stickiness: a
// [Directory] of sessions and their owners, the [Log] of each session's
// GET stream, and the [Bus] on which replicas hear of each other. Package
// mcpredis provides all three on Redis; [Memory] provides them in this
// process's memory, and is what an endpoint uses when it is given none.
//
// The model is ownership and relay. The replica that created a session
// (its owner) runs it in memory exactly as a single process does: its
// calls, its stateful callbacks one at a time, its response streams, the
// server→client requests that wait for the client's answer. The Directory
// holds the session's [Record] (revision, client capabilities, identity,
// log level, subscriptions, and the handler's state when the handler can
// encode it) and the Log holds its GET stream. A request that lands on
// another replica is relayed over HTTP to the owner, and the owner's
// answer, JSON or an event stream, goes back through the replica the
// client talks to.
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
	// End forgets an ended session: its record, its log, its
	// subscriptions.
	End(ctx context.Context, id string) error
	// Locate returns the relay URL of a live replica, or ErrReplicaGone
	// when it has stopped beating.
	Locate(ctx context.Context, replica string) (string, error)
}

// Log keeps the event log of each session's GET stream, where every
// replica can append and the owner, or the replica that takes the session
// over, can replay.
type Log interface {
	// Append adds one message to a session's log and returns its
	// sequence number (1, 2, …), or ErrSessionUnknown. The log is bounded
	// by the implementation: the oldest events are dropped. The session's
	// owner hears NoticeEvent (a replica may also hear of its own appends,
	// and of sessions it does not run: it ignores those).
	Append(ctx context.Context, session string, data []byte) (int64, error)
	// Events returns the logged events of a session after seq, oldest
	// first.
	Events(ctx context.Context, session string, after int64) ([]Event, error)
}

// Bus carries what the replicas tell each other.
type Bus interface {
	// Announce delivers a registry change cluster-wide: data, the
	// notification, is appended to the log of every session concerned
	// (for a change with a URI, the sessions subscribed to it; otherwise
	// every initialized session), and the other replicas hear
	// NoticeChange. It must not block: the change happens on a goroutine
	// that is not the endpoint's.
	Announce(c Change, data []byte)
	// Watch delivers notices to fn, one at a time and in order, until
	// the returned function is called. fn must not block for long.
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
	// Seq is the highest sequence number of the GET stream log this
	// record was saved with; a store that lost its data (restarted)
	// continues after it, so event ids never repeat.
	Seq int64
}

// Event is one message of a session's GET stream log.
type Event struct {
	Seq  int64
	Data []byte
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
	// NoticeEvent: Seq and Data were appended to session Session's GET
	// stream log by another replica.
	NoticeEvent NoticeKind = iota + 1
	// NoticeChange: another replica announced Change.
	NoticeChange
	// NoticeMoved: another replica claimed session Session; this
	// replica's copy ends quietly.
	NoticeMoved
	// NoticeReset: the store lost this replica's records (it restarted
	// empty); the replica records its live sessions again.
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
