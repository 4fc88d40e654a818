package search_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"

	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/metrics"
	"github.com/toolgate/toolgate/internal/search"
)

// TestConcurrentFeedbackCountsOneLabel: reports of the same tool for the same search posted
// at once are one label (the last report replaces the others), and the label counter of
// /metrics counts it once. Each round posts 8 reports at once; without serialization they
// all read search_labels before any of them wrote it and each counted a new label.
func TestConcurrentFeedbackCountsOneLabel(t *testing.T) {
	t.Parallel()
	pool, _ := setup(t)
	m := metrics.New()
	s := search.New(pool, nil, search.DefaultSettings(), slog.New(slog.DiscardHandler), search.WithMetrics(m))
	ctx := auth.WithCaller(context.Background(), &auth.Caller{Name: "agent", KeyID: 5, Scope: auth.ScopeSearch})
	const rounds, writers = 10, 8
	for round := range rounds {
		resp := mustSearch(t, ctx, s, search.Request{Query: "stock price", K: 3})
		if len(resp.Results) == 0 {
			t.Fatal("no results")
		}
		var wg sync.WaitGroup
		errs := make(chan error, writers)
		for i := range writers {
			wg.Go(func() {
				ok := i%2 == 0
				_, err := s.RecordFeedback(ctx, callerOf(ctx), resp.SearchID, []search.Feedback{{Name: resp.Results[0].Name, Success: &ok}})
				errs <- err
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
		var n int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM search_labels
			WHERE search_id = $1 AND label_source = 'feedback'`, resp.SearchID).Scan(&n); err != nil || n != 1 {
			t.Fatalf("round %d: %d feedback labels (%v), want 1", round, n, err)
		}
	}
	families, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	var got float64
	for _, f := range families {
		if f.GetName() != metrics.Namespace+"_search_labels_total" {
			continue
		}
		for _, s := range f.GetMetric() {
			for _, l := range s.GetLabel() {
				if l.GetName() == "label_source" && l.GetValue() == "feedback" {
					got += s.GetCounter().GetValue()
				}
			}
		}
	}
	if got != rounds {
		t.Fatalf("toolgate_search_labels_total counted %v feedback labels, want %d", got, rounds)
	}
}
