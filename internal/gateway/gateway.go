// Package gateway is toolgate's MCP server (RFC 0001): agents see find_tools (and call_tool,
// optionally use_tool); the tools find_tools returns are bound into the session's tool list,
// and calling one proxies tools/call to the tool's source server. Sessions and their bound
// tools live in PostgreSQL, so any toolgate instance can serve any session.
package gateway

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/mcpclient"
	"github.com/toolgate/toolgate/internal/metrics"
	"github.com/toolgate/toolgate/internal/tracing"
)

// Finder is the search find_tools runs: the same ranked retrieval as POST /search, logged
// with the MCP session as the caller. Tools the caller may not use must not be returned. A
// query the Finder cannot take (too long, not text) is a *QueryError, which the agent is
// told about; any other error is the Finder's own failure.
type Finder interface {
	Find(ctx context.Context, q FindRequest) (FindResult, error)
}

// QueryError is a find_tools query the Finder refuses; Reason says why, for the agent.
type QueryError struct{ Reason string }

func (e *QueryError) Error() string { return e.Reason }

// FindRequest is one find_tools query. Query is never empty: the gateway rejects an empty
// query before it reaches the Finder.
type FindRequest struct {
	Query     string
	Limit     int
	Caller    auth.Caller // whose search it is: the sources it may see, its default plan
	SessionID string
	// ExplainTools names tools the agent asks about ("why not X?"): FindResult.Explained
	// says, for each, whether the search returned it, where it ranked and why not.
	ExplainTools []string
}

// FindResult is the ranked tools of one search and the id of its retrieval-log row.
type FindResult struct {
	SearchID int64
	Tools    []FoundTool
	// Confidence is how likely the first tool is one the request needs (0 to 1), and
	// NoGoodMatch says it is too low to trust (search.Response).
	Confidence  float64
	NoGoodMatch bool
	// Mode and Profile are the search's mode and the weight profile that served it, for the
	// metrics (empty when the Finder does not say).
	Mode, Profile string
	// Explained answers FindRequest.ExplainTools, in its order.
	Explained []ToolExplanation
}

// ToolExplanation is one answer of explain_tools (search.ToolExplanation without the
// branches' details): whether the search returned the tool, its rank and fused score
// (nil when no branch's candidates held it), and the reasons it was not returned.
type ToolExplanation struct {
	Name     string   `json:"name"`
	Returned bool     `json:"returned"`
	Rank     *int     `json:"rank"`
	Score    *float64 `json:"score"`
	Reasons  []Reason `json:"reasons"`
}

// Reason is a cause of a ToolExplanation: a stable code (search.Reason*) and a sentence.
type Reason struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// FoundTool is one retrieved tool, best first in FindResult.Tools.
type FoundTool struct {
	Name         string // namespaced: source__original
	SourceName   string
	OriginalName string
	Title        string
	Description  string
	InputSchema  json.RawMessage
	OutputSchema json.RawMessage
	Annotations  json.RawMessage
	Version      string  // the tool's content hash
	Confidence   float64 // how likely the tool is one the request needs (search.Result)
}

// Backends says which retrieval backends are active, for capability advertisement.
type Backends struct {
	Lexical  bool   `json:"lexical"`
	Vector   bool   `json:"vector"`
	Enricher string `json:"enricher"`
	Reranker string `json:"reranker"`
}

