package gateway

import (
	"context"
	"net/http"
	"sync"
	"time"
)

const (
	// DefaultStreamWriteTimeout bounds one write of an MCP response or event stream.
	DefaultStreamWriteTimeout = 30 * time.Second
	// DefaultStreamKeepAlive is the interval of the comments that keep a standalone
	// stream (GET /mcp) alive.
	DefaultStreamKeepAlive = 15 * time.Second
)

// keepAliveComment is an SSE comment line: clients ignore it; it only makes the stream
// write, so that a client that stopped reading is found out (and proxies see traffic).
var keepAliveComment = []byte(": keep-alive\n\n")

// streamWriter is the writer the SDK transport writes an MCP response to. The server's
// WriteTimeout is one deadline for the whole response, which would cut a healthy
// standalone stream (GET /mcp), or the event stream of a long tool call, at that age; a
// stream with no deadline at all is held forever by a client that stopped reading. So each
// write gets its own deadline, timeout from its start, and a write that fails (the
// deadline passed: the client does not read) ends the request through fail, which cancels
// the context the transport serves it on. keepAlive writes comments between events, so
// that a dead reader is found out even when the session has nothing to say.
//
// Writes, flushes and keep-alives are serialized by mu: the SDK writes one event per Write
// (then flushes), so a comment never lands inside an event.
type streamWriter struct {
	http.ResponseWriter
	timeout time.Duration
	fail    context.CancelFunc

	mu      sync.Mutex
	started bool // the transport answered 2xx: the stream is open, comments may be written
	failed  bool
}

// extend gives the next write its own deadline; mu is held. A writer that cannot take a
// deadline (a test recorder) is written to without one.
func (w *streamWriter) extend() {
	if w.timeout > 0 {
		_ = http.NewResponseController(w.ResponseWriter).SetWriteDeadline(time.Now().Add(w.timeout))
	}
}

// check ends the request when a write failed; mu is held.
func (w *streamWriter) check(err error) {
	if err != nil && !w.failed {
		w.failed = true
		w.fail()
	}
}

func (w *streamWriter) WriteHeader(status int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.started = status >= 200 && status < 300
	w.extend()
	w.ResponseWriter.WriteHeader(status)
}

func (w *streamWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.extend()
	n, err := w.ResponseWriter.Write(b)
	w.check(err)
	return n, err
}

// Flush is what the SDK calls after each event (through http.ResponseController).
func (w *streamWriter) Flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.extend()
	w.check(http.NewResponseController(w.ResponseWriter).Flush())
}

// Unwrap gives http.ResponseController the underlying writer.
func (w *streamWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// keepAlive writes a comment every interval once the stream is open, until ctx ends (the
// request ended, or a write failed).
func (w *streamWriter) keepAlive(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		w.mu.Lock()
		if w.started && !w.failed && ctx.Err() == nil {
			w.extend()
			_, err := w.ResponseWriter.Write(keepAliveComment)
			if err == nil {
				err = http.NewResponseController(w.ResponseWriter).Flush()
			}
			w.check(err)
		}
		w.mu.Unlock()
	}
}
