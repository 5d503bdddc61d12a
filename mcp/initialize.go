package mcp

import "github.com/saguaro-go/saguaro/internal/version"

// Implementation names a client or server (clientInfo, serverInfo). Name
// and Version are required; Title since 2025-06-18, the rest since 2025-11-25.
// A server that leaves Name empty is named "saguaro" with the library's
// release as its Version, so its serverInfo is never empty.
type Implementation struct {
	Name        string `json:"name"`
	Version     string `json:"version"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	WebsiteURL  string `json:"websiteUrl,omitempty"`
	Icons       []Icon `json:"icons,omitempty"`
}

// defaultImplementation names a server that names no one else: the
// library, at its release.
func defaultImplementation() Implementation {
	return Implementation{Name: "saguaro", Version: version.Version}
}

// InitializeParams are the client's initialize params.
type InitializeParams struct {
	// ProtocolVersion is the revision the client asked for, as sent.
	ProtocolVersion string             `json:"protocolVersion"`
	Capabilities    ClientCapabilities `json:"capabilities"`
	ClientInfo      Implementation     `json:"clientInfo"`
}

// InitializeResult is the initialize answer. A Handler fills ServerInfo
// and Instructions; the engine always sets ProtocolVersion (negotiated)
// and Capabilities (from what the handler implements), overriding the
// handler's values, and never mutates the handler's struct.
type InitializeResult struct {
	ProtocolVersion string             `json:"protocolVersion"`
	Capabilities    ServerCapabilities `json:"capabilities"`
	ServerInfo      Implementation     `json:"serverInfo"`
	Instructions    string             `json:"instructions,omitempty"`
	Meta            Meta               `json:"_meta,omitempty"`
}
