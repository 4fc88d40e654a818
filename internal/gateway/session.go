package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/propagation"

	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/tracing"
)

const (
	toolFind = "find_tools"
	toolCall = "call_tool"
	toolUse  = "use_tool"

	defaultFindLimit = 5
	maxFindLimit     = 50

	capabilitiesURI = "toolgate://capabilities"
)

var (
	findToolsSchema = json.RawMessage(`{"type":"object","properties":{` +
		`"query":{"type":"string","description":"Natural language description of what you want to do"},` +
		`"limit":{"type":"integer","description":"Maximum number of tools to return (default: 5)","default":5,"minimum":1,"maximum":50},` +
		`"explain_tools":{"type":"array","items":{"type":"string"},"maxItems":10,"description":"Names of tools you expected (as find_tools or your tool list names them): for each, whether this search returned it, its rank and score, and why it was not returned"}},` +
		`"required":["query"]}`)
	callToolSchema = json.RawMessage(`{"type":"object","properties":{` +
		`"name":{"type":"string","description":"The name of a tool returned by find_tools"},` +
		`"arguments":{"type":"object","description":"Arguments matching the tool's inputSchema"},` +
		`"version":{"type":"string","description":"The version find_tools returned with the tool; a changed tool is refused so you re-fetch it"}},` +
		`"required":["name"]}`)
	useToolSchema = json.RawMessage(`{"type":"object","properties":{` +
		`"query":{"type":"string","description":"What you want to do"},` +
		`"params":{"type":"object","description":"Parameters to pass to the matched tool"}},` +
		`"required":["query","params"]}`)
)

// session is one MCP session: its own Server, whose tool list is the meta-tools plus the
// tools find_tools bound into it. The bound list doubles as the session's schema cache.
type session struct {
	g  *Gateway
	id string
	// owner is the caller that opened the session (or the one whose request rebuilt it,
	// which has the same key): its key id owns the session, and its name and sources are
	// stored with it. Methods act for the caller of the request carrying them
	// (callerOf), never for owner.
	owner  *auth.Caller
	server *mcp.Server
	// stored is set once the session has a row; only then does the sweep check that the
	// row still exists (a revoked key's sessions are deleted).
	stored atomic.Bool

	bindMu sync.Mutex // serializes find_tools bindings of this session
	mu     sync.Mutex
	bound  map[string]*cachedTool // tools in the list, by namespaced name
	// functions maps the names the list shows (catalog.FunctionName) to namespaced names.
	functions map[string]string
	cache     map[string]*cachedTool // resolved schemas of tools called without being bound
}

type cachedTool struct {
	version string
	schema  *jsonschema.Resolved // nil when the tool's schema cannot be resolved
}

// newSession builds a session's server with the given tools already bound (a session
// rebuilt from the database).
func (g *Gateway) newSession(id string, caller *auth.Caller, bound []db.ListSessionToolsRow) *session {
	s := &session{g: g, id: id, owner: caller, bound: map[string]*cachedTool{}, functions: map[string]string{}, cache: map[string]*cachedTool{}}
	s.server = mcp.NewServer(&mcp.Implementation{Name: "toolgate", Version: g.opts.Version}, &mcp.ServerOptions{
		Instructions: "Call find_tools with what you want to do before using any other tool. " +
			"The tools it returns are added to your tool list; call them by name" +
			map[bool]string{true: " or through call_tool(name, arguments, version).", false: "."}[g.opts.CallTool],
		Logger: g.log,
		// Tools, with list changes, from the start; no logging: the gateway sends its
		// clients no log messages (and the protocol has deprecated them).
		Capabilities:       &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}},
		InitializedHandler: s.persist,
	})
	s.server.AddTool(&mcp.Tool{
		Name:        toolFind,
		Description: "Search for available tools by capability. Returns tool schemas matching the query. Call this before using any tool you haven't retrieved yet.",
		InputSchema: findToolsSchema,
	}, s.findTools)
	if g.opts.CallTool {
		s.server.AddTool(&mcp.Tool{
			Name:        toolCall,
			Description: "Call a tool returned by find_tools by its name, with arguments matching its inputSchema.",
			InputSchema: callToolSchema,
		}, s.callTool)
	}
	if g.opts.UseTool {
		s.server.AddTool(&mcp.Tool{
			Name:        toolUse,
			Description: "Find and execute a tool in a single step.",
			InputSchema: useToolSchema,
		}, s.useTool)
	}
	s.server.AddResource(&mcp.Resource{
		URI: capabilitiesURI, Name: "capabilities", MIMEType: "application/json",
		Description: "Active retrieval backends and gateway settings",
	}, g.readCapabilities)
	s.server.AddReceivingMiddleware(traceParent, requestCaller, s.routeUnlisted)
	for _, r := range bound {
		s.addBound(FoundTool{
			Name: r.Name, SourceName: r.SourceName, Title: deref(r.Title), Description: r.Description,
			InputSchema: r.InputSchema, OutputSchema: r.OutputSchema, Annotations: r.Annotations,
			Version: r.ContentHash,
		})
	}
	return s
}

func (g *Gateway) readCapabilities(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	body, err := json.Marshal(g.Capabilities())
	if err != nil {
		return nil, err
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{
		URI: capabilitiesURI, MIMEType: "application/json", Text: string(body),
	}}}, nil
}

