package dataset

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/catalog"
)

func TestParseServers(t *testing.T) {
	good := `[{"name":"github","package":"@modelcontextprotocol/server-github@2025.4.8","domain":"code","command":"node","args":["index.js"],"env":{"GITHUB_PERSONAL_ACCESS_TOKEN":"dummy"}},
	          {"name":"fetch","package":"mcp-fetch-server@1.1.2-beta.1","command":"node"}]`
	servers, err := ParseServers(strings.NewReader(good))
	if err != nil {
		t.Fatal(err)
	}
	if len(servers) != 2 || servers[0].Env["GITHUB_PERSONAL_ACCESS_TOKEN"] != "dummy" || servers[1].Name != "fetch" {
		t.Fatalf("servers %+v", servers)
	}

	for _, tc := range []struct {
		name, file string
		want       []string // every one must be in the message
	}{
		{"not JSON", `{"name":`, []string{"want a JSON array"}},
		{"an object", `{"name":"x"}`, []string{"want a JSON array"}},
		{"unknown field", `[{"name":"x","package":"x@1.0.0","command":"node","cmd":"y"}]`, []string{`unknown field "cmd"`}},
		{"trailing data", `[] []`, []string{"trailing data"}},
		{"empty", `[]`, []string{"no servers"}},
		{"bad name", `[{"name":"Git_Hub","package":"x@1.0.0","command":"node"}]`, []string{"server 1 (Git_Hub)", "name"}},
		{"missing name", `[{"package":"x@1.0.0","command":"node"}]`, []string{"server 1:", "name"}},
		{"duplicate", `[{"name":"a","package":"x@1.0.0","command":"node"},{"name":"a","package":"y@1.0.0","command":"node"}]`, []string{"server 2 (a): duplicate name (first is server 1)"}},
		{"range version", `[{"name":"a","package":"x@^1.0.0","command":"node"}]`, []string{"exact version"}},
		{"no version", `[{"name":"a","package":"@scope/x","command":"node"}]`, []string{"exact version"}},
		{"latest", `[{"name":"a","package":"x@latest","command":"node"}]`, []string{"exact version"}},
		{"no command", `[{"name":"a","package":"x@1.0.0"}]`, []string{"command is required"}},
		{"bad env name", `[{"name":"a","package":"x@1.0.0","command":"node","env":{"A-B":"1"}}]`, []string{`env name "A-B"`}},
		{"denied env", `[{"name":"a","package":"x@1.0.0","command":"node","env":{"NODE_OPTIONS":"--require x"}}]`, []string{"NODE_OPTIONS"}},
		{"all problems", `[{"name":"A","package":"x","command":""}]`, []string{"name", "exact version", "command is required"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseServers(strings.NewReader(tc.file))
			var fe *ServersFileError
			if !errors.As(err, &fe) {
				t.Fatalf("err = %v, want a *ServersFileError", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

func TestReadServersNamesTheFile(t *testing.T) {
	path := t.TempDir() + "/servers.json"
	if _, err := ReadServers(path); err == nil {
		t.Fatal("missing file: no error")
	}
	if err := writeTestFile(path, `[{"name":"a","package":"x","command":"node"}]`); err != nil {
		t.Fatal(err)
	}
	_, err := ReadServers(path)
	if err == nil || !strings.HasPrefix(err.Error(), path+": server 1 (a): package") {
		t.Fatalf("err = %v", err)
	}
}

func TestNamespaceTools(t *testing.T) {
	tools := []catalog.Tool{
		{Name: "search", Description: "b", InputSchema: json.RawMessage(`{"type":"object", "properties":{"q":{"type":"string"}}}`)},
		{Name: "add issue", Description: "a"},
		{Name: "search", Description: "again"},
		{Name: "bad", Description: "schema is not an object", InputSchema: json.RawMessage(`[1]`)},
		{Name: "create_issue", Title: "Create issue", Description: "c", OutputSchema: json.RawMessage(`{"type":"object"}`)},
	}
	kept, skipped := namespaceTools("github", tools)
	var names []string
	for _, k := range kept {
		names = append(names, k.Name)
	}
	want := []string{catalog.ToolName("github", "add issue"), "github__create_issue", "github__search"}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Fatalf("kept %v, want %v", names, want)
	}
	if string(kept[2].InputSchema) != `{"properties":{"q":{"type":"string"}},"type":"object"}` {
		t.Fatalf("schema not canonical: %s", kept[2].InputSchema)
	}
	if string(kept[0].InputSchema) != `{"properties":{},"type":"object"}` {
		t.Fatalf("missing schema not defaulted: %s", kept[0].InputSchema)
	}
	if kept[1].Title != "Create issue" || kept[1].OutputSchema != nil {
		t.Fatalf("create_issue %+v", kept[1])
	}
	if len(skipped) != 2 || skipped[0].Name != "search" || skipped[0].Reason != "listed twice" || skipped[1].Name != "bad" {
		t.Fatalf("skipped %+v", skipped)
	}
}

func writeTestFile(path, content string) error { return os.WriteFile(path, []byte(content), 0o644) }
