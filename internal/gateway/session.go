package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/jackc/pgx/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"

	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/mcpclient"
	"github.com/toolgate/toolgate/internal/metrics"
	"github.com/toolgate/toolgate/internal/pgtext"
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
		`"limit":{"type":"integer","description":"Maximum number of tools to return (default: 5)","default":5,"minimum":1,"maximum":50}},` +
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
	g      *Gateway
	id     string
	caller *auth.Caller
	server *mcp.Server

	bindMu sync.Mutex // serializes find_tools bindings of this session
	mu     sync.Mutex
	bound  map[string]*cachedTool // tools in the list, by namespaced name
	cache  map[string]*cachedTool // resolved schemas of tools called without being bound
}

type cachedTool struct {
	version string
	schema  *jsonschema.Resolved // nil when the tool's schema cannot be resolved
}

// newSession builds a session's server with the given tools already bound (a session
// rebuilt from the database).
func (g *Gateway) newSession(id string, caller *auth.Caller, bound []db.ListSessionToolsRow) *session {
	s := &session{g: g, id: id, caller: caller, bound: map[string]*cachedTool{}, cache: map[string]*cachedTool{}}
	s.server = mcp.NewServer(&mcp.Implementation{Name: "toolgate", Version: "1"}, &mcp.ServerOptions{
		Instructions: "Call find_tools with what you want to do before using any other tool. " +
			"The tools it returns are added to your tool list; call them by name" +
			map[bool]string{true: " or through call_tool(name, arguments, version).", false: "."}[g.opts.CallTool],
		Logger:             g.log,
		HasTools:           true,
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
	s.server.AddReceivingMiddleware(traceParent, s.routeUnlisted)
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
		name, sources := s.callerRow()
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		err = s.g.q.UpsertMCPSession(ctx, db.UpsertMCPSessionParams{ID: s.id, Caller: name, Sources: sources, State: state})
	}
	if err != nil {
		s.g.log.Error("store mcp session", "session", s.id, "err", err)
	}
}

// callerRow is the caller as stored with the session.
func (s *session) callerRow() (string, []string) {
	if s.caller == nil {
		return callerName(nil), nil
	}
	return s.caller.Name, s.caller.Sources
}

func callerName(c *auth.Caller) string {
	if c == nil {
		return "open"
	}
	return c.Name
}

// findTools is find_tools: search, bind the results into the session, return their schemas.
func (s *session) findTools(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in struct {
		Query string `json:"query"`
		Limit *int   `json:"limit"`
	}
	if err := decodeArgs(req.Params.Arguments, &in); err != nil {
		return toolErrorf(CodeInvalidArguments, "find_tools: %v", err).result(), nil
	}
	limit := defaultFindLimit
	if in.Limit != nil {
		limit = *in.Limit
	}
	res, terr := s.find(ctx, in.Query, limit)
	if terr != nil {
		return terr.result(), nil
	}
	s.bind(ctx, res.Tools)

	out := findOutput{SearchID: res.SearchID, Tools: make([]toolSchema, 0, len(res.Tools))}
	for _, t := range res.Tools {
		out.Tools = append(out.Tools, toolSchema{
			Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: t.InputSchema,
			OutputSchema: t.OutputSchema, Annotations: t.Annotations, Version: t.Version, Source: t.SourceName,
		})
	}
	switch {
	case len(out.Tools) == 0:
		out.Hint = "No tool matched; rephrase the query with other words for the capability you need."
	case s.g.opts.CallTool:
		out.Hint = "These tools are now in your tool list: call one by name, or through call_tool(name, arguments, version)."
	default:
		out.Hint = "These tools are now in your tool list: call one by name."
	}
	body, err := json.Marshal(out)
	if err != nil {
		return nil, err
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(body)}}, StructuredContent: out}, nil
}

type findOutput struct {
	SearchID int64        `json:"search_id"`
	Tools    []toolSchema `json:"tools"`
	Hint     string       `json:"hint"`
}

