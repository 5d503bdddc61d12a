package main

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/saguaro-go/saguaro/bench/internal/payload"
)

// addDocs registers the payload workload's documents, one static resource
// per size in KiB (payload.DocURI), each read as one text entry, the way
// the SDK's documentation registers a resource (Server.AddResource).
func addDocs(s *mcp.Server, sizesKiB []int) {
	for _, kib := range sizesKiB {
		doc := payload.Document(kib << 10)
		s.AddResource(&mcp.Resource{URI: payload.DocURI(kib), Name: payload.DocName(kib), MIMEType: payload.MIMEType},
			func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{
					Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: payload.MIMEType, Text: doc}},
				}, nil
			})
	}
}
