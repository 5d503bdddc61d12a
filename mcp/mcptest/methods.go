package mcptest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sync"

	"github.com/saguaro-go/saguaro/mcp"
	"github.com/saguaro-go/saguaro/mcp/jsonrpc"
)

// CallOption configures one call.
type CallOption func(*callConfig)

type callConfig struct {
	notes *Notes
}

// Record collects what the call sends before its result into n: progress
// notifications (the call carries a progressToken, so the server sends
// them) and log messages.
func Record(n *Notes) CallOption { return func(c *callConfig) { c.notes = n } }

// Notes is what one call sent before its result. It is safe to read once
// the call returned.
type Notes struct {
	mu       sync.Mutex
	Progress []Progress
	Logs     []Log
	// Other holds the other notifications of the call, by method.
	Other map[string][]json.RawMessage
}

// Progress is one notifications/progress.
type Progress struct {
	Progress float64 `json:"progress"`
	Total    float64 `json:"total"`
	Message  string  `json:"message"`
}

// Log is one notifications/message.
type Log struct {
	Level  string          `json:"level"`
	Logger string          `json:"logger"`
	Data   json.RawMessage `json:"data"`
}

func (n *Notes) add(method string, params json.RawMessage) {
	n.mu.Lock()
	defer n.mu.Unlock()
	switch method {
	case "notifications/progress":
		var p Progress
		if json.Unmarshal(params, &p) == nil {
			n.Progress = append(n.Progress, p)
			return
		}
	case "notifications/message":
		var l Log
		if json.Unmarshal(params, &l) == nil {
			n.Logs = append(n.Logs, l)
			return
		}
	}
	if n.Other == nil {
		n.Other = map[string][]json.RawMessage{}
	}
	n.Other[method] = append(n.Other[method], append(json.RawMessage(nil), params...))
}

// CallTool calls a tool with args (any value that encodes to a JSON
// object, or nil) and returns its result. A tool's own failure is a
// result with IsError; a protocol error (an unknown tool, invalid params)
// is a *jsonrpc.Error.
func (c *Client) CallTool(ctx context.Context, name string, args any, opts ...CallOption) (*mcp.CallToolResult, error) {
	params := map[string]any{"name": name}
	if args != nil {
		params["arguments"] = args
	}
	var res mcp.CallToolResult
	if err := c.Call(ctx, "tools/call", params, &res, opts...); err != nil {
		return nil, err
	}
	return &res, nil
}

// ToolError is a tool's own failure, a result with isError, as CallTool
// of a typed result reports it.
type ToolError struct {
	Tool   string
	Result *mcp.CallToolResult
}

// Error implements error with the text the tool returned.
func (e *ToolError) Error() string {
	return fmt.Sprintf("mcptest: tool %s failed: %s", e.Tool, firstText(e.Result))
}

func firstText(r *mcp.CallToolResult) string {
	for _, c := range r.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			return t.Text
		}
	}
	return ""
}

// CallTool calls a tool and decodes its result into Out: the structured
// content when the tool has an output schema, else its first text block
// (as JSON, or as the string itself when Out is a string). Structured
// content that does not decode into Out but is {"result": value}, as
// mcp.AddTool sends an Out whose JSON is not an object, is decoded from
// its value. A tool's own failure is a *ToolError.
func CallTool[Out any](ctx context.Context, c *Client, name string, args any, opts ...CallOption) (Out, error) {
	var out Out
	res, err := c.CallTool(ctx, name, args, opts...)
	if err != nil {
		return out, err
	}
	if res.IsError {
		return out, &ToolError{Tool: name, Result: res}
	}
	if raw, ok := res.StructuredContent.(json.RawMessage); ok {
		err := json.Unmarshal(raw, &out)
		if err != nil {
			var wrapped struct {
				Result json.RawMessage `json:"result"`
			}
			if json.Unmarshal(raw, &wrapped) == nil && wrapped.Result != nil {
				out = *new(Out)
				if json.Unmarshal(wrapped.Result, &out) == nil {
					return out, nil
				}
			}
			return out, fmt.Errorf("mcptest: %s structured content: %w", name, err)
		}
		return out, nil
	}
	text := firstText(res)
	if p, ok := any(&out).(*string); ok {
		*p = text
		return out, nil
	}
	if err := json.Unmarshal([]byte(text), &out); err != nil {
		return out, fmt.Errorf("mcptest: %s returned %q, not a %s: %w", name, text, reflect.TypeOf(out), err)
	}
	return out, nil
}

// list reads every page of a list method into items.
func list[T any](ctx context.Context, c *Client, method string, page func(raw json.RawMessage) ([]T, string, error)) ([]T, error) {
	var all []T
	cursor := ""
	for range 1000 {
		var params map[string]any
		if cursor != "" {
			params = map[string]any{"cursor": cursor}
		}
		var raw json.RawMessage
		if err := c.Call(ctx, method, params, &raw); err != nil {
			return nil, err
		}
		items, next, err := page(raw)
		if err != nil {
			return nil, err
		}
		all = append(all, items...)
		if next == "" {
			return all, nil
		}
		cursor = next
	}
	return nil, fmt.Errorf("mcptest: %s: more than 1000 pages", method)
}

// ListTools lists every tool, following the pages.
func (c *Client) ListTools(ctx context.Context) ([]*mcp.Tool, error) {
	return list(ctx, c, "tools/list", func(raw json.RawMessage) ([]*mcp.Tool, string, error) {
		var r mcp.ListToolsResult
		err := json.Unmarshal(raw, &r)
		return r.Tools, r.NextCursor, err
	})
}

