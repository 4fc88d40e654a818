package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

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
	resp, err := f.Search.Search(ctx, q.Caller, search.Request{
		Query: q.Query, K: q.Limit, Mode: mode, Format: search.FormatRaw, SessionID: q.SessionID,
	})
	var invalid *search.InvalidRequestError
	if errors.As(err, &invalid) {
		return FindResult{}, &QueryError{Reason: invalid.Error()}
	}
	if err != nil {
		return FindResult{}, err
	}
	out := FindResult{SearchID: resp.SearchID, Tools: make([]FoundTool, 0, len(resp.Results))}
	for _, r := range resp.Results {
		var raw struct {
			Name         string          `json:"name"`
			OriginalName string          `json:"original_name"`
			Source       string          `json:"source"`
			Title        *string         `json:"title"`
			Description  string          `json:"description"`
			InputSchema  json.RawMessage `json:"input_schema"`
			OutputSchema json.RawMessage `json:"output_schema"`
			Annotations  json.RawMessage `json:"annotations"`
		}
		if err := json.Unmarshal(r.Tool, &raw); err != nil {
			return FindResult{}, fmt.Errorf("decode search result %s: %w", r.Name, err)
		}
		t := FoundTool{
			Name: raw.Name, SourceName: raw.Source, OriginalName: raw.OriginalName, Description: raw.Description,
			InputSchema: raw.InputSchema, OutputSchema: nonNull(raw.OutputSchema), Annotations: nonNull(raw.Annotations),
			Version: r.Version,
		}
		if raw.Title != nil {
			t.Title = *raw.Title
		}
		out.Tools = append(out.Tools, t)
	}
	return out, nil
}

func nonNull(m json.RawMessage) json.RawMessage {
	if string(m) == "null" {
		return nil
	}
	return m
}
