// Package mcpclient connects toolgate to MCP servers with the official go-sdk: over stdio
// (a command toolgate starts) or Streamable HTTP, and lists their tools as catalog tools.
// Connect returns the live session so that other parts of toolgate (a gateway proxying
// tools/call, the list_changed listener) reuse the same connection logic.
package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/derrors"
)

// Source kinds served by this package (db.SourceKind lists every kind).
const (
	KindStdio = db.SourceMCPStdio
	KindHTTP  = db.SourceMCPHTTP
)

// ParseConfig reads a source's stored config (the sources.config column).
func ParseConfig(raw []byte) (Config, error) {
	var cfg Config
	if err := json.Unmarshal(raw, &cfg); err != nil {
		return Config{}, &ConfigError{Reason: err.Error()}
	}
	return cfg, nil
}

// Limits bound what a server's answers may cost: an upstream decides how many tools it
// lists, how large they are, whether its pagination ends and how large an answer to a call
// is, and toolgate must stay within bounded time and memory whatever it decides. A listing
// over a limit fails (kind Protocol), so the source's stored tools stay as they are; a call
// whose answer is over MaxResponseBytes fails with a *ResponseTooLargeError.
type Limits struct {
	// MaxTools is the most tools a listing may hold (TOOLGATE_MAX_TOOLS_PER_SOURCE); 0:
	// DefaultLimits.MaxTools.
	MaxTools int
	// MaxBytes is the most bytes toolgate reads from the server while listing
	// (TOOLGATE_MAX_LIST_BYTES), counted on the wire, over all pages; 0:
	// DefaultLimits.MaxBytes.
	MaxBytes int64
	// MaxResponseBytes is the most bytes of one answer of the server
	// (TOOLGATE_MCP_MAX_RESPONSE_BYTES): over HTTP a JSON answer's body, or everything a
	// server-sent event stream carries for one call or listing page, and each event of
	// any stream; over stdio one line. 0: DefaultLimits.MaxResponseBytes.
	MaxResponseBytes int64
}

// DefaultLimits are the limits when none are configured. 16 MiB per answer is the go-sdk's
// own bound on a stdio line and on a server-sent event.
var DefaultLimits = Limits{MaxTools: 10_000, MaxBytes: 64 << 20, MaxResponseBytes: 16 << 20}

// MaxPages bounds the tools/list pages of one listing, and a cursor the server already
// gave ends the listing at once: a server whose cursors never end (or cycle) cannot keep
// a sync going until its timeout with empty pages.
const MaxPages = 1_000

func (l Limits) withDefaults() Limits {
	if l.MaxTools <= 0 {
		l.MaxTools = DefaultLimits.MaxTools
	}
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultLimits.MaxBytes
	}
	if l.MaxResponseBytes <= 0 {
		l.MaxResponseBytes = DefaultLimits.MaxResponseBytes
	}
	return l
}

// ResponseTooLargeError is an answer of the server over Limits.MaxResponseBytes: toolgate
// stopped reading it, and the call (or listing) it answered fails.
type ResponseTooLargeError struct{ Limit int64 }

func (e *ResponseTooLargeError) Error() string {
	return fmt.Sprintf("the server's answer is larger than %d bytes (TOOLGATE_MCP_MAX_RESPONSE_BYTES)", e.Limit)
}

// RedirectError is an HTTP redirect from an mcp_http server, which toolgate never follows:
// following it would send the source's configured headers and the caller's arguments to
// wherever the server points (another host, or an internal address only toolgate reaches).
type RedirectError struct{ Status int }

func (e *RedirectError) Error() string {
	return fmt.Sprintf("the server answered with redirect %d, which toolgate does not follow: configure the source with the URL the server answers at", e.Status)
}

// ListTooLargeError is a listing over one of its Limits (or MaxPages).
type ListTooLargeError struct{ Reason string }

func (e *ListTooLargeError) Error() string { return "tool list too large: " + e.Reason }

