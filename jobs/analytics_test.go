package jobs_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/jobs"
)

// TestSearchRollupRunsAtStart: the search_rollup job runs when the workers start and rolls
// the whole hours of the log up: the analytics then read the rollups for them.
func TestSearchRollupRunsAtStart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	// Raw SQL: searches of three hours ago, as the Search statement logs them.
	if _, err := pool.Exec(ctx, `INSERT INTO search_log (created_at, query, mode, k, endpoint, results, result_count, top_score, latency_ms)
		SELECT now() - interval '3 hours', 'query ' || i, 'lexical', 5, 'rest',
		       '[{"name": "a__b", "score": 1, "lexical_rank": 1, "bm25": 2}]', 1, 1, 4
		FROM generate_series(1, 5) i`); err != nil {
		t.Fatal(err)
	}
	rc, err := jobs.NewClient(jobs.Deps{Pool: pool, Logger: slog.New(slog.DiscardHandler), SearchLogKeep: 90 * 24 * time.Hour},
		jobs.Options{Work: true, MaxWorkers: 2})
	if err != nil {
		t.Fatal(err)
	}
	events, cancel := rc.Subscribe(river.EventKindJobCompleted, river.EventKindJobFailed)
	defer cancel()
	if err := rc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rc.Stop(context.Background()) })
	deadline := time.After(30 * time.Second)
	for done := false; !done; {
		select {
		case ev := <-events:
			if ev.Job.Kind == (jobs.SearchRollupArgs{}).Kind() {
				if ev.Kind != river.EventKindJobCompleted {
					t.Fatalf("search_rollup: %s %v", ev.Kind, ev.Job.Errors)
				}
				done = true
			}
		case <-deadline:
			t.Fatal("search_rollup not worked at start")
		}
	}
	var searches int64
	var caughtUp bool
	if err := pool.QueryRow(ctx, `SELECT (SELECT coalesce(sum(searches), 0) FROM search_rollup_hourly),
		       (SELECT through >= now() - interval '62 minutes' FROM search_rollup_state)`).
		Scan(&searches, &caughtUp); err != nil {
		t.Fatal(err)
	}
	if searches != 5 || !caughtUp {
		t.Fatalf("rolled up %d searches, caught up %v: want the 5, up to the last whole hour two minutes past", searches, caughtUp)
	}
}
