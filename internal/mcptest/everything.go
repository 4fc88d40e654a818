package mcptest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// RequireNPMEnv, when set (scripts/test.sh sets it, after installing the server), makes
// EverythingServer fail a test instead of skipping it when the server is absent, so that
// the full suite never passes without running the tests that need it.
const RequireNPMEnv = "TOOLGATE_TEST_REQUIRE_NPM"

// everythingScript is where scripts/test.sh installs @modelcontextprotocol/server-everything,
// from the module's root.
const everythingScript = ".cache/server-everything/node_modules/@modelcontextprotocol/server-everything/dist/index.js"

// EverythingServer returns the absolute path of the reference MCP server's script (run as
// `node PATH stdio`). When it is not installed the test is skipped, naming the command
// that installs it; under RequireNPMEnv it fails instead.
func EverythingServer(t testing.TB) string {
	t.Helper()
	path, err := findInModule(everythingScript)
	if err == nil {
		return path
	}
	msg := fmt.Sprintf("%v: the npm MCP reference server is not installed; `make test` (scripts/test.sh) installs it", err)
	if os.Getenv(RequireNPMEnv) != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// findInModule looks for rel (a path under the module's root, where scripts/test.sh
// installs npm packages) from the module holding the working directory (a package's test
// runs in its own directory).
func findInModule(rel string) (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			path := filepath.Join(dir, rel)
			if _, err := os.Stat(path); err != nil {
				return "", err
			}
			return path, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}
