package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/saguaro-go/saguaro/example_app/board"
	"github.com/saguaro-go/saguaro/mcp"
)

// newMCPServer exposes the store over MCP: typed tools, each task as a
// resource (plus the template tasks://{id}), subscriptions that fire when a
// task changes, prompts, and completion of task ids. Every tool call is
// reported on the live feed by one method middleware.
// keys seal list cursors and requestState (shared by replicas; nil: a
// random one).
func (a *app) newMCPServer(keys [][]byte) *boardHandler {
	srv := mcp.NewServer(mcp.Implementation{Name: "saguaro-task-board", Title: "Team task board", Version: "1.0.0"},
		&mcp.ServerOptions{Keys: keys,
			Instructions: "A team's task board. Read with list_tasks and search_tasks, change it with add_task, complete_task and import_tasks.",
			Middleware:   []func(mcp.MethodHandler) mcp.MethodHandler{a.reportToolCalls}})
	a.addBoardView(srv)
	a.addTaskTools(srv)
	a.addTaskResources(srv)
	a.addTaskPrompts(srv)
	return &boardHandler{Server: srv, store: a.store}
}

// reportToolCalls is method middleware: each tool call, once answered,
// goes on the live feed with whether it succeeded (no protocol error and
// no isError result).
func (a *app) reportToolCalls(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, req *mcp.Request) (json.RawMessage, error) {
		res, err := next(ctx, req)
		if req.Method == "tools/call" {
			var r struct {
				IsError bool `json:"isError"`
			}
			ok := err == nil && json.Unmarshal(res, &r) == nil && !r.IsError
			a.activity(map[string]any{"kind": "tool", "tool": req.Target(), "ok": ok})
		}
		return res, err
	}
}

var readOnly = &mcp.ToolAnnotations{ReadOnlyHint: ptr(true)}

// writeAccess is the Access of the tools that change the board: they need
// tasks:write, and stay listed for callers without it, who are asked to
// step up (see README.md).
var writeAccess = &mcp.Access{Scopes: []string{scopeWrite}}

func ptr[T any](v T) *T { return &v }

func must(err error) {
	if err != nil {
		panic(err)
	}
}

type taskList struct {
	Tasks []board.Task `json:"tasks"`
}

func (a *app) addTaskTools(srv *mcp.Server) {
	type listIn struct {
		Done *bool `json:"done,omitempty" jsonschema:"only tasks that are done (true) or open (false); all when absent"`
	}
	must(mcp.AddTool(srv, &mcp.Tool{Name: "list_tasks", Title: "List tasks", Description: "Lists the board's tasks, oldest first.",
		Annotations: readOnly, Meta: mcp.Meta{"ui": boardUI}},
		func(ctx context.Context, _ *mcp.CallToolRequest, in listIn) (taskList, error) {
			tasks, err := a.store.List(ctx, in.Done)
			return taskList{Tasks: orEmpty(tasks)}, err
		}))

	type searchIn struct {
		Query string `json:"query" jsonschema:"text to look for in titles, notes and tags"`
	}
	must(mcp.AddTool(srv, &mcp.Tool{Name: "search_tasks", Title: "Search tasks", Description: "Finds tasks whose title, notes or tags contain the query.",
		Annotations: readOnly},
		func(ctx context.Context, _ *mcp.CallToolRequest, in searchIn) (taskList, error) {
			tasks, err := a.search(ctx, in.Query)
			return taskList{Tasks: orEmpty(tasks)}, err
		}))

	type addIn struct {
		Title string   `json:"title" jsonschema:"what needs doing"`
		Notes string   `json:"notes,omitempty" jsonschema:"details"`
		Tags  []string `json:"tags,omitempty" jsonschema:"labels such as backend or urgent"`
	}
	must(mcp.AddTool(srv, &mcp.Tool{Name: "add_task", Title: "Add a task", Description: "Adds a task to the board and returns it.",
		Access: writeAccess},
		func(ctx context.Context, _ *mcp.CallToolRequest, in addIn) (board.Task, error) {
			return a.store.Add(ctx, board.NewTask{Title: in.Title, Notes: in.Notes, Tags: in.Tags})
		}))

	type idIn struct {
		ID string `json:"id" jsonschema:"the task id, such as t3"`
	}
	must(mcp.AddTool(srv, &mcp.Tool{Name: "complete_task", Title: "Complete a task", Description: "Marks a task done and returns it.",
		Annotations: &mcp.ToolAnnotations{IdempotentHint: ptr(true)}, Access: writeAccess},
		func(ctx context.Context, _ *mcp.CallToolRequest, in idIn) (board.Task, error) {
			return a.store.SetDone(ctx, in.ID, true)
		}))

	type importIn struct {
		Titles []string `json:"titles" jsonschema:"one task per title"`
	}
	type importOut struct {
		Imported int `json:"imported"`
	}
	must(mcp.AddTool(srv, &mcp.Tool{Name: "import_tasks", Title: "Import tasks", Description: "Adds many tasks at once, reporting progress as it goes.",
		Access: writeAccess},
		func(ctx context.Context, req *mcp.CallToolRequest, in importIn) (importOut, error) {
			if len(in.Titles) > 1000 {
				return importOut{}, fmt.Errorf("at most 1000 tasks per import")
			}
			n := 0
			for i, title := range in.Titles {
				if err := ctx.Err(); err != nil {
					return importOut{Imported: n}, err
				}
				if _, err := a.store.Add(ctx, board.NewTask{Title: title, Tags: []string{"imported"}}); err != nil {
					return importOut{Imported: n}, fmt.Errorf("task %d: %w", i+1, err)
				}
				n++
				_ = req.Progress(ctx, float64(n), float64(len(in.Titles)), fmt.Sprintf("imported %q", title))
			}
			return importOut{Imported: n}, nil
		}))

	type summaryOut struct {
		Summary string `json:"summary"`
		Source  string `json:"source" jsonschema:"sampling when the client's model wrote it, fallback otherwise"`
	}
	must(mcp.AddTool(srv, &mcp.Tool{Name: "summarize_tasks", Title: "Summarize the board",
		Description: "Summarizes the open tasks, asking the client's model (sampling) when the client offers it.",
		Annotations: readOnly},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (summaryOut, error) {
			open := false
			tasks, err := a.store.List(ctx, &open)
			if err != nil {
				return summaryOut{}, err
			}
			plain := plainSummary(tasks)
			res, err := req.CreateMessage(ctx, &mcp.CreateMessageParams{
				Messages:     []*mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.Text("Summarize these open tasks in two sentences:\n" + plain)}},
				SystemPrompt: "You summarize a team's task board for a stand-up meeting.",
				MaxTokens:    200,
			})
			if err != nil {
				if errors.Is(err, mcp.ErrClientCapability) || errors.Is(err, mcp.ErrNoBackchannel) {
					return summaryOut{Summary: plain, Source: "fallback"}, nil
				}
				return summaryOut{}, err
			}
			if t, ok := res.Content.(*mcp.TextContent); ok && t.Text != "" {
				return summaryOut{Summary: t.Text, Source: "sampling"}, nil
			}
			return summaryOut{Summary: plain, Source: "fallback"}, nil
		}))
}

