package session

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/saguaro-go/saguaro/mcp/internal/protocol"
	"github.com/saguaro-go/saguaro/mcp/internal/wire"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var decoder = wire.NewDecoder()

// answer runs a server→client request and answers it with body, whose
// buffer is then overwritten, as a transport reuses it.
func answer(t *testing.T, s *Session, body string) (json.RawMessage, error) {
	t.Helper()
	sent := make(chan []byte, 1)
	type result struct {
		raw json.RawMessage
		err error
	}
	done := make(chan result, 1)
	go func() {
		raw, err := s.Request(context.Background(), "roots/list", []byte(`{}`), func(msg []byte) error {
			sent <- msg
			return nil
		})
		done <- result{raw, err}
	}()
	req, derr := decoder.Decode(<-sent)
	if derr != nil {
		t.Fatal(derr)
	}
	raw := []byte(body)
	raw = append(raw[:0], `{"jsonrpc":"2.0","id":`...)
	raw = req.ID.AppendJSON(raw)
	raw = append(raw, body...)
	msg, derr := decoder.Decode(raw)
	if derr != nil {
		t.Fatal(derr)
	}
	s.Deliver(&msg)
	copy(raw, bytes.Repeat([]byte(" "), len(raw)))
	r := <-done
	return r.raw, r.err
}

// A client's answer outlives the buffer it came in.
func TestDeliverCopiesTheAnswer(t *testing.T) {
	s := New(protocol.Rev20251125, nil, nil, 4)
	raw, err := answer(t, s, `,"result":{"k":"v"}}`)
	if err != nil || string(raw) != `{"k":"v"}` {
		t.Errorf("result %s %v", raw, err)
	}
	_, err = answer(t, s, `,"error":{"code":1,"message":"no","data":{"k":"v"}}}`)
	var je *wire.Error
	if !errors.As(err, &je) || je.Message != "no" {
		t.Fatalf("error %v", err)
	}
	if b, _ := json.Marshal(je); string(b) != `{"code":1,"message":"no","data":{"k":"v"}}` {
		t.Errorf("error data %s", b)
	}
}

