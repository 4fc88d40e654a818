package jobs_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/mcpclient"
	"github.com/toolgate/toolgate/internal/mcptest"
	"github.com/toolgate/toolgate/internal/metrics"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/sources"
	"github.com/toolgate/toolgate/internal/testfactory"
	"github.com/toolgate/toolgate/internal/upstreamauth"
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
	if _, err := sources.Sync(ctx, pool, jobs.NewQueue(rc0), flaky.ID, timeout, mcptest.Commands()); err != nil {
		t.Fatal(err)
	}
	setConfig(t, pool, flaky, hang.Config())

	m := metrics.New()
	rc, err := jobs.NewClient(jobs.Deps{Pool: pool, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), SyncTimeout: time.Second, Metrics: m},
		jobs.Options{Work: true, MaxWorkers: 4})
	if err != nil {
		t.Fatal(err)
	}
	events := testfactory.JobEvents(t, rc)
	if err := rc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rc.Stop(context.Background()) })
	flakyJob, _, err := jobs.NewQueue(rc).Sync(ctx, flaky.ID)
	if err != nil {
		t.Fatal(err)
	}

	// The periodic job syncs "due" on start; the failing sync of "flaky" is left retryable.
	syncOf := func(ev *river.Event, id int64) bool {
		var args jobs.SyncArgs
		return ev.Job.Kind == args.Kind() && json.Unmarshal(ev.Job.EncodedArgs, &args) == nil && args.SourceID == id
	}
	var dueDone, flakyFailed bool
	for !dueDone || !flakyFailed {
		ev := testfactory.WaitJob(t, events, time.Minute, "the syncs of due and flaky", func(ev *river.Event) bool {
			return syncOf(ev, due.ID) || ev.Job.ID == flakyJob
		})
		switch {
		case syncOf(ev, due.ID):
			if ev.Kind != river.EventKindJobCompleted {
				t.Fatalf("the sync of due ended %s: %v", ev.Job.State, ev.Job.Errors)
			}
			dueDone = true
		case ev.Kind == river.EventKindJobFailed && ev.Job.State != rivertype.JobStateDiscarded && len(ev.Job.Errors) >= 1:
			// failed, to be retried (retryable, or available at once when the backoff is short)
			flakyFailed = true
		default:
			t.Fatalf("failing sync ended %s", ev.Job.State)
		}
	}
	if n, err := db.New(pool).CountToolsBySource(ctx, due.ID); err != nil || n != 2 {
		t.Fatalf("due's tools after its sync: %d %v", n, err)
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

// TestAbandonedSyncRunsAreClosed: a sync run left 'running' by a process that died is
// marked failed once it is older than any sync can last; a recent one is left alone.
func TestAbandonedSyncRunsAreClosed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	src := createSource(t, pool, "crashed", mcpclient.KindHTTP, mcpclient.Config{URL: "http://127.0.0.1:1/mcp"}, false)
	var old, recent int64
	if err := pool.QueryRow(ctx, `INSERT INTO sync_runs (source_id, state, started_at)
		VALUES ($1, 'running', now() - interval '10 minutes') RETURNING id`, src.ID).Scan(&old); err != nil {
		t.Fatal(err)
	}
	if err := pool.QueryRow(ctx, `INSERT INTO sync_runs (source_id, state) VALUES ($1, 'running') RETURNING id`, src.ID).Scan(&recent); err != nil {
		t.Fatal(err)
	}
	n, err := sources.AbandonSyncRuns(ctx, pool, 3*time.Minute)
	if err != nil || n != 1 {
		t.Fatalf("abandoned %d, %v; want 1", n, err)
	}
	state := func(id int64) (s string, msg *string, finished bool) {
		t.Helper()
		if err := pool.QueryRow(ctx, `SELECT state, error, finished_at IS NOT NULL FROM sync_runs WHERE id = $1`, id).Scan(&s, &msg, &finished); err != nil {
			t.Fatal(err)
		}
		return
	}
	if s, msg, finished := state(old); s != "failed" || msg == nil || !strings.Contains(*msg, "abandoned") || !finished {
		t.Errorf("old run: %s %v finished=%v", s, msg, finished)
	}
	if s, _, finished := state(recent); s != "running" || finished {
		t.Errorf("recent run: %s finished=%v", s, finished)
	}
	// With a longer sync timeout the 10-minute-old run would still be in time.
	if _, err := pool.Exec(ctx, `UPDATE sync_runs SET state = 'running', finished_at = NULL, error = NULL WHERE id = $1`, old); err != nil {
		t.Fatal(err)
	}
	long := jobs.Deps{SyncTimeout: 15 * time.Minute}
	if n, err := sources.AbandonSyncRuns(ctx, pool, long.AbandonedAfter(jobs.SyncArgs{}.Kind())); err != nil || n != 0 {
		t.Errorf("with a 15m sync timeout: abandoned %d, %v; want 0", n, err)
	}
}

