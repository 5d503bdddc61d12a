package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"mime"
	"net/url"
	"path"
	"slices"
	"strings"
)

// ExtUI is the identifier of the MCP Apps extension
// (io.modelcontextprotocol/ui, stable 2026-01-26): interactive views that
// a host renders for a tool's results. See [View].
const ExtUI = "io.modelcontextprotocol/ui"

// ViewMIMEType is the MIME type of an MCP App view: an HTML document that
// a host renders in a sandboxed iframe and talks to over postMessage.
const ViewMIMEType = "text/html;profile=mcp-app"

// ErrView: a view, or a tool's link to one, that cannot be served: a URI
// that is not ui://, no document, a document that is not HTML5, a CSP
// source that is not an origin, a link to a view that is not registered,
// an unknown visibility.
var ErrView = errors.New("mcp: invalid view")

// View is an MCP App's view: an HTML document served as the resource URI
// (ui://…) with MIME type [ViewMIMEType], which a host that speaks the
// MCP Apps extension renders in a sandboxed iframe when a tool linked to
// it ([ToolUI]) is called. The view talks to the host over postMessage
// JSON-RPC: it receives the tool's arguments and result, and may call the
// server's tools through the host, as the user the host signed in.
// [Server.AddView] registers it and advertises the extension.
//
// The document is HTML, or File read from FS (an embed.FS) and executed
// once, at registration, as an html/template with Data and these
// functions, so that a view kept in separate files is served as the one
// self-contained document a host loads:
//
//	{{script "board.js"}}  the file, inside <script>…</script>
//	{{style "board.css"}}  the file, inside <style>…</style>
//	{{csp}}                a <meta http-equiv="Content-Security-Policy">
//	                       tag with CSP.Policy(), for a view opened
//	                       outside a host
//
// What the view needs from the network (CSP), the browser (Permissions)
// and the host (Domain, PrefersBorder) is sent as the resource's
// _meta.ui, generated from these fields; hosts build the iframe's
// Content-Security-Policy from it, and with no domains declared the view
// may load nothing from the network.
//
// Decisions where the extension's specification leaves the server a
// choice, on every transport:
//
//	a UI client                      one that declares the extension with "mimeTypes"
//	                                   holding ViewMIMEType: in initialize's
//	                                   capabilities.extensions (2025-06-18, 2025-11-25,
//	                                   as the extension specifies) or in each request's
//	                                   _meta clientCapabilities (2026-07-28)
//	2025-03-26                       no _meta on tools or contents: never a UI client
//	HTTP without sessions, legacy    initialize's capabilities are not kept: no UI
//	                                   client (use sessions, or 2026-07-28)
//	capabilities.extensions          {"io.modelcontextprotocol/ui": {}} once a view is
//	                                   registered, in initialize (2025-06-18 on) and
//	                                   server/discover
//	tools/list, UI client            every tool; a linked tool carries _meta.ui
//	                                   (resourceUri, visibility as registered)
//	tools/list, other clients        app-only tools left out, linked tools without
//	                                   _meta.ui: byte for byte the list the server
//	                                   gives when no tool is linked to a view
//	tools/call of an app-only tool   unknown tool (-32602) for a client that is not a
//	                                   UI client; served for a UI client (the server
//	                                   cannot tell the model from the view behind a
//	                                   host, so the host enforces visibility)
//	resources/list                   views listed to UI clients only (the extension
//	                                   lets a server omit them), with _meta.ui
//	resources/read of a view         served to any caller its Access lets read it,
//	                                   contents with _meta.ui
//	a tool linked to an unknown view registration fails with ErrView: add the view
//	                                   first
//	visibility [] or an unknown one  registration fails with ErrView
//
// Pitfalls: a host may ignore PrefersBorder and Domain (Domain's format
// is the host's). Removing a view (Server.RemoveResources) leaves the
// tools linked to it, which hosts then cannot render. The view's calls
// run with the scopes of the host's token, like the model's.
//
// Experimental: the API of MCP Apps is new and may change in a minor
// release, as the extensions policy (docs/policies/protocol.md) says.
type View struct {
	// URI names the view: ui://<server>/<view>, unique in the server.
	URI string
	// Name (required), Title and Description describe it in
	// resources/list.
	Name        string
	Title       string
	Description string
	// HTML is the document, a complete HTML5 document (<!DOCTYPE html>
	// first); or leave it empty and set FS and File.
	HTML string
	// FS and File: the document is File of FS, executed as an
	// html/template with Data (see above).
	FS   fs.FS
	File string
	Data any
	// CSP lists the origins the view may reach; none by default.
	CSP ViewCSP
	// Permissions asks the host for browser features.
	Permissions ViewPermissions
	// Domain asks the host for a dedicated sandbox origin, in the
	// host's own format.
	Domain string
	// PrefersBorder asks the host for (true) or against (false) a
	// visible border and background; nil lets the host decide.
	PrefersBorder *bool
	// Access says which callers may see and read the view; nil: all.
	Access *Access
}

