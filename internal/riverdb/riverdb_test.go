package riverdb_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertest"
	"github.com/riverqueue/river/rivertype"

	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/riverdb"
	"github.com/toolgate/toolgate/internal/testfactory"
)

// Every test runs on a database migrated by internal/postgres, River's migrations included,
// and reads what a statement wrote back through River's client (JobGet): a row River
// could no longer read after an upgrade fails here.

// toolJob is a job whose args name a tool, as enrich_tool's do.
type toolJob struct {
	ToolID int64 `json:"tool_id"`
}

func (toolJob) Kind() string { return "tool_job" }

// otherToolJob names a tool too, under another kind.
type otherToolJob struct {
	ToolID int64 `json:"tool_id"`
}

func (otherToolJob) Kind() string { return "other_tool_job" }

// newClient is a River client that only inserts and reads jobs.
func newClient(t *testing.T, pool *pgxpool.Pool) *river.Client[pgx.Tx] {
	t.Helper()
	rc, err := river.NewClient(riverpgxv5.New(pool), &river.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return rc
}

func insert(t *testing.T, rc *river.Client[pgx.Tx], args river.JobArgs, opts *river.InsertOpts) int64 {
	t.Helper()
	res, err := rc.Insert(context.Background(), args, opts)
	if err != nil {
		t.Fatal(err)
	}
	return res.Job.ID
}

func get(t *testing.T, rc *river.Client[pgx.Tx], id int64) *rivertype.JobRow {
	t.Helper()
	job, err := rc.JobGet(context.Background(), id)
	if err != nil {
		t.Fatalf("job %d: %v", id, err)
	}
	return job
}

// running sets job id to what a process killed while working it leaves, a state no client
// call makes: running, attempt attempt begun ago, by a client that is gone, whose
// cancellation was asked for.
func running(t *testing.T, pool *pgxpool.Pool, id int64, ago time.Duration, attempt int) {
	t.Helper()
	if _, err := pool.Exec(context.Background(), `UPDATE river_job SET state = 'running', attempt = $3,
		attempted_at = now() - make_interval(secs => $2), attempted_by = '{dead-client}',
		metadata = jsonb_build_object('cancel_attempted_at', now()) WHERE id = $1`, id, ago.Seconds(), attempt); err != nil {
		t.Fatal(err)
	}
}

func TestCountJobs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	rc := newClient(t, pool)
	if got, err := riverdb.CountJobs(ctx, pool); err != nil || len(got) != 0 {
		t.Fatalf("empty table: %v, %v", got, err)
	}
	insert(t, rc, toolJob{ToolID: 1}, nil)
	insert(t, rc, toolJob{ToolID: 2}, nil)
	insert(t, rc, toolJob{ToolID: 3}, &river.InsertOpts{ScheduledAt: time.Now().Add(time.Hour)})
	insert(t, rc, otherToolJob{ToolID: 1}, nil)

	got, err := riverdb.CountJobs(ctx, pool)
	want := []riverdb.KindStateCount{
		{Kind: "other_tool_job", State: "available", Count: 1},
		{Kind: "tool_job", State: "available", Count: 2},
		{Kind: "tool_job", State: "scheduled", Count: 1},
	}
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("all kinds: %v, %v; want %v", got, err, want)
	}
	got, err = riverdb.CountJobs(ctx, pool, "tool_job")
	if err != nil || !slices.Equal(got, want[1:]) {
		t.Fatalf("tool_job: %v, %v; want %v", got, err, want[1:])
	}
}

