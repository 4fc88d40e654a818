package jobs_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/embed"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/profiles"
	"github.com/toolgate/toolgate/internal/search"
	"github.com/toolgate/toolgate/internal/testfactory"
	"github.com/toolgate/toolgate/internal/tune"
	"github.com/toolgate/toolgate/jobs"
)

// TestTuneJobFailsForGoodWithoutLabels: a profile_tune job whose labels are gone by the
// time it runs (their month of the log dropped) records the tune as failed with the reason
// and is cancelled, not retried: running it again would fail the same way. No profile is
// created.
func TestTuneJobFailsForGoodWithoutLabels(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	log := slog.New(slog.DiscardHandler)
	tools, uses := testfactory.MisleadingCatalog()
	_, res := testfactory.Catalog(ctx, t, pool, "ws", tools, nil)
	testfactory.Enrich(ctx, t, testfactory.LocalEnricher(pool, 0), res.Changed...)
	svc := search.New(pool, embed.NewLocal(384), search.DefaultSettings(), log)
	testfactory.Labels(ctx, t, svc, "ws", uses)

	// The tune is queued while no worker runs, then its labels go.
	inserter, err := jobs.NewClient(jobs.Deps{Pool: pool, Logger: log}, jobs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	started, err := tune.Start(ctx, pool, jobs.NewQueue(inserter), tune.Options{Profile: "learned"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `DELETE FROM search_labels`); err != nil {
		t.Fatal(err)
	}

	rc, err := jobs.NewClient(jobs.Deps{Pool: pool, Logger: log, Embedder: embed.NewLocal(384)}, jobs.Options{Work: true, MaxWorkers: 1})
	if err != nil {
		t.Fatal(err)
	}
	events := testfactory.JobEvents(t, rc)
	if err := rc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = rc.Stop(sctx)
	})
	ev := testfactory.WaitJob(t, events, time.Minute, "the profile_tune job", func(ev *river.Event) bool {
		return ev.Job.ID == started.JobID
	})
	if ev.Kind != river.EventKindJobCancelled || ev.Job.State != rivertype.JobStateCancelled || ev.Job.Attempt != 1 {
		t.Fatalf("profile_tune job: event %s, state %s, attempt %d; want cancelled at its first attempt", ev.Kind, ev.Job.State, ev.Job.Attempt)
	}
	v, err := tune.Get(ctx, pool, started.Tune.ID)
	if err != nil || v.State != db.TuneFailed || v.Error == nil || !strings.Contains(*v.Error, "too few labels") {
		t.Errorf("tune after its job: %+v %v", v, err)
	}
	var nf *profiles.NotFoundError
	if _, err := profiles.Get(ctx, pool, "learned"); !errors.As(err, &nf) {
		t.Errorf("the failed tune created its profile: %v", err)
	}
}
