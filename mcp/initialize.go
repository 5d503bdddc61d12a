package mcp

// Implementation names a client or server (clientInfo, serverInfo). Name
// and Version are required; Title since 2025-06-18, the rest since 2025-11-25.
type Implementation struct {
	Name        string `json:"name"`
	Version     string `json:"version"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	WebsiteURL  string `json:"websiteUrl,omitempty"`
	Icons       []Icon `json:"icons,omitempty"`
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
