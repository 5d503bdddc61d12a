package main

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/saguaro-go/saguaro/bench/internal/payload"
)

// docs maps a document's URI to its text: the payload workload's
// documents (serve.Options.PayloadDocs), set before serving.
var docs = map[string]string{}

func addDocs(sizesKiB []int) {
	for _, kib := range sizesKiB {
		docs[payload.DocURI(kib)] = payload.Document(kib << 10)
	}
}

type readResult struct {
	Contents []textContents `json:"contents"`
}

type textContents struct {
	URI      string `json:"uri"`
	MIMEType string `json:"mimeType"`
	Text     string `json:"text"`
}

// readResource answers resources/read of a document: the result encoded
// by encoding/json on every request, as a handler without a library
// would, in the same envelope as the echo's.
func readResource(w http.ResponseWriter, id json.RawMessage, uri string) {
	doc, ok := docs[uri]
	if !ok {
		writeErr(w, id, -32002, "resource not found")
		return
	}
	res, err := json.Marshal(readResult{Contents: []textContents{{URI: uri, MIMEType: payload.MIMEType, Text: doc}}})
	if err != nil {
		writeErr(w, id, -32603, "internal error")
		return
	}
	const result = `,"result":`
	buf := make([]byte, 0, len(head)+len(id)+len(result)+len(res)+2)
	buf = append(buf, head...)
	buf = append(buf, id...)
	buf = append(buf, result...)
	buf = append(buf, res...)
	buf = append(buf, "}\n"...)
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(buf)))
	_, _ = w.Write(buf)
}