// Options are the gateway's settings.
type Options struct {
	CallTool    bool          // expose call_tool (TOOLGATE_MCP_CALL_TOOL)
	UseTool     bool          // expose use_tool (TOOLGATE_MCP_USE_TOOL)
	BindLimit   int           // tools bound per session (TOOLGATE_MCP_BIND_LIMIT)
	CallTimeout time.Duration // whole proxied call (TOOLGATE_MCP_CALL_TIMEOUT)
	// ConnectTimeout bounds connecting to a source (starting a stdio server, the MCP
	// handshake) within a call (TOOLGATE_MCP_CONNECT_TIMEOUT); zero means
	// DefaultConnectTimeout. CallTimeout bounds the whole call all the same.
	ConnectTimeout      time.Duration
	UpstreamConcurrency int           // calls in flight per source (TOOLGATE_MCP_UPSTREAM_CONCURRENCY)
	SessionIdle         time.Duration // idle time before a session leaves memory (TOOLGATE_MCP_SESSION_IDLE)
	// SessionsPerKey is the most sessions of one API key (or of the keyless callers) an
	// instance holds in memory (TOOLGATE_MCP_SESSIONS_PER_KEY); opening one more sets the
	// key's least recently used one aside, to be rebuilt from its row when it is used again.
	// Zero means DefaultSessionsPerKey.
	SessionsPerKey int
	// HandshakeIdle is how long a session may wait for the end of its initialize handshake
	// before it counts as abandoned: a new session of its key at SessionsPerKey replaces it.
	// Zero means DefaultHandshakeIdle.
	HandshakeIdle time.Duration
	// LabelWindow is how long after a find_tools a call of a tool it returned, in the same
	// session, labels that search (TOOLGATE_MCP_LABEL_WINDOW); zero means
	// DefaultLabelWindow, negative records no labels.
	LabelWindow time.Duration
	// StreamWriteTimeout bounds each write of an /mcp response (an event of a stream, a
	// keep-alive); a client that does not take it in time loses the stream. It replaces
	// the HTTP server's WriteTimeout for /mcp, which would cut long streams. Zero means
	// DefaultStreamWriteTimeout.
	StreamWriteTimeout time.Duration
	// StreamKeepAlive is the interval of the keep-alive comments of a standalone stream
	// (GET /mcp). Zero means DefaultStreamKeepAlive, negative sends none.
	StreamKeepAlive time.Duration
	Backends        Backends
	Logger          *slog.Logger
	// Tracer makes an "mcp tools/call" client span per proxied call; nil makes none.
	Tracer *tracing.Tracer
	// Metrics counts proxied calls (toolgate_mcp_proxy_*), find_tools calls
	// (toolgate_mcp_find_tools_calls_total), the searches of find_tools and use_tool
	// (toolgate_searches_total) and the labels calls record (toolgate_search_labels_total);
	// nil counts nothing.
	Metrics *metrics.Metrics
	// Commands are the programs an mcp_stdio source may run (TOOLGATE_STDIO_COMMANDS); a
	// call to a tool of a source whose command is not allowed starts nothing and fails
	// with command_not_allowed. The zero value allows none.
	Commands mcpclient.CommandPolicy
	// MaxResponseBytes bounds one answer of a source server to a proxied call
	// (TOOLGATE_MCP_MAX_RESPONSE_BYTES); a larger one fails the call with
	// upstream_response_too_large. 0: mcpclient.DefaultLimits.MaxResponseBytes.
	MaxResponseBytes int64
	// Auth gives the access tokens of mcp_http sources configured for OAuth
	// (upstreamauth.Manager); nil: a call to such a source fails.
	Auth mcpclient.Authorizer
	// Version is the serverInfo.version of every session, the binary's version (toolgate
	// version); empty means "devel".
	Version string
}

// Capabilities is what the gateway advertises at GET /v1/capabilities and as the MCP
// resource toolgate://capabilities.
type Capabilities struct {
	Backends       Backends `json:"backends"`
	Tools          []string `json:"tools"`
	CallProxying   bool     `json:"call_proxying"`
	BindLimit      int      `json:"bind_limit"`
	MaxFindLimit   int      `json:"max_find_limit"`
	DefaultLimit   int      `json:"default_find_limit"`
	Versioning     string   `json:"versioning"`
	SessionStorage string   `json:"session_storage"`
}

// Gateway builds the per-session MCP servers and proxies calls to source servers.
type Gateway struct {
	pool      *pgxpool.Pool
	q         *db.Queries
	finder    Finder
	opts      Options
	upstreams *upstreamPool
	log       *slog.Logger
	labels    labeler
	labelWG   sync.WaitGroup // label writes in flight, waited for by Close

	mu       sync.Mutex
	handlers []*HTTPHandler // closed by Close
}