func TestRetryRunning(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	rc := newClient(t, pool)
	const reason = "abandoned: retried"
	id := insert(t, rc, toolJob{ToolID: 1}, &river.InsertOpts{MaxAttempts: 3})
	if ok, err := riverdb.RetryRunning(ctx, pool, id, time.Minute, reason); err != nil || ok {
		t.Fatalf("retry of an available job: %v, %v; want it left alone", ok, err)
	}
	running(t, pool, id, 10*time.Minute, 3)
	if ok, err := riverdb.RetryRunning(ctx, pool, id, 15*time.Minute, reason); err != nil || ok {
		t.Fatalf("retry of an attempt younger than the threshold: %v, %v; want it left alone", ok, err)
	}
	if job := get(t, rc, id); job.State != rivertype.JobStateRunning {
		t.Fatalf("refused retry changed the job: %+v", job)
	}

	if ok, err := riverdb.RetryRunning(ctx, pool, id, 5*time.Minute, reason); err != nil || !ok {
		t.Fatalf("retry of an abandoned attempt: %v, %v", ok, err)
	}
	job := get(t, rc, id)
	if job.State != rivertype.JobStateAvailable || job.MaxAttempts != 4 || len(job.Errors) != 1 ||
		job.Errors[0].Error != reason || job.Errors[0].Attempt != 3 {
		t.Fatalf("retried job: %+v", job)
	}
	var meta map[string]any
	if err := json.Unmarshal(job.Metadata, &meta); err != nil {
		t.Fatal(err)
	}
	if _, asked := meta["cancel_attempted_at"]; asked {
		t.Errorf("retried job's metadata %s: want the cancellation request dropped", job.Metadata)
	}
}

func TestCancelRunning(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	rc := newClient(t, pool)
	const reason = "abandoned: cancelled"
	id := insert(t, rc, toolJob{ToolID: 1}, nil)
	running(t, pool, id, 10*time.Minute, 1)
	if ok, err := riverdb.CancelRunning(ctx, pool, id, 15*time.Minute, reason); err != nil || ok {
		t.Fatalf("cancel of an attempt younger than the threshold: %v, %v; want it left alone", ok, err)
	}
	if ok, err := riverdb.CancelRunning(ctx, pool, id, 5*time.Minute, reason); err != nil || !ok {
		t.Fatalf("cancel of an abandoned attempt: %v, %v", ok, err)
	}
	job := get(t, rc, id)
	var meta struct {
		CancelAttemptedAt *time.Time `json:"cancel_attempted_at"`
	}
	if err := json.Unmarshal(job.Metadata, &meta); err != nil {
		t.Fatal(err)
	}
	if job.State != rivertype.JobStateCancelled || job.FinalizedAt == nil || meta.CancelAttemptedAt == nil ||
		len(job.Errors) != 1 || job.Errors[0].Error != reason || job.Errors[0].Attempt != 1 {
		t.Fatalf("cancelled job: %+v, metadata %s", job, job.Metadata)
	}
	if ok, err := riverdb.CancelRunning(ctx, pool, id, 5*time.Minute, reason); err != nil || ok {
		t.Fatalf("second cancel: %v, %v; want the finalized job left alone", ok, err)
	}
}

func TestListAndReplaceJobErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	rc := newClient(t, pool)
	insert(t, rc, toolJob{ToolID: 1}, nil) // no errors: not listed

	// River records a failed attempt's error
	errSecret := errors.New("token=secret")
	failing := rivertest.NewWorker(t, riverpgxv5.New(pool), &river.Config{},
		river.WorkFunc(func(context.Context, *river.Job[toolJob]) error { return errSecret }))
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // after the commit: nothing to roll back
	res, err := failing.Work(ctx, t, tx, toolJob{ToolID: 2}, nil)
	if !errors.Is(err, errSecret) || res.EventKind != river.EventKindJobFailed {
		t.Fatalf("failing job: %+v, %v", res, err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	id := res.Job.ID

	got, err := riverdb.ListJobErrors(ctx, pool)
	if err != nil || len(got) != 1 || got[0].ID != id {
		t.Fatalf("ListJobErrors: %+v, %v; want job %d", got, err, id)
	}
	var errs []rivertype.AttemptError
	if err := json.Unmarshal([]byte(got[0].Errors), &errs); err != nil || len(errs) != 1 || errs[0].Error != "token=secret" {
		t.Fatalf("errors %s (%v): want River's record of the failed attempt", got[0].Errors, err)
	}

	errs[0].Error = "token=***"
	masked, err := json.Marshal(errs)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := riverdb.ReplaceJobErrors(ctx, pool, id, "[]", string(masked)); err != nil || ok {
		t.Fatalf("replace from stale errors: %v, %v; want the job left alone", ok, err)
	}
	if ok, err := riverdb.ReplaceJobErrors(ctx, pool, id, got[0].Errors, string(masked)); err != nil || !ok {
		t.Fatalf("replace: %v, %v", ok, err)
	}
	job := get(t, rc, id)
	if len(job.Errors) != 1 || job.Errors[0].Error != "token=***" || !job.Errors[0].At.Equal(errs[0].At) || job.Errors[0].Attempt != 1 {
		t.Fatalf("errors after the replace: %+v", job.Errors)
	}
}

func TestDeleteWaitingToolJobs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	rc := newClient(t, pool)
	_, a := testfactory.Catalog(ctx, t, pool, "a", []catalog.Tool{testfactory.Tool("one", "first"), testfactory.Tool("two", "second")}, nil)
	_, b := testfactory.Catalog(ctx, t, pool, "b", []catalog.Tool{testfactory.Tool("three", "third")}, nil)
	a1, a2, b1 := a.Changed[0], a.Changed[1], b.Changed[0]

	gone := []int64{
		insert(t, rc, toolJob{ToolID: a1}, nil),
		insert(t, rc, toolJob{ToolID: a2}, &river.InsertOpts{ScheduledAt: time.Now().Add(time.Hour)}),
	}
	cancelled := insert(t, rc, toolJob{ToolID: a1}, nil)
	if _, err := rc.JobCancel(ctx, cancelled); err != nil {
		t.Fatal(err)
	}
	started := insert(t, rc, toolJob{ToolID: a2}, nil)
	running(t, pool, started, time.Minute, 1)
	kept := []int64{
		cancelled, started,
		insert(t, rc, otherToolJob{ToolID: a1}, nil), // another kind
		insert(t, rc, toolJob{ToolID: b1}, nil),      // another source's tool
	}

	n, err := riverdb.DeleteWaitingToolJobs(ctx, pool, "tool_job", "a")
	if err != nil || n != 2 {
		t.Fatalf("deleted %d, %v; want the 2 waiting jobs of a's tools", n, err)
	}
	for _, id := range gone {
		if _, err := rc.JobGet(ctx, id); !errors.Is(err, river.ErrNotFound) {
			t.Errorf("job %d: %v, want deleted", id, err)
		}
	}
	for _, id := range kept {
		get(t, rc, id)
	}
}

func TestToolsEnrichedOnlyBy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	rc := newClient(t, pool)
	_, res := testfactory.Catalog(ctx, t, pool, "a", []catalog.Tool{
		testfactory.Tool("one", "first"), testfactory.Tool("two", "second"), testfactory.Tool("three", "third")}, nil)
	old := testfactory.LocalEnricher(pool, 1)
	testfactory.Enrich(ctx, t, old, res.Changed[:2]...) // the third is not enriched
	before := []string{old.Enricher.Model()}

	got, err := riverdb.ToolsEnrichedOnlyBy(ctx, pool, before, "new-model", "tool_job")
	if err != nil || !slices.Equal(got, res.Changed[:2]) {
		t.Fatalf("before any job: %v, %v; want the 2 enriched tools", got, err)
	}
	// a waiting job of the first tool covers it; a finished one, or one of another kind, does not
	insert(t, rc, toolJob{ToolID: res.Changed[0]}, nil)
	finished := insert(t, rc, toolJob{ToolID: res.Changed[1]}, nil)
	if _, err := rc.JobCancel(ctx, finished); err != nil {
		t.Fatal(err)
	}
	insert(t, rc, otherToolJob{ToolID: res.Changed[1]}, nil)
	got, err = riverdb.ToolsEnrichedOnlyBy(ctx, pool, before, "new-model", "tool_job")
	if err != nil || !slices.Equal(got, res.Changed[1:2]) {
		t.Fatalf("with jobs: %v, %v; want the second tool only", got, err)
	}
	// tools that already have the model's outputs are done
	if got, err := riverdb.ToolsEnrichedOnlyBy(ctx, pool, before, before[0], "tool_job"); err != nil || len(got) != 0 {
		t.Fatalf("model already applied: %v, %v", got, err)
	}
}
