package eval

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"
)

// fakeSearch serves fixed rankings and advances a fake clock by each query's latency, so the
// latency percentiles are exact.
type fakeSearch struct {
	rankings map[string][]string
	latency  map[string]time.Duration
	clock    time.Time
	gotK     []int
}

func (f *fakeSearch) now() time.Time { return f.clock }

func (f *fakeSearch) search(_ context.Context, q string, k int) ([]string, error) {
	f.gotK = append(f.gotK, k)
	f.clock = f.clock.Add(f.latency[q])
	r, ok := f.rankings[q]
	if !ok {
		return nil, errors.New("index offline")
	}
	return r, nil
}

func TestRun(t *testing.T) {
	f := &fakeSearch{
		rankings: map[string][]string{
			"q1": {"a", "b"},
			"q2": {"a", "b"},
			"q3": {"c", "x", "a"},
			"q4": {},
		},
		latency: map[string]time.Duration{"q1": time.Millisecond, "q2": 2 * time.Millisecond, "q3": 3 * time.Millisecond, "q4": 4 * time.Millisecond},
	}
	queries := []Query{
		{ID: "1", Query: "q1", Gold: []string{"a"}, Kind: "single"},
		{ID: "2", Query: "q2", Gold: []string{"b"}, Kind: "single"},
		{ID: "3", Query: "q3", Gold: []string{"a", "c"}, Kind: "multi"},
		{ID: "4", Query: "q4", Gold: []string{"d"}},
	}
	r, err := Run(context.Background(), queries, f.search, Options{Ks: []int{5, 1, 5}, Now: f.now, Config: map[string]any{"mode": "fake"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range f.gotK {
		if k != 5 {
			t.Fatalf("search asked for k=%d, want max(Ks)=5", k)
		}
	}
	checks := []struct {
		name      string
		got, want float64
	}{
		// recall@1: q1 1, q2 0, q3 0.5, q4 0.
		{"recall@1", r.Metrics["recall@1"], 1.5 / 4},
		// recall@5: 1, 1, 1, 0.
		{"recall@5", r.Metrics["recall@5"], 3.0 / 4},
		// completeness@1: only q1.
		{"completeness@1", r.Metrics["completeness@1"], 1.0 / 4},
		// map@5: q1 1, q2 1/2, q3 (1/1+2/3)/2, q4 0.
		{"map@5", r.Metrics["map@5"], (1 + 0.5 + 5.0/6) / 4},
		// ndcg@5: q1 1, q2 1/log2(3), q3 (1+1/log2(4))/(1+1/log2(3)), q4 0.
		{"ndcg@5", r.Metrics["ndcg@5"], (1 + 0.6309297535714575 + 0.9197207891481876) / 4},
		{"single recall@1", r.ByKind["single"].Metrics["recall@1"], 0.5},
		{"single map@5", r.ByKind["single"].Metrics["map@5"], 0.75},
		{"multi completeness@5", r.ByKind["multi"].Metrics["completeness@5"], 1},
		{"unlabelled recall@5", r.ByKind[NoKind].Metrics["recall@5"], 0},
		// latencies 1,2,3,4 ms: p50 at rank 1.5 → 2.5; p95 at rank 2.85 → 3.85.
		{"p50", r.LatencyMS.P50, 2.5},
		{"p95", r.LatencyMS.P95, 3.85},
	}
	for _, c := range checks {
		if !near(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if r.NQueries != 4 || r.ByKind["single"].NQueries != 2 || r.ByKind["multi"].NQueries != 1 {
		t.Fatalf("counts: %+v", r)
	}
	if len(r.Metrics) != 8 {
		t.Fatalf("want 4 metrics × 2 Ks, got %v", r.Metrics)
	}

	// The --json shape of the issue.
	raw, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var shape map[string]json.RawMessage
	if err := json.Unmarshal(raw, &shape); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"n_queries", "metrics", "by_kind", "config", "latency_ms"} {
		if _, ok := shape[key]; !ok {
			t.Errorf("JSON lacks %q: %s", key, raw)
		}
	}
}

func TestRunErrors(t *testing.T) {
	f := &fakeSearch{rankings: map[string][]string{"ok": {"a"}}}
	_, err := Run(context.Background(), []Query{{ID: "1", Query: "ok", Gold: []string{"a"}}, {ID: "2", Query: "broken", Gold: []string{"a"}}}, f.search, Options{})
	var se *SearchError
	if !errors.As(err, &se) || se.ID != "2" {
		t.Fatalf("want SearchError for query 2, got %v", err)
	}
	if _, err := Run(context.Background(), []Query{{ID: "1", Query: "ok"}}, f.search, Options{}); err == nil {
		t.Fatal("empty gold accepted")
	}
	if _, err := Run(context.Background(), nil, f.search, Options{Ks: []int{0}}); err == nil {
		t.Fatal("K=0 accepted")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, []Query{{ID: "1", Query: "ok", Gold: []string{"a"}}}, f.search, Options{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("want context.Canceled, got %v", err)
	}
}
