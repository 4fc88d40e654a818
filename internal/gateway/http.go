package gateway

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/httpguard"
	"github.com/toolgate/toolgate/internal/tracing"
)

const (
	sessionHeader         = "Mcp-Session-Id"
	protocolVersionHeader = "Mcp-Protocol-Version"
	// maxRequestBody bounds one MCP request body (a tools/call with its arguments).
	maxRequestBody = 4 << 20
	// DefaultSessionsPerKey is the default of Options.SessionsPerKey. A session in memory
	// holds its own MCP server, its bound tools' resolved schemas and a few goroutines
	// (tens of KiB); a key opening sessions without end must not grow the process with them.
	DefaultSessionsPerKey = 256
	// DefaultHandshakeIdle is the default of Options.HandshakeIdle: a client finishes the
	// handshake within milliseconds of its initialize, or never.
	DefaultHandshakeIdle = 10 * time.Second
)

// HTTPHandler serves MCP over Streamable HTTP. It keeps its own session table instead of
// the SDK's StreamableHTTPHandler because that one answers 404 for a session it did not
// create: here a session unknown to this instance is rebuilt from PostgreSQL (its
// initialize state and bound tools), so instances behind a load balancer share sessions.
// The caller comes from auth.FromContext, set by the API-key middleware in front.
type HTTPHandler struct {
	g *Gateway
	// Origins are the web origins whose pages may call the handler with a caller's key or
	// token (TOOLGATE_CORS_ORIGINS); a request of any other origin is refused. Set it
	// before the handler serves.
	Origins httpguard.Origins

	mu       sync.Mutex
	sessions map[string]*httpSession
	stop     chan struct{} // closed by Close: ends the idle sweeper
	stopOnce sync.Once
}

type httpSession struct {
	s         *session
	transport *mcp.StreamableServerTransport
	ss        *mcp.ServerSession
	lastUsed  atomic.Int64 // unix nanoseconds
	// lastTouch is when last_seen_at was last written (unix nanoseconds); it is written at
	// most once per touchEvery, so the retention job never deletes a session in use.
	lastTouch atomic.Int64
}

const touchEvery = time.Minute

// HTTPHandler returns the Streamable HTTP handler of the gateway.
func (g *Gateway) HTTPHandler() *HTTPHandler {
	h := &HTTPHandler{g: g, sessions: map[string]*httpSession{}, stop: make(chan struct{})}
	g.mu.Lock()
	g.handlers = append(g.handlers, h)
	g.mu.Unlock()
	go h.sweep()
	return h
}

// sweep drops idle sessions from memory every quarter of SessionIdle (1 s to 1 min), so
// that they leave even when no new session is opened, until Close.
func (h *HTTPHandler) sweep() {
	t := time.NewTicker(min(max(h.g.opts.SessionIdle/4, time.Second), time.Minute))
	defer t.Stop()
	for {
		select {
		case <-h.stop:
			return
		case <-t.C:
			h.mu.Lock()
			h.evictIdle()
			h.mu.Unlock()
			h.endDeleted()
		}
	}
}

// ServeHTTP serves one request and writes a refusal as plain text, for embedders other than
// toolgate's API and for tests; the API mounts Serve and writes refusals in its JSON shape.
func (h *HTTPHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	err := h.Serve(w, r)
	if err == nil {
		return
	}
	var he *HTTPError
	if !errors.As(err, &he) {
		he = &HTTPError{Status: http.StatusInternalServerError, Err: err}
	}
	msg := he.Error()
	if he.Status >= http.StatusInternalServerError {
		h.g.log.Error("mcp request failed", "method", r.Method, "err", err)
		msg = http.StatusText(he.Status)
	}
	http.Error(w, msg, he.Status)
}

