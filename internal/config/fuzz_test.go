package config

import (
	"errors"
	"testing"
)

// FuzzLoad feeds arbitrary values to every setting: Load either succeeds with a config
// that validates, or fails with an *Error naming a setting; it never panics.
func FuzzLoad(f *testing.F) {
	names := []string{
		"DATABASE_URL", "LISTEN_ADDR", "TOOLGATE_ROLE", "TOOLGATE_AUTO_MIGRATE", "TOOLGATE_SHUTDOWN_TIMEOUT",
		"TOOLGATE_WORKERS", "TOOLGATE_LOG_LEVEL", "TOOLGATE_LOG_FORMAT", "TOOLGATE_SEARCH_LOG_RETENTION",
		"DATABASE_READ_URL", "TOOLGATE_DB_MAX_CONNS", "TOOLGATE_RIVER_POLL_ONLY", "TOOLGATE_OTLP_ENDPOINT",
		"TOOLGATE_OPEN_REMOTE", "TOOLGATE_STDIO_COMMANDS",
	}
	f.Add(uint8(0), "postgres://u:p@h:5432/db")
	f.Add(uint8(1), ":8080")
	f.Add(uint8(4), "30s")
	f.Add(uint8(5), "9999999999999999999")
	f.Add(uint8(8), "7d")
	f.Add(uint8(8), "-3d")
	f.Add(uint8(9), "postgres://%zz")
	f.Add(uint8(12), "http://[::1]:4318")
	f.Add(uint8(14), "npx -y @modelcontextprotocol/server-everything, ,/opt/mcp/git")
	f.Fuzz(func(t *testing.T, which uint8, value string) {
		name := names[int(which)%len(names)]
		c, err := Load(func(k string) string {
			if k == name {
				return value
			}
			return ""
		})
		if err != nil {
			var ce *Error
			if !errors.As(err, &ce) || ce.Setting == "" {
				t.Fatalf("%s=%q: error %v is not a *config.Error", name, value, err)
			}
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("%s=%q: loaded config does not validate: %v", name, value, err)
		}
	})
}