// ViewCSP lists the origins a view may reach, as
// "scheme://host[:port]", a host possibly "*.example.com". Hosts map them
// to the iframe's Content-Security-Policy. It encodes as the extension's
// _meta.ui.csp.
type ViewCSP struct {
	// ConnectDomains: fetch, XHR and WebSocket (connect-src).
	ConnectDomains []string `json:"connectDomains,omitempty"`
	// ResourceDomains: scripts, styles, images, fonts and media.
	ResourceDomains []string `json:"resourceDomains,omitempty"`
	// FrameDomains: nested iframes (frame-src).
	FrameDomains []string `json:"frameDomains,omitempty"`
	// BaseURIDomains: the document's base URI (base-uri).
	BaseURIDomains []string `json:"baseUriDomains,omitempty"`
}

// ViewPermissions are the browser features a view asks the host for; the
// host may refuse, so a view detects them before use. It encodes as the
// extension's _meta.ui.permissions ({"camera": {}, …}).
type ViewPermissions struct {
	Camera         bool
	Microphone     bool
	Geolocation    bool
	ClipboardWrite bool
}

// Visibility says who may call a tool linked to a view.
type Visibility string

// The two audiences of a tool; a ToolUI without Visibility has both.
const (
	// VisibilityModel: the model sees and calls the tool.
	VisibilityModel Visibility = "model"
	// VisibilityApp: the view calls the tool through the host; a tool
	// with only this one is app-only, kept out of the model's list.
	VisibilityApp Visibility = "app"
)

// ToolUI links a tool to a view: put it in the tool's Meta under "ui",
// which is its wire place (_meta.ui):
//
//	mcp.Meta{"ui": &mcp.ToolUI{ResourceURI: "ui://board/view"}}
//
// A host that speaks MCP Apps renders the view with the tool's result; a
// client that does not sees the tool without it (see [View]).
type ToolUI struct {
	// ResourceURI names the registered view that renders the tool's
	// results; empty for a tool that only a view calls.
	ResourceURI string `json:"resourceUri,omitempty"`
	// Visibility says who may call it; nil means both the model and the
	// view. []Visibility{VisibilityApp} makes the tool app-only.
	Visibility []Visibility `json:"visibility,omitempty"`
}

// viewMeta is a view's _meta.ui (McpUiResourceMeta).
type viewMeta struct {
	CSP           *ViewCSP         `json:"csp,omitempty"`
	Permissions   *ViewPermissions `json:"permissions,omitempty"`
	Domain        string           `json:"domain,omitempty"`
	PrefersBorder *bool            `json:"prefersBorder,omitempty"`
}

// MarshalJSON encodes the permissions as the extension's object of empty
// objects.
func (p ViewPermissions) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for _, f := range p.fields() {
		if *f.on {
			if len(b) > 1 {
				b = append(b, ',')
			}
			b = append(b, `"`+f.name+`":{}`...)
		}
	}
	return append(b, '}'), nil
}

