package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/saguaro-go/saguaro/mcp"
	"github.com/saguaro-go/saguaro/mcp/jsonrpc"
)

// What the 2026-07-28 scenarios of the alpha suite call: diagnostic tools
// of server-stateless, the input_required tools and prompt, the tasks
// extension's tools, a tool with x-mcp-header, and a skill. The same
// handlers serve legacy sessions (the back channel is then a real
// server→client request).

func addModern(srv *mcp.Server, dyn *dynamic) {
	addStatelessProbes(srv, dyn)
	addInputRequired(srv)
	addTaskTools(srv)
	must(mcp.AddTool(srv, &mcp.Tool{Name: "test_x_mcp_header", Description: "Echoes arguments mirrored in Mcp-Param-* headers",
		InputSchema: json.RawMessage(`{"type":"object","properties":{` +
			`"region":{"type":"string","x-mcp-header":"Region"},` +
			`"priority":{"type":"integer","x-mcp-header":"Priority"},` +
			`"verbose":{"type":"boolean","x-mcp-header":"Verbose"},` +
			`"query":{"type":"string"}},"required":["region"]}`)},
		func(_ context.Context, _ *mcp.CallToolRequest, in map[string]any) (string, error) {
			return fmt.Sprintf("region=%v", in["region"]), nil
		}))
	must(srv.AddSkill(&mcp.Skill{Path: "saguaro-demo", Files: map[string][]byte{
		"SKILL.md": []byte("---\nname: saguaro-demo\ndescription: Shows how saguaro serves an Agent Skill\n---\n\n" +
			"Read references/NOTES.md before answering.\n"),
		"references/NOTES.md": []byte("Saguaro serves MCP on chi.\n"),
	}}))
}

func addStatelessProbes(srv *mcp.Server, dyn *dynamic) {
	must(mcp.AddTool(srv, &mcp.Tool{Name: "test_missing_capability", Description: "Needs sampling: a client without it gets -32021"},
		func(ctx context.Context, req *mcp.CallToolRequest, _ noArgs) (string, error) {
			res, err := req.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 10,
				Messages: []*mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.Text("ping")}}})
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("model %s answered", res.Model), nil
		}))
	must(mcp.AddTool(srv, &mcp.Tool{Name: "test_streaming_elicitation", Description: "Asks the user a question"},
		func(ctx context.Context, req *mcp.CallToolRequest, _ noArgs) (string, error) {
			return elicit(mcp.WithInputKey(ctx, "answer"), req, "Elicitation", "Anything to add?",
				json.RawMessage(`{"type":"object","properties":{"answer":{"type":"string"}}}`))
		}))
	must(mcp.AddTool(srv, &mcp.Tool{Name: "test_logging_tool", Description: "Logs at info level (only when the request asked for logs)"},
		func(ctx context.Context, req *mcp.CallToolRequest, _ noArgs) (string, error) {
			_ = req.Log(ctx, mcp.LogInfo, "fixture", "test_logging_tool ran")
			return "logged", nil
		}))
	// The list-changed hooks; dyn keeps them consistent across replicas.
	must(mcp.AddTool(srv, &mcp.Tool{Name: "test_trigger_tool_change", Description: "Adds or removes a tool (tools/list_changed)"},
		dyn.trigger(dynamicTool, "test_dynamic_tool")))
	must(mcp.AddTool(srv, &mcp.Tool{Name: "test_trigger_prompt_change", Description: "Adds or removes a prompt (prompts/list_changed)"},
		dyn.trigger(dynamicPrompt, "test_dynamic_prompt")))
}

var nameSchema = json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)

// askName elicits a name under key; "" when the user did not accept.
func askName(ctx context.Context, req *mcp.Request, key, message string) (string, error) {
	res, err := req.Elicit(mcp.WithInputKey(ctx, key), &mcp.ElicitParams{Message: message, RequestedSchema: nameSchema})
	if err != nil {
		return "", err
	}
	name, _ := res.Content["name"].(string)
	if res.Action != "accept" {
		return "", nil
	}
	return name, nil
}

func sample(ctx context.Context, req *mcp.Request, key, question string, maxTokens int) (string, error) {
	res, err := req.CreateMessage(mcp.WithInputKey(ctx, key), &mcp.CreateMessageParams{MaxTokens: maxTokens,
		Messages: []*mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.Text(question)}}})
	if err != nil {
		return "", err
	}
	if t, ok := res.Content.(*mcp.TextContent); ok {
		return t.Text, nil
	}
	return "(no text)", nil
}

