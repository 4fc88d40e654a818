package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/mcptest"
	"github.com/toolgate/toolgate/internal/pgtest"
)

// runMainEnv makes the test binary act as the toolgate command, so `toolgate mcp` can be
// started as a real stdio subprocess.
const runMainEnv = "TOOLGATE_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	mcptest.RunIfChild() // the stdio MCP servers of the tests that sync one
	if os.Getenv(runMainEnv) == "1" {
		os.Exit(run(os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

func TestMCPCommandOverStdio(t *testing.T) {
	t.Parallel()
	dbURL := pgtest.NewDB(t)
	file := filepath.Join(t.TempDir(), "tools.jsonl")
	os.WriteFile(file, []byte(`{"name":"get_weather","description":"Get the weather forecast for a city"}`+"\n"+
		`{"name":"send_email","description":"Send an email"}`+"\n"), 0o644)
	if code, _, stderr := runCLI(t, map[string]string{"DATABASE_URL": dbURL}, "import", file, "--source", "local"); code != 0 {
		t.Fatalf("import: %s", stderr)
	}

	cmd := exec.Command(os.Args[0], "mcp")
	cmd.Env = append(os.Environ(), runMainEnv+"=1", "DATABASE_URL="+dbURL, "TOOLGATE_LOG_LEVEL=error")
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) != 2 || tools.Tools[0].Name != "call_tool" || tools.Tools[1].Name != "find_tools" {
		t.Fatalf("tools/list: %v %+v", err, tools)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "find_tools", Arguments: map[string]any{"query": "weather forecast"}})
	if err != nil || res.IsError {
		t.Fatalf("find_tools: %v %+v", err, res)
	}
	var out struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Tools) != 1 || out.Tools[0].Name != "local__get_weather" {
		t.Fatalf("find_tools over stdio = %+v", out.Tools)
	}
	// A pushed catalog has no server: calling its tool says so instead of failing silently.
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "local__get_weather", Arguments: map[string]any{}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "not_callable") {
		t.Fatalf("call of a catalog tool: %v %+v", err, res)
	}
}