// TestSyncRefusesCommandsOutsideTheAllowlist: a stored mcp_stdio source whose command
// TOOLGATE_STDIO_COMMANDS does not hold (stored before the allowlist changed) is never
// started: sources.Sync fails with a CommandNotAllowedError and records the failed run, and
// the sync job is cancelled rather than retried.
func TestSyncRefusesCommandsOutsideTheAllowlist(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	marker := filepath.Join(t.TempDir(), "marker")
	src := createSource(t, pool, "shell", mcpclient.KindStdio, mcpclient.Config{Command: "/bin/sh", Args: []string{"-c", "touch " + marker}}, false)
	rc0, err := jobs.NewClient(jobs.Deps{Pool: pool, Logger: slog.New(slog.DiscardHandler)}, jobs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = sources.Sync(ctx, pool, jobs.NewQueue(rc0), src.ID, timeout, mcpclient.NewCommandPolicy([][]string{{"/bin/sh", "-c", "true"}}))
	var refused *mcpclient.CommandNotAllowedError
	if !errors.As(err, &refused) {
		t.Fatalf("sync: %v, want CommandNotAllowedError", err)
	}
	run, err := db.New(pool).LastSyncRun(ctx, src.ID)
	if err != nil || run.State != "failed" || run.Error == nil || !strings.Contains(*run.Error, "TOOLGATE_STDIO_COMMANDS") {
		t.Fatalf("run: %+v %v", run, err)
	}

	ev := syncJob(t, jobs.Deps{Pool: pool, Logger: slog.New(slog.DiscardHandler), SyncTimeout: time.Second}, src.ID, "the refused sync")
	if ev.Kind != river.EventKindJobCancelled {
		t.Fatalf("the refused sync ended %s, want cancelled", ev.Job.State)
	}
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the refused command ran: %v", err)
	}
}

// TestSyncOfUnauthorizedSourceIsCancelled: the sync of an mcp_http source configured for
// OAuth that holds no tokens fails at once, before any request, records the state in its
// run, and its job is cancelled rather than retried: it syncs again once an admin
// authorizes it (the callback queues a sync).
func TestSyncOfUnauthorizedSourceIsCancelled(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	var src db.Source
	if err := pool.QueryRow(ctx, `INSERT INTO sources (name, kind, config)
		VALUES ('tracker', 'mcp_http', '{"url": "http://127.0.0.1:1/mcp", "oauth": {}}') RETURNING id`).Scan(&src.ID); err != nil {
		t.Fatal(err)
	}
	keys, err := upstreamauth.ParseKeys(upstreamauth.NewKey())
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	ev := syncJob(t, jobs.Deps{Pool: pool, Logger: log, SyncTimeout: 10 * time.Second,
		Auth: upstreamauth.New(pool, upstreamauth.Settings{Keys: keys}, log)}, src.ID, "the unauthorized sync")
	if ev.Kind != river.EventKindJobCancelled {
		t.Fatalf("the unauthorized sync ended %s, want cancelled", ev.Job.State)
	}
	run, err := db.New(pool).LastSyncRun(ctx, src.ID)
	if err != nil || run.State != "failed" || run.Error == nil || !strings.Contains(*run.Error, "not authorized") {
		t.Fatalf("run: %+v %v", run, err)
	}
}

// syncJob runs a River client with deps (two workers), queues a sync of the source and
// returns the event that ended its job.
func syncJob(t *testing.T, deps jobs.Deps, sourceID int64, what string) *river.Event {
	t.Helper()
	ctx := context.Background()
	rc, err := jobs.NewClient(deps, jobs.Options{Work: true, MaxWorkers: 2})
	if err != nil {
		t.Fatal(err)
	}
	events := testfactory.JobEvents(t, rc)
	if err := rc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rc.Stop(context.Background()) })
	id, _, err := jobs.NewQueue(rc).Sync(ctx, sourceID)
	if err != nil {
		t.Fatal(err)
	}
	return testfactory.WaitJob(t, events, time.Minute, what, func(ev *river.Event) bool { return ev.Job.ID == id })
}
