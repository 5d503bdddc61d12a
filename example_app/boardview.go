package main

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"sync"
	"time"

	"github.com/saguaro-go/saguaro/example_app/board"
	"github.com/saguaro-go/saguaro/mcp"
)

// The board as an MCP App: a host that renders views (the MCP Apps
// extension) shows list_tasks' result as the board in view/, where the
// user adds and completes tasks; the view's calls go through the host
// with the user's token, so add_task and complete_task still need
// tasks:write. Clients without the extension see list_tasks as before
// and never see watch_board.

//go:embed view
var viewFiles embed.FS

// boardViewURI is the view's resource.
const boardViewURI = "ui://task-board/board.html"

// boardUI links list_tasks to the view.
var boardUI = &mcp.ToolUI{ResourceURI: boardViewURI}

// watchWait bounds how long watch_board waits for a change: shorter than
// the clients' request timeouts (a minute in the official SDKs).
const watchWait = 25 * time.Second

// boardSignal wakes the watch_board calls when the board changes, on this
// replica or another (the store's Watch hears both).
type boardSignal struct {
	mu sync.Mutex
	ch chan struct{}
}

// wait returns a channel closed at the next change.
func (s *boardSignal) wait() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch == nil {
		s.ch = make(chan struct{})
	}
	return s.ch
}

func (s *boardSignal) fire() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch != nil {
		close(s.ch)
		s.ch = nil
	}
}

// boardState is what watch_board answers: the tasks and a version that
// changes whenever one of them does.
type boardState struct {
	Tasks   []board.Task `json:"tasks"`
	Version string       `json:"version" jsonschema:"give it back as since to wait for the next change"`
}

func boardVersion(tasks []board.Task) string {
	h := sha256.New()
	for _, t := range tasks {
		fmt.Fprintf(h, "%s:%d\n", t.ID, t.Version)
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// addBoardView registers the view and watch_board; list_tasks links to
// the view (addTaskTools).
func (a *app) addBoardView(srv *mcp.Server) {
	must(srv.AddView(&mcp.View{URI: boardViewURI, Name: "task-board", Title: "Team task board",
		Description: "The board, where tasks are added and completed.",
		FS:          viewFiles, File: "view/board.html", Data: map[string]string{"Title": "Team task board"},
		PrefersBorder: ptr(true)}))

	type watchIn struct {
		Since string `json:"since,omitempty" jsonschema:"the version the view shows; empty for the board now"`
	}
	must(mcp.AddTool(srv, &mcp.Tool{Name: "watch_board", Title: "Watch the board",
		Description: "Answers with the board as soon as its version differs from since (at once when it already does), or after 25 seconds.",
		Annotations: readOnly,
		Meta:        mcp.Meta{"ui": &mcp.ToolUI{ResourceURI: boardViewURI, Visibility: []mcp.Visibility{mcp.VisibilityApp}}}},
		func(ctx context.Context, _ *mcp.CallToolRequest, in watchIn) (boardState, error) {
			timer := time.NewTimer(watchWait)
			defer timer.Stop()
			for {
				changed := a.boardSig.wait() // before reading, so no change slips between
				tasks, err := a.store.List(ctx, nil)
				if err != nil {
					return boardState{}, err
				}
				st := boardState{Tasks: orEmpty(tasks), Version: boardVersion(tasks)}
				if st.Version != in.Since {
					return st, nil
				}
				select {
				case <-changed:
				case <-timer.C:
					return st, nil
				case <-ctx.Done():
					return boardState{}, ctx.Err()
				}
			}
		}))
}
