package main

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/saguaro-go/saguaro/bench/internal/payload"
)

// addDocs registers the payload workload's documents, one static resource
// per size in KiB (payload.DocURI), each read as one text entry, the way
// mcp-go's README registers a resource (mcp.NewResource, AddResource).
func addDocs(s *server.MCPServer, sizesKiB []int) {
	for _, kib := range sizesKiB {
		doc := payload.Document(kib << 10)
		s.AddResource(mcp.NewResource(payload.DocURI(kib), payload.DocName(kib), mcp.WithMIMEType(payload.MIMEType)),
			func(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
				return []mcp.ResourceContents{
					mcp.TextResourceContents{URI: req.Params.URI, MIMEType: payload.MIMEType, Text: doc},
				}, nil
			})
	}
}
