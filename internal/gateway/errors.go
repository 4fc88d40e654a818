package gateway

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/mcpclient"
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
	// CodeUpstreamTooLarge: the source answered the call with more than
	// TOOLGATE_MCP_MAX_RESPONSE_BYTES; the answer was not read past that, nor relayed.
	CodeUpstreamTooLarge = "upstream_response_too_large"
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

// UpstreamError is a source server that could not be reached or failed a call. Its text
// is free of the source's credentials (mcpclient.Config.Scrub) and goes to the log; the
// agent gets upstreamMessage instead.
type UpstreamError struct {
	Source string
	// Unreachable: no session to the source could be opened, so nothing was called.
	Unreachable bool
	Err         error
}

func (e *UpstreamError) Error() string { return fmt.Sprintf("source %s: %v", e.Source, e.Err) }
func (e *UpstreamError) Unwrap() error { return e.Err }

// upstreamMessage says what failed in a proxied call without the upstream's own words: the
// URL it was reached at, its addresses and its error text may carry credentials or internal
// detail, and the caller may be any search key. They are logged for the operator.
func upstreamMessage(source string, err error) string {
	var ue *UpstreamError
	if errors.As(err, &ue) && ue.Unreachable {
		return fmt.Sprintf("source %s could not be reached; try again later", source)
	}
	if rpc, ok := mcpclient.ServerError(err); ok {
		return fmt.Sprintf("source %s answered the call with JSON-RPC error %d; the details are in toolgate's log", source, rpc.Code)
	}
	return fmt.Sprintf("source %s failed the call; the details are in toolgate's log", source)
}
