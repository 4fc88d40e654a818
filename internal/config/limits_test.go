package config

import (
	"errors"
	"testing"
	"time"

	"github.com/toolgate/toolgate/api"
	"github.com/toolgate/toolgate/internal/gateway"
)

// TestLimitSettings: the HTTP limits are read from their settings, and their defaults are
// the API's own (api.ServerLimits and api.Limits take them for zero fields).
func TestLimitSettings(t *testing.T) {
	c, err := Load(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.HTTPReadHeaderTimeout != api.DefaultReadHeaderTimeout || c.HTTPReadTimeout != api.DefaultReadTimeout ||
		c.HTTPIdleTimeout != api.DefaultIdleTimeout || c.HTTPMaxHeaderBytes != api.DefaultMaxHeaderBytes ||
		c.MaxBodyBytes != api.DefaultMaxBodyBytes || c.MaxCatalogBytes != api.DefaultMaxCatalogBytes ||
		c.MaxCatalogTools != api.DefaultMaxCatalogTools {
		t.Fatalf("defaults differ from the API's: %+v", c)
	}
	c, err = Load(env(map[string]string{
		"TOOLGATE_HTTP_READ_HEADER_TIMEOUT": "2s",
		"TOOLGATE_HTTP_READ_TIMEOUT":        "5m",
		"TOOLGATE_HTTP_IDLE_TIMEOUT":        "30s",
		"TOOLGATE_HTTP_MAX_HEADER_BYTES":    "8192",
		"TOOLGATE_MAX_BODY_BYTES":           "16384",
		"TOOLGATE_MAX_CATALOG_BYTES":        "1048576",
		"TOOLGATE_MAX_CATALOG_TOOLS":        "1000",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if c.HTTPReadHeaderTimeout != 2*time.Second || c.HTTPReadTimeout != 5*time.Minute || c.HTTPIdleTimeout != 30*time.Second ||
		c.HTTPMaxHeaderBytes != 8192 || c.MaxBodyBytes != 16384 || c.MaxCatalogBytes != 1<<20 || c.MaxCatalogTools != 1000 {
		t.Fatalf("got %+v", c)
	}
	for setting, kv := range map[string]map[string]string{
		"TOOLGATE_HTTP_READ_HEADER_TIMEOUT": {"TOOLGATE_HTTP_READ_HEADER_TIMEOUT": "0s"},
		"TOOLGATE_HTTP_READ_TIMEOUT":        {"TOOLGATE_HTTP_READ_TIMEOUT": "5s", "TOOLGATE_HTTP_READ_HEADER_TIMEOUT": "10s"},
		"TOOLGATE_HTTP_IDLE_TIMEOUT":        {"TOOLGATE_HTTP_IDLE_TIMEOUT": "never"},
		"TOOLGATE_HTTP_MAX_HEADER_BYTES":    {"TOOLGATE_HTTP_MAX_HEADER_BYTES": "100"},
		"TOOLGATE_MAX_BODY_BYTES":           {"TOOLGATE_MAX_BODY_BYTES": "64KiB"},
		"TOOLGATE_MAX_CATALOG_BYTES":        {"TOOLGATE_MAX_CATALOG_BYTES": "1073741824"},
		"TOOLGATE_MAX_CATALOG_TOOLS":        {"TOOLGATE_MAX_CATALOG_TOOLS": "0"},
	} {
		_, err := Load(env(kv))
		var ce *Error
		if !errors.As(err, &ce) || ce.Setting != setting {
			t.Errorf("%v: got %v, want an error naming %s", kv, err, setting)
		}
	}
}

// TestMCPStreamSettings: the /mcp stream's write bound and keep-alive interval and the
// sessions a key holds in memory are read from their settings and default to the
// gateway's; the keep-alive can be turned off.
func TestMCPStreamSettings(t *testing.T) {
	c, err := Load(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.MCPStreamWriteTimeout != gateway.DefaultStreamWriteTimeout || c.MCPStreamKeepAlive != gateway.DefaultStreamKeepAlive ||
		c.MCPSessionsPerKey != gateway.DefaultSessionsPerKey {
		t.Fatalf("defaults %v %v differ from the gateway's", c.MCPStreamWriteTimeout, c.MCPStreamKeepAlive)
	}
	c, err = Load(env(map[string]string{"TOOLGATE_MCP_STREAM_WRITE_TIMEOUT": "5s", "TOOLGATE_MCP_STREAM_KEEPALIVE": "off", "TOOLGATE_MCP_SESSIONS_PER_KEY": "10"}))
	if err != nil || c.MCPStreamWriteTimeout != 5*time.Second || c.MCPStreamKeepAlive >= 0 || c.MCPSessionsPerKey != 10 {
		t.Fatalf("got %v %v, %v", c.MCPStreamWriteTimeout, c.MCPStreamKeepAlive, err)
	}
	_, err = Load(env(map[string]string{"TOOLGATE_MCP_STREAM_WRITE_TIMEOUT": "soon"}))
	var ce *Error
	if !errors.As(err, &ce) || ce.Setting != "TOOLGATE_MCP_STREAM_WRITE_TIMEOUT" {
		t.Fatalf("a bad write timeout: %v", err)
	}
}
