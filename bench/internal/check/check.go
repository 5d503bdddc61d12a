// Package check judges every response the load generator reads. A
// configuration that answers wrongly is reported as FAILED, never as fast,
// so these functions are strict: the HTTP status, the media type, the
// JSON-RPC envelope, the id and the echoed text must all be right.
package check

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Error is a failed check. Kind groups failures for the report.
type Error struct {
	Kind   string // "status", "media-type", "json", "jsonrpc-error", "id", "result", "echo", "session", "progress", "crosstalk", "text"
	Detail string
}

func (e *Error) Error() string { return e.Kind + ": " + e.Detail }

func fail(kind, format string, args ...any) error {
	return &Error{Kind: kind, Detail: fmt.Sprintf(format, args...)}
}

// Kind returns the kind of a check error, or "transport" for anything else
// (I/O errors, timeouts).
func Kind(err error) string {
	var ce *Error
	if errors.As(err, &ce) {
		return ce.Kind
	}
	return "transport"
}

// Response is what the load generator read for one request.
type Response struct {
	Status      int
	ContentType string
	Body        []byte
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

type envelope struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   *rpcError       `json:"error"`
}

type callResult struct {
	Content []struct {
		Type string  `json:"type"`
		Text *string `json:"text"`
	} `json:"content"`
	IsError bool `json:"isError"`
}

type initResult struct {
	ProtocolVersion string          `json:"protocolVersion"`
	ServerInfo      json.RawMessage `json:"serverInfo"`
	Capabilities    json.RawMessage `json:"capabilities"`
}

// messages splits the body into its JSON-RPC messages: one JSON object
// (application/json) or the data of each event of an event stream
// (text/event-stream), in order. It checks the status and media type.
func messages(r Response) ([][]byte, error) {
	if r.Status != 200 {
		return nil, fail("status", "HTTP %d, want 200 (body %q)", r.Status, clip(r.Body))
	}
	switch mediaType(r.ContentType) {
	case "application/json":
		return [][]byte{r.Body}, nil
	case "text/event-stream":
		datas := sseData(r.Body)
		if len(datas) == 0 {
			return nil, fail("result", "event stream without data (body %q)", clip(r.Body))
		}
		return datas, nil
	default:
		return nil, fail("media-type", "Content-Type %q, want application/json or text/event-stream", r.ContentType)
	}
}

// response checks that env is the successful response to wantID.
func response(env *envelope, wantID int64) error {
	want := strconv.AppendInt(nil, wantID, 10)
	if env.JSONRPC != "2.0" {
		return fail("json", "jsonrpc %q, want \"2.0\"", env.JSONRPC)
	}
	if !bytes.Equal(bytes.TrimSpace(env.ID), want) {
		return fail("id", "id %s, want %s", env.ID, want)
	}
	if env.Error != nil {
		return fail("jsonrpc-error", "code %d: %s", env.Error.Code, env.Error.Message)
	}
	if len(env.Result) == 0 || string(env.Result) == "null" {
		return fail("result", "response without result")
	}
	return nil
}

// message finds the JSON-RPC response with the given id in the body;
// notifications and requests before it on a stream are skipped.
func message(r Response, wantID int64) (*envelope, error) {
	datas, err := messages(r)
	if err != nil {
		return nil, err
	}
	for _, d := range datas {
		var env envelope
		if err := json.Unmarshal(d, &env); err != nil {
			return nil, fail("json", "%v in %q", err, clip(d))
		}
		if env.Method != "" { // a notification or request before the response
			continue
		}
		if err := response(&env, wantID); err != nil {
			return nil, err
		}
		return &env, nil
	}
	return nil, fail("result", "no response with id %d in the stream", wantID)
}

// Call checks the answer to a tools/call of the echo tool with the given id
// and text: HTTP 200, a JSON-RPC result (not an error) for that id, not
// isError, and exactly one text content block equal to text.
func Call(r Response, wantID int64, text string) error {
	env, err := message(r, wantID)
	if err != nil {
		return err
	}
	return echoResult(env, text)
}

// CallComplete is Call for a 2026-07-28 answer: the result must also
// carry resultType "complete".
func CallComplete(r Response, wantID int64, text string) error {
	env, err := message(r, wantID)
	if err != nil {
		return err
	}
	if err := complete(env); err != nil {
		return err
	}
	return echoResult(env, text)
}

// complete checks that a 2026-07-28 result says resultType "complete".
func complete(env *envelope) error {
	var res struct {
		ResultType *string `json:"resultType"`
	}
	if err := json.Unmarshal(env.Result, &res); err != nil {
		return fail("result", "result: %v", err)
	}
	if res.ResultType == nil {
		return fail("result", "2026-07-28 result without resultType: %q", clip(env.Result))
	}
	if *res.ResultType != "complete" {
		return fail("result", "resultType %q, want \"complete\"", *res.ResultType)
	}
	return nil
}

func echoResult(env *envelope, text string) error {
	var res callResult
	if err := json.Unmarshal(env.Result, &res); err != nil {
		return fail("result", "result: %v", err)
	}
	if res.IsError {
		return fail("result", "isError result: %q", clip(env.Result))
	}
	if len(res.Content) != 1 || res.Content[0].Type != "text" || res.Content[0].Text == nil {
		return fail("result", "want one text content block, got %q", clip(env.Result))
	}
	if got := *res.Content[0].Text; got != text {
		return fail("echo", "echoed %q, sent %q", clip([]byte(got)), clip([]byte(text)))
	}
	return nil
}

