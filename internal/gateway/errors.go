package gateway

import (
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Codes of the structured tool errors the agent receives (isError results whose text and
// structured content are {"code","message"}).
const (
	CodeUnknownTool      = "unknown_tool"
	CodeEmptyQuery       = "empty_query"
	CodeInvalidLimit     = "invalid_limit"
	CodeInvalidQuery     = "invalid_query" // a query the search cannot take: too long, or not text
	CodeInvalidArguments = "invalid_arguments"
	CodeStaleVersion     = "stale_version"
	CodeNotCallable      = "not_callable"
	CodeNoMatch          = "no_match"
	CodeSearchFailed     = "search_failed"
	CodeUpstreamTimeout  = "upstream_timeout"
	CodeUpstreamError    = "upstream_unavailable"
	// CodeCommandNotAllowed: the tool's mcp_stdio source runs a command the operator's
	// allowlist (TOOLGATE_STDIO_COMMANDS) does not hold, so it is never started.
	CodeCommandNotAllowed = "command_not_allowed"
	CodeInternal          = "internal"
)

// ToolError is a failure reported to the agent as a tool result, not a protocol error, so
// the model sees it and can correct itself.
type ToolError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func (e *ToolError) Error() string { return e.Code + ": " + e.Message }

func toolErrorf(code, format string, args ...any) *ToolError {
	return &ToolError{Code: code, Message: fmt.Sprintf(format, args...)}
}

// result renders e as an isError tool result.
func (e *ToolError) result() *mcp.CallToolResult {
	body, _ := json.Marshal(e)
	return &mcp.CallToolResult{
		IsError:           true,
		Content:           []mcp.Content{&mcp.TextContent{Text: string(body)}},
		StructuredContent: e,
	}
}

// UpstreamError is a source server that could not be reached or failed a call.
type UpstreamError struct {
	Source string
	Err    error
}

func (e *UpstreamError) Error() string { return fmt.Sprintf("source %s: %v", e.Source, e.Err) }
func (e *UpstreamError) Unwrap() error { return e.Err }