// Serve serves one MCP request. When it refuses the request — its own checks, or the SDK
// transport's, which answer in plain text — nothing has been written and the refusal comes
// back as an *HTTPError for the caller to write. JSON-RPC errors the SDK writes itself
// (a JSON body) are answers, not refusals, and are passed through.
func (h *HTTPHandler) Serve(w http.ResponseWriter, r *http.Request) error {
	switch r.Method {
	case http.MethodGet, http.MethodPost, http.MethodDelete:
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		return &HTTPError{Status: http.StatusMethodNotAllowed, Message: r.Method + " is not an MCP Streamable HTTP method (GET, POST, DELETE)"}
	}
	caller := auth.FromContext(r.Context())
	// As in the SDK's handler: a request that reached a loopback address with a
	// non-loopback Host header is a DNS-rebinding attempt from a browser page. That only
	// matters without a credential (open mode, where the API also refuses any Host but
	// localhost and IP addresses): a page cannot send a key or token, and with them a reverse proxy on the
	// same host may forward any name, as for the REST endpoints.
	if caller.Principal() == "" {
		if la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && httpguard.IsLoopback(la.String()) && !httpguard.IsLoopback(r.Host) {
			return &HTTPError{Status: http.StatusForbidden, Err: &httpguard.HostError{Host: r.Host}}
		}
	}
	// The transport specification: servers MUST validate the Origin header of every
	// connection and answer 403 when it is invalid. A listed origin is valid for a caller
	// with a credential: its page holds its user's key or token.
	if o := r.Header.Get("Origin"); o == "" || caller.Principal() == "" || !h.Origins.Allows(o) {
		if err := httpguard.CheckOrigin(r); err != nil {
			return &HTTPError{Status: http.StatusForbidden, Err: err}
		}
	}
	// The SDK's own handler checks the protocol version header; its transport, which this
	// handler drives, does not. A version the SDK does not speak is a 400 (absent, it is
	// assumed to be 2025-03-26, as the specification says).
	if v := r.Header.Get(protocolVersionHeader); v != "" && !slices.Contains(mcp.SupportedProtocolVersions(), v) {
		return &HTTPError{Status: http.StatusBadRequest, Code: "unsupported_protocol_version",
			Message: fmt.Sprintf("%s %q is not supported; supported versions: %s", protocolVersionHeader, v, strings.Join(mcp.SupportedProtocolVersions(), ", "))}
	}
	if r.Body != nil {
		r.Body = http.MaxBytesReader(w, r.Body, maxRequestBody)
	}
	var body []byte
	if r.Method == http.MethodPost {
		var err error
		if body, err = readMessage(r); err != nil {
			return err
		}
	}
	id := r.Header.Get(sessionHeader)
	if id == "" {
		if r.Method != http.MethodPost {
			return &HTTPError{Status: http.StatusBadRequest, Code: "missing_session_id", Message: r.Method + " requires an " + sessionHeader + " header"}
		}
		// Only initialize opens a session, as the transport specification has it (a server
		// that requires sessions answers 400 to any other request without one). Opening one
		// for anything else (the go-sdk client probes with server/discover first) would keep
		// a session no client can address in memory until it is idle.
		switch method := methodOf(body); method {
		case "initialize":
		case "":
			return &HTTPError{Status: http.StatusBadRequest, Code: "invalid_request",
				Message: "the body is not a JSON-RPC request: a POST without an " + sessionHeader + " header must be initialize"}
		default:
			return &HTTPError{Status: http.StatusBadRequest, Code: "missing_session_id",
				Message: fmt.Sprintf("%q needs an %s header: only initialize opens a session", method, sessionHeader)}
		}
		hs, err := h.open(r.Context(), h.g.newSession(rand.Text(), caller, nil), nil)
		if errors.Is(err, errTooManySessions) {
			return err
		}
		if err != nil {
			return &HTTPError{Status: http.StatusInternalServerError, Message: "could not open session", Err: err}
		}
		return h.serveTransport(hs, w, r, caller)
	}
	hs, err := h.lookup(r.Context(), id, caller)
	if err != nil {
		return err
	}
	now := time.Now().UnixNano()
	hs.lastUsed.Store(now)
	if last := hs.lastTouch.Load(); now-last > int64(touchEvery) && hs.lastTouch.CompareAndSwap(last, now) {
		if err := h.g.q.TouchMCPSession(r.Context(), id); err != nil {
			h.g.log.Warn("touch mcp session", "session", id, "err", err)
		}
	}
	if r.Method == http.MethodDelete {
		_ = hs.ss.Close()
		if err := h.g.q.DeleteMCPSession(r.Context(), id); err != nil {
			h.g.log.Error("delete mcp session", "session", id, "err", err)
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	return h.serveTransport(hs, w, r, caller)
}

// readMessage reads a POST body, puts it back for the transport and returns it. It
// refuses a body that is a JSON array: a JSON-RPC batch. The protocol dropped batches in
// 2025-06-18, but the SDK still runs them for older protocol versions (and for a request
// without Mcp-Protocol-Version, taken as 2025-03-26), and a batch is one HTTP request for
// the API key's rate limit however many calls it holds. The body is bounded by
// MaxBytesReader.
func readMessage(r *http.Request) ([]byte, error) {
	if r.Body == nil {
		return nil, nil
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		// the SDK transport's own refusals of a body it cannot read
		if mbe, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return nil, &HTTPError{Status: http.StatusRequestEntityTooLarge, Code: "body_too_large", Message: fmt.Sprintf("request body exceeds %d bytes", mbe.Limit)}
		}
		return nil, &HTTPError{Status: http.StatusBadRequest, Message: "failed to read body"}
	}
	if bytes.HasPrefix(bytes.TrimLeft(body, " \t\r\n"), []byte("[")) {
		return nil, errBatch
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return body, nil
}

// methodOf is the JSON-RPC method of a message body: "" for a response or a body that is
// not a message. Only a request without a session needs it (the transport parses the rest).
func methodOf(body []byte) string {
	var msg struct {
		Method string `json:"method"`
	}
	_ = json.Unmarshal(body, &msg)
	return msg.Method
}

// serveTransport runs the SDK transport on r for caller. The request it sees
//
//   - names, in its traceparent header, the span of r's context (withTraceHeader);
//   - carries caller in the TokenInfo of its context (callerTokenInfo), which the SDK
//     copies into every message of the request, where requestCaller finds it;
//   - writes through a streamWriter, which bounds each write and keeps a GET's standalone
//     stream alive.
func (h *HTTPHandler) serveTransport(hs *httpSession, w http.ResponseWriter, r *http.Request, caller *auth.Caller) error {
	r = withTraceHeader(r)
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	sw := &streamWriter{ResponseWriter: w, timeout: h.g.opts.StreamWriteTimeout, fail: cancel}
	if r.Method == http.MethodGet && h.g.opts.StreamKeepAlive > 0 {
		go sw.keepAlive(ctx, h.g.opts.StreamKeepAlive)
	}
	return serveTransport(callerTokenInfo(caller, hs.transport), sw, r.WithContext(ctx))
}

// callerTokenInfo makes next see caller as the request's TokenInfo. The SDK puts a
// TokenInfo in a request's context only through its RequireBearerToken middleware, which
// wants an Authorization header: the API key was verified by the middleware in front, so
// next gets a placeholder instead (the key or OAuth token itself goes no further: a token
// is never passed on, as the MCP authorization specification demands), and the "verifier"
// returns the caller that middleware found.
func callerTokenInfo(caller *auth.Caller, next http.Handler) http.Handler {
	info := &sdkauth.TokenInfo{UserID: caller.Principal(), Extra: map[string]any{requestCallerInfo: caller}}
	verify := func(context.Context, string, *http.Request) (*sdkauth.TokenInfo, error) { return info, nil }
	mw := sdkauth.RequireBearerToken(verify, &sdkauth.RequireBearerTokenOptions{AllowMissingExpiration: true})(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != placeholderAuthorization {
			r = r.Clone(r.Context())
			r.Header.Set("Authorization", placeholderAuthorization)
		}
		mw.ServeHTTP(w, r)
	})
}

const placeholderAuthorization = "Bearer verified-by-toolgate"

// withTraceHeader returns r with its traceparent header naming the span of r's context
// (the server span of the HTTP middleware), so that traceParent parents the spans of the
// MCP methods r carries under it. Without a span, r is returned as is.
func withTraceHeader(r *http.Request) *http.Request {
	if !trace.SpanContextFromContext(r.Context()).IsValid() {
		return r
	}
	r = r.Clone(r.Context())
	tracing.Propagator().Inject(r.Context(), propagation.HeaderCarrier(r.Header))
	return r
}

var (
	errSessionNotFound = &HTTPError{Status: http.StatusNotFound, Code: "session_not_found",
		Message: "session not found: it ended or expired; initialize a new one"}
	errTooManySessions = &HTTPError{Status: http.StatusTooManyRequests, Code: "too_many_sessions",
		Message: "this API key has as many sessions opening at once as this server holds for a key (TOOLGATE_MCP_SESSIONS_PER_KEY); try again shortly"}
	errSessionCaller = &HTTPError{Status: http.StatusForbidden, Code: "forbidden", Message: "session belongs to another API key"}
	errBatch         = &HTTPError{Status: http.StatusBadRequest, Code: "batch_not_supported",
		Message: "JSON-RPC batches are not supported: send one message per request"}
)

// lookup finds a session in memory or rebuilds it from the database. Its errors are
// *HTTPError.
func (h *HTTPHandler) lookup(ctx context.Context, id string, caller *auth.Caller) (*httpSession, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if hs := h.sessions[id]; hs != nil {
		if hs.s.owner.Principal() != caller.Principal() {
			return nil, errSessionCaller
		}
		return hs, nil
	}
	// Rebuilding holds the table lock so concurrent requests of one session (the
	// standalone GET and a POST) build it once; it only happens when a session moves.
	row, err := h.g.q.GetMCPSession(ctx, id)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, errSessionNotFound
	}
	if err != nil {
		return nil, &HTTPError{Status: http.StatusInternalServerError, Message: "could not load session", Err: err}
	}
	// Owned by the key's id (a name passes to a new key once the old one is revoked), or by
	// the OAuth token's issuer and subject.
	if auth.PrincipalOf(row.CallerKeyID.Int64, row.Caller) != caller.Principal() {
		return nil, errSessionCaller
	}
	var state mcp.ServerSessionState
	if err := json.Unmarshal(row.State, &state); err != nil {
		h.g.log.Error("mcp session state unreadable", "session", id, "err", err)
		return nil, errSessionNotFound
	}
	bound, err := h.g.q.ListSessionTools(ctx, id)
	if err != nil {
		return nil, &HTTPError{Status: http.StatusInternalServerError, Message: "could not load session tools", Err: err}
	}
	if err := h.g.q.TouchMCPSession(ctx, id); err != nil {
		h.g.log.Warn("touch mcp session", "session", id, "err", err)
	}
	s := h.g.newSession(id, caller, bound)
	s.stored.Store(true)
	hs, err := h.connect(ctx, s, &state)
	if errors.Is(err, errTooManySessions) {
		return nil, err
	}
	if err != nil {
		return nil, &HTTPError{Status: http.StatusInternalServerError, Message: "could not rebuild session", Err: err}
	}
	h.g.log.Info("mcp session rebuilt from database", "session", id, "bound_tools", len(bound))
	return hs, nil
}

