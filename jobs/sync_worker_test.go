package jobs_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/mcpclient"
	"github.com/toolgate/toolgate/internal/mcptest"
	"github.com/toolgate/toolgate/internal/metrics"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/jobs"
)

// TestWorkersSyncDueSourcesAndRetryFailures runs real River workers: the periodic job finds
// a source whose interval has elapsed and syncs it; a failing source's job is left
// retryable with its error recorded, and its tools untouched.
func TestWorkersSyncDueSourcesAndRetryFailures(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	tools := []catalog.Tool{mcpTool("a", "A.", schemaQ), mcpTool("b", "B.", schemaQ)}
	good := mcptest.NewHTTP(t, tools, mcptest.Normal, 0)
	hang := mcptest.NewHTTP(t, tools, mcptest.Hang, 0)

	every := pgtype.Interval{Microseconds: (10 * time.Second).Microseconds(), Valid: true}
	cfg, _ := json.Marshal(good.Config())
	due, err := db.New(pool).CreateSource(ctx, db.CreateSourceParams{Name: "due", Kind: mcpclient.KindHTTP, Config: cfg, SyncInterval: every})
	if err != nil {
		t.Fatal(err)
	}
	flaky := createSource(t, pool, "flaky", mcpclient.KindHTTP, good.Config(), false)
	rc0, err := jobs.NewClient(jobs.Deps{Pool: pool, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, jobs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := jobs.SyncSource(ctx, pool, rc0, flaky.ID, timeout); err != nil {
		t.Fatal(err)
	}
	setConfig(t, pool, flaky, hang.Config())

	m := metrics.New()
	rc, err := jobs.NewClient(jobs.Deps{Pool: pool, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), SyncTimeout: time.Second, Metrics: m},
		jobs.Options{Work: true, MaxWorkers: 4})
	if err != nil {
		t.Fatal(err)
	}
	if err := rc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rc.Stop(context.Background()) })
	if _, _, err := jobs.EnqueueSync(ctx, rc, flaky.ID); err != nil {
		t.Fatal(err)
	}

	for { // the periodic job syncs "due" on start; the test's timeout bounds the wait
		n, err := db.New(pool).CountToolsBySource(ctx, due.ID)
		if err != nil {
			t.Fatal(err)
		}
		if n == 2 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	for {
		var state string
		var errs int
		err := pool.QueryRow(ctx, `SELECT state, coalesce(array_length(errors, 1), 0) FROM river_job
			WHERE kind = 'sync_source' AND (args->>'source_id')::bigint = $1`, flaky.ID).Scan(&state, &errs)
		if err != nil {
			t.Fatal(err)
		}
		if state == "retryable" && errs >= 1 {
			break
		}
		if state == "completed" || state == "discarded" {
			t.Fatalf("failing sync ended %s", state)
		}
		time.Sleep(50 * time.Millisecond)
	}
	run, err := db.New(pool).LastSyncRun(ctx, flaky.ID)
	if err != nil || run.State != "failed" || run.Error == nil {
		t.Fatalf("flaky run: %+v %v", run, err)
	}
	if n, _ := db.New(pool).CountToolsBySource(ctx, flaky.ID); n != 2 {
		t.Fatalf("flaky tools after failure: %d", n)
	}
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for _, want := range []string{
		`toolgate_sync_runs_total{result="failed",source="flaky"}`,
		`toolgate_sync_runs_total{result="ok",source="due"}`,
	} {
		if !strings.Contains(rec.Body.String(), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