// New returns a gateway over the catalog in pool; Close ends its upstream sessions.
func New(pool *pgxpool.Pool, finder Finder, opts Options) *Gateway {
	if opts.BindLimit <= 0 {
		opts.BindLimit = 32
	}
	if opts.Version == "" {
		opts.Version = "devel"
	}
	if opts.ConnectTimeout <= 0 {
		opts.ConnectTimeout = DefaultConnectTimeout
	}
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = 30 * time.Second
	}
	if opts.UpstreamConcurrency <= 0 {
		opts.UpstreamConcurrency = 8
	}
	if opts.SessionIdle <= 0 {
		opts.SessionIdle = 30 * time.Minute
	}
	if opts.SessionsPerKey <= 0 {
		opts.SessionsPerKey = DefaultSessionsPerKey
	}
	if opts.HandshakeIdle <= 0 {
		opts.HandshakeIdle = DefaultHandshakeIdle
	}
	if opts.LabelWindow == 0 {
		opts.LabelWindow = DefaultLabelWindow
	}
	if opts.StreamWriteTimeout <= 0 {
		opts.StreamWriteTimeout = DefaultStreamWriteTimeout
	}
	if opts.StreamKeepAlive == 0 {
		opts.StreamKeepAlive = DefaultStreamKeepAlive
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Gateway{
		pool: pool, q: db.New(pool), finder: finder, opts: opts,
		upstreams: newUpstreamPool(opts.UpstreamConcurrency, mcpclient.Options{Commands: opts.Commands, Limits: mcpclient.Limits{MaxResponseBytes: opts.MaxResponseBytes}, Auth: opts.Auth}, opts.ConnectTimeout),
		log:       opts.Logger.With("component", "gateway"),
		labels:    labeler{slots: make(chan struct{}, maxLabelWrites)},
	}
}

// Close ends the in-memory MCP sessions of its HTTP handlers (their hanging SSE streams
// would otherwise hold up a graceful shutdown; the stored rows stay for other instances)
// and the upstream sessions (stopping stdio source processes), then waits for the label
// writes in flight (each bounded by labelTimeout). It may be called twice.
func (g *Gateway) Close() {
	g.mu.Lock()
	handlers := g.handlers
	g.mu.Unlock()
	for _, h := range handlers {
		h.Close()
	}
	g.upstreams.close()
	g.WaitLabels()
}

// WaitLabels waits for the implicit-label writes of the calls answered so far, each
// bounded by labelTimeout: once it returns, their labels are in search_labels, except
// those dropped or failed (logged).
func (g *Gateway) WaitLabels() { g.labelWG.Wait() }

// EndKeySessions closes the in-memory MCP sessions of a key this process just revoked (the
// revocation deleted their rows; other instances close theirs on their next sweep).
func (g *Gateway) EndKeySessions(keyID int64) {
	g.mu.Lock()
	handlers := g.handlers
	g.mu.Unlock()
	for _, h := range handlers {
		h.endKey(keyID)
	}
}

// Capabilities reports the active backends and the gateway's settings.
func (g *Gateway) Capabilities() Capabilities {
	tools := []string{toolFind}
	if g.opts.CallTool {
		tools = append(tools, toolCall)
	}
	if g.opts.UseTool {
		tools = append(tools, toolUse)
	}
	return Capabilities{
		Backends:       g.opts.Backends,
		Tools:          tools,
		CallProxying:   true,
		BindLimit:      g.opts.BindLimit,
		MaxFindLimit:   maxFindLimit,
		DefaultLimit:   defaultFindLimit,
		Versioning:     "content-sha256",
		SessionStorage: "postgresql",
	}
}

// allowed reports whether caller may use tools of source.
func allowed(c *auth.Caller, source string) bool {
	return c == nil || c.Sources == nil || slices.Contains(c.Sources, source)
}
