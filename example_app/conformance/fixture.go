package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/saguaro-go/saguaro/mcp"
)

// The fixture's media: a 1×1 PNG and a tiny WAV file.
var (
	pngData, _ = base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==")
	wavData, _ = base64.StdEncoding.DecodeString("UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=")
)

// noArgs is the input of a tool that takes no arguments.
type noArgs struct{}

// pause waits d or until ctx ends.
func pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

// newFixture registers what the conformance scenarios call. Registration
// errors are programming errors here, so they panic at start-up. opts
// enable tasks, and replicas pass the shared Keys. dyn is where the
// list-changed hooks keep their state (see dynamic); newFixture sets its
// server.
func newFixture(logger *slog.Logger, opts *mcp.ServerOptions, dyn *dynamic) *mcp.Server {
	srv := mcp.NewServer(mcp.Implementation{Name: "saguaro-conformance", Version: "0.1.0"}, opts)
	dyn.srv = srv
	addTools(srv)
	addResources(srv)
	addPrompts(srv)
	addInteropTools(srv)
	addModern(srv, dyn)
	_ = logger
	return srv
}

func addTools(srv *mcp.Server) {
	simple := func(name, desc string, content ...mcp.Content) {
		must(mcp.AddTool(srv, &mcp.Tool{Name: name, Description: desc},
			func(context.Context, *mcp.CallToolRequest, noArgs) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: content}, nil
			}))
	}
	simple("test_simple_text", "Returns a simple text response",
		mcp.Text("This is a simple text response for testing."))
	simple("test_image_content", "Returns an image",
		mcp.Image(pngData, "image/png"))
	simple("test_audio_content", "Returns audio",
		mcp.Audio(wavData, "audio/wav"))
	simple("test_embedded_resource", "Returns an embedded resource",
		mcp.EmbeddedText("test://embedded-resource", "text/plain", "This is an embedded resource content."))
	simple("test_multiple_content_types", "Returns text, an image and a resource",
		mcp.Text("Multiple content types test:"),
		mcp.Image(pngData, "image/png"),
		mcp.EmbeddedText("test://mixed-content-resource", "application/json", `{"test":"data","value":123}`))

	must(mcp.AddTool(srv, &mcp.Tool{Name: "test_error_handling", Description: "Always fails, as a tool result"},
		func(context.Context, *mcp.CallToolRequest, noArgs) (*mcp.CallToolResult, error) {
			//lint:ignore ST1005 the conformance suite specifies this text, capital letter and all
			return nil, fmt.Errorf("This tool intentionally returns an error for testing")
		}))

	must(mcp.AddTool(srv, &mcp.Tool{Name: "test_tool_with_logging", Description: "Sends log messages while it runs"},
		func(ctx context.Context, req *mcp.CallToolRequest, _ noArgs) (string, error) {
			for i, msg := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
				if i > 0 {
					if err := pause(ctx, 50*time.Millisecond); err != nil {
						return "", err
					}
				}
				if err := req.Log(ctx, mcp.LogInfo, "conformance", msg); err != nil {
					return "", err
				}
			}
			return "Tool with logging executed successfully", nil
		}))

	must(mcp.AddTool(srv, &mcp.Tool{Name: "test_tool_with_progress", Description: "Reports progress while it runs"},
		func(ctx context.Context, req *mcp.CallToolRequest, _ noArgs) (string, error) {
			for i, p := range []float64{0, 50, 100} {
				if i > 0 {
					if err := pause(ctx, 50*time.Millisecond); err != nil {
						return "", err
					}
				}
				if err := req.Progress(ctx, p, 100, ""); err != nil {
					return "", err
				}
			}
			return req.Meta.ProgressToken.String(), nil
		}))

	type samplingIn struct {
		Prompt string `json:"prompt" jsonschema:"the prompt to send to the client's model"`
	}
	must(mcp.AddTool(srv, &mcp.Tool{Name: "test_sampling", Description: "Asks the client's model (sampling)"},
		func(ctx context.Context, req *mcp.CallToolRequest, in samplingIn) (string, error) {
			res, err := req.CreateMessage(ctx, &mcp.CreateMessageParams{
				Messages:  []*mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.Text(in.Prompt)}},
				MaxTokens: 100,
			})
			if err != nil {
				return "", err
			}
			text := ""
			if t, ok := res.Content.(*mcp.TextContent); ok {
				text = t.Text
			}
			return "LLM response: " + text, nil
		}))

	type elicitIn struct {
		Message string `json:"message" jsonschema:"what to ask the user"`
	}
	must(mcp.AddTool(srv, &mcp.Tool{Name: "test_elicitation", Description: "Asks the user for information (elicitation)"},
		func(ctx context.Context, req *mcp.CallToolRequest, in elicitIn) (string, error) {
			return elicit(ctx, req, "User response", in.Message, json.RawMessage(`{"type":"object","properties":{"username":{"type":"string","description":"User's response"},"email":{"type":"string","description":"User's email address"}},"required":["username","email"]}`))
		}))
	must(mcp.AddTool(srv, &mcp.Tool{Name: "test_elicitation_sep1034_defaults", Description: "Elicitation with default values (SEP-1034)"},
		func(ctx context.Context, req *mcp.CallToolRequest, _ noArgs) (string, error) {
			return elicit(ctx, req, "Elicitation completed", "Please review and update the form fields with defaults", json.RawMessage(`{"type":"object","properties":{`+
				`"name":{"type":"string","description":"User name","default":"John Doe"},`+
				`"age":{"type":"integer","description":"User age","default":30},`+
				`"score":{"type":"number","description":"User score","default":95.5},`+
				`"status":{"type":"string","description":"User status","enum":["active","inactive","pending"],"default":"active"},`+
				`"verified":{"type":"boolean","description":"Verification status","default":true}}}`))
		}))
	must(mcp.AddTool(srv, &mcp.Tool{Name: "test_elicitation_sep1330_enums", Description: "Elicitation with every enum form (SEP-1330)"},
		func(ctx context.Context, req *mcp.CallToolRequest, _ noArgs) (string, error) {
			return elicit(ctx, req, "Elicitation completed", "Please select options from the enum fields", json.RawMessage(`{"type":"object","properties":{`+
				`"untitledSingle":{"type":"string","description":"Select one option","enum":["option1","option2","option3"]},`+
				`"titledSingle":{"type":"string","description":"Select one option with titles","oneOf":[{"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"},{"const":"value3","title":"Third Option"}]},`+
				`"legacyEnum":{"type":"string","description":"Select one option (legacy)","enum":["opt1","opt2","opt3"],"enumNames":["Option One","Option Two","Option Three"]},`+
				`"untitledMulti":{"type":"array","description":"Select multiple options","minItems":1,"maxItems":3,"items":{"type":"string","enum":["option1","option2","option3"]}},`+
				`"titledMulti":{"type":"array","description":"Select multiple options with titles","minItems":1,"maxItems":3,"items":{"anyOf":[{"const":"value1","title":"First Choice"},{"const":"value2","title":"Second Choice"},{"const":"value3","title":"Third Choice"}]}}}}`))
		}))

	must(srv.AddToolRaw(&mcp.Tool{
		Name:        "json_schema_2020_12_tool",
		Description: "A tool whose input schema uses JSON Schema 2020-12 features",
		// The schema the json-schema-2020-12 scenario specifies: $schema,
		// $defs and additionalProperties (SEP-1613), and an $anchor in
		// $defs, allOf/anyOf and if/then/else (SEP-2106, checked at
		// 2026-07-28), all of which must reach tools/list unchanged.
		InputSchema: json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",` +
			`"$defs":{"address":{"$anchor":"addressDef","type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}}}},` +
			`"properties":{"name":{"type":"string"},"address":{"$ref":"#/$defs/address"},"contactMethod":{"type":"string","enum":["phone","email"]},"phone":{"type":"string"},"email":{"type":"string"}},` +
			`"allOf":[{"anyOf":[{"required":["phone"]},{"required":["email"]}]}],` +
			`"if":{"properties":{"contactMethod":{"const":"phone"}},"required":["contactMethod"]},"then":{"required":["phone"]},"else":{"required":["email"]},` +
			`"additionalProperties":false}`),
	}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{mcp.Text("Received: " + string(req.Arguments))}}, nil
	}))

	must(mcp.AddTool(srv, &mcp.Tool{Name: "test_reconnection", Description: "Closes its event stream mid-call; the client resumes it (SEP-1699)"},
		func(ctx context.Context, req *mcp.CallToolRequest, _ noArgs) (string, error) {
			// Something must be on the stream before it can be closed and
			// resumed: a log message starts it.
			_ = req.Log(ctx, mcp.LogInfo, "conformance", "closing the stream; resume with Last-Event-ID")
			req.CloseStream(100 * time.Millisecond)
			if err := pause(ctx, 300*time.Millisecond); err != nil {
				return "", err
			}
			return "Reconnection test completed successfully", nil
		}))
}

