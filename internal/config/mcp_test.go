package config

import (
	"errors"
	"testing"
	"time"
)

func TestMCPSettings(t *testing.T) {
	c, err := Load(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if !c.MCPCallTool || c.MCPUseTool || c.MCPBindLimit != 32 || c.MCPCallTimeout != 30*time.Second ||
		c.MCPUpstreamConcurrency != 8 || c.MCPSessionIdle != 30*time.Minute || c.MCPSessionKeep != 7*24*time.Hour ||
		c.MCPLabelWindow != 15*time.Minute {
		t.Fatalf("MCP defaults: %+v", c)
	}
	c, err = Load(env(map[string]string{"TOOLGATE_MCP_CALL_TOOL": "false", "TOOLGATE_MCP_USE_TOOL": "true", "TOOLGATE_MCP_BIND_LIMIT": "4"}))
	if err != nil || c.MCPCallTool || !c.MCPUseTool || c.MCPBindLimit != 4 {
		t.Fatalf("MCP settings: %+v %v", c, err)
	}
	for v, want := range map[string]time.Duration{"5m": 5 * time.Minute, "off": -1, "OFF": -1} {
		c, err = Load(env(map[string]string{"TOOLGATE_MCP_LABEL_WINDOW": v}))
		if err != nil || c.MCPLabelWindow != want {
			t.Errorf("TOOLGATE_MCP_LABEL_WINDOW=%s: %v %v, want %v", v, c.MCPLabelWindow, err, want)
		}
	}
	for name, v := range map[string]string{
		"TOOLGATE_MCP_CALL_TOOL":            "sometimes",
		"TOOLGATE_MCP_BIND_LIMIT":           "0",
		"TOOLGATE_MCP_CALL_TIMEOUT":         "-1s",
		"TOOLGATE_MCP_UPSTREAM_CONCURRENCY": "lots",
		"TOOLGATE_MCP_SESSION_IDLE":         "never",
		"TOOLGATE_MCP_SESSION_RETENTION":    "0",
		"TOOLGATE_MCP_LABEL_WINDOW":         "0",
	} {
		_, err := Load(env(map[string]string{name: v}))
		var ce *Error
		if !errors.As(err, &ce) || ce.Setting != name {
			t.Errorf("%s=%q: got %v", name, v, err)
		}
	}
}
