package mcp

import (
	"context"
	"log/slog"
	"os"
	"slices"
	"time"

	"github.com/saguaro-go/saguaro/mcp/internal/conn"
	"github.com/saguaro-go/saguaro/mcp/jsonrpc"
)

// Conn carries whole JSON-RPC messages between one client and [ServeConn]:
// the stdio transport is one ([ServeStdio]), package mcptest's in-process
// client another. Implement it to serve MCP over a connection of your own
// (a Unix socket, a WebSocket).
type Conn interface {
	// Read returns the next message from the client: one JSON-RPC message
	// or a batch. ServeConn keeps the slice: Read must return a new one
	// each time. It returns io.EOF when the client is done; any other
	// error ends the session too.
	Read(ctx context.Context) ([]byte, error)
	// Write sends one message to the client. related is the id of the
	// client's request the message belongs to (the response, or a
	// notification or request its call sent), zero for none: a
	// connection may use it to keep a request's messages together.
	// ServeConn calls Write one message at a time. An error that wraps
	// io.EOF says the client closed its end: ServeConn ends the session
	// as at the end of input, without an error; any other error ends it
	// with that error.
	Write(ctx context.Context, msg []byte, related jsonrpc.ID) error
}

// ConnOptions configures [ServeConn] and [ServeStdio]. A nil *ConnOptions
// means defaults; zero fields take the defaults.
type ConnOptions struct {
	// Identity is who the client is. Over stdio the client is the user
	// who started the process: take it from the environment, never from
	// the protocol. It binds 2026-07-28 requestState and tasks to their
	// caller. Default "" (anonymous).
	Identity string
	// Scopes are the scopes the client holds, for the tools, resources
	// and prompts with Access.Scopes; like Identity, decide them from
	// the environment. Default none.
	Scopes []string
	// Logger receives handler panics, hidden handler errors and
	// connection trouble; default slog.Default(). Over stdio it must not
	// write to standard output, which carries the protocol (the log
	// package's default output is standard error).
	Logger *slog.Logger
	// RequestTimeout bounds each call; default 5 minutes, negative means
	// none.
	RequestTimeout time.Duration
	// QueueSize bounds the stateful callbacks waiting for their turn in
	// the session; one more is answered "Server overloaded". Default 64.
	QueueSize int
	// MaxMessageBytes bounds one message read by ServeStdio (a longer line
	// is answered InvalidRequest and skipped); default
	// DefaultMaxBodyBytes.
	MaxMessageBytes int
	// MaxBatch and MaxAnswerBytes bound a batch's messages and one
	// answer's bytes, as Limits' fields of the same names do over HTTP
	// (a longer batch is answered with one -32600 error, id null).
	// Defaults 32 and 8 MiB; negative means none.
	MaxBatch       int
	MaxAnswerBytes int
	// Telemetry reports spans and metrics through OpenTelemetry; nil,
	// the default, reports nothing. See [Telemetry].
	Telemetry *Telemetry
	// ShutdownTimeout bounds how long ServeConn takes to return once
	// the session ended. When the input ended (the client closed it),
	// the calls still running may finish and their answers are written
	// until shortly before the timeout (a tenth of it, at most a second,
	// before), when what still runs is cancelled and answered "Request
	// cancelled"; when ctx ended, they are cancelled at once. Past the
	// timeout ServeConn returns ErrCallsRunning: a handler that ignores
	// its context, or a client that no longer reads its output, holds
	// nothing longer. Default 5 seconds.
	ShutdownTimeout time.Duration
}

