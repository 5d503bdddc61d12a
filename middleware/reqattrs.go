package middleware

import (
	"log/slog"
	"net/http"
	"strings"

	chimw "github.com/go-chi/chi/v5/middleware"
)

// Request and response headers that RequestLogger turns into attributes.
const (
	hdrSessionID       = "Mcp-Session-Id"
	hdrProtocolVersion = "Mcp-Protocol-Version"
	hdrMethod          = "Mcp-Method"
	hdrName            = "Mcp-Name"
	maxHeaderAttrLen   = 256
)

// requestAttrs derives attributes from the request: MCP headers, chi's
// request id and the resolved client IP.
func requestAttrs(r *http.Request, attrs []slog.Attr) []slog.Attr {
	add := func(key, v string) {
		if v == "" {
			return
		}
		if len(v) > maxHeaderAttrLen {
			v = v[:maxHeaderAttrLen] + "…"
		}
		attrs = append(attrs, slog.String(key, v))
	}
	add(MCPSessionKey, headerValue(r.Header, hdrSessionID))
	add(MCPRevisionKey, headerValue(r.Header, hdrProtocolVersion))
	add(MCPMethodKey, headerValue(r.Header, hdrMethod))
	name := headerValue(r.Header, hdrName)
	if base, query, ok := strings.Cut(name, "?"); ok { // a resource URI may carry a query
		name = base + "?" + redactQuery(query, nil)
	}
	add(MCPNameKey, name)
	add(RequestIDLogKey, chimw.GetReqID(r.Context()))
	add(ClientIPLogKey, chimw.GetClientIP(r.Context()))
	return attrs
}

// appendOwnAttrs appends the preset's attributes after httplog's fields:
// those derived from the request, the session id an initialize response
// hands out, the end of a stream, then bag, the attributes of SetAttrs,
// which replace those before them under the same key.
func (st *reqState) appendOwnAttrs(line []slog.Attr, bag []slog.Attr) []slog.Attr {
	k := len(line)
	line = st.appendRequestAttrs(line)
	_, fromReq := findAttr(line[k:], MCPSessionKey)
	line = appendResponseAttrs(line, st.sw.Header(), fromReq)
	if st.stream.Load() {
		line = append(line, slog.String(StreamLogKey, "end"))
	}
next:
	for _, a := range bag {
		for i := k; i < len(line); i++ {
			if line[i].Key == a.Key {
				line[i] = a
				continue next
			}
		}
		line = append(line, a) // may move line to the heap: it is full
	}
	return line
}

// appendResponseAttrs appends the session id an initialize response hands
// out.
func appendResponseAttrs(attrs []slog.Attr, h http.Header, sessionFromReq bool) []slog.Attr {
	if sessionFromReq {
		return attrs
	}
	v := headerValue(h, hdrSessionID)
	if v == "" {
		return attrs
	}
	if len(v) > maxHeaderAttrLen {
		v = v[:maxHeaderAttrLen] + "…"
	}
	return append(attrs, slog.String(MCPSessionKey, v))
}

// headerValue is h.Get(key) for a key in canonical form, without
// canonicalizing it again on every request.
func headerValue(h http.Header, key string) string {
	if v := h[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// appendRequestAttrs appends the attributes derived from the request,
// read when a line is written (as the line's headers are), into the
// line's own buffer rather than one kept in reqState for the request's
// whole life.
func (st *reqState) appendRequestAttrs(line []slog.Attr) []slog.Attr {
	return requestAttrs(st.hr, line)
}

func findAttr(attrs []slog.Attr, key string) (slog.Attr, bool) {
	for _, a := range attrs {
		if a.Key == key {
			return a, true
		}
	}
	return slog.Attr{}, false
}