type progressParams struct {
	ProgressToken json.RawMessage `json:"progressToken"`
	Progress      float64         `json:"progress"`
	Total         float64         `json:"total"`
}

// Progress checks the answer to a tools/call that asked for progress with
// the string token: an event stream (a JSON answer cannot carry the
// notifications) holding exactly steps notifications/progress for this
// token, each with a progress greater than the one before, then the echo
// result. A progress notification for another token is "crosstalk": it
// belongs to another request's stream.
func Progress(r Response, wantID int64, text, token string, steps int) error {
	return progress(r, wantID, text, token, steps, false)
}

// ProgressComplete is Progress for a 2026-07-28 answer: the result must
// also carry resultType "complete".
func ProgressComplete(r Response, wantID int64, text, token string, steps int) error {
	return progress(r, wantID, text, token, steps, true)
}

func progress(r Response, wantID int64, text, token string, steps int, modern bool) error {
	if r.Status == 200 && mediaType(r.ContentType) != "text/event-stream" {
		return fail("media-type", "answered as %q, not an event stream: the progress notifications were dropped", r.ContentType)
	}
	datas, err := messages(r)
	if err != nil {
		return err
	}
	wantTok, _ := json.Marshal(token)
	var (
		got  int
		last float64
		env  *envelope
	)
	for _, d := range datas {
		var m envelope
		if err := json.Unmarshal(d, &m); err != nil {
			return fail("json", "%v in %q", err, clip(d))
		}
		if env != nil {
			return fail("progress", "a message after the response: %q", clip(d))
		}
		switch m.Method {
		case "":
			if err := response(&m, wantID); err != nil {
				return err
			}
			env = &m
		case "notifications/progress":
			var p progressParams
			if err := json.Unmarshal(m.Params, &p); err != nil {
				return fail("json", "progress params: %v in %q", err, clip(m.Params))
			}
			if !bytes.Equal(bytes.TrimSpace(p.ProgressToken), wantTok) {
				return fail("crosstalk", "progress for token %s on the stream of %s", p.ProgressToken, wantTok)
			}
			if got > 0 && p.Progress <= last {
				return fail("progress", "progress %v after %v: not increasing", p.Progress, last)
			}
			got++
			last = p.Progress
		default: // other notifications (logging) are allowed
		}
	}
	if env == nil {
		return fail("result", "no response with id %d in the stream", wantID)
	}
	if got != steps {
		return fail("progress", "%d progress notifications for %s, want %d", got, wantTok, steps)
	}
	if modern {
		if err := complete(env); err != nil {
			return err
		}
	}
	return echoResult(env, text)
}

// Initialize checks the answer to an initialize request and returns the
// negotiated protocol version and the session id header (which stateful
// configurations must set).
func Initialize(r Response, wantID int64, sessionID string, stateful bool, wantVersion string) error {
	env, err := message(r, wantID)
	if err != nil {
		return err
	}
	var res initResult
	if err := json.Unmarshal(env.Result, &res); err != nil {
		return fail("result", "initialize result: %v", err)
	}
	if res.ProtocolVersion != wantVersion {
		return fail("result", "protocolVersion %q, want %q", res.ProtocolVersion, wantVersion)
	}
	if len(res.ServerInfo) == 0 || len(res.Capabilities) == 0 {
		return fail("result", "initialize result without serverInfo or capabilities")
	}
	if stateful && !validSessionID(sessionID) {
		return fail("session", "Mcp-Session-Id %q: want visible ASCII, non-empty", sessionID)
	}
	return nil
}

// Accepted checks the answer to a notification: 202 Accepted.
func Accepted(r Response) error {
	if r.Status != 202 {
		return fail("status", "HTTP %d for a notification, want 202 (body %q)", r.Status, clip(r.Body))
	}
	return nil
}

func validSessionID(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

func mediaType(ct string) string {
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	return strings.ToLower(strings.TrimSpace(ct))
}

// sseData splits an event stream into the data of its events (multi-line
// data joined with "\n"; events without data, such as a priming event, are
// dropped).
func sseData(b []byte) [][]byte {
	var out [][]byte
	var cur []byte
	has := false
	flush := func() {
		if has {
			out = append(out, cur)
		}
		cur, has = nil, false
	}
	for len(b) > 0 {
		var line []byte
		if i := bytes.IndexAny(b, "\r\n"); i >= 0 {
			line = b[:i]
			if b[i] == '\r' && i+1 < len(b) && b[i+1] == '\n' {
				b = b[i+2:]
			} else {
				b = b[i+1:]
			}
		} else {
			line, b = b, nil
		}
		if len(line) == 0 {
			flush()
			continue
		}
		if v, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			v = bytes.TrimPrefix(v, []byte(" "))
			if has {
				cur = append(cur, '\n')
			}
			cur = append(cur, v...)
			has = true
		}
	}
	flush()
	var nonEmpty [][]byte
	for _, d := range out {
		if len(bytes.TrimSpace(d)) > 0 {
			nonEmpty = append(nonEmpty, d)
		}
	}
	return nonEmpty
}

func clip(b []byte) string {
	const max = 200
	if len(b) > max {
		return string(b[:max]) + "…"
	}
	return string(b)
}