// Config is how to reach an MCP server; it is stored as a source's config column.
// Command, Args and Env are for mcp_stdio, URL and Headers for mcp_http.
type Config struct {
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	// OAuth, on an mcp_http source, makes toolgate send the access token of the source's
	// authorization (internal/upstreamauth, docs/upstream-oauth.md) with every request.
	OAuth *OAuthConfig `json:"oauth,omitempty"`
}

// OAuthConfig is how an mcp_http source authorizes at its server's authorization server.
// Nothing in it is secret: a pre-registered client's secret is given when an operator
// authorizes the source, and stored sealed with the tokens.
type OAuthConfig struct {
	// ClientID is a client registered with the authorization server beforehand; empty:
	// toolgate registers itself dynamically (RFC 7591).
	ClientID string `json:"client_id,omitempty"`
	// Scope is the scope to ask for, space-separated; empty: the one the server's
	// challenge or metadata names.
	Scope string `json:"scope,omitempty"`
}

// Authorizer gives the access tokens of sources configured for OAuth
// (upstreamauth.Manager implements it).
type Authorizer interface {
	// Token is the source's access token, refreshed first when it is about to expire.
	Token(ctx context.Context, source string) (string, error)
	// Refresh is a token to use instead of rejected, which the server refused (401).
	Refresh(ctx context.Context, source, rejected string) (string, error)
}

// ConfigError says why a source configuration cannot be used.
type ConfigError struct{ Reason string }

func (e *ConfigError) Error() string        { return "invalid MCP source config: " + e.Reason }
func (e *ConfigError) Is(target error) bool { return target == derrors.Invalid }
func (e *ConfigError) Code() string         { return "invalid_source_config" }

var (
	envNameRE    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	headerNameRE = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
)

// Validate checks cfg for a source of kind.
func (c Config) Validate(kind db.SourceKind) error {
	bad := func(format string, args ...any) error { return &ConfigError{Reason: fmt.Sprintf(format, args...)} }
	switch kind {
	case KindStdio:
		if c.URL != "" || len(c.Headers) > 0 || c.OAuth != nil {
			return bad("url, headers and oauth are for mcp_http sources")
		}
		if strings.TrimSpace(c.Command) == "" {
			return bad("command is required")
		}
		for k := range c.Env {
			if !envNameRE.MatchString(k) {
				return bad("env name %q: want letters, digits and _", k)
			}
		}
		for _, a := range append([]string{c.Command}, c.Args...) {
			if strings.ContainsRune(a, 0) {
				return bad("command and args must not contain NUL")
			}
		}
	case KindHTTP:
		if c.Command != "" || len(c.Args) > 0 || len(c.Env) > 0 {
			return bad("command, args and env are for mcp_stdio sources")
		}
		u, err := url.Parse(c.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return bad("url %q: want an absolute http:// or https:// URL", RedactURL(c.URL))
		}
		for k, v := range c.Headers {
			if !headerNameRE.MatchString(k) {
				return bad("header name %q is not a valid HTTP header name", k)
			}
			if strings.ContainsAny(v, "\r\n\x00") {
				return bad("header %q: value must not contain CR, LF or NUL", k)
			}
			if c.OAuth != nil && strings.EqualFold(k, "Authorization") {
				return bad("header Authorization: an OAuth source's Authorization is its access token")
			}
		}
		if c.OAuth != nil && strings.ContainsFunc(c.OAuth.ClientID+c.OAuth.Scope, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			return bad("oauth: client_id and scope must not contain control characters")
		}
	default:
		return bad("kind %q: want %s or %s", kind, KindStdio, KindHTTP)
	}
	return nil
}

// ErrorKind classifies a failure to talk to an MCP server.
type ErrorKind string

const (
	// Unreachable: the server could not be started or connected to, or went away.
	Unreachable ErrorKind = "unreachable"
	// Timeout: the server did not answer in time.
	Timeout ErrorKind = "timeout"
	// Protocol: the server answered, but not with a usable MCP answer.
	Protocol ErrorKind = "protocol"
)

