package controller

import (
	"bufio"
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkLoopMessage measures one message's way through a live loop over
// real HTTP on loopback: Send into the mailbox, HandleInfo, push (write and
// flush), and the client reading the frame.
func BenchmarkLoopMessage(b *testing.B) {
	boxes := make(chan *Mailbox, 1)
	frame := []byte("data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n")
	srv := httptest.NewServer(New(Func(func(r *Request) Reply {
		boxes <- r.Mailbox()
		return Loop(http.StatusOK, nil, 0, func(info any, push Push, n int) (int, Action) {
			if _, ok := info.(Disconnect); ok {
				return n, Continue
			}
			_ = push(frame)
			return n + 1, Continue
		})
	}), &Options{MailboxSize: 1024}))
	defer srv.Close()
	res, err := http.Get(srv.URL)
	if err != nil {
		b.Fatal(err)
	}
	defer res.Body.Close()
	br := bufio.NewReaderSize(res.Body, 64<<10)
	mb := <-boxes
	buf := make([]byte, len(frame))
	b.ReportAllocs()
	b.SetBytes(int64(len(frame)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := mb.Send(i); err != nil {
			b.Fatal(err)
		}
		if _, err := br.Read(buf[:0]); err != nil {
			b.Fatal(err)
		}
		for got := 0; got < len(frame); {
			n, err := br.Read(buf[got:])
			if err != nil {
				b.Fatal(err)
			}
			got += n
		}
	}
}

// BenchmarkMailboxSend measures a non-blocking send and receive of an
// empty struct, of a pointer (how a hub's entries travel: no allocation),
// and of a 64-byte struct (boxed: one allocation per send).
func BenchmarkMailboxSend(b *testing.B) {
	type event struct { // the shape of an sse.Event: 64 bytes
		ID, Name string
		Data     []byte
		Retry    int64
	}
	ptr := &event{Data: []byte("data: x\n\n")}
	for _, tc := range []struct {
		name string
		msg  func() any
	}{
		{"struct{}", func() any { return struct{}{} }},
		{"pointer", func() any { return ptr }},
		{"struct64", func() any { return *ptr }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			mb := newMailbox(64, OverflowReject)
			defer mb.close()
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				_ = mb.Send(tc.msg())
				_, _ = mb.take()
			}
		})
	}
}
