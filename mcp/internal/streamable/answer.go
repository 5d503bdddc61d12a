package streamable

import (
	"net/http"
	"strconv"

	"github.com/saguaro-go/saguaro/controller"
	"github.com/saguaro-go/saguaro/mcp/internal/wire"
)

// jsonAnswer answers body as JSON. When release is set, body lies in that
// pooled buffer (a big result encoded in place, protocol.Reply.Buffer),
// which goes back to its pool once body is written: a server answering
// big results reuses their memory instead of allocating it per answer.
func jsonAnswer(status int, body, release []byte) controller.Reply {
	if release == nil {
		return controller.BufferedType(status, contentJSON, body)
	}
	return controller.Handler(&pooledAnswer{status: status, body: body, release: release})
}

// pooledAnswer writes a JSON answer from a pooled buffer and gives the
// buffer back.
type pooledAnswer struct {
	status  int
	body    []byte
	release []byte
}

// jsonContentType is the Content-Type header's value, shared by every
// pooled answer.
var jsonContentType = []string{contentJSON}

func (a *pooledAnswer) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	defer wire.PutBig(a.release)
	h := w.Header()
	h["Content-Type"] = jsonContentType
	h["Content-Length"] = []string{strconv.Itoa(len(a.body))}
	w.WriteHeader(a.status)
	_, _ = w.Write(a.body)
}