// Error is a failure to connect to or list an MCP server.
type Error struct {
	Kind ErrorKind
	Op   string // "connect" or "list tools"
	Err  error
}

func (e *Error) Error() string { return fmt.Sprintf("mcp %s: %s: %v", e.Op, e.Kind, e.Err) }
func (e *Error) Unwrap() error { return e.Err }

// JSON-RPC codes the go-sdk uses for its own transport failures (internal/jsonrpc2): the
// connection closed or the transport refused the request. They mean the server is gone,
// not that it answered badly.
const (
	codeClientClosing = -32003
	codeServerClosing = -32004
	codeRejected      = -32005
)

// classify wraps err from the go-sdk as an *Error. readErr is the error that ended reading
// the server's stream, when known: the go-sdk reports it only as text, so the transport
// wrapper below keeps it.
func classify(ctx context.Context, op string, err error, readErr error) error {
	var rpcErr *jsonrpc.Error
	kind := Unreachable
	switch {
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded):
		kind = Timeout
	case errors.As(err, new(*RedirectError)) || errors.As(err, new(*ResponseTooLargeError)):
		kind = Protocol
	case readErr != nil && !isClosed(readErr):
		kind = Protocol
	case errors.As(err, &rpcErr):
		switch rpcErr.Code {
		case codeClientClosing, codeServerClosing, codeRejected:
		default:
			kind = Protocol
		}
	}
	return &Error{Kind: kind, Op: op, Err: err}
}

func isClosed(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.ErrClosedPipe) ||
		errors.Is(err, os.ErrClosed) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// watchedTransport remembers the error that ended reading from the server: a malformed
// message (garbage on a stdio server's stdout) versus the stream simply closing.
type watchedTransport struct {
	mcp.Transport
	readErr *atomicErr
}

type atomicErr struct {
	mu  sync.Mutex
	err error
}

func (a *atomicErr) set(err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.err == nil {
		a.err = err
	}
}

func (a *atomicErr) get() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.err
}

func (t watchedTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return watchedConn{Connection: c, readErr: t.readErr}, nil
}

type watchedConn struct {
	mcp.Connection
	readErr *atomicErr
}

func (c watchedConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if err != nil {
		c.readErr.set(err)
	}
	return m, err
}

// Options tunes Connect.
type Options struct {
	// ToolListChanged, when set, is called on every notifications/tools/list_changed the
	// server sends while the session is open (for HTTP it needs the standalone SSE stream,
	// which Connect opens only in that case).
	ToolListChanged func(context.Context)
	// NoRetries turns off the HTTP transport's own reconnection attempts, for callers that
	// reconnect themselves and want a failure reported at once (the gateway's call proxy).
	NoRetries bool
	// Commands are the programs an mcp_stdio source may start; the zero value allows none.
	Commands CommandPolicy
	// Limits bound a listing of the session's tools (Session.ListTools) and every answer of
	// the server; a zero field is its DefaultLimits value.
	Limits Limits
	// Auth and Source give the access token of an mcp_http source configured for OAuth
	// (Config.OAuth), Source being its name; such a source cannot connect without them.
	Auth   Authorizer
	Source string
}

// ErrNoAuthorizer is an OAuth source connected without an Authorizer.
var ErrNoAuthorizer = &ConfigError{Reason: "the source authorizes with OAuth, and toolgate holds no tokens without a secret key (TOOLGATE_SECRET_KEYS)"}

