package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/eval"
	"github.com/toolgate/toolgate/internal/mcptest"
)

func TestDatasetMCPListsARealServer(t *testing.T) {
	if testing.Short() {
		t.Skip("slow (a whole server, evaluation or concurrent run): the full suite, make test, runs it")
	}
	t.Parallel()
	dir := t.TempDir()
	servers := writeFile(t, dir, "servers.json", `[
	  {"name":"everything","package":"@modelcontextprotocol/server-everything@2026.8.31","domain":"test",
	   "command":"node","args":[`+jsonString(mcptest.EverythingServer(t))+`,"stdio"],"env":{"DUMMY_KEY":"dummy"}}
	]`)
	out := filepath.Join(dir, "ds")
	code, stdout, errOut := runCLI(t, nil, "dataset", "mcp", "--servers", servers, "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s %s", code, stdout, errOut)
	}
	first, err := os.ReadFile(filepath.Join(out, eval.ToolsFile))
	if err != nil {
		t.Fatal(err)
	}
	tools, err := catalog.Parse(bytes.NewReader(first))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools {
		if !strings.HasPrefix(tool.Name, "everything__") || tool.Description == "" {
			t.Errorf("tool %q: want the everything__ namespace and a description", tool.Name)
		}
		names = append(names, tool.Name)
	}
	if len(tools) < 5 || !sort.StringsAreSorted(names) || !strings.Contains(strings.Join(names, " "), "everything__echo ") {
		t.Fatalf("tools %v: want at least 5, sorted, with everything__echo", names)
	}
	if !strings.Contains(stdout, "everything") || !strings.Contains(stdout, "wrote ") {
		t.Fatalf("stdout %q", stdout)
	}

	// A second listing writes the same bytes: the dataset is reproducible.
	if code, _, errOut := runCLI(t, nil, "dataset", "mcp", "--servers", servers, "--out", out); code != 0 {
		t.Fatalf("second run: exit %d: %s", code, errOut)
	}
	if again, _ := os.ReadFile(filepath.Join(out, eval.ToolsFile)); !bytes.Equal(first, again) {
		t.Fatal("a second listing wrote different bytes")
	}

	// queries.jsonl is the engineer's and is never rewritten, but a catalog that no longer
	// has a gold tool fails the command.
	queries := writeFile(t, out, eval.QueriesFile, `{"id":"q1","query":"say it back","gold":["everything__echo"]}`+"\n")
	if code, _, errOut := runCLI(t, nil, "dataset", "mcp", "--servers", servers, "--out", out); code != 0 {
		t.Fatalf("with queries: exit %d: %s", code, errOut)
	}
	writeFile(t, out, eval.QueriesFile, `{"id":"q1","query":"say it back","gold":["everything__gone"]}`+"\n")
	code, _, errOut = runCLI(t, nil, "dataset", "mcp", "--servers", servers, "--out", out)
	if code != 1 || !strings.Contains(errOut, "no longer fit the queries") || !strings.Contains(errOut, "everything__gone") {
		t.Fatalf("stale queries: exit %d, %q", code, errOut)
	}
	if b, _ := os.ReadFile(queries); !strings.Contains(string(b), "everything__gone") {
		t.Fatal("queries.jsonl was rewritten")
	}
}

func TestDatasetMCPFailedServer(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	servers := writeFile(t, dir, "servers.json", `[
	  {"name":"everything","package":"@modelcontextprotocol/server-everything@2026.8.31","command":"node","args":[`+jsonString(mcptest.EverythingServer(t))+`,"stdio"]},
	  {"name":"broken","package":"broken-mcp@1.0.0","command":"node","args":["-e","process.exit(3)"]}
	]`)
	out := filepath.Join(dir, "ds")
	code, stdout, errOut := runCLI(t, nil, "dataset", "mcp", "--servers", servers, "--out", out, "--timeout", "30s")
	if code != 1 || !strings.Contains(errOut, "1 of 2 servers failed") || !strings.Contains(errOut, "server broken") || !strings.Contains(stdout, "broken") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, errOut)
	}
	if _, err := os.Stat(filepath.Join(out, eval.ToolsFile)); !os.IsNotExist(err) {
		t.Fatalf("tools.jsonl written after a failure: %v", err)
	}
	code, stdout, errOut = runCLI(t, nil, "dataset", "mcp", "--servers", servers, "--out", out, "--skip-failed")
	if code != 0 || !strings.Contains(stdout, "FAILED") {
		t.Fatalf("--skip-failed: exit %d, stdout %q, stderr %q", code, stdout, errOut)
	}
	b, err := os.ReadFile(filepath.Join(out, eval.ToolsFile))
	if err != nil || strings.Contains(string(b), "broken__") || !strings.Contains(string(b), "everything__echo") {
		t.Fatalf("tools.jsonl: %v\n%s", err, b)
	}
}

func TestDatasetMCPBadInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := filepath.Join(dir, "ds")
	bad := writeFile(t, dir, "bad.json", `[{"name":"a","package":"x@latest","command":"node"},{"name":"a","package":"y@1.0.0","command":"node"}]`)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"dataset", "mcp", "--out", out}, 2, "usage"},
		{[]string{"dataset", "mcp", "--servers", bad}, 2, "usage"},
		{[]string{"dataset", "mcp", "--servers", bad, "--out", out, "--parallel", "0"}, 2, "--parallel"},
		{[]string{"dataset", "mcp", "--servers", filepath.Join(dir, "missing.json"), "--out", out}, 1, "missing.json"},
		{[]string{"dataset", "mcp", "--servers", bad, "--out", out}, 1, "server 1 (a): package \"x@latest\""},
		{[]string{"dataset", "mcp", "--servers", bad, "--out", out}, 1, "server 2 (a): duplicate name"},
	} {
		code, _, errOut := runCLI(t, nil, tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", tc.args, code, errOut, tc.code, tc.want)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("output directory created for bad input: %v", err)
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