// open registers a new session (state nil: it starts with the initialize handshake).
func (h *HTTPHandler) open(ctx context.Context, s *session, state *mcp.ServerSessionState) (*httpSession, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.evictIdle()
	return h.connect(ctx, s, state)
}

// connect starts the server side of a session and registers it; h.mu is held.
func (h *HTTPHandler) connect(ctx context.Context, s *session, state *mcp.ServerSessionState) (*httpSession, error) {
	if err := h.setAsideFor(s.owner.Principal()); err != nil {
		return nil, err
	}
	transport := &mcp.StreamableServerTransport{SessionID: s.id}
	// The session outlives the request that opened it, and so must not carry its span:
	// methods get their parent from the request carrying them (traceParent).
	ctx = trace.ContextWithSpanContext(context.WithoutCancel(ctx), trace.SpanContext{})
	ss, err := s.server.Connect(ctx, transport, &mcp.ServerSessionOptions{State: state})
	if err != nil {
		return nil, err
	}
	hs := &httpSession{s: s, transport: transport, ss: ss}
	hs.lastUsed.Store(time.Now().UnixNano())
	hs.lastTouch.Store(time.Now().UnixNano())
	h.sessions[s.id] = hs
	go func() {
		_ = ss.Wait()
		h.mu.Lock()
		if h.sessions[s.id] == hs {
			delete(h.sessions, s.id)
		}
		h.mu.Unlock()
	}()
	return hs, nil
}

