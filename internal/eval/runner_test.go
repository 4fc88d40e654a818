package eval

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/plan"
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

// A planned search answers k=5 with plan.Merge's shares of 5, not with the first 5 of its
// k=10 answer: with PerK each K is scored on its own answer, as POST /search would give it.
func TestRunPerKScoresEachAnswer(t *testing.T) {
	// Two intents; b3 outscores a3, so the one leftover slot of k=5 (quota 2 each) goes to
	// b3, while k=10 (quota 5 each) places a3 fifth, round-robin.
	perIntent := [][]plan.Ranked{
		{{ID: "a1", Score: 0.9}, {ID: "a2", Score: 0.8}, {ID: "a3", Score: 0.5}, {ID: "a4", Score: 0.4}, {ID: "a5", Score: 0.3}},
		{{ID: "b1", Score: 0.9}, {ID: "b2", Score: 0.8}, {ID: "b3", Score: 0.7}, {ID: "b4", Score: 0.2}, {ID: "b5", Score: 0.1}},
	}
	var asked []int
	planned := func(_ context.Context, _ string, k int) ([]string, error) {
		asked = append(asked, k)
		var names []string
		for _, r := range plan.Merge(k, perIntent) {
			names = append(names, r.ID)
		}
		return names, nil
	}
	if top5of10, of5 := plan.Merge(10, perIntent)[4].ID, plan.Merge(5, perIntent)[4].ID; top5of10 != "a3" || of5 != "b3" {
		t.Fatalf("the case does not show the difference: fifth of k=10 %s, of k=5 %s", top5of10, of5)
	}
	queries := []Query{{ID: "1", Query: "planned", Gold: []string{"b3"}}}

	truncated, err := Run(context.Background(), queries, planned, Options{Ks: []int{5, 10}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(asked, []int{10}) || truncated.Metrics["recall@5"] != 0 {
		t.Fatalf("one search: asked %v, recall@5 %v; want [10] and 0 (b3 is 6th of the k=10 answer)", asked, truncated.Metrics["recall@5"])
	}

	asked = nil
	exact, err := Run(context.Background(), queries, planned, Options{Ks: []int{5, 10}, PerK: true})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(asked, []int{10, 5}) {
		t.Fatalf("per K: asked %v, want [10 5] (the timed max-K search first)", asked)
	}
	if exact.Metrics["recall@5"] != 1 || exact.Metrics["recall@10"] != 1 || exact.Metrics["map@5"] != 0.2 {
		t.Fatalf("per K metrics %v: want recall@5 1 (b3 is 5th of the k=5 answer), map@5 0.2", exact.Metrics)
	}
}

func TestRunPerKStopsAtAFailedSearch(t *testing.T) {
	search := func(_ context.Context, _ string, k int) ([]string, error) {
		if k == 1 {
			return nil, errors.New("planner down")
		}
		return []string{"a"}, nil
	}
	_, err := Run(context.Background(), []Query{{ID: "q", Query: "x", Gold: []string{"a"}}}, search, Options{Ks: []int{1, 5}, PerK: true})
	var se *SearchError
	if !errors.As(err, &se) || se.ID != "q" {
		t.Fatalf("want SearchError for q, got %v", err)
	}
}
