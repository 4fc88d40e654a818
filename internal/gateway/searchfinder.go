package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"

	"github.com/toolgate/toolgate/internal/search"
)

// SearchFinder answers find_tools with the same search as POST /search: the same SQL
// statement, the same retrieval log (with the MCP session id), the same caller limits.
type SearchFinder struct {
	Search *search.Service
	// Mode is the search mode find_tools uses (hybrid unless set).
	Mode search.Mode
}

// Find runs the search and returns the tools in MCP's shape.
func (f SearchFinder) Find(ctx context.Context, q FindRequest) (FindResult, error) {
	mode := f.Mode
	if mode == "" {
		mode = search.ModeHybrid
	}
	// find_tools reads the typed tool whatever the format; raw is asked for because the
	// retrieval log records the format, and it has always said raw for find_tools.
	resp, err := f.Search.Search(ctx, q.Caller, search.Request{
		Query: q.Query, K: q.Limit, Mode: mode, Format: search.FormatRaw, SessionID: q.SessionID,
		Endpoint: search.EndpointFindTools, ExplainTools: q.ExplainTools,
	})
	var invalid *search.InvalidRequestError
	if errors.As(err, &invalid) {
		return FindResult{}, &QueryError{Reason: invalid.Error()}
	}
	if err != nil {
		return FindResult{}, err
	}
	out := FindResult{SearchID: resp.SearchID, Tools: make([]FoundTool, 0, len(resp.Results)), Mode: string(resp.Mode), Profile: resp.Profile,
		Confidence: resp.Confidence, NoGoodMatch: resp.NoGoodMatch}
	for _, r := range resp.Results {
		out.Tools = append(out.Tools, foundTool(r))
	}
	for _, x := range resp.ExplainedTools {
		e := ToolExplanation{Name: x.Name, Returned: x.Returned, Rank: x.Rank, Score: x.Score, Reasons: make([]Reason, len(x.Reasons))}
		for i, r := range x.Reasons {
			e.Reasons[i] = Reason{Code: r.Code, Message: r.Message}
		}
		out.Explained = append(out.Explained, e)
	}
	return out, nil
}

// foundTool is the tool of a search result as find_tools serves it: named by its namespaced
// name, without a title when it has none.
func foundTool(r search.Result) FoundTool {
	t := r.Tool
	found := FoundTool{
		Name: t.Name, SourceName: t.Source, OriginalName: t.OriginalName, Description: t.Description,
		InputSchema: encoded(t.InputSchema), OutputSchema: optional(t.OutputSchema), Annotations: optional(t.Annotations),
		Version: r.Version, Confidence: r.Confidence,
	}
	if t.Title != nil {
		found.Title = *t.Title
	}
	return found
}

// encoded is m as a JSON encoder writes it (compact, with <, > and & escaped; null when m is
// empty), the bytes find_tools has always served.
func encoded(m json.RawMessage) json.RawMessage {
	if len(m) == 0 {
		return json.RawMessage("null")
	}
	var compact, out bytes.Buffer
	if err := json.Compact(&compact, m); err != nil {
		return m // never: the catalog stores these as jsonb
	}
	json.HTMLEscape(&out, compact.Bytes())
	return out.Bytes()
}

// optional is m encoded, or nil when the tool has none.
func optional(m json.RawMessage) json.RawMessage {
	if len(m) == 0 || string(m) == "null" {
		return nil
	}
	return encoded(m)
}
