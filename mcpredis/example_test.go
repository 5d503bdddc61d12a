package mcpredis_test

import (
	"context"
	"log"
	"net/http"

	"github.com/saguaro-go/saguaro/mcp"
	"github.com/saguaro-go/saguaro/mcpredis"
)

// Each replica of the server joins the cluster with the URL at which the
// other replicas reach its endpoint, and gives the cluster to its
// endpoint; a load balancer with no stickiness spreads the clients over
// the replicas.
func ExampleNew() {
	ctx := context.Background()
	rdb, err := mcpredis.NewClient("redis://127.0.0.1:6379/0")
	if err != nil {
		log.Fatal(err)
	}
	defer rdb.Close()
	cluster, err := mcpredis.New(ctx, rdb, &mcpredis.Options{URL: "http://10.0.0.7:8080/mcp"})
	if err != nil {
		log.Fatal(err)
	}
	defer cluster.Close()

	// Cursors and requestState must open on every replica.
	key, _ := cluster.SharedKey(ctx, "seal", 32)
	srv := mcp.NewServer(mcp.Implementation{Name: "tasks", Version: "1.0.0"}, &mcp.ServerOptions{Keys: [][]byte{key}})
	endpoint := mcp.Controller(&mcp.Options{Handler: srv, Cluster: cluster})
	defer endpoint.Shutdown(ctx) // releases the sessions: the other replicas take them over

	http.Handle("/mcp", endpoint)
	log.Fatal(http.ListenAndServe("10.0.0.7:8080", nil))
}
