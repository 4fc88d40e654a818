package dataset

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/eval"
)

// TestShippedTrafficDenseDataset checks testdata/mcp-traffic-dense: the traffic set's 64
// tools with ten requests each (tNN-1 … tNN-4 copied from testdata/mcp-traffic, tNN-5 …
// tNN-10 new), and the same 20 new-tool controls.
func TestShippedTrafficDenseDataset(t *testing.T) {
	ds := loadOnMultidomainCatalog(t, "mcp-traffic-dense")
	sparse, err := eval.Load(filepath.Join("..", "..", "testdata", "mcp-traffic"))
	if err != nil {
		t.Fatal(err)
	}
	sparseByID := map[string]eval.Query{}
	for _, q := range sparse.Queries {
		sparseByID[q.ID] = q
	}

	tally := newTrafficTally()
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
		tally.add(q)
		if q.Kind != "new" && n > 4 {
			if first, ok := sparseByID[fmt.Sprintf("t%02d-1", tool)]; ok && fmt.Sprint(first.Gold) != fmt.Sprint(q.Gold) {
				t.Errorf("query %s names %v, but t%02d in testdata/mcp-traffic is %v", q.ID, q.Gold, tool, first.Gold)
			}
		}
	}
	if len(sparse.Queries) != len(ds.Queries)-6*64 {
		t.Errorf("testdata/mcp-traffic has %d queries, want every one of them here (%d here)", len(sparse.Queries), len(ds.Queries))
	}
	tally.check(t, 10, map[string]int{"new": 20, "test": 320, "traffic": 320})
}