// ServeConn serves one client over c until c's input ends, c's client
// closes its end of the output, or ctx ends, and returns nil once the
// calls still running are over (see ConnOptions.ShutdownTimeout). A read
// or write error of c ends the session too, and ServeConn returns it. The
// connection is one session: initialize starts it for the revisions
// before 2026-07-28, and 2026-07-28 requests are served by their own
// _meta, on the same connection.
//
// Every request runs on a goroutine of its own: a slow tool does not hold
// up ping or notifications/cancelled, and stateful callbacks take the
// session's turn one at a time, as over HTTP. These goroutines are reused
// by the next requests (an idle one exits after 10 seconds, or when the
// session ends). Notifications a call sends (progress, log messages) and
// its server→client requests (sampling, elicitation, roots) go on the
// connection, and the client's answers come back on it. List changes and
// resource updates go to the session once it is initialized (updates only
// for its subscriptions), and to subscriptions/listen. A request the
// client cancelled gets no response. Batches are served in 2025-03-26
// only.
//
// When the input ends, the calls already running go on and their answers
// are written (a client may close its input and still read: printf '…' |
// server); a server→client request then fails at once with
// ErrSessionEnded, since its answer can no longer arrive, and the
// subscriptions/listen streams end. When ctx ends, or the client closes
// the output, the calls are cancelled at once.
//
// Pitfall: handlers must honour their context; ServeConn waits
// ConnOptions.ShutdownTimeout (5 seconds) in all, then returns
// ErrCallsRunning.
func ServeConn(ctx context.Context, h Handler, c Conn, opts *ConnOptions) error {
	if h == nil {
		panic("mcp: ServeConn needs a Handler")
	}
	var o ConnOptions
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.RequestTimeout == 0 {
		o.RequestTimeout = 5 * time.Minute
	}
	if o.QueueSize <= 0 {
		o.QueueSize = 64
	}
	tel, err := newTelemetry(o.Telemetry, transportPipe)
	if err != nil {
		return err
	}
	maxBatch, maxAnswer := orDefault(o.MaxBatch, defaultMaxBatch), orDefault(o.MaxAnswerBytes, defaultMaxAnswerBytes)
	eo := engineOptions{Logger: o.Logger, Listen: (*ListenOptions)(nil).withDefaults(), Telemetry: tel, MaxAnswer: maxAnswer}
	if scopes := slices.Clone(o.Scopes); scopes != nil {
		eo.Scopes = func(context.Context) []string { return scopes }
	}
	eng := newEngine(h, eo)
	return conn.Serve(ctx, conn.Config{Engine: eng, Identity: o.Identity, Logger: o.Logger,
		RequestTimeout: o.RequestTimeout, QueueSize: o.QueueSize, MaxBatch: maxBatch, MaxAnswer: maxAnswer,
		Grace: o.ShutdownTimeout}, c)
}

// ServeStdio serves the stdio transport: newline-delimited JSON-RPC on
// standard input and output, for clients that start the server as a
// process of their own (desktop and IDE clients). Nothing else may write
// to standard output; logs go to standard error. The client is the user
// who started the process: take ConnOptions.Identity and Scopes from the
// environment, never from the protocol. Cancel ctx on SIGTERM
// (signal.NotifyContext) for a clean exit.
//
// What it does where the specification only says one message per line
// and nothing else on standard output:
//
//	line not JSON, or not UTF-8                   -32700, id null; the session goes on
//	batch of more than ConnOptions.MaxBatch (32)  -32600, id null; nothing runs
//	line over ConnOptions.MaxMessageBytes         -32600 "message too large", id null, written
//	  (4 MiB)                                       as soon as the limit is crossed; the rest of
//	                                                the line is read and dropped
//	response to a request the server never sent  dropped, nothing written
//	standard input ends (the client closed it)    the calls running finish and are answered; a
//	                                                server→client request fails (ErrSessionEnded);
//	                                                shortly before ConnOptions.ShutdownTimeout (5 s)
//	                                                what still runs is cancelled and answered -32603
//	                                                "Request cancelled"; ServeStdio returns nil
//	standard output closed by the client (EPIPE)  reading stops, calls cancelled, nil; SIGPIPE
//	                                                does not kill the process while ServeStdio runs
//	ctx cancelled (cancel it on SIGTERM)          calls cancelled at once and answered, nil
//	a call still running ShutdownTimeout after    ServeStdio returns ErrCallsRunning
//	  the session ended
//
// So a shell's smoke test works: every line written at once, then the end
// of the input, and each call is answered before the process exits:
//
//	printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize",…}' \
//	  '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
//	  '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' | ./server -stdio
func ServeStdio(ctx context.Context, h Handler, opts *ConnOptions) error {
	max := DefaultMaxBodyBytes
	if opts != nil && opts.MaxMessageBytes > 0 {
		max = opts.MaxMessageBytes
	}
	defer keepBrokenPipe()()
	return ServeConn(ctx, h, conn.NewLines(os.Stdin, os.Stdout, max), opts)
}

// ErrCallsRunning is what ServeConn returns when calls still ran, or
// their answers were still being written, ConnOptions.ShutdownTimeout
// after the session ended: their handlers ignore their context, or the
// client stopped reading.
var ErrCallsRunning = conn.ErrCallsRunning