// UnmarshalJSON reads the extension's object: a feature is asked for when
// its member is present.
func (p *ViewPermissions) UnmarshalJSON(b []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("mcp: view permissions: %w", err)
	}
	for _, f := range p.fields() {
		_, *f.on = m[f.name]
	}
	return nil
}

func (p *ViewPermissions) fields() []struct {
	name string
	on   *bool
} {
	return []struct {
		name string
		on   *bool
	}{{"camera", &p.Camera}, {"microphone", &p.Microphone}, {"geolocation", &p.Geolocation}, {"clipboardWrite", &p.ClipboardWrite}}
}

func (p ViewPermissions) any() bool {
	return p.Camera || p.Microphone || p.Geolocation || p.ClipboardWrite
}

func (c ViewCSP) empty() bool {
	return len(c.ConnectDomains)+len(c.ResourceDomains)+len(c.FrameDomains)+len(c.BaseURIDomains) == 0
}

// Policy returns the Content-Security-Policy the extension tells hosts to
// build for these domains: nothing but the document itself, inline
// scripts and styles, data: images and media, and the declared origins.
func (c ViewCSP) Policy() string {
	list := func(def string, domains ...[]string) string {
		var all []string
		if def != "" {
			all = append(all, def)
		}
		for _, d := range domains {
			all = append(all, d...)
		}
		return strings.Join(all, " ")
	}
	frame, base := "'none'", "'self'"
	if len(c.FrameDomains) > 0 {
		frame = list("", c.FrameDomains)
	}
	if len(c.BaseURIDomains) > 0 {
		base = list("", c.BaseURIDomains)
	}
	connect := "'none'"
	if len(c.ConnectDomains) > 0 {
		connect = list("'self'", c.ConnectDomains)
	}
	return "default-src 'none'; " +
		"script-src " + list("'self' 'unsafe-inline'", c.ResourceDomains) + "; " +
		"style-src " + list("'self' 'unsafe-inline'", c.ResourceDomains) + "; " +
		"img-src " + list("'self' data:", c.ResourceDomains) + "; " +
		"font-src " + list("'self'", c.ResourceDomains) + "; " +
		"media-src " + list("'self' data:", c.ResourceDomains) + "; " +
		"connect-src " + connect + "; " +
		"frame-src " + frame + "; " +
		"object-src 'none'; " +
		"base-uri " + base
}

// check refuses a source that is not an origin: it is copied into a CSP
// header, where a space, a semicolon or a quote would change the policy.
func (c ViewCSP) check() error {
	for _, list := range [][]string{c.ConnectDomains, c.ResourceDomains, c.FrameDomains, c.BaseURIDomains} {
		for _, d := range list {
			if !cspOrigin(d) {
				return fmt.Errorf("%w: CSP source %q is not scheme://host[:port]", ErrView, d)
			}
		}
	}
	return nil
}

func cspOrigin(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c >= 0x7f || c == ';' || c == ',' || c == '\'' || c == '"' {
			return false
		}
	}
	scheme, host, ok := strings.Cut(s, "://")
	switch {
	case !ok:
		return false
	case scheme != "http" && scheme != "https" && scheme != "ws" && scheme != "wss":
		return false
	}
	if rest, wild := strings.CutPrefix(host, "*."); wild {
		host = "wildcard." + rest // a wildcard stands for the leftmost label only
	}
	if strings.Contains(host, "*") {
		return false
	}
	u, err := url.Parse(scheme + "://" + host)
	return err == nil && u.Hostname() != "" && u.Path == "" && !u.ForceQuery && u.RawQuery == "" &&
		u.Fragment == "" && u.User == nil
}

// RendersViews reports whether the client of r declared the MCP Apps
// extension with ViewMIMEType: a host that renders a linked tool's view.
// A handler may shorten its text for such a client, but should keep it
// meaningful: the host may still show it to the model.
func (r *Request) RendersViews() bool {
	return r.Revision.orDefault() >= Rev20250618 && rendersViews(r.Client)
}