// elicit asks the user and reports the answer as text.
func elicit(ctx context.Context, req *mcp.CallToolRequest, prefix, message string, schema json.RawMessage) (string, error) {
	res, err := req.Elicit(ctx, &mcp.ElicitParams{Message: message, RequestedSchema: schema})
	if err != nil {
		return "", err
	}
	content, _ := json.Marshal(res.Content)
	return fmt.Sprintf("%s: action=%s, content=%s", prefix, res.Action, content), nil
}

func addResources(srv *mcp.Server) {
	static := func(uri, name, mime string, contents *mcp.ResourceContents) {
		must(srv.AddResource(&mcp.Resource{URI: uri, Name: name, Description: "Conformance resource " + name, MIMEType: mime},
			func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{contents}}, nil
			}))
	}
	static("test://static-text", "static-text", "text/plain",
		&mcp.ResourceContents{URI: "test://static-text", MIMEType: "text/plain", Text: "This is the content of the static text resource."})
	static("test://static-binary", "static-binary", "image/png",
		&mcp.ResourceContents{URI: "test://static-binary", MIMEType: "image/png", Blob: pngData})
	static("test://watched-resource", "watched-resource", "text/plain",
		&mcp.ResourceContents{URI: "test://watched-resource", MIMEType: "text/plain", Text: "Watched resource content"})
	must(srv.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "test://template/{id}/data", Name: "template",
		Description: "Data for an id", MIMEType: "application/json"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			id := req.Vars["id"]
			text, _ := json.Marshal(map[string]any{"id": id, "templateTest": true, "data": "Data for ID: " + id})
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.URI, MIMEType: "application/json", Text: string(text)}}}, nil
		}))
}

