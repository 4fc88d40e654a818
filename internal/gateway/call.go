package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"

	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/mcpclient"
	"github.com/toolgate/toolgate/internal/metrics"
	"github.com/toolgate/toolgate/internal/pgtext"
	"github.com/toolgate/toolgate/internal/tracing"
)

// Calls of retrieved tools: by name, through call_tool(name, arguments, version) or
// use_tool(query, params), proxied to the tool's source server after the caller, the
// version and the arguments are checked.

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
	res, terr := s.find(ctx, metrics.EndpointUseTool, in.Query, 1, nil)
	if terr != nil {
		return terr.result(), nil
	}
	if len(res.Tools) == 0 {
		return toolErrorf(CodeNoMatch, "no tool matched %q; rephrase the query", strings.TrimSpace(in.Query)).result(), nil
	}
	// Not s.call: the tool was picked by the search itself, not by the agent among the
	// results, so the call labels nothing.
	res2, _ := s.proxy(ctx, res.Tools[0].Name, in.Params, "")
	return res2, nil
}

// call is a call the agent made of a tool by its name (a bound tool, a catalog tool not in
// the list, or call_tool): proxied, then, when the name is a tool the caller may use,
// recorded as an implicit label of the session's latest find_tools that returned it (see
// label.go). The agent chose the tool whatever the call's outcome (invalid arguments, a
// stale version, a failing source), so every such call labels; success says how it went.
func (s *session) call(ctx context.Context, name string, rawArgs json.RawMessage, version string) *mcp.CallToolResult {
	name = s.catalogName(ctx, name)
	labelled := s.startLabel(s.searchCaller(ctx), name)
	res, source := s.proxy(ctx, name, rawArgs, version)
	labelled(source, !res.IsError)
	return res
}

// catalogName is the namespaced name of the tool the agent called name: name itself, or
// the tool whose function name (catalog.FunctionName, the name the session's list and
// find_tools show) it is. A name that resolves to nothing, or to a tool of a source the
// caller may not see, is returned as it is, for proxy to refuse: the refusal quotes the
// name the agent gave, so a hidden tool is told apart from no tool by nothing.
func (s *session) catalogName(ctx context.Context, name string) string {
	s.mu.Lock()
	bound := s.functions[name]
	s.mu.Unlock()
	if bound != "" {
		return bound
	}
	if _, mapped := catalog.MappedFunctionName(name); !mapped {
		return name
	}
	resolved, err := catalog.ResolveFunctionName(ctx, s.g.q, name)
	if err != nil {
		var nf *catalog.ToolNotFoundError
		if !errors.As(err, &nf) {
			s.g.log.Warn("resolve function name", "session", s.id, "name", name, "err", err)
		}
		return name
	}
	if source, _, _ := catalog.SplitNamespaced(resolved); !allowed(s.callerOf(ctx), source) {
		return name
	}
	return resolved
}

// proxy runs a catalog tool on its source server: it checks the caller may use it, the
// version, and the arguments against the tool's input schema, then proxies tools/call with
// the tool's original name. Every failure is a structured tool error. source is the tool's
// source when name is a tool the caller may use, whatever the outcome; "" otherwise.
func (s *session) proxy(ctx context.Context, name string, rawArgs json.RawMessage, version string) (_ *mcp.CallToolResult, source string) {
	if pgtext.Problem(name) != "" { // no tool has such a name, and the lookup would fail on it
		return toolErrorf(CodeUnknownTool, "no tool named %q; call find_tools to retrieve the tools you can use", name).result(), ""
	}
	tool, err := s.g.q.GetCallableTool(ctx, name)
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && !allowed(s.callerOf(ctx), tool.SourceName)) {
		return toolErrorf(CodeUnknownTool, "no tool named %q; call find_tools to retrieve the tools you can use", name).result(), ""
	}
	if err != nil {
		s.g.log.Error("load tool for call", "tool", name, "err", err)
		return toolErrorf(CodeInternal, "could not load tool %q; try again", name).result(), ""
	}
	source = tool.SourceName
	if version != "" && version != tool.ContentHash {
		return toolErrorf(CodeStaleVersion, "tool %q changed since you retrieved it (version %s, current %s); call find_tools again to re-fetch its schema before calling it",
			name, version, tool.ContentHash).result(), source
	}
	if !tool.SourceKind.IsMCP() {
		return toolErrorf(CodeNotCallable, "tool %q comes from a %s source, which has no server to call", name, tool.SourceKind).result(), source
	}
	args := map[string]any{}
	if len(rawArgs) > 0 && string(rawArgs) != "null" {
		if err := json.Unmarshal(rawArgs, &args); err != nil {
			return toolErrorf(CodeInvalidArguments, "arguments of %q must be a JSON object", name).result(), source
		}
	}
	if schema := s.schema(name, tool.ContentHash, tool.InputSchema); schema != nil {
		if err := schema.Validate(args); err != nil {
			return toolErrorf(CodeInvalidArguments, "arguments do not match the inputSchema of %q: %v", name, err).result(), source
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
			return toolErrorf(CodeUpstreamTimeout, "source %s did not answer within %s; try again later", tool.SourceName, s.g.opts.CallTimeout).result(), source
		}
		s.g.opts.Metrics.ObserveMCPProxy(tool.SourceName, metrics.MCPError, d)
		var tooLarge *mcpclient.ResponseTooLargeError
		if errors.As(err, &tooLarge) {
			return toolErrorf(CodeUpstreamTooLarge, "source %s answered with more than %d bytes, the most toolgate relays (TOOLGATE_MCP_MAX_RESPONSE_BYTES); ask the tool for less",
				tool.SourceName, tooLarge.Limit).result(), source
		}
		var refused *mcpclient.CommandNotAllowedError
		if errors.As(err, &refused) {
			// the command itself is the operator's configuration, not the caller's business
			return toolErrorf(CodeCommandNotAllowed, "source %s cannot be called: its command is not allowed by the operator's TOOLGATE_STDIO_COMMANDS", tool.SourceName).result(), source
		}
		return toolErrorf(CodeUpstreamError, "%s", upstreamMessage(tool.SourceName, err)).result(), source
	}
	// An isError result is the tool's own answer (bad input, not found upstream...), not a
	// failure of the proxy: the span stays OK and says so in an attribute.
	span.SetAttributes(attribute.Bool("toolgate.tool_error", res.IsError))
	tracing.End(span, nil)
	s.g.opts.Metrics.ObserveMCPProxy(tool.SourceName, map[bool]string{false: metrics.MCPOK, true: metrics.MCPToolError}[res.IsError], d)
	s.g.log.Debug("proxied call", "session", s.id, "tool", name, "source", tool.SourceName,
		"duration_ms", d.Milliseconds(), "is_error", res.IsError)
	return res, source
}
