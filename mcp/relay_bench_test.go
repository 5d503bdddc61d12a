package mcp

// A session's tools/call sent straight to its owner, and to another
// replica that relays it there, both replicas on loopback HTTP in this
// process over one Memory store. The difference per call (time and
// allocations) is the relaying replica's work; clusterbench measures the
// same with each replica its own process.
//
//	go test -run '^$' -bench Relay -benchmem ./mcp/

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/saguaro-go/saguaro/mcp/cluster"
)

func benchRelayPair(b *testing.B) (owner, relay *httptest.Server, sid string) {
	store := cluster.NewMemory()
	start := func() (*httptest.Server, *Endpoint) {
		srv := httptest.NewUnstartedServer(nil)
		ep := Controller(&Options{Handler: benchServer(b), Sessions: &SessionOptions{},
			Cluster: store.Join("http://" + srv.Listener.Addr().String() + "/mcp")})
		srv.Config.Handler = ep
		srv.Start()
		b.Cleanup(func() {
			_ = ep.Shutdown(context.Background())
			srv.Close()
		})
		return srv, ep
	}
	a, ea := start()
	r, _ := start()
	return a, r, benchSession(b, ea)
}

func BenchmarkRelayDirect(b *testing.B) {
	a, _, sid := benchRelayPair(b)
	benchLoopback(b, a.Config.Handler, sid)
}

func BenchmarkRelayRelayed(b *testing.B) {
	_, r, sid := benchRelayPair(b)
	benchLoopback(b, r.Config.Handler, sid)
}
