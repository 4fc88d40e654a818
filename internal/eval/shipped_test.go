package eval

import (
	"context"
	"path/filepath"
	"testing"
)

// An oracle that returns exactly the gold tools scores 1 at K=10 everywhere on the shipped
// 5,000-tool dataset (no query needs more than 9 tools), while at K=1 only the 1,500 single
// queries are complete.
func TestRunOracleOnShippedDataset(t *testing.T) {
	ds, err := Load(filepath.Join("..", "..", "testdata", "scalemcp-1000"))
	if err != nil {
		t.Fatal(err)
	}
	gold := make(map[string][]string, len(ds.Queries))
	for _, q := range ds.Queries {
		gold[q.Query] = q.Gold
	}
	oracle := func(_ context.Context, query string, k int) ([]string, error) {
		g := gold[query]
		return g[:min(k, len(g))], nil
	}
	r, err := Run(context.Background(), ds.Queries, oracle, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range MetricNames([]int{10}) {
		if !near(r.Metrics[name], 1) {
			t.Errorf("%s = %v, want 1", name, r.Metrics[name])
		}
	}
	if !near(r.Metrics["completeness@1"], 1500.0/2500) || !near(r.ByKind["single"].Metrics["completeness@1"], 1) || r.ByKind["multi_hop"].Metrics["completeness@1"] != 0 {
		t.Fatalf("completeness@1: %v / by kind %+v", r.Metrics["completeness@1"], r.ByKind)
	}
	if len(r.ByKind) != 4 || r.ByKind["multi_company"].NQueries != 350 {
		t.Fatalf("by kind: %+v", r.ByKind)
	}
}

// Every dataset shipped under testdata/ loads, and an oracle that returns the gold tools
// scores 1 at K=10 on it: no query of a shipped set needs more than 10 tools.
func TestShippedDatasetsLoad(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join("..", "..", "testdata", "*", ToolsFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) < 2 {
		t.Fatalf("found %v, want scalemcp-1000 and mcp-multidomain at least", dirs)
	}
	for _, f := range dirs {
		dir := filepath.Dir(f)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			ds, err := Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			gold := make(map[string][]string, len(ds.Queries))
			for _, q := range ds.Queries {
				gold[q.Query] = q.Gold
			}
			oracle := func(_ context.Context, query string, k int) ([]string, error) {
				g := gold[query]
				return g[:min(k, len(g))], nil
			}
			r, err := Run(context.Background(), ds.Queries, oracle, Options{Ks: []int{10}})
			if err != nil {
				t.Fatal(err)
			}
			for _, name := range MetricNames([]int{10}) {
				if !near(r.Metrics[name], 1) {
					t.Errorf("%s = %v, want 1", name, r.Metrics[name])
				}
			}
		})
	}
}