// setAsideFor makes room for one more session of owner (a key or token subject, by
// auth.Caller.Principal; "" for open mode) in memory: while the key holds
// SessionsPerKey sessions, its least recently used stored one leaves memory. Its row
// stays, so its client's next request rebuilds it (as after evictIdle). A session that has
// not finished its initialize handshake has no row yet and would be lost, so it is not set
// aside while its client may still finish it; one left in its handshake longer than
// HandshakeIdle is abandoned and makes room first (so a client that initializes and goes
// away does not lock its key out until SessionIdle). When every session of the key
// is in a handshake younger than that, the new one is refused (429 too_many_sessions) and
// its client may try again shortly. h.mu is held.
func (h *HTTPHandler) setAsideFor(owner string) error {
	abandoned := time.Now().Add(-h.g.opts.HandshakeIdle).UnixNano()
	for {
		var n int
		var lru, oldest *httpSession
		for _, hs := range h.sessions {
			if hs.s.owner.Principal() != owner {
				continue
			}
			n++
			switch {
			case hs.s.stored.Load():
				if lru == nil || hs.lastUsed.Load() < lru.lastUsed.Load() {
					lru = hs
				}
			case hs.lastUsed.Load() < abandoned:
				if oldest == nil || hs.lastUsed.Load() < oldest.lastUsed.Load() {
					oldest = hs
				}
			}
		}
		if n < h.g.opts.SessionsPerKey {
			return nil
		}
		out := cmp.Or(oldest, lru) // an abandoned handshake first: it is worth nothing
		if out == nil {
			return errTooManySessions
		}
		delete(h.sessions, out.s.id)
		go out.ss.Close()
	}
}