func roots(ctx context.Context, req *mcp.Request, key string) (string, error) {
	res, err := req.ListRoots(mcp.WithInputKey(ctx, key))
	if err != nil {
		return "", err
	}
	uris := make([]string, 0, len(res.Roots))
	for _, r := range res.Roots {
		uris = append(uris, r.URI)
	}
	return strings.Join(uris, ", "), nil
}

func addInputRequired(srv *mcp.Server) {
	tool := func(name, desc string, fn func(ctx context.Context, req *mcp.CallToolRequest) (string, error)) {
		must(mcp.AddTool(srv, &mcp.Tool{Name: name, Description: desc},
			func(ctx context.Context, req *mcp.CallToolRequest, _ noArgs) (string, error) { return fn(ctx, req) }))
	}
	tool("test_input_required_result_elicitation", "Asks for the user's name, then greets", func(ctx context.Context, req *mcp.CallToolRequest) (string, error) {
		name, err := askName(ctx, &req.Request, "user_name", "What is your name?")
		if err != nil {
			return "", err
		}
		return "Hello, " + name + "!", nil
	})
	tool("test_input_required_result_sampling", "Asks the client's model a question", func(ctx context.Context, req *mcp.CallToolRequest) (string, error) {
		return sample(ctx, &req.Request, "capital_question", "What is the capital of France?", 100)
	})
	tool("test_input_required_result_list_roots", "Asks for the client's roots", func(ctx context.Context, req *mcp.CallToolRequest) (string, error) {
		r, err := roots(ctx, &req.Request, "client_roots")
		return "Roots: " + r, err
	})
	tool("test_input_required_result_multiple_inputs", "Asks for a name, a greeting and the roots at once", func(ctx context.Context, req *mcp.CallToolRequest) (string, error) {
		// All three requests are made before any error is returned, so
		// one input_required result carries the three of them.
		name, err1 := askName(ctx, &req.Request, "user_name", "What is your name?")
		greeting, err2 := sample(ctx, &req.Request, "greeting", "Generate a greeting", 50)
		r, err3 := roots(ctx, &req.Request, "client_roots")
		if err := errors.Join(err1, err2, err3); err != nil {
			return "", err
		}
		return fmt.Sprintf("%s %s (roots: %s)", greeting, name, r), nil
	})
	tool("test_input_required_result_request_state", "Asks for a confirmation; checks its sealed requestState", func(ctx context.Context, req *mcp.CallToolRequest) (string, error) {
		res, err := req.Elicit(mcp.WithInputKey(ctx, "confirm"), &mcp.ElicitParams{Message: "Please confirm",
			RequestedSchema: json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`)})
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("state-ok: action=%s", res.Action), nil
	})
	tool("test_input_required_result_multi_round", "Asks two questions, one round each", func(ctx context.Context, req *mcp.CallToolRequest) (string, error) {
		name, err := askName(ctx, &req.Request, "step1", "Step 1: What is your name?")
		if err != nil {
			return "", err
		}
		res, err := req.Elicit(mcp.WithInputKey(ctx, "step2"), &mcp.ElicitParams{Message: "Step 2: What is your favorite color?",
			RequestedSchema: json.RawMessage(`{"type":"object","properties":{"color":{"type":"string"}},"required":["color"]}`)})
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%s likes %v", name, res.Content["color"]), nil
	})
	tool("test_input_required_result_tampered_state", "Asks for a confirmation; rejects a tampered requestState", func(ctx context.Context, req *mcp.CallToolRequest) (string, error) {
		res, err := req.Elicit(mcp.WithInputKey(ctx, "confirm"), &mcp.ElicitParams{Message: "Please confirm",
			RequestedSchema: json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`)})
		if err != nil {
			return "", err
		}
		return "confirmed: " + res.Action, nil
	})
	tool("test_input_required_result_capabilities", "Asks only for what the client declared", func(ctx context.Context, req *mcp.CallToolRequest) (string, error) {
		c := req.Client
		var errs []error
		var parts []string
		if c != nil && c.Sampling != nil {
			s, err := sample(ctx, &req.Request, "sampling_question", "Say hello", 20)
			parts, errs = append(parts, s), append(errs, err)
		}
		if c != nil && c.Elicitation != nil {
			n, err := askName(ctx, &req.Request, "user_name", "What is your name?")
			parts, errs = append(parts, n), append(errs, err)
		}
		if c != nil && c.Roots != nil {
			r, err := roots(ctx, &req.Request, "client_roots")
			parts, errs = append(parts, r), append(errs, err)
		}
		if err := errors.Join(errs...); err != nil {
			return "", err
		}
		return "inputs: " + strings.Join(parts, "; "), nil
	})
	must(srv.AddPrompt(&mcp.Prompt{Name: "test_input_required_result_prompt", Description: "Asks what context to use, then builds the prompt"},
		func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			res, err := req.Elicit(mcp.WithInputKey(ctx, "user_context"), &mcp.ElicitParams{Message: "What context should the prompt use?",
				RequestedSchema: json.RawMessage(`{"type":"object","properties":{"context":{"type":"string"}},"required":["context"]}`)})
			if err != nil {
				return nil, err
			}
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: mcp.RoleUser,
				Content: mcp.Text(fmt.Sprintf("Use this context: %v", res.Content["context"]))}}}, nil
		}))
}

