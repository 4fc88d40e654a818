package dataset

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/eval"
)

// The shipped plugin set, as docs/eval.md describes it: 100 tools of one or two short
// sentences, three requests for each, one gold tool each, the even ids the dev half and the
// odd ids the heldout half.
func TestShippedPluginsDataset(t *testing.T) {
	ds, err := eval.Load(filepath.Join("..", "..", "testdata", "plugins-everyday"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ds.Tools) != 100 {
		t.Fatalf("%d tools, docs/eval.md says 100", len(ds.Tools))
	}
	for _, tool := range ds.Tools {
		if words := len(strings.Fields(tool.Description)); words > 20 {
			t.Errorf("tool %s: a description of %d words, want a short one", tool.Name, words)
		}
	}
	perTool := map[string]int{}
	kinds := map[string]int{}
	for _, q := range ds.Queries {
		checkHalfByID(t, q, "plug-%03d")
		if len(q.Gold) != 1 {
			t.Errorf("query %s has %d gold tools, want 1", q.ID, len(q.Gold))
		}
		kinds[q.Kind]++
		perTool[q.Gold[0]]++
	}
	for _, tool := range ds.Tools {
		if perTool[tool.Name] != 3 {
			t.Errorf("tool %s has %d requests, want 3", tool.Name, perTool[tool.Name])
		}
	}
	if want := map[string]int{"dev": 150, "heldout": 150}; fmt.Sprint(kinds) != fmt.Sprint(want) {
		t.Fatalf("queries by kind %v, want %v", kinds, want)
	}
}