// toolSchema is a retrieved tool in MCP tools/list form, plus its version and source.
type toolSchema struct {
	Name         string          `json:"name"`
	Title        string          `json:"title,omitempty"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	Annotations  json.RawMessage `json:"annotations,omitempty"`
	Version      string          `json:"version"`
	Source       string          `json:"source"`
}

// find validates a query and runs the Finder. An empty query is refused here, so the
// whole catalog is never returned.
func (s *session) find(ctx context.Context, query string, limit int) (FindResult, *ToolError) {
	query = strings.TrimSpace(query)
	if query == "" {
		return FindResult{}, toolErrorf(CodeEmptyQuery, "query is empty: describe the capability you need")
	}
	if limit < 1 || limit > maxFindLimit {
		return FindResult{}, toolErrorf(CodeInvalidLimit, "limit must be from 1 to %d, got %d", maxFindLimit, limit)
	}
	res, err := s.g.finder.Find(ctx, FindRequest{Query: query, Limit: limit, Caller: s.caller, SessionID: s.id})
	var invalid *QueryError
	if errors.As(err, &invalid) {
		return FindResult{}, toolErrorf(CodeInvalidQuery, "%s", invalid.Reason)
	}
	if err != nil {
		s.g.log.Error("find_tools search", "session", s.id, "err", err)
		return FindResult{}, toolErrorf(CodeSearchFailed, "search failed; try again")
	}
	// The Finder limits results to the caller's sources; this keeps that true whatever
	// Finder is plugged in.
	kept := res.Tools[:0:0]
	for _, t := range res.Tools {
		if allowed(s.caller, t.SourceName) {
			kept = append(kept, t)
		}
	}
	res.Tools = kept
	return res, nil
}

// bind adds tools to the session's list, stored first so any instance sees the same list,
// keeping the newest BindLimit bindings. A failure to store is logged, not returned: the
// agent still gets the schemas and can use call_tool.
func (s *session) bind(ctx context.Context, tools []FoundTool) {
	if len(tools) == 0 {
		return
	}
	s.bindMu.Lock()
	defer s.bindMu.Unlock()
	var rows []db.ListSessionToolsRow
	err := pgx.BeginFunc(ctx, s.g.pool, func(tx pgx.Tx) error {
		q := s.g.q.WithTx(tx)
		name, sources := s.callerRow()
		if err := q.EnsureMCPSession(ctx, db.EnsureMCPSessionParams{ID: s.id, Caller: name, Sources: sources}); err != nil {
			return err
		}
		names := make([]string, len(tools))
		for i, t := range tools {
			names[i] = t.Name
		}
		if err := q.BindSessionTools(ctx, db.BindSessionToolsParams{SessionID: s.id, Names: names}); err != nil {
			return err
		}
		if err := q.TrimSessionTools(ctx, db.TrimSessionToolsParams{SessionID: s.id, Keep: int32(s.g.opts.BindLimit)}); err != nil {
			return err
		}
		var err error
		rows, err = q.ListSessionTools(ctx, s.id)
		return err
	})
	if err != nil {
		s.g.log.Error("bind tools to mcp session", "session", s.id, "err", err)
		return
	}
	s.sync(rows)
}

// refresh reloads the session's bound list from the database, where another instance
// serving the same session may have bound tools.
func (s *session) refresh(ctx context.Context) {
	s.bindMu.Lock()
	defer s.bindMu.Unlock()
	rows, err := s.g.q.ListSessionTools(ctx, s.id)
	if err != nil {
		s.g.log.Warn("reload mcp session tools", "session", s.id, "err", err)
		return
	}
	s.sync(rows)
}

// sync makes the server's bound tools equal rows; s.bindMu is held.
func (s *session) sync(rows []db.ListSessionToolsRow) {
	keep := make(map[string]bool, len(rows))
	for _, r := range rows {
		keep[r.Name] = true
	}
	s.mu.Lock()
	var drop []string
	for name := range s.bound {
		if !keep[name] {
			drop = append(drop, name)
			delete(s.bound, name)
		}
	}
	s.mu.Unlock()
	if len(drop) > 0 {
		s.server.RemoveTools(drop...)
	}
	for _, r := range rows {
		s.mu.Lock()
		have := s.bound[r.Name]
		s.mu.Unlock()
		if have != nil && have.version == r.ContentHash {
			continue
		}
		s.addBound(FoundTool{
			Name: r.Name, SourceName: r.SourceName, Title: deref(r.Title), Description: r.Description,
			InputSchema: r.InputSchema, OutputSchema: r.OutputSchema, Annotations: r.Annotations,
			Version: r.ContentHash,
		})
	}
}

// addBound puts a retrieved tool into the session's list; the SDK then sends the client
// notifications/tools/list_changed.
func (s *session) addBound(t FoundTool) {
	tool := &mcp.Tool{
		Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: objectSchema(t.InputSchema),
		Meta: mcp.Meta{"version": t.Version, "source": t.SourceName},
	}
	if len(t.OutputSchema) > 0 && string(t.OutputSchema) != "null" {
		tool.OutputSchema = objectSchema(t.OutputSchema)
	}
	if len(t.Annotations) > 0 && string(t.Annotations) != "null" {
		var a mcp.ToolAnnotations
		if json.Unmarshal(t.Annotations, &a) == nil {
			tool.Annotations = &a
		}
	}
	c := &cachedTool{version: t.Version, schema: s.g.resolve(t.Name, t.InputSchema)}
	s.mu.Lock()
	s.bound[t.Name] = c
	s.mu.Unlock()
	name := t.Name
	s.server.AddTool(tool, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return s.call(ctx, name, req.Params.Arguments, ""), nil
	})
}

// objectSchema returns a tool schema with "type":"object" stated. The catalog accepts a
// schema that leaves type out, but the SDK refuses (panics on) a tool whose schema does not
// say it, and MCP requires it.
func objectSchema(raw json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return json.RawMessage(`{"type":"object"}`)
	}
	if _, ok := m["type"]; ok {
		return raw
	}
	m["type"] = json.RawMessage(`"object"`)
	out, err := json.Marshal(m)
	if err != nil {
		return json.RawMessage(`{"type":"object"}`)
	}
	return out
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
	return s.bound[name] != nil
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

// callTool is call_tool(name, arguments, version).
func (s *session) callTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		Version   string          `json:"version"`
	}
	if err := decodeArgs(req.Params.Arguments, &in); err != nil {
		return toolErrorf(CodeInvalidArguments, "call_tool: %v", err).result(), nil
	}
	if strings.TrimSpace(in.Name) == "" {
		return toolErrorf(CodeInvalidArguments, "call_tool: name is required").result(), nil
	}
	return s.call(ctx, in.Name, in.Arguments, in.Version), nil
}

// useTool is use_tool(query, params): the best match for query, called with params.
func (s *session) useTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in struct {
		Query  string          `json:"query"`
		Params json.RawMessage `json:"params"`
	}
	if err := decodeArgs(req.Params.Arguments, &in); err != nil {
		return toolErrorf(CodeInvalidArguments, "use_tool: %v", err).result(), nil
	}
	res, terr := s.find(ctx, in.Query, 1)
	if terr != nil {
		return terr.result(), nil
	}
	if len(res.Tools) == 0 {
		return toolErrorf(CodeNoMatch, "no tool matched %q; rephrase the query", strings.TrimSpace(in.Query)).result(), nil
	}
	return s.call(ctx, res.Tools[0].Name, in.Params, ""), nil
}

// call runs a catalog tool on its source server: it checks the caller may use it, the
// version, and the arguments against the tool's input schema, then proxies tools/call with
// the tool's original name. Every failure is a structured tool error.
func (s *session) call(ctx context.Context, name string, rawArgs json.RawMessage, version string) *mcp.CallToolResult {
	if pgtext.Problem(name) != "" { // no tool has such a name, and the lookup would fail on it
		return toolErrorf(CodeUnknownTool, "no tool named %q; call find_tools to retrieve the tools you can use", name).result()
	}
	tool, err := s.g.q.GetCallableTool(ctx, name)
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && !allowed(s.caller, tool.SourceName)) {
		return toolErrorf(CodeUnknownTool, "no tool named %q; call find_tools to retrieve the tools you can use", name).result()
	}
	if err != nil {
		s.g.log.Error("load tool for call", "tool", name, "err", err)
		return toolErrorf(CodeInternal, "could not load tool %q; try again", name).result()
	}
	if version != "" && version != tool.ContentHash {
		return toolErrorf(CodeStaleVersion, "tool %q changed since you retrieved it (version %s, current %s); call find_tools again to re-fetch its schema before calling it",
			name, version, tool.ContentHash).result()
	}
	if !tool.SourceKind.IsMCP() {
		return toolErrorf(CodeNotCallable, "tool %q comes from a %s source, which has no server to call", name, tool.SourceKind).result()
	}
	args := map[string]any{}
	if len(rawArgs) > 0 && string(rawArgs) != "null" {
		if err := json.Unmarshal(rawArgs, &args); err != nil {
			return toolErrorf(CodeInvalidArguments, "arguments of %q must be a JSON object", name).result()
		}
	}
	if schema := s.schema(name, tool.ContentHash, tool.InputSchema); schema != nil {
		if err := schema.Validate(args); err != nil {
			return toolErrorf(CodeInvalidArguments, "arguments do not match the inputSchema of %q: %v", name, err).result()
		}
	}

	ctx, cancel := context.WithTimeout(ctx, s.g.opts.CallTimeout)
	defer cancel()
	start := time.Now()
	ctx, span := s.g.opts.Tracer.MCPProxy(ctx, tool.SourceName, "tools/call", name)
	res, err := s.g.upstreams.call(ctx, tool.SourceName, tool.SourceKind, tool.SourceConfig, tool.OriginalName, args)
	d := time.Since(start)
	if err != nil {
		tracing.End(span, err)
		s.g.log.Warn("proxied call failed", "session", s.id, "tool", name, "source", tool.SourceName,
			"duration_ms", d.Milliseconds(), "err", err)
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			s.g.opts.Metrics.ObserveMCPProxy(tool.SourceName, metrics.MCPTimeout, d)
			return toolErrorf(CodeUpstreamTimeout, "source %s did not answer within %s; try again later", tool.SourceName, s.g.opts.CallTimeout).result()
		}
		s.g.opts.Metrics.ObserveMCPProxy(tool.SourceName, metrics.MCPError, d)
		var refused *mcpclient.CommandNotAllowedError
		if errors.As(err, &refused) {
			// the command itself is the operator's configuration, not the caller's business
			return toolErrorf(CodeCommandNotAllowed, "source %s cannot be called: its command is not allowed by the operator's TOOLGATE_STDIO_COMMANDS", tool.SourceName).result()
		}
		return toolErrorf(CodeUpstreamError, "%s", upstreamMessage(tool.SourceName, err)).result()
	}
	// An isError result is the tool's own answer (bad input, not found upstream...), not a
	// failure of the proxy: the span stays OK and says so in an attribute.
	span.SetAttributes(attribute.Bool("toolgate.tool_error", res.IsError))
	tracing.End(span, nil)
	s.g.opts.Metrics.ObserveMCPProxy(tool.SourceName, map[bool]string{false: metrics.MCPOK, true: metrics.MCPToolError}[res.IsError], d)
	s.g.log.Debug("proxied call", "session", s.id, "tool", name, "source", tool.SourceName,
		"duration_ms", d.Milliseconds(), "is_error", res.IsError)
	return res
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

// schema returns the resolved input schema of a tool at a version, from the session's
// cache (the bound list first).
func (s *session) schema(name, version string, raw json.RawMessage) *jsonschema.Resolved {
	s.mu.Lock()
	c := s.bound[name]
	if c == nil || c.version != version {
		c = s.cache[name]
	}
	s.mu.Unlock()
	if c != nil && c.version == version {
		return c.schema
	}
	c = &cachedTool{version: version, schema: s.g.resolve(name, raw)}
	s.mu.Lock()
	// The cache of unbound tools is small and per session; past the bind limit it
	// starts over rather than growing with every distinct tool called.
	if len(s.cache) >= s.g.opts.BindLimit {
		clear(s.cache)
	}
	s.cache[name] = c
	s.mu.Unlock()
	return c.schema
}

// resolve compiles a tool's input schema for validation. A schema the validator cannot
// handle is logged and skipped: the source server still validates its own input.
func (g *Gateway) resolve(name string, raw json.RawMessage) *jsonschema.Resolved {
	var sch jsonschema.Schema
	if err := json.Unmarshal(raw, &sch); err != nil {
		g.log.Warn("tool input schema not parsable; arguments go unvalidated", "tool", name, "err", err)
		return nil
	}
	r, err := sch.Resolve(nil)
	if err != nil {
		g.log.Warn("tool input schema not resolvable; arguments go unvalidated", "tool", name, "err", err)
		return nil
	}
	return r
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
