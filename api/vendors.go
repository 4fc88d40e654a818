package api

import (
	"encoding/json"
	"net/http"
	"slices"

	"github.com/labstack/echo/v4"

	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/search"
	"github.com/toolgate/toolgate/internal/sources"
)

// The model vendors' own tool search, served by toolgate (docs/vendors.md): POST /search
// with format openai_tool_search or anthropic_tool_reference answers with the item or block
// the application hands back to the vendor, and GET /v1/tools/export gives the deferred
// tool definitions the application registers with the vendor, under the same names.

// searchIDHeader carries the search's id (for POST /search/{id}/feedback) beside an answer
// whose body is a vendor's shape, which has no room for it.
const searchIDHeader = "Toolgate-Search-Id"

// maxExportTools is how many tools one export holds at most: a larger catalog is exported
// source by source (?source=).
const maxExportTools = 10000

// searchToolName is the name of the custom search tool of the Anthropic export. Every
// catalog tool's name has "__" (source__original), so no catalog tool has this one.
const searchToolName = "search_tools"

const searchToolDescription = "Search the deferred tools by what they do and load the ones that match. " +
	"Describe the task in plain words."

// searchToolParameters is the JSON Schema of the search tool's input in both exports: the
// query the application passes to POST /search.
var searchToolParameters = json.RawMessage(`{"type":"object","properties":{"query":{"type":"string",` +
	`"description":"What the tool must do, in plain words"}},"required":["query"]}`)

// toolSearchOutput is the tool_search_output input item of OpenAI's Responses API
// (ResponseToolSearchOutputItemParam in the openai package): the answer of a client-executed
// tool_search call.
type toolSearchOutput struct {
	Type      string               `json:"type"`      // "tool_search_output"
	Execution string               `json:"execution"` // "client"
	CallID    *string              `json:"call_id"`   // the tool_search_call's call_id; null when not given
	Status    string               `json:"status"`    // "completed"
	Tools     []responsesNamespace `json:"tools"`
}

// responsesNamespace is a namespace tool of the Responses API (NamespaceTool): a source's
// tools under the source's name.
type responsesNamespace struct {
	Type        string `json:"type"` // "namespace"
	Name        string `json:"name"`
	Description string `json:"description"`
	Tools       []any  `json:"tools"` // search.Tool or search.ResponsesFunction
}

// toolResult is the tool_result block of Anthropic's Messages API (ToolResultBlockParam in
// @anthropic-ai/sdk) whose content is tool_reference blocks: the answer of a custom tool
// search.
type toolResult struct {
	Type      string        `json:"type"` // "tool_result"
	ToolUseID string        `json:"tool_use_id"`
	Content   []search.Tool `json:"content"`
}

// namespaceDescription is the description of source's namespace, the same in an export and
// in every answer.
func namespaceDescription(source string) string {
	return "Tools of the " + source + " source."
}

// vendorAnswer is the body of a search answered in a vendor's format, and whether the
// format is one.
func vendorAnswer(req search.Request, resp search.Response) (any, bool) {
	switch resp.Format {
	case search.FormatOpenAIToolSearch:
		out := toolSearchOutput{Type: "tool_search_output", Execution: "client", Status: "completed",
			Tools: []responsesNamespace{}}
		if req.CallID != "" {
			out.CallID = &req.CallID
		}
		at := map[string]int{} // source → its namespace's index, in the order of their first result
		for _, r := range resp.Results {
			i, ok := at[r.Source]
			if !ok {
				i = len(out.Tools)
				at[r.Source] = i
				out.Tools = append(out.Tools, responsesNamespace{Type: "namespace", Name: r.Source,
					Description: namespaceDescription(r.Source), Tools: []any{}})
			}
			out.Tools[i].Tools = append(out.Tools[i].Tools, r.Tool)
		}
		return out, true
	case search.FormatAnthropicToolReference:
		out := toolResult{Type: "tool_result", ToolUseID: req.CallID, Content: make([]search.Tool, len(resp.Results))}
		for i, r := range resp.Results {
			out.Content[i] = r.Tool
		}
		return out, true
	}
	return nil, false
}

// anthropicDeferredTool is a custom tool of the Messages API (Tool in @anthropic-ai/sdk);
// defer_loading keeps it out of the model's context until a tool_reference loads it.
type anthropicDeferredTool struct {
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"input_schema"`
	DeferLoading bool            `json:"defer_loading,omitempty"`
}

// responsesToolSearch is the Responses API's tool_search tool (ToolSearchTool), executed by
// the client: the application answers its calls with POST /search.
type responsesToolSearch struct {
	Type        string          `json:"type"`      // "tool_search"
	Execution   string          `json:"execution"` // "client"
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// exportTools answers GET /v1/tools/export?format=openai|anthropic[&source=]: the `tools`
// of a vendor request, every tool a search of the caller can return deferred, and the search
// tool that finds them through POST /search.
func (s *Server) exportTools(c echo.Context) error {
	format := c.QueryParam("format")
	if format != "openai" && format != "anthropic" {
		return badRequest("format %q: want openai or anthropic", format)
	}
	caller, err := requestCaller(c)
	if err != nil {
		return err
	}
	visible := caller.Sources
	if src := c.QueryParam("source"); src != "" {
		if visible != nil && !slices.Contains(visible, src) {
			return &sources.SourceNotFoundError{Name: src}
		}
		if _, err := sources.ByName(c.Request().Context(), db.New(s.deps.Pool), src); err != nil {
			return err
		}
		visible = []string{src}
	}
	rows, err := db.New(s.deps.Pool).ExportTools(c.Request().Context(), db.ExportToolsParams{Sources: visible,
		Lim: maxExportTools + 1})
	if err != nil {
		return err
	}
	if len(rows) > maxExportTools {
		return badRequest("the export has more than %d tools: export it source by source (?source=)", maxExportTools)
	}
	tools := []any{}
	if format == "anthropic" {
		for _, r := range rows {
			tools = append(tools, anthropicDeferredTool{Name: catalog.FunctionName(r.Name), Description: r.Description,
				InputSchema: r.InputSchema, DeferLoading: true})
		}
		tools = append(tools, anthropicDeferredTool{Name: searchToolName, Description: searchToolDescription,
			InputSchema: searchToolParameters})
	} else {
		var ns *responsesNamespace
		for _, r := range rows {
			if ns == nil || ns.Name != r.Source {
				tools = append(tools, &responsesNamespace{Type: "namespace", Name: r.Source,
					Description: namespaceDescription(r.Source), Tools: []any{}})
				ns = tools[len(tools)-1].(*responsesNamespace)
			}
			ns.Tools = append(ns.Tools, search.ResponsesFunction{Type: "function", Name: catalog.FunctionName(r.Name),
				Description: r.Description, Parameters: r.InputSchema, DeferLoading: true})
		}
		tools = append(tools, responsesToolSearch{Type: "tool_search", Execution: "client",
			Description: searchToolDescription, Parameters: searchToolParameters})
	}
	return c.JSON(http.StatusOK, map[string]any{"tools": tools})
}