func addPrompts(srv *mcp.Server) {
	user := func(c mcp.Content) *mcp.PromptMessage { return &mcp.PromptMessage{Role: mcp.RoleUser, Content: c} }
	must(srv.AddPrompt(&mcp.Prompt{Name: "test_simple_prompt", Description: "A simple prompt without arguments"},
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{user(mcp.Text("This is a simple prompt for testing."))}}, nil
		}))
	must(srv.AddPrompt(&mcp.Prompt{Name: "test_prompt_with_arguments", Description: "A prompt with two required arguments",
		Arguments: []*mcp.PromptArgument{
			{Name: "arg1", Description: "First test argument", Required: true},
			{Name: "arg2", Description: "Second test argument", Required: true},
		}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			text := fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", req.Arguments["arg1"], req.Arguments["arg2"])
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{user(mcp.Text(text))}}, nil
		}))
	must(srv.AddPromptCompletion("test_prompt_with_arguments", "arg1", func(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
		var out []string
		for _, v := range []string{"paris", "park", "party"} {
			if len(req.ArgumentValue) <= len(v) && v[:len(req.ArgumentValue)] == req.ArgumentValue {
				out = append(out, v)
			}
		}
		return &mcp.CompleteResult{Values: out}, nil
	}))
	must(srv.AddPrompt(&mcp.Prompt{Name: "test_prompt_with_embedded_resource", Description: "A prompt that embeds a resource",
		Arguments: []*mcp.PromptArgument{{Name: "resourceUri", Description: "URI of the resource to embed", Required: true}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{
				user(mcp.EmbeddedText(req.Arguments["resourceUri"], "text/plain", "Embedded resource content for testing.")),
				user(mcp.Text("Please process the embedded resource above.")),
			}}, nil
		}))
	must(srv.AddPrompt(&mcp.Prompt{Name: "test_prompt_with_image", Description: "A prompt with an image"},
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{
				user(mcp.Image(pngData, "image/png")),
				user(mcp.Text("Please analyze the image above.")),
			}}, nil
		}))
}
