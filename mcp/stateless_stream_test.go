package mcp

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStatelessProgressStreams: without sessions, a call that asks for
// progress is answered as an event stream carrying its notifications (the
// token echoed with its JSON type) and then its result; without a token,
// or with JSONResponse, the same call is plain JSON.
func TestStatelessProgressStreams(t *testing.T) {
	t.Parallel()
	ts := startServer(t, &Options{})
	for _, tok := range []string{`7`, `"p-1"`} {
		s := openStream(t, ts.post("", toolCallToken("1", "progress", `{"n":3}`, tok)))
		msgs := s.rest()
		require.Len(t, msgs, 4, "three notifications, then the result")
		for i, m := range msgs[:3] {
			assert.Equal(t, "notifications/progress", m.Method)
			assert.JSONEq(t, `{"progressToken":`+tok+`,"progress":`+[]string{"1", "2", "3"}[i]+`,"total":3}`, string(m.Params))
		}
		assert.JSONEq(t, `1`, string(msgs[3].ID))
		assert.Contains(t, msgs[3].text(t), "done")
	}

	m := ts.call("", toolCall("2", "progress", `{"n":3}`))
	assert.Contains(t, m.text(t), "done", "no token: JSON, notifications dropped")

	quiet := ts.post("", toolCallToken("3", "quiet", `{}`, `1`))
	assert.Equal(t, "application/json", quiet.Header.Get("Content-Type"), "a call that emits nothing stays JSON")
	readJSON(t, quiet, http.StatusOK)

	js := startServer(t, &Options{JSONResponse: true})
	resp := js.post("", toolCallToken("4", "progress", `{"n":3}`, `1`))
	assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	readJSON(t, resp, http.StatusOK)
}
