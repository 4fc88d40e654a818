package search

import (
	"encoding/json"

	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/db"
)

// Tool is the definition of a result's tool, kept typed until it leaves the service: its
// JSON (MarshalJSON) is the tool in Format's shape, and code in this module (the MCP
// gateway) reads the fields themselves.
type Tool struct {
	// Format is the shape the tool is marshalled in: the request's format.
	Format Format
	// Name is the namespaced catalog name (source__original); FunctionName is the name the
	// model APIs take (catalog.FunctionName: Name itself unless it has a "." or more than 64
	// characters, which those APIs refuse).
	Name         string
	FunctionName string
	OriginalName string
	Source       string
	Title        *string // nil when the tool has none
	Description  string
	// The schemas and annotations as stored; OutputSchema and Annotations are empty when the
	// tool has none.
	InputSchema  json.RawMessage
	OutputSchema json.RawMessage
	Annotations  json.RawMessage
}

// toolOf is the tool of a result row, to be rendered in format f.
func toolOf(f Format, row db.SearchRow) Tool {
	name := deref(row.Name)
	return Tool{
		Format: f, Name: name, FunctionName: catalog.FunctionName(name), OriginalName: deref(row.OriginalName),
		Source: deref(row.Source), Title: row.Title, Description: deref(row.Description),
		InputSchema: row.InputSchema, OutputSchema: row.OutputSchema, Annotations: row.Annotations,
	}
}

// MarshalJSON renders the tool in t.Format. In the formats a model API takes (openai,
// anthropic, mcp) the name is the function name; raw keeps the namespaced name. The
// result's own `name` is always the namespaced one, so each answer maps one to the other.
func (t Tool) MarshalJSON() ([]byte, error) {
	switch t.Format {
	case FormatOpenAI:
		return json.Marshal(openAITool{Type: "function", Function: openAIFunction{
			Description: t.Description, Name: t.FunctionName, Parameters: t.InputSchema}})
	case FormatAnthropic:
		return json.Marshal(anthropicTool{Description: t.Description, InputSchema: t.InputSchema, Name: t.FunctionName})
	case FormatOpenAIToolSearch:
		return json.Marshal(ResponsesFunction{Type: "function", Name: t.FunctionName, Description: t.Description,
			Parameters: t.InputSchema, DeferLoading: true})
	case FormatAnthropicToolReference:
		return json.Marshal(ToolReference{Type: "tool_reference", ToolName: t.FunctionName})
	case FormatMCP:
		return json.Marshal(mcpTool{Annotations: t.Annotations, Description: t.Description, InputSchema: t.InputSchema,
			Name: t.FunctionName, OutputSchema: t.OutputSchema, Title: t.Title})
	default: // FormatRaw
		return json.Marshal(rawTool{Annotations: nullable(t.Annotations), Description: t.Description,
			InputSchema: t.InputSchema, Name: t.Name, OriginalName: t.OriginalName,
			OutputSchema: nullable(t.OutputSchema), Source: t.Source, Title: t.Title})
	}
}

// The shapes of the formats. Their fields are in the alphabetical order of their JSON keys,
// the order the answers have always had.

type openAITool struct {
	Function openAIFunction `json:"function"`
	Type     string         `json:"type"`
}

type openAIFunction struct {
	Description string          `json:"description"`
	Name        string          `json:"name"`
	Parameters  json.RawMessage `json:"parameters"`
}

type anthropicTool struct {
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
	Name        string          `json:"name"`
}

// ResponsesFunction is a function tool of OpenAI's Responses API, deferred: loaded by tool
// search (FunctionTool in the openai package's responses types).
type ResponsesFunction struct {
	Type         string          `json:"type"` // "function"
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	Parameters   json.RawMessage `json:"parameters"`
	DeferLoading bool            `json:"defer_loading"`
}

// ToolReference is the Anthropic Messages API block that loads a deferred tool by name
// (ToolReferenceBlockParam in @anthropic-ai/sdk).
type ToolReference struct {
	Type     string `json:"type"` // "tool_reference"
	ToolName string `json:"tool_name"`
}

// mcpTool leaves out what the tool does not have, as MCP's tools/list does.
type mcpTool struct {
	Annotations  json.RawMessage `json:"annotations,omitempty"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	Name         string          `json:"name"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	Title        *string         `json:"title,omitempty"`
}

// rawTool has every field, null when the tool does not have it.
type rawTool struct {
	Annotations  json.RawMessage `json:"annotations"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"input_schema"`
	Name         string          `json:"name"`
	OriginalName string          `json:"original_name"`
	OutputSchema json.RawMessage `json:"output_schema"`
	Source       string          `json:"source"`
	Title        *string         `json:"title"`
}

// nullable is m, or nil (JSON null) when m is empty: an empty RawMessage is no JSON.
func nullable(m json.RawMessage) json.RawMessage {
	if len(m) == 0 {
		return nil
	}
	return m
}
