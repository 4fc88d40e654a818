package dataset

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/eval"
)

// TestShippedTrafficDenseDataset checks testdata/mcp-traffic-dense: the traffic set's 64
// tools with ten requests each (tNN-1 … tNN-4 copied from testdata/mcp-traffic, tNN-5 …
// tNN-10 new), and the same 20 new-tool controls.
func TestShippedTrafficDenseDataset(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "mcp-traffic-dense")
	tools, err := os.ReadFile(filepath.Join(dir, "tools.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	multi, err := os.ReadFile(filepath.Join("..", "..", "testdata", "mcp-multidomain", "tools.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if string(tools) != string(multi) {
		t.Fatal("testdata/mcp-traffic-dense/tools.jsonl differs from testdata/mcp-multidomain/tools.jsonl")
	}
	ds, err := eval.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	sparse, err := eval.Load(filepath.Join("..", "..", "testdata", "mcp-traffic"))
	if err != nil {
		t.Fatal(err)
	}
	sparseByID := map[string]eval.Query{}
	for _, q := range sparse.Queries {
		sparseByID[q.ID] = q
	}

	kinds := map[string]int{}
	perTool := map[string]int{}
	trafficTools, newTools, servers := map[string]bool{}, map[string]bool{}, map[string]bool{}
	seen := map[string]string{}
	for _, q := range ds.Queries {
		var tool, n int
		want := "new"
		if _, err := fmt.Sscanf(q.ID, "t%02d-%d", &tool, &n); err == nil {
			if tool < 1 || tool > 64 || n < 1 || n > 10 || q.ID != fmt.Sprintf("t%02d-%d", tool, n) {
				t.Fatalf("query id %q is not tNN-N with NN in 01..64 and N in 1..10", q.ID)
			}
			switch n {
			case 1, 2, 5, 6, 7:
				want = "traffic"
			default:
				want = "test"
			}
		} else if _, err := fmt.Sscanf(q.ID, "new-%02d", &n); err != nil || q.ID != fmt.Sprintf("new-%02d", n) {
			t.Fatalf("query id %q is neither tNN-N nor new-NN", q.ID)
		}
		if q.Kind != want {
			t.Errorf("query %s has kind %q, want %q", q.ID, q.Kind, want)
		}
		if len(q.Gold) != 1 {
			t.Fatalf("query %s has %d gold tools, want 1", q.ID, len(q.Gold))
		}
		key := strings.ToLower(strings.TrimSpace(q.Query))
		if other, dup := seen[key]; dup {
			t.Errorf("queries %s and %s are the same request %q", other, q.ID, q.Query)
		}
		seen[key] = q.ID
		if want == "new" || n <= 4 {
			old, ok := sparseByID[q.ID]
			if !ok {
				t.Errorf("query %s is not in testdata/mcp-traffic", q.ID)
			} else if old.Query != q.Query || fmt.Sprint(old.Gold) != fmt.Sprint(q.Gold) || old.Kind != q.Kind {
				t.Errorf("query %s = %q %v %s, testdata/mcp-traffic has %q %v %s", q.ID, q.Query, q.Gold, q.Kind, old.Query, old.Gold, old.Kind)
			}
		}
		kinds[q.Kind]++
		if q.Kind == "new" {
			newTools[q.Gold[0]] = true
			continue
		}
		perTool[q.Gold[0]]++
		source, _, _ := catalog.SplitNamespaced(q.Gold[0])
		servers[source] = true
		if q.Kind == "traffic" {
			trafficTools[q.Gold[0]] = true
		}
		if n > 4 {
			if first, ok := sparseByID[fmt.Sprintf("t%02d-1", tool)]; ok && fmt.Sprint(first.Gold) != fmt.Sprint(q.Gold) {
				t.Errorf("query %s names %v, but t%02d in testdata/mcp-traffic is %v", q.ID, q.Gold, tool, first.Gold)
			}
		}
	}
	if len(sparse.Queries) != len(ds.Queries)-6*64 {
		t.Errorf("testdata/mcp-traffic has %d queries, want every one of them here (%d here)", len(sparse.Queries), len(ds.Queries))
	}
	for tool, n := range perTool {
		if n != 10 {
			t.Errorf("%s has %d requests, want 10", tool, n)
		}
	}
	for tool := range newTools {
		if trafficTools[tool] || perTool[tool] > 0 {
			t.Errorf("new-tool request names %s, which the traffic names too", tool)
		}
	}
	want := map[string]int{"new": 20, "test": 320, "traffic": 320}
	if fmt.Sprint(kinds) != fmt.Sprint(want) || len(perTool) != 64 || len(servers) != 16 {
		t.Fatalf("queries by kind %v, %d tools over %d servers; want %v, 64 tools over 16 servers", kinds, len(perTool), len(servers), want)
	}
}
