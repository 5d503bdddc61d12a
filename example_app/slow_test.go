package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A client that trickles its body is cut with 408 on the JSON API and on
// the MCP endpoint alike.
func TestSlowBodiesAreCut(t *testing.T) {
	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String()
	a, err := newApp(context.Background(), config{BaseURL: base, DevUser: "tester", BodyTimeout: 300 * time.Millisecond}, quietLogger())
	require.NoError(t, err)
	srv.Config.Handler = a.Handler()
	srv.Start()
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
		a.Close()
	})
	ta := &testApp{app: a, srv: srv}
	token := ta.token(t, scopeRead+" "+scopeWrite)

	for _, path := range []string{"/api/tasks", "/mcp"} {
		t.Run(path, func(t *testing.T) {
			conn, err := net.Dial("tcp", srv.Listener.Addr().String())
			require.NoError(t, err)
			defer conn.Close()
			_, err = fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n"+
				"Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"+
				"Content-Length: 200\r\n\r\n{", path, srv.Listener.Addr(), token)
			require.NoError(t, err)
			stop, done := make(chan struct{}), make(chan struct{})
			go func() {
				defer close(done)
				for {
					select {
					case <-stop:
						return
					case <-time.After(50 * time.Millisecond):
						if _, err := conn.Write([]byte(" ")); err != nil {
							return
						}
					}
				}
			}()
			defer func() { close(stop); <-done }()
			require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
			res, err := http.ReadResponse(bufio.NewReader(conn), nil)
			require.NoError(t, err)
			res.Body.Close()
			assert.Equal(t, http.StatusRequestTimeout, res.StatusCode)
		})
	}
	// The app goes on serving everyone else.
	res, _ := ta.do(t, http.MethodPost, "/api/tasks", token, `{"title":"after"}`)
	assert.Equal(t, http.StatusCreated, res.StatusCode)
}
