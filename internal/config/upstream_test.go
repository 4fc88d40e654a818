package config

import "testing"

// TOOLGATE_MCP_MAX_RESPONSE_BYTES defaults to 16 MiB and takes 64 KiB to 1 GiB.
func TestMCPMaxResponseBytes(t *testing.T) {
	if c, err := Load(env(nil)); err != nil || c.MCPMaxResponseBytes != 16<<20 {
		t.Fatalf("default: %d %v", c.MCPMaxResponseBytes, err)
	}
	if c, err := Load(env(map[string]string{"TOOLGATE_MCP_MAX_RESPONSE_BYTES": "1048576"})); err != nil || c.MCPMaxResponseBytes != 1<<20 {
		t.Fatalf("set: %d %v", c.MCPMaxResponseBytes, err)
	}
	for _, v := range []string{"1000", "2147483648", "lots"} {
		if _, err := Load(env(map[string]string{"TOOLGATE_MCP_MAX_RESPONSE_BYTES": v})); err == nil {
			t.Errorf("%s: accepted", v)
		}
	}
}
