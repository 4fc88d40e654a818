package main

import (
	"github.com/toolgate/toolgate/internal/config"
	"github.com/toolgate/toolgate/internal/mcpclient"
)

// stdioCommands is the allowlist of the programs mcp_stdio sources may run
// (TOOLGATE_STDIO_COMMANDS; none when unset).
func stdioCommands(cfg config.Config) mcpclient.CommandPolicy {
	return mcpclient.NewCommandPolicy(cfg.StdioCommands)
}

// listLimits bound one listing of an MCP server's tools (TOOLGATE_MAX_TOOLS_PER_SOURCE,
// TOOLGATE_MAX_LIST_BYTES) and each answer in it (TOOLGATE_MCP_MAX_RESPONSE_BYTES).
func listLimits(cfg config.Config) mcpclient.Limits {
	return mcpclient.Limits{MaxTools: cfg.MaxToolsPerSrc, MaxBytes: int64(cfg.MaxListBytes), MaxResponseBytes: int64(cfg.MCPMaxResponseBytes)}
}