func addTaskTools(srv *mcp.Server) {
	type greetArgs struct {
		Name string `json:"name"`
	}
	must(mcp.AddTool(srv, &mcp.Tool{Name: "greet", Description: "Greets synchronously"},
		func(_ context.Context, _ *mcp.CallToolRequest, in greetArgs) (string, error) {
			return "Hello, " + in.Name + "!", nil
		}))
	type computeArgs struct {
		Seconds float64 `json:"seconds"`
		Label   string  `json:"label,omitempty"`
	}
	must(mcp.AddTool(srv, &mcp.Tool{Name: "slow_compute", Description: "Sleeps for seconds, then answers; a task when the client supports tasks", TaskSupport: mcp.TaskOptional},
		func(ctx context.Context, _ *mcp.CallToolRequest, in computeArgs) (string, error) {
			if err := pause(ctx, time.Duration(in.Seconds*float64(time.Second))); err != nil {
				return "", err
			}
			return fmt.Sprintf("computed %s after %gs", in.Label, in.Seconds), nil
		}))
	must(mcp.AddTool(srv, &mcp.Tool{Name: "failing_job", Description: "A task that fails as a tool error after a second", TaskSupport: mcp.TaskRequired},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ noArgs) (string, error) {
			if err := pause(ctx, time.Second); err != nil {
				return "", err
			}
			return "", errors.New("the job failed")
		}))
	must(mcp.AddTool(srv, &mcp.Tool{Name: "protocol_error_job", Description: "A task that fails with a protocol error", TaskSupport: mcp.TaskOptional},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ noArgs) (string, error) {
			if err := pause(ctx, 100*time.Millisecond); err != nil {
				return "", err
			}
			return "", jsonrpc.NewError(jsonrpc.InternalError, "Internal error: the job crashed")
		}))
	type deleteArgs struct {
		Filename string `json:"filename"`
	}
	must(mcp.AddTool(srv, &mcp.Tool{Name: "confirm_delete", Description: "Asks for confirmation, then deletes (pretends to)", TaskSupport: mcp.TaskOptional},
		func(ctx context.Context, req *mcp.CallToolRequest, in deleteArgs) (string, error) {
			res, err := req.Elicit(ctx, &mcp.ElicitParams{Message: "Delete " + in.Filename + "?",
				RequestedSchema: json.RawMessage(`{"type":"object","properties":{"confirm":{"type":"boolean"}},"required":["confirm"]}`)})
			if err != nil {
				return "", err
			}
			if ok, _ := res.Content["confirm"].(bool); res.Action == "accept" && ok {
				return "deleted " + in.Filename, nil
			}
			return "kept " + in.Filename, nil
		}))
	must(mcp.AddTool(srv, &mcp.Tool{Name: "multi_input", Description: "Asks two questions at once", TaskSupport: mcp.TaskOptional},
		func(ctx context.Context, req *mcp.CallToolRequest, _ noArgs) (string, error) {
			var wg sync.WaitGroup
			names := make([]string, 2)
			errs := make([]error, 2)
			for i, key := range []string{"first", "second"} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					names[i], errs[i] = askName(ctx, &req.Request, key, "Name "+key+"?")
				}()
			}
			wg.Wait()
			if err := errors.Join(errs...); err != nil {
				return "", err
			}
			return "got " + strings.Join(names, " and "), nil
		}))
	must(mcp.AddTool(srv, &mcp.Tool{Name: "test_tool_with_task", Description: "Asks for a name, then finishes as a task",
		TaskSupport: mcp.TaskRequired, DeferTask: true},
		func(ctx context.Context, req *mcp.CallToolRequest, _ noArgs) (string, error) {
			name, err := askName(ctx, &req.Request, "user_name", "What is your name?")
			if err != nil {
				return "", err
			}
			ctx = req.StartTask(ctx)
			if err := pause(ctx, 200*time.Millisecond); err != nil {
				return "", err
			}
			return "Hello, " + name + ", from a task!", nil
		}))
}