func rendersViews(c *ClientCapabilities) bool {
	if c == nil {
		return false
	}
	raw, ok := c.Extensions[ExtUI]
	if !ok {
		return false
	}
	var s struct {
		MIMETypes []string `json:"mimeTypes"`
	}
	if json.Unmarshal(raw, &s) != nil {
		return false
	}
	for _, m := range s.MIMETypes {
		if isViewMIME(m) {
			return true
		}
	}
	return false
}

func isViewMIME(m string) bool {
	t, params, err := mime.ParseMediaType(m)
	return err == nil && t == "text/html" && params["profile"] == "mcp-app"
}

// AddView registers a view: the resource v.URI with the view's document
// and _meta.ui, listed to clients that render views, and the MCP Apps
// extension in the server's capabilities. Link tools to it with
// [ToolUI] after. The document is built and checked here, once; the
// Server does not keep v. Errors wrap ErrView, ErrName or ErrDuplicate.
func (s *Server) AddView(v *View) error {
	if v == nil {
		return fmt.Errorf("%w: nil view", ErrView)
	}
	if u, err := url.Parse(v.URI); err != nil || u.Scheme != "ui" || u.Host == "" || !validURI(v.URI) {
		return fmt.Errorf("%w: URI %q is not ui://…", ErrView, v.URI)
	}
	if err := v.CSP.check(); err != nil {
		return fmt.Errorf("view %q: %w", v.URI, err)
	}
	if strings.ContainsAny(v.Domain, " \t\r\n\"';") {
		return fmt.Errorf("%w: view %q: domain %q", ErrView, v.URI, v.Domain)
	}
	doc, err := v.document()
	if err != nil {
		return fmt.Errorf("%w: view %q: %v", ErrView, v.URI, err)
	}
	meta := &viewMeta{Domain: v.Domain, PrefersBorder: v.PrefersBorder}
	if !v.CSP.empty() {
		c := ViewCSP{ConnectDomains: slices.Clone(v.CSP.ConnectDomains), ResourceDomains: slices.Clone(v.CSP.ResourceDomains),
			FrameDomains: slices.Clone(v.CSP.FrameDomains), BaseURIDomains: slices.Clone(v.CSP.BaseURIDomains)}
		meta.CSP = &c
	}
	if v.Permissions.any() {
		p := v.Permissions
		meta.Permissions = &p
	}
	var m Meta
	if *meta != (viewMeta{}) {
		m = Meta{"ui": meta}
	}
	r := &Resource{URI: v.URI, Name: v.Name, Title: v.Title, Description: v.Description, MIMEType: ViewMIMEType,
		Meta: m, Access: v.Access}
	read := func(_ context.Context, req *ReadResourceRequest) (*ReadResourceResult, error) {
		return &ReadResourceResult{Contents: []*ResourceContents{{URI: req.URI, MIMEType: ViewMIMEType, Text: doc, Meta: m}}}, nil
	}
	return s.addResource(r, read, true)
}

// document builds the view's HTML.
func (v *View) document() (string, error) {
	doc := v.HTML
	switch {
	case doc != "" && v.FS != nil:
		return "", errors.New("set HTML or FS, not both")
	case doc == "" && v.FS == nil:
		return "", errors.New("no document: set HTML, or FS and File")
	case doc == "":
		var err error
		if doc, err = v.execute(); err != nil {
			return "", err
		}
	}
	head := strings.ToLower(strings.TrimLeft(strings.TrimPrefix(doc, "\ufeff"), " \t\r\n"))
	if !strings.HasPrefix(head, "<!doctype html>") {
		return "", errors.New("the document does not begin with <!DOCTYPE html>")
	}
	return doc, nil
}