// ListResources lists every resource, following the pages.
func (c *Client) ListResources(ctx context.Context) ([]*mcp.Resource, error) {
	return list(ctx, c, "resources/list", func(raw json.RawMessage) ([]*mcp.Resource, string, error) {
		var r mcp.ListResourcesResult
		err := json.Unmarshal(raw, &r)
		return r.Resources, r.NextCursor, err
	})
}

// ListResourceTemplates lists every resource template, following the
// pages.
func (c *Client) ListResourceTemplates(ctx context.Context) ([]*mcp.ResourceTemplate, error) {
	return list(ctx, c, "resources/templates/list", func(raw json.RawMessage) ([]*mcp.ResourceTemplate, string, error) {
		var r mcp.ListResourceTemplatesResult
		err := json.Unmarshal(raw, &r)
		return r.ResourceTemplates, r.NextCursor, err
	})
}

// ListPrompts lists every prompt, following the pages.
func (c *Client) ListPrompts(ctx context.Context) ([]*mcp.Prompt, error) {
	return list(ctx, c, "prompts/list", func(raw json.RawMessage) ([]*mcp.Prompt, string, error) {
		var r mcp.ListPromptsResult
		err := json.Unmarshal(raw, &r)
		return r.Prompts, r.NextCursor, err
	})
}

// ReadResource reads a resource.
func (c *Client) ReadResource(ctx context.Context, uri string, opts ...CallOption) (*mcp.ReadResourceResult, error) {
	var r mcp.ReadResourceResult
	if err := c.Call(ctx, "resources/read", map[string]any{"uri": uri}, &r, opts...); err != nil {
		return nil, err
	}
	return &r, nil
}

// GetPrompt gets a prompt with its arguments.
func (c *Client) GetPrompt(ctx context.Context, name string, args map[string]string, opts ...CallOption) (*mcp.GetPromptResult, error) {
	params := map[string]any{"name": name}
	if args != nil {
		params["arguments"] = args
	}
	var r mcp.GetPromptResult
	if err := c.Call(ctx, "prompts/get", params, &r, opts...); err != nil {
		return nil, err
	}
	return &r, nil
}

// Complete asks for the completions of argument arg of a prompt or a
// resource template (ref), given what the user typed (value).
func (c *Client) Complete(ctx context.Context, ref mcp.CompletionRef, arg, value string) (*mcp.CompleteResult, error) {
	var r mcp.CompleteResult
	params := map[string]any{"ref": ref, "argument": map[string]string{"name": arg, "value": value}}
	if err := c.Call(ctx, "completion/complete", params, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// SetLogLevel asks for log messages at level and above: logging/setLevel
// in a legacy session; in 2026-07-28, _meta logLevel on every later
// request.
func (c *Client) SetLogLevel(ctx context.Context, level mcp.LogLevel) error {
	if c.modern {
		c.mu.Lock()
		c.logLevel = level.String()
		c.mu.Unlock()
		return nil
	}
	return c.Call(ctx, "logging/setLevel", map[string]string{"level": level.String()}, nil)
}

// Subscribe asks for the updates of a resource, which arrive on Updates:
// resources/subscribe in a legacy session; in 2026-07-28, a
// subscriptions/listen that lasts until ctx ends.
func (c *Client) Subscribe(ctx context.Context, uri string) error {
	if !c.modern {
		return c.Call(ctx, "resources/subscribe", map[string]string{"uri": uri}, nil)
	}
	return c.listen(ctx, map[string]any{"resourceSubscriptions": []string{uri}})
}

// Watch asks for the list changes of tools, prompts and resources, which
// arrive on Changes. A legacy session hears them without asking; in
// 2026-07-28 Watch opens a subscriptions/listen that lasts until ctx
// ends.
func (c *Client) Watch(ctx context.Context) error {
	if !c.modern {
		return nil
	}
	return c.listen(ctx, map[string]any{"toolsListChanged": true, "promptsListChanged": true, "resourcesListChanged": true})
}

// errListenEnded: the server answered a subscriptions/listen.
var errListenEnded = errors.New("mcptest: the subscription ended")

// listen opens a subscriptions/listen; it returns once the server
// acknowledged it, and ends it (notifications/cancelled) when ctx ends.
func (c *Client) listen(ctx context.Context, filter map[string]any) error {
	acked := make(chan struct{})
	var once sync.Once
	p := &pending{done: make(chan struct{})}
	p.onNote = func(method string, params json.RawMessage) {
		if method == "notifications/subscriptions/acknowledged" {
			once.Do(func() { close(acked) })
			return
		}
		c.note(method, params, jsonrpc.ID{})
	}
	id, err := c.start(p)
	if err != nil {
		return err
	}
	params, err := c.params(map[string]any{"notifications": filter})
	if err != nil {
		c.forget(id)
		return err
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen", "params": params})
	if err := c.conn.send(ctx, b); err != nil {
		c.forget(id)
		return err
	}
	select {
	case <-acked:
	case <-p.done:
		if p.err != nil {
			return p.err
		}
		return errListenEnded
	case <-ctx.Done():
		c.forget(id)
		return ctx.Err()
	}
	go func() {
		select {
		case <-ctx.Done():
			c.forget(id)
			_ = c.Notify(context.Background(), "notifications/cancelled", map[string]any{"requestId": id})
		case <-p.done:
		}
	}()
	return nil
}