// evictIdle closes sessions idle longer than SessionIdle; h.mu is held. Their rows stay,
// so a client that comes back gets its session rebuilt.
func (h *HTTPHandler) evictIdle() {
	cutoff := time.Now().Add(-h.g.opts.SessionIdle).UnixNano()
	for id, hs := range h.sessions {
		if hs.lastUsed.Load() < cutoff {
			delete(h.sessions, id)
			go hs.ss.Close()
		}
	}
}

// endDeleted closes the in-memory sessions whose rows are gone: ended on another instance,
// deleted with their revoked key, or by the retention job. A request for one would be
// refused anyway (the key check, then no row to rebuild it from); this also ends its
// standalone stream.
func (h *HTTPHandler) endDeleted() {
	h.mu.Lock()
	var ids []string
	for id, hs := range h.sessions {
		if hs.s.stored.Load() {
			ids = append(ids, id)
		}
	}
	h.mu.Unlock()
	if len(ids) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	kept, err := h.g.q.StoredMCPSessions(ctx, ids)
	if err != nil {
		h.g.log.Warn("check stored mcp sessions", "err", err)
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, id := range ids {
		if hs := h.sessions[id]; hs != nil && !slices.Contains(kept, id) {
			delete(h.sessions, id)
			go hs.ss.Close()
		}
	}
}

// endKey closes the in-memory sessions owned by key (just revoked).
func (h *HTTPHandler) endKey(key int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for id, hs := range h.sessions {
		if keyID(hs.s.owner) == key {
			delete(h.sessions, id)
			go hs.ss.Close()
		}
	}
}

// Close ends every in-memory session (their rows stay for other instances).
func (h *HTTPHandler) Close() {
	h.stopOnce.Do(func() { close(h.stop) })
	h.mu.Lock()
	defer h.mu.Unlock()
	for id, hs := range h.sessions {
		delete(h.sessions, id)
		_ = hs.ss.Close()
	}
}

// Serve runs one MCP session over t (stdio for local hosts) until the client disconnects
// or ctx ends.
func (g *Gateway) Serve(ctx context.Context, t mcp.Transport, caller *auth.Caller) error {
	s := g.newSession(rand.Text(), caller, nil)
	ss, err := s.server.Connect(ctx, t, nil)
	if err != nil {
		return err
	}
	stop := context.AfterFunc(ctx, func() { _ = ss.Close() })
	defer stop()
	return ss.Wait()
}