// persist stores the session once the client finished the initialize handshake, so another
// instance can rebuild it.
func (s *session) persist(ctx context.Context, req *mcp.InitializedRequest) {
	state, err := json.Marshal(&mcp.ServerSessionState{
		InitializeParams:  req.Session.InitializeParams(),
		InitializedParams: &mcp.InitializedParams{},
		LogLevel:          "info",
	})
	if err == nil {
		name, key, sources := s.ownerRow()
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		err = s.g.q.UpsertMCPSession(ctx, db.UpsertMCPSessionParams{ID: s.id, Caller: name, CallerKeyID: key, Sources: sources, State: state})
	}
	if err != nil {
		s.g.log.Error("store mcp session", "session", s.id, "err", err)
		return
	}
	s.stored.Store(true)
}

// callerOf is the caller of the request a method runs for: the one requestCaller put in
// ctx, or, for a transport that carries none (stdio, in memory), the session's owner.
func (s *session) callerOf(ctx context.Context) *auth.Caller {
	if c, ok := ctx.Value(requestCallerKey{}).(requestCallerValue); ok {
		return c.caller
	}
	return s.owner
}

// searchCaller is the caller a method's searches run for: the request's, or in open mode
// (no caller) the open caller, who sees every source.
func (s *session) searchCaller(ctx context.Context) auth.Caller {
	c := s.callerOf(ctx)
	if c == nil {
		return auth.Caller{Name: callerName(nil)}
	}
	return *c
}

// ownerRow is the owner as stored with the session: its name, its key id (NULL without a
// key) and its sources.
func (s *session) ownerRow() (string, pgtype.Int8, []string) {
	if s.owner == nil {
		return callerName(nil), pgtype.Int8{}, nil
	}
	return s.owner.Name, pgtype.Int8{Int64: s.owner.KeyID, Valid: s.owner.KeyID != 0}, s.owner.Sources
}

func callerName(c *auth.Caller) string {
	if c == nil {
		return "open"
	}
	return c.Name
}

// keyID is the id of c's key; 0 for a caller without a key (open mode, stdio).
func keyID(c *auth.Caller) int64 {
	if c == nil {
		return 0
	}
	return c.KeyID
}

// listed reports whether name is in the session's tool list.
func (s *session) listed(name string) bool {
	switch name {
	case toolFind:
		return true
	case toolCall:
		return s.g.opts.CallTool
	case toolUse:
		return s.g.opts.UseTool
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.functions[name] != ""
}

// routeUnlisted refreshes the bound list before tools/list (another instance may have
// bound tools to this session) and answers tools/call of a name not in the session's list:
// a catalog tool (dropped from the binding, or retrieved in another session) is still
// proxied, anything else gets a structured unknown_tool error instead of a protocol error.
func (s *session) routeUnlisted(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "tools/list" {
			s.refresh(ctx)
		}
		if method != "tools/call" {
			return next(ctx, method, req)
		}
		call, ok := req.(*mcp.CallToolRequest)
		if !ok || call.Params == nil || s.listed(call.Params.Name) {
			return next(ctx, method, req)
		}
		return s.call(ctx, call.Params.Name, call.Params.Arguments, ""), nil
	}
}

// traceParent makes a request's spans children of the HTTP request that carried it. The
// SDK runs every method on the session's context, which outlives the request that opened
// the session, and gives handlers only the carrying request's headers; HTTPHandler writes
// its server span's trace context into those headers (withTraceHeader).
func traceParent(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if extra := req.GetExtra(); extra != nil && extra.Header != nil {
			ctx = tracing.Propagator().Extract(ctx, propagation.HeaderCarrier(extra.Header))
		}
		return next(ctx, method, req)
	}
}

// requestCallerInfo is the key of the caller in the TokenInfo the HTTP handler attaches to
// every request it passes to the SDK transport (see callerTokenInfo in http.go).
const requestCallerInfo = "toolgate.caller"

type requestCallerKey struct{}

// requestCallerValue wraps the caller so that a nil caller (open mode) is still "set".
type requestCallerValue struct{ caller *auth.Caller }

// requestCaller puts in ctx the caller of the HTTP request that carried the message. The
// SDK runs methods on the session's context, made when the session was opened: the caller
// in it is the opener's, and a session outlives the key checks of that request. The SDK
// copies the TokenInfo of each HTTP request's context into the RequestExtra of each message
// that request carries, so the caller read here is per message, whatever other requests
// of the session run at the same time.
func requestCaller(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if extra := req.GetExtra(); extra != nil && extra.TokenInfo != nil {
			if c, ok := extra.TokenInfo.Extra[requestCallerInfo].(*auth.Caller); ok {
				ctx = context.WithValue(ctx, requestCallerKey{}, requestCallerValue{caller: c})
			}
		}
		return next(ctx, method, req)
	}
}

// decodeArgs reads a meta-tool's arguments object.
func decodeArgs(raw json.RawMessage, v any) error {
	if len(raw) == 0 || string(raw) == "null" {
		raw = json.RawMessage(`{}`)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("arguments do not match the input schema: %v", err)
	}
	return nil
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
