package mcp

import (
	"github.com/saguaro-go/saguaro/mcp/internal/protocol"
)

// Big results are encoded once. A result whose encoded size is at least
// bigResult is encoded into a buffer that leaves replyHead bytes free
// ahead of it and room after it, so that AppendReply writes the response
// around the result instead of copying it (protocol.Reply.Head); a small
// one is copied, which costs less than the room.
const (
	bigResult = 4 << 10
	replyHead = 128
)

// resultBuffer returns the buffer a result of about hint bytes is encoded
// into: nil for a small one, else replyHead free bytes and room for the
// result, its escapes and the response's end.
func resultBuffer(hint int) []byte {
	if hint < bigResult {
		return nil
	}
	return make([]byte, replyHead, replyHead+hint+hint>>2+1024)
}

// keepRoom records on r that its result was encoded into room after
// replyHead free bytes; bare says it has no member a 2026-07-28 envelope
// replaces.
func keepRoom(r *protocol.Reply, room []byte, bare bool) {
	if room != nil && r.Result != nil && r.Err == nil {
		r.Buffer, r.Head, r.Bare = room, replyHead, bare
	}
}

// contentSize is about how many bytes the blocks encode to, counting
// their text and data (base64: 4/3).
func contentSize(cs []Content) int {
	n := 0
	for _, c := range cs {
		switch b := c.(type) {
		case *TextContent:
			n += len(b.Text)
		case *ImageContent:
			n += len(b.Data) * 4 / 3
		case *AudioContent:
			n += len(b.Data) * 4 / 3
		case *EmbeddedResource:
			if b.Resource != nil {
				n += resourceSize(b.Resource)
			}
		}
		n += 64
	}
	return n
}

func resourceSize(rc *ResourceContents) int {
	return len(rc.URI) + len(rc.Text) + len(rc.Blob)*4/3 + 64
}