// Connect starts or reaches the server and completes the MCP initialization. The caller
// closes the session. ctx bounds the connection attempt; for stdio it does not bound the
// child process, which lives until the session is closed. A stdio command that
// opts.Commands does not allow is never started (*CommandNotAllowedError): every path to a
// stdio server comes through here, so a command stored before the allowlist changed is
// refused too.
func Connect(ctx context.Context, kind db.SourceKind, cfg Config, opts Options) (*Session, error) {
	if err := cfg.Validate(kind); err != nil {
		return nil, err
	}
	if kind == KindStdio {
		if err := opts.Commands.Check(cfg); err != nil {
			return nil, err
		}
	}
	var auth *bearer
	if cfg.OAuth != nil {
		if opts.Auth == nil {
			return nil, ErrNoAuthorizer
		}
		auth = &bearer{auth: opts.Auth, source: opts.Source}
	}
	limits := opts.Limits.withDefaults()
	copts := &mcp.ClientOptions{}
	if opts.ToolListChanged != nil {
		copts.ToolListChangedHandler = func(ctx context.Context, _ *mcp.ToolListChangedRequest) { opts.ToolListChanged(ctx) }
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "toolgate", Version: "1"}, copts)
	var (
		transport mcp.Transport
		readErr   atomicErr
		budget    = &byteBudget{}
	)
	switch kind {
	case KindStdio:
		cmd := exec.Command(cfg.Command, cfg.Args...)
		cmd.Env = stdioEnv(cfg.Env)
		// Stderr is left nil, which discards it (/dev/null) without a copying goroutine.
		// The server gets its own process group, so a terminal's Ctrl-C reaches toolgate,
		// which then closes the session (and the server with its children) in order.
		transport = watchedTransport{
			Transport: &stdioTransport{cmd: cmd, terminate: 2 * time.Second, budget: budget, maxLine: limits.MaxResponseBytes},
			readErr:   &readErr,
		}
	case KindHTTP:
		u, _ := url.Parse(cfg.URL) // Validate parsed it
		transport = &mcp.StreamableClientTransport{
			Endpoint: cfg.URL,
			HTTPClient: &http.Client{
				Transport: headerTransport{headers: cfg.Headers, bearer: auth, origin: origin(u), base: http.DefaultTransport,
					budget: budget, maxResponse: limits.MaxResponseBytes},
				CheckRedirect: refuseRedirect,
			},
			DisableStandaloneSSE: opts.ToolListChanged == nil,
			MaxEventSize:         int(limits.MaxResponseBytes),
		}
		if opts.NoRetries {
			transport.(*mcp.StreamableClientTransport).MaxRetries = -1
		}
	}
	cs, err := client.Connect(ctx, transport, nil)
	if err != nil {
		return nil, cfg.Scrub(classify(ctx, "connect", err, readErr.get()))
	}
	return &Session{ClientSession: cs, readErr: &readErr, cfg: cfg, limits: limits, budget: budget}, nil
}

