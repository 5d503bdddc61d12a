package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/saguaro-go/saguaro/mcp"
)

// taskURI is the MCP resource URI of a task.
func taskURI(id string) string { return "tasks://" + id }

// newMCPServer exposes the store over MCP: typed tools, each task as a
// resource (plus the template tasks://{id}), subscriptions that fire when a
// task changes, prompts, and completion of task ids.
// keys seal list cursors and requestState (shared by replicas; nil: a
// random one).
func (a *app) newMCPServer(keys [][]byte) *mcp.Server {
	srv := mcp.NewServer(mcp.Implementation{Name: "saguaro-task-board", Title: "Team task board", Version: "1.0.0"},
		&mcp.ServerOptions{Keys: keys,
			Instructions: "A team's task board. Read with list_tasks and search_tasks, change it with add_task, complete_task and import_tasks."})
	a.addTaskTools(srv)
	a.addTaskResources(srv)
	a.addTaskPrompts(srv)
	return srv
}

// tool registers a typed tool and reports each call on the live feed.
func tool[In, Out any](a *app, srv *mcp.Server, t *mcp.Tool, h mcp.ToolFunc[In, Out]) {
	name := t.Name
	must(mcp.AddTool(srv, t, func(ctx context.Context, req *mcp.CallToolRequest, in In) (Out, error) {
		out, err := h(ctx, req, in)
		a.activity(map[string]any{"kind": "tool", "tool": name, "ok": err == nil})
		return out, err
	}))
}

var readOnly = &mcp.ToolAnnotations{ReadOnlyHint: ptr(true)}

func ptr[T any](v T) *T { return &v }

func must(err error) {
	if err != nil {
		panic(err)
	}
}

type taskList struct {
	Tasks []Task `json:"tasks"`
}

func (a *app) addTaskTools(srv *mcp.Server) {
	type listIn struct {
		Done *bool `json:"done,omitempty" jsonschema:"only tasks that are done (true) or open (false); all when absent"`
	}
	tool(a, srv, &mcp.Tool{Name: "list_tasks", Title: "List tasks", Description: "Lists the board's tasks, oldest first.",
		Annotations: readOnly},
		func(_ context.Context, _ *mcp.CallToolRequest, in listIn) (taskList, error) {
			return taskList{Tasks: orEmpty(a.store.List(in.Done))}, nil
		})

	type searchIn struct {
		Query string `json:"query" jsonschema:"text to look for in titles, notes and tags"`
	}
	tool(a, srv, &mcp.Tool{Name: "search_tasks", Title: "Search tasks", Description: "Finds tasks whose title, notes or tags contain the query.",
		Annotations: readOnly},
		func(_ context.Context, _ *mcp.CallToolRequest, in searchIn) (taskList, error) {
			return taskList{Tasks: orEmpty(a.store.Search(in.Query))}, nil
		})

	type addIn struct {
		Title string   `json:"title" jsonschema:"what needs doing"`
		Notes string   `json:"notes,omitempty" jsonschema:"details"`
		Tags  []string `json:"tags,omitempty" jsonschema:"labels such as backend or urgent"`
	}
	tool(a, srv, &mcp.Tool{Name: "add_task", Title: "Add a task", Description: "Adds a task to the board and returns it."},
		func(_ context.Context, _ *mcp.CallToolRequest, in addIn) (Task, error) {
			return a.store.Add(in.Title, in.Notes, in.Tags)
		})

	type idIn struct {
		ID string `json:"id" jsonschema:"the task id, such as t3"`
	}
	tool(a, srv, &mcp.Tool{Name: "complete_task", Title: "Complete a task", Description: "Marks a task done and returns it.",
		Annotations: &mcp.ToolAnnotations{IdempotentHint: ptr(true)}},
		func(_ context.Context, _ *mcp.CallToolRequest, in idIn) (Task, error) {
			return a.store.SetDone(in.ID, true)
		})

	type importIn struct {
		Titles []string `json:"titles" jsonschema:"one task per title"`
	}
	type importOut struct {
		Imported int `json:"imported"`
	}
	tool(a, srv, &mcp.Tool{Name: "import_tasks", Title: "Import tasks", Description: "Adds many tasks at once, reporting progress as it goes."},
		func(ctx context.Context, req *mcp.CallToolRequest, in importIn) (importOut, error) {
			if len(in.Titles) > 1000 {
				return importOut{}, fmt.Errorf("at most 1000 tasks per import")
			}
			n := 0
			for i, title := range in.Titles {
				if err := ctx.Err(); err != nil {
					return importOut{Imported: n}, err
				}
				if _, err := a.store.Add(title, "", []string{"imported"}); err != nil {
					return importOut{Imported: n}, fmt.Errorf("task %d: %w", i+1, err)
				}
				n++
				_ = req.Progress(ctx, float64(n), float64(len(in.Titles)), fmt.Sprintf("imported %q", title))
			}
			return importOut{Imported: n}, nil
		})

	type summaryOut struct {
		Summary string `json:"summary"`
		Source  string `json:"source" jsonschema:"sampling when the client's model wrote it, fallback otherwise"`
	}
	tool(a, srv, &mcp.Tool{Name: "summarize_tasks", Title: "Summarize the board",
		Description: "Summarizes the open tasks, asking the client's model (sampling) when the client offers it.",
		Annotations: readOnly},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (summaryOut, error) {
			open := false
			tasks := a.store.List(&open)
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
		})
}