func TestRequestCancelledOrEnded(t *testing.T) {
	s := New(protocol.Rev20251125, nil, nil, 4)
	var mu sync.Mutex
	var sent []string
	send := func(msg []byte) error {
		mu.Lock()
		sent = append(sent, string(msg))
		mu.Unlock()
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Request(ctx, "roots/list", nil, send); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	mu.Lock()
	if len(sent) != 2 || !bytes.Contains([]byte(sent[1]), []byte(`"method":"notifications/cancelled","params":{"requestId":1,`)) {
		t.Errorf("sent %q", sent)
	}
	mu.Unlock()
	if _, err := s.Request(context.Background(), "roots/list", nil, func([]byte) error { return errors.New("gone") }); err == nil || err.Error() != "gone" {
		t.Errorf("a send that fails: %v", err)
	}
	go func() { time.Sleep(10 * time.Millisecond); s.End() }()
	if _, err := s.Request(context.Background(), "roots/list", nil, send); !errors.Is(err, protocol.ErrSessionEnded) {
		t.Errorf("ended while waiting: %v", err)
	}
	if _, err := s.Request(context.Background(), "roots/list", nil, send); !errors.Is(err, protocol.ErrSessionEnded) {
		t.Errorf("after the end: %v", err)
	}
	if s.End() {
		t.Error("a second End reported true")
	}
}

func TestCallContext(t *testing.T) {
	s := New(protocol.Rev20251125, nil, nil, 4)
	ctx, cancel, ok := s.CallContext(context.Background(), wire.Int(7), time.Hour)
	if !ok {
		t.Fatal("not ok")
	}
	defer cancel()
	s.Apply(&protocol.Effect{Kind: protocol.EffectCancel, RequestID: wire.StringID("7")})
	if ctx.Err() != nil {
		t.Fatal(`"7" cancelled call 7`)
	}
	s.Apply(&protocol.Effect{Kind: protocol.EffectCancel, RequestID: wire.Int(7)})
	if ctx.Err() == nil {
		t.Fatal("notifications/cancelled did not reach the call")
	}
	s.Untrack(wire.Int(7))

	other, cancel2, _ := s.CallContext(context.Background(), wire.Int(8), -1)
	defer cancel2()
	if _, has := other.Deadline(); has {
		t.Error("no timeout asked, one set")
	}
	s.End()
	if other.Err() == nil {
		t.Error("the end did not cancel the call")
	}
	if _, _, ok := s.CallContext(context.Background(), wire.Int(9), 0); ok {
		t.Error("a call started in an ended session")
	}
}

func TestEffectsAndRestore(t *testing.T) {
	s := New(protocol.Rev20250618, "caps", nil, 4)
	s.Apply(&protocol.Effect{Kind: protocol.EffectInitialized})
	s.Apply(&protocol.Effect{Kind: protocol.EffectSetLogLevel, LogLevel: protocol.LogWarning})
	s.Apply(&protocol.Effect{Kind: protocol.EffectSubscribe, URI: "a"})
	s.Apply(&protocol.Effect{Kind: protocol.EffectSubscribe, URI: "b"})
	s.Apply(&protocol.Effect{Kind: protocol.EffectUnsubscribe, URI: "a"})
	if !s.Initialized() || s.LogLevel() != protocol.LogWarning || s.Subscribed("a") || !s.Subscribed("b") {
		t.Errorf("effects not recorded")
	}
	c := s.Call(&wire.Message{Method: "tools/call", ID: wire.Int(1)}, protocol.Discard{})
	if c.Revision != protocol.Rev20250618 || c.Client != "caps" || c.LogLevel != protocol.LogWarning {
		t.Errorf("call %+v", c)
	}
	r := New(protocol.Rev20251125, nil, nil, 4)
	r.Restore(true, protocol.LogError, []string{"x"}, 1<<20)
	if !r.Initialized() || r.LogLevel() != protocol.LogError || !r.Subscribed("x") {
		t.Error("restore")
	}
	var id wire.ID
	_, _ = r.Request(context.Background(), "roots/list", nil, func(msg []byte) error {
		m, _ := decoder.Decode(msg)
		id = m.ID
		return errors.New("stop")
	})
	if n, _ := id.IntValue(); n != 1<<20+1 {
		t.Errorf("request id %v after a restore at base 1<<20", id)
	}
}

// countEngine counts its calls in the state; stateful calls block until
// released.
type countEngine struct {
	protocol.Engine
	release chan struct{}
	entered chan struct{}
}

func (e *countEngine) Dispatch(ctx context.Context, call *protocol.Call, state any) protocol.Reply {
	n, _ := state.(int)
	if call.Method == "block" {
		e.entered <- struct{}{}
		<-e.release
	}
	return protocol.Reply{State: n + 1, Result: json.RawMessage(`{}`)}
}

func TestDispatchTurns(t *testing.T) {
	s := New(protocol.Rev20251125, nil, 0, 1)
	e := &countEngine{release: make(chan struct{}), entered: make(chan struct{}, 2)}
	saves := 0
	call := protocol.Call{Method: "block", ID: wire.Int(1)}
	done := make(chan protocol.Reply, 2)
	go func() { done <- s.Dispatch(context.Background(), e, &call, protocol.ModeStateful, func() { saves++ }) }()
	<-e.entered
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if r := s.Dispatch(ctx, e, &call, protocol.ModeStateful, nil); r.Err != protocol.ErrCancelled {
		t.Errorf("cancelled while waiting: %+v", r.Err)
	}
	// One waits for the turn (QueueSize 1); the next is refused.
	go func() { done <- s.Dispatch(context.Background(), e, &call, protocol.ModeStateful, nil) }()
	for {
		if waiting, busy := s.Turn(); waiting == 1 && busy {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if r := s.Dispatch(context.Background(), e, &call, protocol.ModeStateful, nil); r.Err != ErrOverloaded {
		t.Errorf("over the queue: %+v", r.Err)
	}
	// A fast call never waits, and its state is not kept.
	if r := s.Dispatch(context.Background(), e, &protocol.Call{Method: "ping"}, protocol.ModeFast, nil); r.Err != nil {
		t.Error(r.Err)
	}
	e.release <- struct{}{}
	<-e.entered
	e.release <- struct{}{}
	<-done
	<-done
	if got := s.Snapshot(); got != 2 || saves != 1 {
		t.Errorf("state %v after two stateful calls, %d saves", got, saves)
	}
}
