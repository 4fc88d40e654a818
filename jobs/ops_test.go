package jobs_test

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/toolgate/toolgate/internal/metrics"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/jobs"
)

// TestPollOnlyClientWorksJobsWithMetrics runs toolgate's River client as it runs behind
// pgbouncer (no LISTEN/NOTIFY) and checks that it still works jobs, recording them in the
// metrics registry it was given.
func TestPollOnlyClientWorksJobsWithMetrics(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	m := metrics.New()
	rc, err := jobs.NewClient(jobs.Deps{Pool: pool, Logger: slog.New(slog.DiscardHandler), SearchLogKeep: 90 * 24 * time.Hour, Metrics: m},
		jobs.Options{Work: true, MaxWorkers: 2, PollOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	events, cancel := rc.Subscribe(river.EventKindJobCompleted, river.EventKindJobFailed)
	defer cancel()
	if err := rc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rc.Stop(context.Background()) })

	// The periodic log maintenance job runs at start, among the other periodic jobs that
	// do (in any order): none may fail.
	deadline := time.After(30 * time.Second)
	for done := false; !done; {
		select {
		case ev := <-events:
			if ev.Kind != river.EventKindJobCompleted {
				t.Fatalf("event %s for %s, want every job completed", ev.Kind, ev.Job.Kind)
			}
			done = ev.Job.Kind == "search_log_maintenance"
		case <-deadline:
			t.Fatal("search_log_maintenance not worked in poll-only mode")
		}
	}
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if want := `toolgate_job_duration_seconds_count{kind="search_log_maintenance",outcome="ok"} 1`; !strings.Contains(rec.Body.String(), want) {
		t.Fatalf("metrics lack %s", want)
	}
}