// execute runs File of FS as an html/template.
func (v *View) execute() (string, error) {
	inline := func(name, closing string) ([]byte, error) {
		b, err := fs.ReadFile(v.FS, path.Join(path.Dir(v.File), name))
		if err != nil {
			return nil, err
		}
		if bytes.Contains(bytes.ToLower(b), []byte(closing)) {
			return nil, fmt.Errorf("%s contains %s, which would end its element", name, closing)
		}
		return b, nil
	}
	funcs := template.FuncMap{
		"script": func(name string) (template.JS, error) {
			b, err := inline(name, "</script")
			return template.JS(b), err
		},
		"style": func(name string) (template.CSS, error) {
			b, err := inline(name, "</style")
			return template.CSS(b), err
		},
		"csp": func() template.HTML {
			return template.HTML(`<meta http-equiv="Content-Security-Policy" content="` +
				template.HTMLEscapeString(v.CSP.Policy()) + `">`)
		},
	}
	t, err := template.New(path.Base(v.File)).Funcs(funcs).ParseFS(v.FS, v.File)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if err := t.Execute(&b, v.Data); err != nil {
		return "", err
	}
	return b.String(), nil
}

// toolUI reads and checks the "ui" member of a tool's Meta at
// registration: nil when the tool has none. views reports whether a URI
// is a registered view.
func toolUI(m Meta, views func(uri string) bool) (*ToolUI, error) {
	v, ok := m["ui"]
	if !ok {
		return nil, nil
	}
	var ui ToolUI
	switch x := v.(type) {
	case *ToolUI:
		if x == nil {
			return nil, fmt.Errorf("%w: _meta.ui is nil", ErrView)
		}
		ui = *x
	case ToolUI:
		ui = x
	default: // a decoded tool, or a map written by hand
		raw, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("%w: _meta.ui: %v", ErrView, err)
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&ui); err != nil {
			return nil, fmt.Errorf("%w: _meta.ui: %v", ErrView, err)
		}
	}
	if ui.Visibility != nil && len(ui.Visibility) == 0 {
		return nil, fmt.Errorf("%w: an empty visibility lets nobody call the tool", ErrView)
	}
	ui.Visibility = slices.Clone(ui.Visibility)
	for i, vis := range ui.Visibility {
		if vis != VisibilityModel && vis != VisibilityApp || slices.Contains(ui.Visibility[:i], vis) {
			return nil, fmt.Errorf("%w: visibility %q", ErrView, vis)
		}
	}
	if ui.ResourceURI != "" && !views(ui.ResourceURI) {
		return nil, fmt.Errorf("%w: %q is not a registered view (add it first)", ErrView, ui.ResourceURI)
	}
	return &ui, nil
}

// appOnly reports whether only a view may call the tool.
func (ui *ToolUI) appOnly() bool {
	return ui != nil && ui.Visibility != nil && !slices.Contains(ui.Visibility, VisibilityModel)
}

// withoutUI returns m without its "ui" member (nil when nothing is left):
// the tool as a client that renders no view sees it.
func withoutUI(m Meta) Meta {
	if _, ok := m["ui"]; !ok {
		return m
	}
	if len(m) == 1 {
		return nil
	}
	c := make(Meta, len(m)-1)
	for k, v := range m {
		if k != "ui" {
			c[k] = v
		}
	}
	return c
}

// isView reports whether uri is a registered view.
func (sn *snapshot) isView(uri string) bool {
	ent := sn.resources[uri]
	return ent != nil && ent.view
}

// hiddenTool reports whether ent is app-only and the caller of req renders
// no view: it is unknown to that caller.
func hiddenTool(ent *toolEntry, req *Request) bool {
	return ent != nil && ent.ui.appOnly() && !req.RendersViews()
}

// uiCapability adds the extension to what initialize (2025-06-18 on) and
// server/discover advertise when the handler reports views.
func uiCapability(rev Revision, rep *ServerCapabilities, ext map[string]json.RawMessage) map[string]json.RawMessage {
	if rep == nil || rev.orDefault() < Rev20250618 {
		return ext
	}
	settings, ok := rep.Extensions[ExtUI]
	if !ok {
		return ext
	}
	if ext == nil {
		ext = map[string]json.RawMessage{}
	}
	ext[ExtUI] = settings
	return ext
}
