package mcp

import (
	"context"
	"errors"
	"time"
)

// Cluster shares one endpoint's sessions among replicas of a server behind
// a load balancer with no stickiness ([Options.Cluster]); package mcpredis
// implements it on Redis. nil, the default, keeps sessions in the process:
// one process needs nothing else.
//
// The model is ownership and relay. The replica that created a session (its
// owner) runs it in memory exactly as a single process does: its calls,
// its stateful callbacks one at a time, its response streams, the
// server→client requests that wait for the client's answer. The cluster
// holds the session's record (revision, client capabilities, identity, log
// level, subscriptions, and the handler's state when the handler can save
// it) and the log of its GET stream. A request that lands on another
// replica is relayed over HTTP to the owner, and the owner's answer, JSON
// or an event stream, goes back through the replica the client talks to.
//
// When the owner is gone (its heartbeat expired, or a relay cannot
// connect), the replica that notices claims the session, rebuilds it from
// the record and serves the request itself: the session goes on with its
// metadata, its saved state and its GET stream's log. What the dead owner
// held only in memory is lost: calls in flight (a client that resumes
// such a call's stream is answered with its error), their streams, and
// server→client requests waiting for an answer. A request relayed over a
// kept-alive connection to an owner that dies at that instant may be
// served again by the replica that takes the session over. A handler
// that keeps state but does not implement [StateCodec] cannot move: its
// sessions end with 404 and the client initializes again, as the
// specification intends.
//
// Implementations must be safe for concurrent use. Methods that take a
// context do network I/O and must honour its deadline; the endpoint gives
// each one a short one, so that a store that is down fails requests fast
// (503) instead of hanging them.
type Cluster interface {
	// Self is this replica: its id and the URL of this endpoint that
	// other replicas relay to.
	Self() Replica

	// Create records a session owned by this replica, kept for ttl after
	// the last Create, Save or Touch: a new one, or one this replica
	// records again after the store lost it. It fails with
	// ErrSessionMoved when the store holds the session for another
	// replica.
	Create(ctx context.Context, rec *SessionRecord, ttl time.Duration) error
	// Load returns a session's record, or ErrSessionUnknown.
	Load(ctx context.Context, id string) (*SessionRecord, error)
	// Save records a session's changed metadata and state. Only the
	// owner saves: it fails with ErrSessionMoved when the store holds the
	// session for another replica, and ErrSessionUnknown when it holds
	// none (a late save never brings an ended session back).
	Save(ctx context.Context, rec *SessionRecord, ttl time.Duration) error
	// Touch keeps a session's record (and its log) for another ttl.
	Touch(ctx context.Context, id string, ttl time.Duration) error
	// Claim makes this replica the owner of session id if its owner is
	// still from, and reports whether it did. A replica that lost a
	// session this way hears NoticeMoved.
	Claim(ctx context.Context, id, from string) (bool, error)
	// Release gives up this replica's ownership of a session without
	// ending it (the replica shuts down): the next request claims it at
	// once.
	Release(ctx context.Context, id string) error
	// End forgets an ended session: its record, its log, its
	// subscriptions.
	End(ctx context.Context, id string) error
	// Locate returns the relay URL of a live replica, or ErrReplicaGone
	// when it has stopped beating.
	Locate(ctx context.Context, replica string) (string, error)

	// Append adds one message to a session's GET stream log and returns
	// its sequence number (1, 2, ...), or ErrSessionUnknown. The log is
	// bounded by the implementation: the oldest events are dropped. The
	// owner hears NoticeEvent.
	Append(ctx context.Context, id string, data []byte) (int64, error)
	// Events returns the logged events of a session's GET stream after
	// seq, oldest first.
	Events(ctx context.Context, id string, after int64) ([]LoggedEvent, error)
	// Announce delivers a registry change cluster-wide: data, the
	// notification, is appended to the GET stream log of every session
	// concerned (for ResourceUpdated, those subscribed to Change.URI;
	// otherwise every initialized session), and the other replicas hear
	// NoticeChange for their subscriptions/listen streams. It must not
	// block: the change happens on a goroutine that is not the
	// endpoint's.
	Announce(c Change, data []byte)
	// Watch delivers notices to fn, one at a time and in order, until
	// the returned function is called. fn must not block for long.
	Watch(fn func(Notice)) (stop func())
}

// Replica names one replica of a cluster.
type Replica struct {
	// ID is unique per process (a restarted replica is a new one).
	ID string
	// URL is this endpoint as other replicas reach it, such as
	// "http://10.0.0.7:8080/mcp".
	URL string
}

// SessionRecord is what a [Cluster] keeps of a session.
type SessionRecord struct {
	ID    string
	Owner string // the owning replica's ID; "" once released
	// OwnerURL is the owner's relay URL when Load found it alive ("": ask
	// Locate), saving a round trip on the relay path.
	OwnerURL string
	Identity string
	Revision Revision
	Client   *ClientCapabilities
	LogLevel LogLevel
	// Initialized is set once the client sent notifications/initialized:
	// list_changed notifications go to initialized sessions only.
	Initialized   bool
	Subscriptions []string
	// State is the handler's state as StateCodec encoded it; Movable is
	// false when the handler keeps state it cannot encode, and the
	// session cannot move to another replica.
	State   []byte
	Movable bool
	// Seq is the highest sequence number of the GET stream log this
	// record was saved with; a store that lost its data (restarted)
	// continues after it, so event ids never repeat.
	Seq int64
}

// LoggedEvent is one message of a session's GET stream log.
type LoggedEvent struct {
	Seq  int64
	Data []byte
}

// NoticeKind says what a [Notice] is about.
type NoticeKind uint8

// The kinds of notice.
const (
	// NoticeEvent: Seq and Data were appended to session Session's GET
	// stream log.
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

// Notice is what a [Cluster] tells the endpoints of this replica.
type Notice struct {
	Kind    NoticeKind
	Session string
	Seq     int64
	Data    []byte
	Change  Change
}

// StateCodec is implemented by a Handler whose per-session state can be
// saved, so that its sessions can move to another replica of a
// [Cluster] when theirs dies. EncodeState runs after every stateful
// callback (keep the state small); DecodeState runs on the replica that
// takes the session over. A *Server keeps no state and needs neither.
type StateCodec interface {
	EncodeState(state any) ([]byte, error)
	DecodeState(data []byte) (any, error)
}

// Errors a [Cluster] returns.
var (
	// ErrSessionUnknown: the cluster has no record of the session (it
	// never existed, ended, or expired).
	ErrSessionUnknown = errors.New("mcp: session unknown to the cluster")
	// ErrReplicaGone: the replica stopped beating.
	ErrReplicaGone = errors.New("mcp: replica gone")
	// ErrSessionMoved: the store holds the session for another replica.
	ErrSessionMoved = errors.New("mcp: session owned by another replica")
)