func orEmpty(t []Task) []Task {
	if t == nil {
		return []Task{}
	}
	return t
}

// plainSummary is the summary written without a model.
func plainSummary(open []Task) string {
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

func (a *app) readTask(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	id := strings.TrimPrefix(req.URI, "tasks://")
	t, err := a.store.Get(id)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", mcp.ErrResourceNotFound, req.URI)
	}
	body, _ := json.Marshal(t)
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.URI, MIMEType: "application/json", Text: string(body)}}}, nil
}

// addTaskResources lists every task as a resource (added and removed as
// tasks come and go, which sends resources/list_changed to live sessions),
// serves tasks://{id} for any id, and fires resources/updated for a task's
// subscribers whenever it changes.
func (a *app) addTaskResources(srv *mcp.Server) {
	must(srv.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "tasks://{id}", Name: "task",
		Title: "A task", Description: "One task of the board, as JSON.", MIMEType: "application/json"}, a.readTask))
	must(srv.AddTemplateCompletion("tasks://{id}", "id", a.completeID))
	publish := func(t Task) {
		_ = srv.AddResource(&mcp.Resource{URI: taskURI(t.ID), Name: t.ID, Title: t.Title,
			Description: "Task " + t.ID, MIMEType: "application/json"}, a.readTask)
	}
	for _, t := range a.store.List(nil) {
		publish(t)
	}
	a.store.Observe(func(c TaskChange) {
		switch c.Kind {
		case "created":
			publish(c.Task)
		case "deleted":
			srv.RemoveResources(taskURI(c.Task.ID))
		}
		srv.ResourceUpdated(taskURI(c.Task.ID))
	})
}

func (a *app) completeID(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	return &mcp.CompleteResult{Values: orEmptyStrings(a.store.IDs(req.ArgumentValue))}, nil
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
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			open := false
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: mcp.RoleUser, Content: mcp.Text(
				"Here is our board. Suggest an order for today, most urgent first, with one line of reasoning each.\n\n" +
					plainSummary(a.store.List(&open)))}}}, nil
		}))
	must(srv.AddPrompt(&mcp.Prompt{Name: "task_brief", Title: "Brief on a task",
		Description: "Asks the model for a short plan for one task.",
		Arguments:   []*mcp.PromptArgument{{Name: "id", Description: "the task id", Required: true}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			t, err := a.store.Get(req.Arguments["id"])
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
