package search

import (
	"encoding/json"

	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/db"
)

// formatTool renders the tool of a result row in format f. In the formats a model API
// takes (openai, anthropic, mcp) the name is the tool's function name
// (catalog.FunctionName: the namespaced name itself unless it has a "." or more than 64
// characters, which those APIs refuse); raw keeps the namespaced name. The result's own
// `name` is always the namespaced one, so each answer maps one to the other.
func formatTool(f Format, row db.SearchRow) (json.RawMessage, error) {
	name, desc := deref(row.Name), deref(row.Description)
	if f != FormatRaw {
		name = catalog.FunctionName(name)
	}
	schema := row.InputSchema
	var v any
	switch f {
	case FormatOpenAI:
		v = map[string]any{"type": "function", "function": map[string]any{
			"name": name, "description": desc, "parameters": schema}}
	case FormatAnthropic:
		v = map[string]any{"name": name, "description": desc, "input_schema": schema}
	case FormatMCP:
		m := map[string]any{"name": name, "description": desc, "inputSchema": schema}
		if row.Title != nil {
			m["title"] = *row.Title
		}
		if len(row.OutputSchema) > 0 {
			m["outputSchema"] = row.OutputSchema
		}
		if len(row.Annotations) > 0 {
			m["annotations"] = row.Annotations
		}
		v = m
	default: // FormatRaw
		v = map[string]any{"name": name, "original_name": deref(row.OriginalName), "source": deref(row.Source),
			"title": row.Title, "description": desc, "input_schema": schema,
			"output_schema": nullable(row.OutputSchema), "annotations": nullable(row.Annotations)}
	}
	return json.Marshal(v)
}

func nullable(m json.RawMessage) any {
	if len(m) == 0 {
		return nil
	}
	return m
}
