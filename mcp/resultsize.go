package mcp

import (
	"github.com/saguaro-go/saguaro/mcp/internal/protocol"
	"github.com/saguaro-go/saguaro/mcp/internal/wire"
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

// resultBuffer returns the buffer a result of about hint bytes (its
// strings' encoded lengths, quotedSize) is encoded into: nil for a
// small one, else replyHead free bytes and room for the result and the
// response's end. The buffer comes from wire.GetBig's pools: a transport
// that writes the response and is done with it gives it back
// (protocol.Reply.Buffer); one that keeps the response leaves it to the
// garbage collector.
func resultBuffer(hint int) []byte {
	if hint < bigResult {
		return nil
	}
	return wire.GetBig(replyHead + hint + 1024)[:replyHead]
}

// smallBuffer is the buffer a small result of about hint bytes is encoded
// into when it has no room of its own: made to measure once, instead of
// grown by doubling from nothing (three or four allocations for a short
// tool result).
func smallBuffer(hint int) []byte { return make([]byte, 0, hint+smallRoom) }

// smallRoom is what a small result holds besides what contentSize and
// resourceSize count: its object's braces and member names.
const smallRoom = 32

// keepRoom records on r that its result was encoded into room after
// replyHead free bytes; bare says it has no member a 2026-07-28 envelope
// replaces.
func keepRoom(r *protocol.Reply, room []byte, bare bool) {
	if room != nil && r.Result != nil && r.Err == nil {
		r.Buffer, r.Head, r.Bare = room, replyHead, bare
	}
}

// contentSize is about how many bytes the blocks encode to: their text
// encoded, their data in base64, and room for the rest.
func contentSize(cs []Content) int {
	n := 0
	for _, c := range cs {
		switch b := c.(type) {
		case *TextContent:
			n += quotedSize(b.Text)
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
	return len(rc.URI) + quotedSize(rc.Text) + len(rc.Blob)*4/3 + 64
}

// quotedSize is about the encoded length of a string, a quarter over its
// length: enough for text with one escape in every five bytes (source code
// has about one in seven) and for any text without escapes, such as CJK.
// Reading the string to know its length exactly costs a pass over every
// byte on each call; since big buffers are pooled, a quarter too many
// bytes are paid for only when the pool makes a new one. A string that
// needs more grows the buffer by a copy.
func quotedSize(s string) int {
	return len(s) + len(s)>>2 + 2
}

// The least a result can encode to, known without encoding it: a string
// encodes to at least its length, bytes to exactly their base64. A result
// over the answer bound by this much is refused before it is encoded.

func callToolMinSize(r *CallToolResult) int {
	if r == nil {
		return 0
	}
	return contentMinSize(r.Content) + len(r.structured)
}

func readResourceMinSize(r *ReadResourceResult) int {
	if r == nil {
		return 0
	}
	n := 0
	for _, c := range r.Contents {
		n += resourceMinSize(c)
	}
	return n
}

func contentMinSize(cs []Content) int {
	n := 0
	for _, c := range cs {
		switch b := c.(type) {
		case *TextContent:
			n += len(b.Text)
		case *ImageContent:
			n += base64Len(len(b.Data))
		case *AudioContent:
			n += base64Len(len(b.Data))
		case *EmbeddedResource:
			n += resourceMinSize(b.Resource)
		}
	}
	return n
}

func resourceMinSize(rc *ResourceContents) int {
	if rc == nil {
		return 0
	}
	return len(rc.Text) + base64Len(len(rc.Blob))
}

func base64Len(n int) int { return (n + 2) / 3 * 4 }
