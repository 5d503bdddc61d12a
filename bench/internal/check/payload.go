package check

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// bigEnvelope is a response with a long text in its result, decoded in
// one pass (json.Unmarshal), long strings included: the checks of the
// payload workload read answers of up to megabytes, and decoding them
// twice (envelope, then result) would double the load generator's cost.
type bigEnvelope struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Error   *rpcError       `json:"error"`
	Result  *struct {
		ResultType *string `json:"resultType"`
		IsError    bool    `json:"isError"`
		Content    []struct {
			Type string  `json:"type"`
			Text *string `json:"text"`
		} `json:"content"`
		Contents []struct {
			URI      string  `json:"uri"`
			MIMEType string  `json:"mimeType"`
			Text     *string `json:"text"`
			Blob     *string `json:"blob"`
		} `json:"contents"`
	} `json:"result"`
}

// bigMessage finds the response with wantID in r as Call does (an event
// stream's notifications before it skipped) and checks its envelope:
// jsonrpc "2.0", the id, no error, a result; with modern, resultType
// "complete".
func bigMessage(r Response, wantID int64, modern bool) (*bigEnvelope, error) {
	datas, err := messages(r)
	if err != nil {
		return nil, err
	}
	want := strconv.AppendInt(nil, wantID, 10)
	for _, d := range datas {
		var env bigEnvelope
		if err := json.Unmarshal(d, &env); err != nil {
			return nil, fail("json", "%v in %q", err, clip(d))
		}
		if env.Method != "" {
			continue
		}
		if env.JSONRPC != "2.0" {
			return nil, fail("json", "jsonrpc %q, want \"2.0\"", env.JSONRPC)
		}
		if !bytes.Equal(bytes.TrimSpace(env.ID), want) {
			return nil, fail("id", "id %s, want %s", env.ID, want)
		}
		if env.Error != nil {
			return nil, fail("jsonrpc-error", "code %d: %s", env.Error.Code, env.Error.Message)
		}
		if env.Result == nil {
			return nil, fail("result", "response without result")
		}
		if modern {
			if env.Result.ResultType == nil {
				return nil, fail("result", "2026-07-28 result without resultType: %q", clip(d))
			}
			if *env.Result.ResultType != "complete" {
				return nil, fail("result", "resultType %q, want \"complete\"", *env.Result.ResultType)
			}
		}
		return &env, nil
	}
	return nil, fail("result", "no response with id %d in the stream", wantID)
}

// LongCall checks the answer to a tools/call of the echo tool whose text
// is the concatenation of want (a long text from a part per request and a
// shared part, compared piece by piece rather than assembled): HTTP 200,
// a JSON-RPC result for wantID, not isError, exactly one text content
// block equal to the text; with modern, resultType "complete". It judges
// what Call and CallComplete judge, decoding the answer once.
func LongCall(r Response, wantID int64, modern bool, want ...string) error {
	env, err := bigMessage(r, wantID, modern)
	if err != nil {
		return err
	}
	res := env.Result
	if res.IsError {
		return fail("result", "isError result: %q", clip(r.Body))
	}
	if len(res.Content) != 1 || res.Content[0].Type != "text" || res.Content[0].Text == nil {
		return fail("result", "want one text content block, got %q", clip(r.Body))
	}
	if got := *res.Content[0].Text; !concatEquals(got, want) {
		return fail("echo", "echoed %d bytes %q, sent %d bytes %q", len(got), clip([]byte(got)), concatLen(want), clip([]byte(first(want))))
	}
	return nil
}

// ResourceRead checks the answer to resources/read of uri: HTTP 200, a
// JSON-RPC result for wantID with exactly one contents entry, for uri,
// of media type mimeType, whose text is text (and no blob); with modern,
// resultType "complete".
func ResourceRead(r Response, wantID int64, modern bool, uri, mimeType, text string) error {
	env, err := bigMessage(r, wantID, modern)
	if err != nil {
		return err
	}
	cs := env.Result.Contents
	if len(cs) != 1 {
		return fail("result", "want one contents entry, got %d in %q", len(cs), clip(r.Body))
	}
	c := cs[0]
	switch {
	case c.URI != uri:
		return fail("result", "contents uri %q, want %q", c.URI, uri)
	case c.MIMEType != mimeType:
		return fail("result", "contents mimeType %q, want %q", c.MIMEType, mimeType)
	case c.Blob != nil || c.Text == nil:
		return fail("result", "want text contents, got %q", clip(r.Body))
	case *c.Text != text:
		return fail("text", "read %d bytes %q, the document has %d bytes %q", len(*c.Text), clip([]byte(*c.Text)), len(text), clip([]byte(text)))
	}
	return nil
}

func concatEquals(got string, parts []string) bool {
	for _, p := range parts {
		if len(got) < len(p) || got[:len(p)] != p {
			return false
		}
		got = got[len(p):]
	}
	return got == ""
}

func concatLen(parts []string) int {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	return n
}

func first(parts []string) string {
	if len(parts) == 0 {
		return ""
	}
	return parts[0]
}
