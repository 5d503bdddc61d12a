package board

import "context"

// Store is the board's storage. Both implementations (Open gives the
// right one for a database) are safe for concurrent use, and no write is
// ever lost to another: every change is one SQL statement on the row.
type Store interface {
	// Add creates a task.
	Add(ctx context.Context, t NewTask) (Task, error)
	// Get returns a task, or ErrNotFound.
	Get(ctx context.Context, id string) (Task, error)
	// SetDone marks a task done or open; every call bumps its Version.
	SetDone(ctx context.Context, id string, done bool) (Task, error)
	// Delete removes a task and returns it as it was.
	Delete(ctx context.Context, id string) (Task, error)
	// List returns the tasks oldest first; done filters when not nil.
	List(ctx context.Context, done *bool) ([]Task, error)
	// Watch calls fn for every change committed by any replica sharing
	// the database, this one included, until the returned stop is
	// called. fn must not block.
	Watch(fn func(Change)) (stop func())
	// ID identifies this Store among the replicas that share its
	// database: the Origin of the changes it makes.
	ID() string
	// Close stops the change feed. It does not close the database.
	Close() error
}

// ChangeKind says what happened to a task.
type ChangeKind string

// The kinds of change.
const (
	Created ChangeKind = "created"
	Updated ChangeKind = "updated"
	Deleted ChangeKind = "deleted"
	// Resync: changes may have been missed (the PostgreSQL listener lost
	// its connection); reread what you keep. Task is zero.
	Resync ChangeKind = "resync"
)

// Change is what Watch delivers.
type Change struct {
	Kind ChangeKind `json:"kind"`
	Task Task       `json:"task"`
	// Origin is the id of the Store that made the change (see
	// Store implementations' ID): a replica tells its own changes
	// from the others'.
	Origin string `json:"-"`
}
