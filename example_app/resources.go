package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/saguaro-go/saguaro/example_app/board"
	"github.com/saguaro-go/saguaro/mcp"
)

// taskURI is the MCP resource URI of a task.
func taskURI(id string) string { return "tasks://" + id }

// pageSize is how many tasks one resources/list page holds.
const pageSize = 100

// boardHandler is the MCP server with its resource list read from the
// database, so that every replica lists the same tasks, whoever added
// them; the rest (tools, templates, prompts) is the mcp.Server's.
type boardHandler struct {
	*mcp.Server
	store board.Store

	mu    sync.Mutex
	next  int
	hooks map[int]func(mcp.Change)
}

// ListResources lists the tasks as resources, oldest first, a page at a
// time; the cursor is the last id of the previous page.
func (h *boardHandler) ListResources(ctx context.Context, req *mcp.ListRequest, state any) (*mcp.ListResourcesResult, any, error) {
	after := int64(0)
	if req.Cursor != "" {
		n, err := strconv.ParseInt(strings.TrimPrefix(req.Cursor, "after:t"), 10, 64)
		if err != nil || !strings.HasPrefix(req.Cursor, "after:t") || n < 1 {
			return nil, state, fmt.Errorf("%w: invalid cursor", mcp.ErrInvalidParams)
		}
		after = n
	}
	tasks, err := h.store.List(ctx, nil)
	if err != nil {
		return nil, state, err
	}
	res := &mcp.ListResourcesResult{Resources: []*mcp.Resource{}}
	for _, t := range tasks {
		if n, _ := strconv.ParseInt(strings.TrimPrefix(t.ID, "t"), 10, 64); n <= after {
			continue
		}
		if len(res.Resources) == pageSize {
			res.NextCursor = "after:" + res.Resources[pageSize-1].Name
			break
		}
		res.Resources = append(res.Resources, &mcp.Resource{URI: taskURI(t.ID), Name: t.ID, Title: t.Title,
			Description: "Task " + t.ID, MIMEType: "application/json"})
	}
	return res, state, nil
}

// OnChange registers fn with the mcp.Server (tools, prompts, resource
// updates) and for the task list's changes (listChanged).
func (h *boardHandler) OnChange(fn func(mcp.Change)) (remove func()) {
	removeInner := h.Server.OnChange(fn)
	h.mu.Lock()
	if h.hooks == nil {
		h.hooks = map[int]func(mcp.Change){}
	}
	id := h.next
	h.next++
	h.hooks[id] = fn
	h.mu.Unlock()
	return func() {
		removeInner()
		h.mu.Lock()
		delete(h.hooks, id)
		h.mu.Unlock()
	}
}

// listChanged tells sessions that the task list changed.
func (h *boardHandler) listChanged() {
	h.mu.Lock()
	fns := slices.Collect(maps.Values(h.hooks))
	h.mu.Unlock()
	for _, fn := range fns {
		fn(mcp.Change{Kind: mcp.ResourcesChanged})
	}
}
