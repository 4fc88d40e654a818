package dataset

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/eval"
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

// The shipped multi-domain set: every tool belongs to a server of servers.json (its
// namespace), every server lists at least one tool, and the hand-written queries keep the
// mix of kinds the documentation states, with distinct texts and no repeated gold name.
func TestShippedMultiDomainDataset(t *testing.T) {
	servers, ds, kinds := checkShippedSet(t, filepath.Join("..", "..", "testdata", "mcp-multidomain"))
	for _, q := range ds.Queries {
		if q.Kind == "multi" && len(q.Gold) < 2 {
			t.Errorf("multi query %s has a single gold tool", q.ID)
		}
	}
	want := map[string]int{"single": 285, "multi": 206, "ambiguous_name": 90}
	if len(ds.Tools) != 743 || len(servers) != 49 || fmt.Sprint(kinds) != fmt.Sprint(want) {
		t.Fatalf("%d tools of %d servers, queries by kind %v; docs/eval.md says 743 tools of 49 servers and %v", len(ds.Tools), len(servers), kinds, want)
	}
}

// The shipped multilingual set: the same shape, and each query asks for tools of servers in
// the language its kind names: `zh` queries are Chinese and `en_to_zh` English ones for the
// Chinese servers, `fr` and `en_to_fr` the same for the French one, `en` English for the
// English control servers.
func TestShippedMultilingualDataset(t *testing.T) {
	servers, ds, kinds := checkShippedSet(t, filepath.Join("..", "..", "testdata", "mcp-multilingual"))
	lang := map[string]string{}
	for _, s := range servers {
		lang[s.Name] = s.Language
	}
	hasHan := func(s string) bool {
		for _, r := range s {
			if r >= 0x4e00 && r <= 0x9fff {
				return true
			}
		}
		return false
	}
	for _, q := range ds.Queries {
		want, _ := strings.CutPrefix(q.Kind, "en_to_")
		for _, g := range q.Gold {
			source, _, _ := catalog.SplitNamespaced(g)
			if lang[source] != want {
				t.Errorf("query %s (%s) asks for %s, a tool of a server in %q", q.ID, q.Kind, g, lang[source])
			}
		}
		if hasHan(q.Query) != (q.Kind == "zh") {
			t.Errorf("query %s (%s) %q: Chinese characters %v", q.ID, q.Kind, q.Query, hasHan(q.Query))
		}
	}
	want := map[string]int{"en": 19, "en_to_fr": 10, "en_to_zh": 48, "fr": 10, "zh": 48}
	if len(ds.Tools) != 97 || len(servers) != 10 || fmt.Sprint(kinds) != fmt.Sprint(want) {
		t.Fatalf("%d tools of %d servers, queries by kind %v; docs/eval.md says 97 tools of 10 servers and %v", len(ds.Tools), len(servers), kinds, want)
	}
}

// checkShippedSet loads a shipped set built by `toolgate dataset mcp` and checks what every
// such set holds: each tool in the namespace of a server of servers.json, sorted by name;
// each server with a tool; distinct query texts; no gold name twice in a query. It returns
// the servers, the dataset and the number of queries of each kind.
func checkShippedSet(t *testing.T, dir string) ([]MCPServer, *eval.Dataset, map[string]int) {
	t.Helper()
	servers, err := ReadServers(filepath.Join(dir, "servers.json"))
	if err != nil {
		t.Fatal(err)
	}
	ds, err := eval.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	perServer := map[string]int{}
	for _, s := range servers {
		perServer[s.Name] = 0
	}
	for i, tool := range ds.Tools {
		source, _, ok := catalog.SplitNamespaced(tool.Name)
		if _, known := perServer[source]; !ok || !known {
			t.Fatalf("tool %q is not in the namespace of a server of servers.json", tool.Name)
		}
		perServer[source]++
		if i > 0 && ds.Tools[i-1].Name >= tool.Name {
			t.Fatalf("tools.jsonl is not sorted by name at %q", tool.Name)
		}
	}
	for name, n := range perServer {
		if n == 0 {
			t.Errorf("server %s has no tool in tools.jsonl", name)
		}
	}
	kinds := map[string]int{}
	texts := map[string]string{}
	for _, q := range ds.Queries {
		kinds[q.Kind]++
		if other, dup := texts[q.Query]; dup {
			t.Errorf("queries %s and %s have the same text", other, q.ID)
		}
		texts[q.Query] = q.ID
		seen := map[string]bool{}
		for _, g := range q.Gold {
			if seen[g] {
				t.Errorf("query %s lists %s twice", q.ID, g)
			}
			seen[g] = true
		}
	}
	return servers, ds, kinds
}

