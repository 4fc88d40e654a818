package evalrun

import (
	"context"
	"errors"
	"testing"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertest"

	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/jobs"
)

// TestEnrichJobCountsAndFailure: the eval's wait on its enrichment counts the enrich_tool
// jobs by state, and its report of failed jobs quotes the last error River recorded for one.
func TestEnrichJobCountsAndFailure(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	rc, err := river.NewClient(riverpgxv5.New(pool), &river.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rc.Insert(ctx, jobs.EnrichToolArgs{ToolID: 1}, nil); err != nil {
		t.Fatal(err)
	}
	// a job that fails on its only attempt is discarded with River's record of the error
	errProvider := errors.New("provider: 500")
	failing := rivertest.NewWorker(t, riverpgxv5.New(pool), &river.Config{},
		river.WorkFunc(func(context.Context, *river.Job[jobs.EnrichToolArgs]) error { return errProvider }))
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // after the commit: nothing to roll back
	if res, err := failing.Work(ctx, t, tx, jobs.EnrichToolArgs{ToolID: 2}, &river.InsertOpts{MaxAttempts: 1}); !errors.Is(err, errProvider) || res.EventKind != river.EventKindJobFailed {
		t.Fatalf("failing job: %+v, %v", res, err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}

	counts, err := enrichJobCounts(ctx, pool)
	if err != nil || len(counts) != 2 || counts["available"] != 1 || counts["discarded"] != 1 {
		t.Fatalf("counts %v, %v; want 1 available, 1 discarded", counts, err)
	}
	f := enrichFailures{Jobs: 1}
	if err := enrichFailed(ctx, pool, rc, &f); err != nil || f.JobError != errProvider.Error() {
		t.Fatalf("failures %+v, %v; want the discarded job's error", f, err)
	}
}