func orEmpty(t []board.Task) []board.Task {
	if t == nil {
		return []board.Task{}
	}
	return t
}

// search returns the tasks whose title, notes or tags contain query.
func (a *app) search(ctx context.Context, query string) ([]board.Task, error) {
	all, err := a.store.List(ctx, nil)
	if err != nil {
		return nil, err
	}
	var out []board.Task
	for _, t := range all {
		if t.Matches(query) {
			out = append(out, t)
		}
	}
	return out, nil
}

// plainSummary is the summary written without a model.
func plainSummary(open []board.Task) string {
	if len(open) == 0 {
		return "No open tasks."
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d open task(s):", len(open))
	for _, t := range open {
		fmt.Fprintf(&b, "\n- %s: %s", t.ID, t.Title)
		if len(t.Tags) > 0 {
			fmt.Fprintf(&b, " [%s]", strings.Join(t.Tags, ", "))
		}
	}
	return b.String()
}

func (a *app) readTask(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	id := strings.TrimPrefix(req.URI, "tasks://")
	t, err := a.store.Get(ctx, id)
	if errors.Is(err, board.ErrNotFound) {
		return nil, fmt.Errorf("%w: %s", mcp.ErrResourceNotFound, req.URI)
	}
	if err != nil {
		return nil, err
	}
	body, _ := json.Marshal(t)
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.URI, MIMEType: "application/json", Text: string(body)}}}, nil
}

// addTaskResources serves tasks://{id} for any id (the list itself is
// boardHandler's, read from the database).
func (a *app) addTaskResources(srv *mcp.Server) {
	must(srv.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "tasks://{id}", Name: "task",
		Title: "A task", Description: "One task of the board, as JSON.", MIMEType: "application/json"}, a.readTask))
	must(srv.AddTemplateCompletion("tasks://{id}", "id", a.completeID))
}

func (a *app) completeID(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	all, err := a.store.List(ctx, nil)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, t := range all {
		if strings.HasPrefix(t.ID, req.ArgumentValue) {
			ids = append(ids, t.ID)
		}
	}
	return &mcp.CompleteResult{Values: orEmptyStrings(ids)}, nil
}

func orEmptyStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func (a *app) addTaskPrompts(srv *mcp.Server) {
	must(srv.AddPrompt(&mcp.Prompt{Name: "plan_day", Title: "Plan my day",
		Description: "Asks the model to order today's open tasks."},
		func(ctx context.Context, _ *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			open := false
			tasks, err := a.store.List(ctx, &open)
			if err != nil {
				return nil, err
			}
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: mcp.RoleUser, Content: mcp.Text(
				"Here is our board. Suggest an order for today, most urgent first, with one line of reasoning each.\n\n" +
					plainSummary(tasks))}}}, nil
		}))
	must(srv.AddPrompt(&mcp.Prompt{Name: "task_brief", Title: "Brief on a task",
		Description: "Asks the model for a short plan for one task.",
		Arguments:   []*mcp.PromptArgument{{Name: "id", Description: "the task id", Required: true}}},
		func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			t, err := a.store.Get(ctx, req.Arguments["id"])
			if err != nil {
				return nil, fmt.Errorf("%w: %v", mcp.ErrInvalidParams, err)
			}
			body, _ := json.Marshal(t)
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{
				{Role: mcp.RoleUser, Content: mcp.EmbeddedText(taskURI(t.ID), "application/json", string(body))},
				{Role: mcp.RoleUser, Content: mcp.Text("Write a three-step plan to finish this task.")},
			}}, nil
		}))
	must(srv.AddPromptCompletion("task_brief", "id", a.completeID))
}