// stdioEnv is the environment of a stdio server: PATH and HOME from toolgate's (so that
// `node` or `npx` resolve), plus the source's env. Nothing else of toolgate's environment
// (database URL, API keys) reaches the server.
func stdioEnv(extra map[string]string) []string {
	var env []string
	for _, k := range []string{"PATH", "HOME"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	for k, v := range extra {
		env = append(env, k+"="+v)
	}
	return env
}

// headerTransport adds a source's configured headers to the requests to the source's own
// origin (scheme, host and port of its URL), counts the bytes of every response body against
// the session's budget, and bounds every answer by maxResponse:
//   - a JSON answer is read here, whole, before the go-sdk sees it; one over the bound is
//     refused with a *ResponseTooLargeError from RoundTrip, which fails that request only
//     (the go-sdk would end the whole session on a body it failed to read);
//   - a server-sent event stream answering a call or listing page (a request of Session)
//     is counted over all its events, and cancels its request past the bound; every event
//     of every stream is bounded by the go-sdk (MaxEventSize), the standalone stream only so;
//   - any other body (an error page) is cut at the bound.
type headerTransport struct {
	headers     map[string]string
	bearer      *bearer // nil unless the source authorizes with OAuth
	origin      string
	base        http.RoundTripper
	budget      *byteBudget
	maxResponse int64
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	own := origin(r.URL) == t.origin
	if (len(t.headers) > 0 || t.bearer != nil) && own {
		r = r.Clone(r.Context())
		for k, v := range t.headers {
			r.Header.Set(k, v)
		}
	}
	var token string
	if t.bearer != nil && own {
		var err error
		if token, err = t.bearer.auth.Token(r.Context(), t.bearer.source); err != nil {
			return nil, err
		}
		r.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := t.base.RoundTrip(r)
	if err != nil {
		return resp, err
	}
	if token != "" && resp.StatusCode == http.StatusUnauthorized {
		if resp, err = t.retryUnauthorized(r, resp, token); err != nil {
			return nil, err
		}
	}
	if t.budget != nil {
		resp.Body = countedBody{ReadCloser: resp.Body, budget: t.budget}
	}
	req := requestOf(r.Context())
	mediaType, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case resp.StatusCode/100 == 2 && mediaType == "application/json":
		parts, n, err := readBounded(resp.Body, resp.ContentLength, t.maxResponse)
		resp.Body.Close()
		if err != nil {
			if errors.As(err, new(*ResponseTooLargeError)) && req != nil {
				req.tooLarge.Store(true)
			}
			return nil, err
		}
		if msg, changed := trimDeepTools(parts); changed {
			parts, n = [][]byte{msg}, int64(len(msg))
		}
		readers := make([]io.Reader, len(parts))
		for i, p := range parts {
			readers[i] = bytes.NewReader(p)
		}
		resp.Body, resp.ContentLength = io.NopCloser(io.MultiReader(readers...)), n
	case mediaType == "text/event-stream":
		if req != nil {
			body := requestBody{ReadCloser: resp.Body, req: req, limit: t.maxResponse}
			resp.Body = readCloser{Reader: streamEvents(body, t.maxResponse), Closer: body}
		}
	default:
		resp.Body = boundedBody{ReadCloser: resp.Body, read: &atomic.Int64{}, limit: t.maxResponse}
	}
	return resp, nil
}

// bearer is the access token source of an OAuth source.
type bearer struct {
	auth   Authorizer
	source string
}

// retryUnauthorized answers a 401 to token: the request is sent once more with the token the
// Authorizer gives instead (a refreshed one), or fails with the Authorizer's error, which
// says why the source is no longer authorized. A request whose body cannot be sent again
// keeps its 401.
func (t headerTransport) retryUnauthorized(r *http.Request, resp *http.Response, token string) (*http.Response, error) {
	if r.Body != nil && r.GetBody == nil {
		return resp, nil
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	fresh, err := t.bearer.auth.Refresh(r.Context(), t.bearer.source, token)
	if err != nil {
		return nil, err
	}
	r = r.Clone(r.Context())
	if r.GetBody != nil {
		if r.Body, err = r.GetBody(); err != nil {
			return nil, err
		}
	}
	r.Header.Set("Authorization", "Bearer "+fresh)
	return t.base.RoundTrip(r)
}

// origin is the scheme, host and port of u, which decides whether a request may carry a
// source's configured headers.
func origin(u *url.URL) string { return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host) }

// refuseRedirect is the CheckRedirect of every mcp_http source: a redirect is never
// followed, so no request (and no Referer) reaches a location the source's configuration
// does not name.
func refuseRedirect(r *http.Request, _ []*http.Request) error {
	return &RedirectError{Status: r.Response.StatusCode}
}

// readCloser reads from Reader and closes Closer.
type readCloser struct {
	io.Reader
	io.Closer
}

// readBounded reads a whole body of at most limit bytes; size is its announced length (-1:
// unknown), refused at once when over the limit. The body is kept in chunks of at most 1 MiB
// rather than one buffer grown by doubling: an answer refused at the limit has taken no more
// than the limit, not two or three times it.
func readBounded(r io.Reader, size, limit int64) ([][]byte, int64, error) {
	if size > limit {
		return nil, 0, &ResponseTooLargeError{Limit: limit}
	}
	const chunk = 1 << 20
	next := int64(64 << 10)
	if size >= 0 {
		next = size + 1
	}
	var (
		parts [][]byte
		read  int64
	)
	for {
		buf := make([]byte, min(next, chunk, limit+1-read))
		n, err := io.ReadFull(r, buf)
		read += int64(n)
		if read > limit {
			return nil, 0, &ResponseTooLargeError{Limit: limit}
		}
		parts = append(parts, buf[:n])
		switch {
		case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
			return parts, read, nil
		case err != nil:
			return nil, 0, err
		}
		next = chunk
	}
}

// request is one call or listing page of a Session, which the transport finds in the
// request's context: what the server sent in answer to it, and how to stop it.
type request struct {
	read     atomic.Int64
	tooLarge atomic.Bool
	cancel   context.CancelFunc
}

type requestKey struct{}

func requestOf(ctx context.Context) *request {
	req, _ := ctx.Value(requestKey{}).(*request)
	return req
}

// startRequest is the context of one request of a Session; the caller calls its cancel.
func startRequest(ctx context.Context) (context.Context, *request, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	req := &request{cancel: cancel}
	return context.WithValue(ctx, requestKey{}, req), req, cancel
}

// requestBody is a server-sent event stream answering a request: past the limit it cancels
// the request, which ends the stream without ending the session (a read error alone would
// make the go-sdk resume the stream or fail the session).
type requestBody struct {
	io.ReadCloser
	req   *request
	limit int64
}

func (b requestBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if b.req.read.Add(int64(n)) > b.limit {
		b.req.tooLarge.Store(true)
		b.req.cancel()
		return 0, &ResponseTooLargeError{Limit: b.limit}
	}
	return n, err
}

// boundedBody fails reads past limit bytes.
type boundedBody struct {
	io.ReadCloser
	read  *atomic.Int64
	limit int64
}

func (b boundedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if b.read.Add(int64(n)) > b.limit {
		return 0, &ResponseTooLargeError{Limit: b.limit}
	}
	return n, err
}

// countedBody is a response body read against a byteBudget.
type countedBody struct {
	io.ReadCloser
	budget *byteBudget
}

func (b countedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if berr := b.budget.count(n); berr != nil {
		return 0, berr
	}
	return n, err
}

// byteBudget counts the bytes read from a server. While a listing runs it has a limit, and
// a read past it fails: the go-sdk reads a whole message (up to Limits.MaxResponseBytes)
// before handing it over, so counting the decoded tools afterwards would come too late.
type byteBudget struct {
	read    atomic.Int64
	limit   atomic.Int64 // the count past which reads fail; 0: none
	tripped atomic.Bool  // a read failed on the limit (the go-sdk may report it only as a lost response)
}

// errBudget is the read error of a listing over Limits.MaxBytes.
var errBudget = errors.New("read limit of the listing reached")

func (b *byteBudget) count(n int) error {
	read := b.read.Add(int64(n))
	if limit := b.limit.Load(); limit > 0 && read > limit {
		b.tripped.Store(true)
		return errBudget
	}
	return nil
}

// Session is an initialized MCP session with a server.
type Session struct {
	*mcp.ClientSession
	readErr *atomicErr
	cfg     Config // for Scrub
	limits  Limits
	budget  *byteBudget
}

// ListTools lists every tool of the session's server, following pagination, converted to
// catalog tools (not yet validated: the caller decides what to do with invalid ones).
// The listing is bounded by the session's Limits and by MaxPages; past one it fails with
// a *ListTooLargeError (in an *Error of kind Protocol). One listing at a time per session.
func (s *Session) ListTools(ctx context.Context) ([]catalog.Tool, error) {
	tooLarge := func(format string, args ...any) error {
		return &Error{Kind: Protocol, Op: "list tools", Err: &ListTooLargeError{Reason: fmt.Sprintf(format, args...)}}
	}
	s.budget.tripped.Store(false)
	s.budget.limit.Store(s.budget.read.Load() + s.limits.MaxBytes)
	defer s.budget.limit.Store(0)
	var tools []catalog.Tool
	seen := map[string]bool{}
	params := &mcp.ListToolsParams{}
	for page := 1; ; page++ {
		rctx, req, cancel := startRequest(ctx)
		res, err := s.ClientSession.ListTools(rctx, params)
		cancel()
		if err != nil {
			if s.budget.tripped.Load() {
				return nil, tooLarge("more than %d bytes", s.limits.MaxBytes)
			}
			if req.tooLarge.Load() {
				return nil, tooLarge("an answer of more than %d bytes (TOOLGATE_MCP_MAX_RESPONSE_BYTES)", s.limits.MaxResponseBytes)
			}
			return nil, s.cfg.Scrub(classify(ctx, "list tools", err, s.readErr.get()))
		}
		if len(tools)+len(res.Tools) > s.limits.MaxTools {
			return nil, tooLarge("more than %d tools (TOOLGATE_MAX_TOOLS_PER_SOURCE)", s.limits.MaxTools)
		}
		for _, t := range res.Tools {
			ct, err := convert(t)
			if err != nil {
				return nil, &Error{Kind: Protocol, Op: "list tools", Err: err}
			}
			tools = append(tools, ct)
		}
		if res.NextCursor == "" {
			return tools, nil
		}
		if seen[res.NextCursor] {
			return nil, tooLarge("the server's pagination cursor repeats after %d pages", page)
		}
		if page == MaxPages {
			return nil, tooLarge("more than %d pages", MaxPages)
		}
		seen[res.NextCursor] = true
		params = &mcp.ListToolsParams{Cursor: res.NextCursor}
	}
}

// CallTool runs tools/call on the session's server. An answer over the session's
// Limits.MaxResponseBytes fails the call with a *ResponseTooLargeError and leaves the session
// usable for other calls (over stdio, where an answer is a line of the one stream, the
// session ends with it).
func (s *Session) CallTool(ctx context.Context, params *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	ctx, req, cancel := startRequest(ctx)
	defer cancel()
	res, err := s.ClientSession.CallTool(ctx, params)
	if req.tooLarge.Load() {
		return nil, &ResponseTooLargeError{Limit: s.limits.MaxResponseBytes}
	}
	return res, err
}

// List connects with cfg, lists the tools and closes the session, all within timeout; a
// stdio source's command must be one opts.Commands allows, and the listing is bounded by
// opts.Limits.
func List(ctx context.Context, kind db.SourceKind, cfg Config, timeout time.Duration, opts Options) ([]catalog.Tool, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cs, err := Connect(ctx, kind, cfg, opts)
	if err != nil {
		return nil, err
	}
	defer cs.Close()
	return cs.ListTools(ctx)
}

func convert(t *mcp.Tool) (catalog.Tool, error) {
	ct := catalog.Tool{Name: t.Name, Title: t.Title, Description: t.Description}
	if _, deep := t.Meta[deepToolMeta]; deep {
		ct.Refused = fmt.Sprintf("its definition nests objects and arrays more than %d levels deep, past which its server's answer cannot be read", maxDepth-3)
		return ct, nil
	}
	var err error
	if ct.InputSchema, err = marshalOptional(t.InputSchema); err != nil {
		return ct, fmt.Errorf("tool %q input schema: %w", t.Name, err)
	}
	if ct.OutputSchema, err = marshalOptional(t.OutputSchema); err != nil {
		return ct, fmt.Errorf("tool %q output schema: %w", t.Name, err)
	}
	if t.Annotations != nil {
		if ct.Annotations, err = json.Marshal(t.Annotations); err != nil {
			return ct, fmt.Errorf("tool %q annotations: %w", t.Name, err)
		}
	}
	return ct, nil
}

func marshalOptional(v any) (json.RawMessage, error) {
	if v == nil {
		return nil, nil
	}
	return json.Marshal(v)
}
