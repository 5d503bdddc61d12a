// Package fanout is what the SSE fan-out servers and the load generator
// agree on: the event payload (a sequence number and the publish time) and
// the publish endpoint every fan-out server mounts at serve.PublishPath.
//
// The payload is one line of JSON, `{"seq":N,"ts":T}`, with T the server's
// wall clock in Unix nanoseconds taken just before the library's publish
// call. The load generator runs on the same machine and reads the same
// clock, so receipt time minus T is the delivery latency. Sequence number
// 0 is the warm-up event the load generator publishes until every client
// has one (it proves every subscription is in place; go-sse sends no
// response headers before the first event); measured events count from 1.
package fanout

import (
	"bytes"
	"errors"
	"net/http"
	"strconv"
	"time"
)

// Topic is the one topic every fan-out server publishes to.
const Topic = "bench"

// AppendPayload appends the payload of event seq published at ts (Unix
// nanoseconds) to dst.
func AppendPayload(dst []byte, seq, ts int64) []byte {
	dst = append(dst, `{"seq":`...)
	dst = strconv.AppendInt(dst, seq, 10)
	dst = append(dst, `,"ts":`...)
	dst = strconv.AppendInt(dst, ts, 10)
	return append(dst, '}')
}

// ErrPayload reports data that is not a payload AppendPayload wrote.
var ErrPayload = errors.New("fanout: malformed payload")

// ParsePayload reads back what AppendPayload wrote, strictly.
func ParsePayload(data []byte) (seq, ts int64, err error) {
	rest, ok := bytes.CutPrefix(data, []byte(`{"seq":`))
	if !ok {
		return 0, 0, ErrPayload
	}
	i := bytes.IndexByte(rest, ',')
	if i < 0 {
		return 0, 0, ErrPayload
	}
	if seq, err = parseUint(rest[:i]); err != nil {
		return 0, 0, err
	}
	rest, ok = bytes.CutPrefix(rest[i:], []byte(`,"ts":`))
	if !ok || len(rest) < 2 || rest[len(rest)-1] != '}' {
		return 0, 0, ErrPayload
	}
	if ts, err = parseUint(rest[:len(rest)-1]); err != nil {
		return 0, 0, err
	}
	return seq, ts, nil
}

func parseUint(b []byte) (int64, error) {
	if len(b) == 0 || len(b) > 19 {
		return 0, ErrPayload
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, ErrPayload
		}
		n = n*10 + int64(c-'0')
	}
	return n, nil
}

// Publisher is the publish endpoint: POST ?seq=N builds the payload of
// event N, stamped with the time now, hands it to publish (the library's
// publish call) and answers 204 once publish has returned.
func Publisher(publish func(data []byte)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		seq, err := strconv.ParseInt(r.URL.Query().Get("seq"), 10, 64)
		if err != nil || seq < 0 {
			http.Error(w, "want ?seq=N", http.StatusBadRequest)
			return
		}
		publish(AppendPayload(make([]byte, 0, 48), seq, time.Now().UnixNano()))
		w.WriteHeader(http.StatusNoContent)
	})
}