// The shipped paraphrase set: the multi-domain catalog byte for byte, and short requests
// split by the parity of their number into a development half (even) and a held-out half
// (odd), as docs/eval.md describes.
func TestShippedParaphraseDataset(t *testing.T) {
	ds := loadOnMultidomainCatalog(t, "mcp-paraphrase")
	kinds := map[string]int{}
	servers := map[string]bool{}
	for _, q := range ds.Queries {
		checkHalfByID(t, q, "para-%03d")
		if words := len(strings.Fields(q.Query)); words < 4 || words > 12 {
			t.Errorf("query %s has %d words, want 4 to 12", q.ID, words)
		}
		kinds[q.Kind]++
		for _, g := range q.Gold {
			source, _, _ := catalog.SplitNamespaced(g)
			servers[source] = true
		}
	}
	want := map[string]int{"dev": 77, "heldout": 78}
	if fmt.Sprint(kinds) != fmt.Sprint(want) || len(servers) != 49 {
		t.Fatalf("queries by kind %v over %d servers; docs/eval.md says %v over all 49", kinds, len(servers), want)
	}
}

// The shipped traffic set: the multi-domain catalog byte for byte; four requests per tool,
// the first two of each tool (ids tNN-1, tNN-2) the traffic half and the last two (tNN-3,
// tNN-4) the test half, and "new" requests for tools no traffic request names, as
// docs/eval.md describes.
func TestShippedTrafficDataset(t *testing.T) {
	ds := loadOnMultidomainCatalog(t, "mcp-traffic")
	tally := newTrafficTally()
	for _, q := range ds.Queries {
		var tool, n int
		want := "new"
		if _, err := fmt.Sscanf(q.ID, "t%02d-%d", &tool, &n); err == nil {
			want = "test"
			if n <= 2 {
				want = "traffic"
			}
		} else if _, err := fmt.Sscanf(q.ID, "new-%02d", &n); err != nil {
			t.Fatalf("query id %q is neither tNN-N nor new-NN", q.ID)
		}
		if q.Kind != want {
			t.Errorf("query %s has kind %q, want %q", q.ID, q.Kind, want)
		}
		if len(q.Gold) != 1 {
			t.Fatalf("query %s has %d gold tools, want 1", q.ID, len(q.Gold))
		}
		tally.add(q)
	}
	tally.check(t, 4, map[string]int{"new": 20, "test": 128, "traffic": 128})
}

// loadOnMultidomainCatalog loads the shipped dataset testdata/name, whose tools.jsonl must be
// the multi-domain catalog byte for byte.
func loadOnMultidomainCatalog(t *testing.T, name string) *eval.Dataset {
	t.Helper()
	dir := filepath.Join("..", "..", "testdata", name)
	tools, err := os.ReadFile(filepath.Join(dir, "tools.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	multi, err := os.ReadFile(filepath.Join("..", "..", "testdata", "mcp-multidomain", "tools.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if string(tools) != string(multi) {
		t.Fatalf("testdata/%s/tools.jsonl differs from testdata/mcp-multidomain/tools.jsonl", name)
	}
	ds, err := eval.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// trafficTally counts the requests of a traffic set (testdata/mcp-traffic and its dense
// variant) by kind, tool and server.
type trafficTally struct {
	kinds, perTool    map[string]int
	newTools, servers map[string]bool
}

func newTrafficTally() *trafficTally {
	return &trafficTally{kinds: map[string]int{}, perTool: map[string]int{}, newTools: map[string]bool{}, servers: map[string]bool{}}
}

// add counts q, a request with one gold tool.
func (c *trafficTally) add(q eval.Query) {
	c.kinds[q.Kind]++
	if q.Kind == "new" {
		c.newTools[q.Gold[0]] = true
		return
	}
	c.perTool[q.Gold[0]]++
	source, _, _ := catalog.SplitNamespaced(q.Gold[0])
	c.servers[source] = true
}

// check wants perTool requests for each of 64 tools over 16 servers, the counts by kind
// of docs/eval.md, and no "new" request for a tool another request names.
func (c *trafficTally) check(t *testing.T, perTool int, kinds map[string]int) {
	t.Helper()
	for tool, n := range c.perTool {
		if n != perTool {
			t.Errorf("%s has %d requests, want %d", tool, n, perTool)
		}
	}
	for tool := range c.newTools {
		if c.perTool[tool] > 0 {
			t.Errorf("new-tool request names %s, which another request names too", tool)
		}
	}
	if fmt.Sprint(c.kinds) != fmt.Sprint(kinds) || len(c.perTool) != 64 || len(c.servers) != 16 {
		t.Fatalf("queries by kind %v, %d tools over %d servers; docs/eval.md says %v, 64 tools over 16 servers",
			c.kinds, len(c.perTool), len(c.servers), kinds)
	}
}

// checkHalfByID checks that q's kind is the half its id's number puts it in, as the id
// format reads it: dev for an even number, heldout for an odd one.
func checkHalfByID(t *testing.T, q eval.Query, format string) {
	t.Helper()
	var n int
	if _, err := fmt.Sscanf(q.ID, format, &n); err != nil {
		t.Fatalf("query id %q: %v", q.ID, err)
	}
	want := "heldout"
	if n%2 == 0 {
		want = "dev"
	}
	if q.Kind != want {
		t.Errorf("query %s has kind %q, want %q", q.ID, q.Kind, want)
	}
}
