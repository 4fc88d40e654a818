package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/metrics"
)

// find_tools and the session's tool list: a search, its results bound into the list (stored
// first, so that every instance serving the session lists the same tools), the list
// reloaded from the database before tools/list.

// findTools is find_tools: search, bind the results into the session, return their schemas.
func (s *session) findTools(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in struct {
		Query        string   `json:"query"`
		Limit        *int     `json:"limit"`
		ExplainTools []string `json:"explain_tools"`
	}
	if err := decodeArgs(req.Params.Arguments, &in); err != nil {
		s.g.opts.Metrics.ObserveFindTools(metrics.FindToolsRefused)
		return toolErrorf(CodeInvalidArguments, "find_tools: %v", err).result(), nil
	}
	limit := defaultFindLimit
	if in.Limit != nil {
		limit = *in.Limit
	}
	res, terr := s.find(ctx, metrics.EndpointFindTools, in.Query, limit, in.ExplainTools)
	switch {
	case terr == nil:
		s.g.opts.Metrics.ObserveFindTools(metrics.FindToolsOK)
	case terr.Code == CodeSearchFailed:
		s.g.opts.Metrics.ObserveFindTools(metrics.FindToolsError)
	default:
		s.g.opts.Metrics.ObserveFindTools(metrics.FindToolsRefused)
	}
	if terr != nil {
		return terr.result(), nil
	}
	s.bind(ctx, res.Tools)

	out := findOutput{SearchID: res.SearchID, Tools: make([]toolSchema, 0, len(res.Tools)), Confidence: res.Confidence, NoGoodMatch: res.NoGoodMatch,
		ExplainedTools: res.Explained}
	for _, t := range res.Tools {
		out.Tools = append(out.Tools, toolSchema{
			Name: catalog.FunctionName(t.Name), Title: t.Title, Description: t.Description, InputSchema: t.InputSchema,
			OutputSchema: t.OutputSchema, Annotations: t.Annotations, Version: t.Version, Source: t.SourceName, Confidence: t.Confidence,
		})
	}
	switch {
	case len(out.Tools) == 0:
		out.Hint = "No tool matched; rephrase the query with other words for the capability you need."
	case out.NoGoodMatch:
		out.Hint = "No tool matched well (low confidence): these are guesses. Rephrase the query with other words for the capability you need, or tell the user no tool fits."
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
	// Confidence is how likely the first tool is one the request needs (0 to 1); below
	// search.ConfidenceThreshold, NoGoodMatch: the tools are guesses.
	Confidence  float64 `json:"confidence"`
	NoGoodMatch bool    `json:"no_good_match"`
	Hint        string  `json:"hint"`
	// ExplainedTools answers the call's explain_tools (absent when it named none).
	ExplainedTools []ToolExplanation `json:"explained_tools,omitempty"`
}

// toolSchema is a retrieved tool in MCP tools/list form (named as it is listed: by its
// function name), plus its version and source.
type toolSchema struct {
	Name         string          `json:"name"`
	Title        string          `json:"title,omitempty"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	Annotations  json.RawMessage `json:"annotations,omitempty"`
	Version      string          `json:"version"`
	Source       string          `json:"source"`
	Confidence   float64         `json:"confidence"`
}

// find validates a query and runs the Finder, explaining the tools named in explain; the
// search it answers is counted under endpoint (the meta-tool: metrics.EndpointFindTools or
// EndpointUseTool). An empty query is refused here, so the whole catalog is never returned.
func (s *session) find(ctx context.Context, endpoint, query string, limit int, explain []string) (FindResult, *ToolError) {
	query = strings.TrimSpace(query)
	if query == "" {
		return FindResult{}, toolErrorf(CodeEmptyQuery, "query is empty: describe the capability you need")
	}
	if limit < 1 || limit > maxFindLimit {
		return FindResult{}, toolErrorf(CodeInvalidLimit, "limit must be from 1 to %d, got %d", maxFindLimit, limit)
	}
	res, err := s.g.finder.Find(ctx, FindRequest{Query: query, Limit: limit, Caller: s.searchCaller(ctx), SessionID: s.id,
		ExplainTools: explain})
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
	caller := s.callerOf(ctx)
	for _, t := range res.Tools {
		if allowed(caller, t.SourceName) {
			kept = append(kept, t)
		}
	}
	res.Tools = kept
	s.g.opts.Metrics.ObserveSearchServed(endpoint, res.Mode, res.Profile, len(kept), res.NoGoodMatch)
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
		name, key, sources := s.ownerRow()
		if err := q.EnsureMCPSession(ctx, db.EnsureMCPSessionParams{ID: s.id, Caller: name, CallerKeyID: key, Sources: sources}); err != nil {
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
	s.stored.Store(true)
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
			fn := catalog.FunctionName(name)
			drop = append(drop, fn)
			delete(s.bound, name)
			delete(s.functions, fn)
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
// notifications/tools/list_changed. The tool is listed under its function name
// (catalog.FunctionName): hosts hand the list to model APIs that refuse a "." or more than
// 64 characters.
func (s *session) addBound(t FoundTool) {
	fn := catalog.FunctionName(t.Name)
	tool := &mcp.Tool{
		Name: fn, Title: t.Title, Description: t.Description, InputSchema: objectSchema(t.InputSchema),
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
	s.functions[fn] = t.Name
	s.mu.Unlock()
	name := t.Name
	s.server.AddTool(tool, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return s.call(ctx, name, req.Params.Arguments, ""), nil
	})
}
