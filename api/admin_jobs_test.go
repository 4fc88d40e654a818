package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/labstack/echo/v4"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/toolgate/toolgate/api"
	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/metrics"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/profiles"
	"github.com/toolgate/toolgate/internal/testfactory"
	"github.com/toolgate/toolgate/jobs"
)

// opsTestArgs is a job kind registered only for these tests.
type opsTestArgs struct {
	N    int  `json:"n"`
	Fail bool `json:"fail"`
}

func (opsTestArgs) Kind() string { return "ops_test" }

type opsOtherArgs struct{}

func (opsOtherArgs) Kind() string { return "ops_other" }

type opsTestWorker struct {
	river.WorkerDefaults[opsTestArgs]
}

func (opsTestWorker) Work(_ context.Context, j *river.Job[opsTestArgs]) error {
	if j.Args.Fail {
		return river.JobCancel(errors.New("told to fail"))
	}
	return nil
}

type opsOtherWorker struct {
	river.WorkerDefaults[opsOtherArgs]
}

func (opsOtherWorker) Work(context.Context, *river.Job[opsOtherArgs]) error { return nil }

// newRiver makes a River client knowing the test kinds; with work it also runs them.
func newRiver(t *testing.T, pool *pgxpool.Pool, m *metrics.Metrics, work bool) *river.Client[pgx.Tx] {
	t.Helper()
	workers := river.NewWorkers()
	river.AddWorker(workers, opsTestWorker{})
	river.AddWorker(workers, opsOtherWorker{})
	cfg := &river.Config{Logger: slog.New(slog.DiscardHandler), Workers: workers, Middleware: m.JobMiddlewares(), TestOnly: true}
	if work {
		cfg.Queues = map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 2}}
		cfg.FetchPollInterval = 100 * time.Millisecond
	}
	rc, err := river.NewClient(riverpgxv5.New(pool), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return rc
}

type jobJSON struct {
	ID          int64           `json:"id"`
	Kind        string          `json:"kind"`
	State       string          `json:"state"`
	Attempt     int             `json:"attempt"`
	MaxAttempts int             `json:"max_attempts"`
	Args        json.RawMessage `json:"args"`
	Errors      []struct {
		Error string `json:"error"`
	} `json:"errors"`
	ScheduledAt time.Time       `json:"scheduled_at"`
	FinalizedAt *time.Time      `json:"finalized_at"`
	Metadata    json.RawMessage `json:"metadata"`
}

type listJSON struct {
	Jobs []jobJSON `json:"jobs"`
	Next string    `json:"next"`
}

func decodeAs[T any](t *testing.T, rec *httptest.ResponseRecorder, status int) T {
	t.Helper()
	if rec.Code != status {
		t.Fatalf("status %d, want %d: %s", rec.Code, status, rec.Body)
	}
	var v T
	if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
		t.Fatalf("decode %s: %v", rec.Body, err)
	}
	return v
}

func wantError(t *testing.T, e *echo.Echo, method, target string, status int, code string) {
	t.Helper()
	rec := opsDo(t, e, method, target, nil)
	var body struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	if rec.Code != status || json.Unmarshal(rec.Body.Bytes(), &body) != nil || body.Error.Code != code {
		t.Errorf("%s %s: %d %s, want %d %s", method, target, rec.Code, rec.Body, status, code)
	}
}

func TestAdminJobs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	rc := newRiver(t, pool, nil, false) // insert only: jobs stay available
	e := api.New(api.Deps{Pool: pool, River: rc, Logger: slog.New(slog.DiscardHandler), Open: true})

	var ids []int64
	for i := range 3 {
		res, err := rc.Insert(ctx, opsTestArgs{N: i}, nil)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.Job.ID)
	}
	if _, err := rc.Insert(ctx, opsOtherArgs{}, nil); err != nil {
		t.Fatal(err)
	}

	// Filters and newest-first order.
	all := decodeAs[listJSON](t, opsDo(t, e, http.MethodGet, "/admin/jobs", nil), http.StatusOK)
	if len(all.Jobs) != 4 || all.Next != "" {
		t.Fatalf("all jobs: %+v", all)
	}
	got := decodeAs[listJSON](t, opsDo(t, e, http.MethodGet, "/admin/jobs?kind=ops_test&state=available", nil), http.StatusOK)
	if len(got.Jobs) != 3 || got.Jobs[0].ID != ids[2] || got.Jobs[0].Kind != "ops_test" || string(got.Jobs[0].Args) != `{"n":2,"fail":false}` {
		t.Fatalf("kind=ops_test: %+v", got)
	}
	got = decodeAs[listJSON](t, opsDo(t, e, http.MethodGet, "/admin/jobs?kind=ops_other,nothing", nil), http.StatusOK)
	if len(got.Jobs) != 1 || got.Jobs[0].Kind != "ops_other" {
		t.Fatalf("kind=ops_other: %+v", got)
	}
	got = decodeAs[listJSON](t, opsDo(t, e, http.MethodGet, "/admin/jobs?state=completed", nil), http.StatusOK)
	if len(got.Jobs) != 0 {
		t.Fatalf("state=completed: %+v", got)
	}

	// Pages of 2 with the cursor.
	page := decodeAs[listJSON](t, opsDo(t, e, http.MethodGet, "/admin/jobs?kind=ops_test&limit=2", nil), http.StatusOK)
	if len(page.Jobs) != 2 || page.Next == "" {
		t.Fatalf("page 1: %+v", page)
	}
	page2 := decodeAs[listJSON](t, opsDo(t, e, http.MethodGet, "/admin/jobs?kind=ops_test&limit=2&after="+url.QueryEscape(page.Next), nil), http.StatusOK)
	if len(page2.Jobs) != 1 || page2.Jobs[0].ID != ids[0] || page2.Next != "" {
		t.Fatalf("page 2: %+v", page2)
	}

	// One job, cancel, cancel again, retry.
	id := strconv.FormatInt(ids[1], 10)
	one := decodeAs[jobJSON](t, opsDo(t, e, http.MethodGet, "/admin/jobs/"+id, nil), http.StatusOK)
	if one.ID != ids[1] || one.State != "available" {
		t.Fatalf("get: %+v", one)
	}
	one = decodeAs[jobJSON](t, opsDo(t, e, http.MethodPost, "/admin/jobs/"+id+"/cancel", nil), http.StatusOK)
	if one.State != "cancelled" || one.FinalizedAt == nil {
		t.Fatalf("cancel: %+v", one)
	}
	got = decodeAs[listJSON](t, opsDo(t, e, http.MethodGet, "/admin/jobs?state=cancelled", nil), http.StatusOK)
	if len(got.Jobs) != 1 || got.Jobs[0].ID != ids[1] {
		t.Fatalf("state=cancelled: %+v", got)
	}
	one = decodeAs[jobJSON](t, opsDo(t, e, http.MethodPost, "/admin/jobs/"+id+"/retry", nil), http.StatusOK)
	if one.State != "available" || one.FinalizedAt != nil {
		t.Fatalf("retry: %+v", one)
	}

	// A completed job cannot be cancelled. (Test setup: mark it completed directly.)
	if _, err := pool.Exec(ctx, `UPDATE river_job SET state = 'completed', finalized_at = now() WHERE id = $1`, ids[0]); err != nil {
		t.Fatal(err)
	}
	done := strconv.FormatInt(ids[0], 10)
	wantError(t, e, http.MethodPost, "/admin/jobs/"+done+"/cancel", http.StatusConflict, "conflict")
	one = decodeAs[jobJSON](t, opsDo(t, e, http.MethodGet, "/admin/jobs/"+done, nil), http.StatusOK)
	if one.State != "completed" {
		t.Fatalf("completed job changed by a refused cancel: %+v", one)
	}

	// Bad requests and unknown jobs.
	wantError(t, e, http.MethodGet, "/admin/jobs?state=sleeping", http.StatusBadRequest, "invalid_request")
	wantError(t, e, http.MethodGet, "/admin/jobs?limit=0", http.StatusBadRequest, "invalid_request")
	wantError(t, e, http.MethodGet, "/admin/jobs?limit=501", http.StatusBadRequest, "invalid_request")
	wantError(t, e, http.MethodGet, "/admin/jobs?after=%25%25", http.StatusBadRequest, "invalid_request")
	wantError(t, e, http.MethodGet, "/admin/jobs/abc", http.StatusBadRequest, "invalid_request")
	wantError(t, e, http.MethodGet, "/admin/jobs/0", http.StatusBadRequest, "invalid_request")
	wantError(t, e, http.MethodGet, "/admin/jobs/999999", http.StatusNotFound, "not_found")
	wantError(t, e, http.MethodPost, "/admin/jobs/999999/cancel", http.StatusNotFound, "not_found")
	wantError(t, e, http.MethodPost, "/admin/jobs/999999/retry", http.StatusNotFound, "not_found")
}

func TestJobMetrics(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	m := metrics.New()
	m.WatchJobs(pool, slog.New(slog.DiscardHandler))
	rc := newRiver(t, pool, m, true)
	e := api.New(api.Deps{Pool: pool, River: rc, Logger: slog.New(slog.DiscardHandler), Metrics: m, Open: true})

	events, cancel := rc.Subscribe(river.EventKindJobCompleted, river.EventKindJobCancelled, river.EventKindJobFailed)
	defer cancel()
	if err := rc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rc.Stop(context.Background()) })
	for _, args := range []opsTestArgs{{N: 1}, {N: 2}, {N: 3, Fail: true}} {
		if _, err := rc.Insert(ctx, args, nil); err != nil {
			t.Fatal(err)
		}
	}
	timeout := time.After(30 * time.Second)
	for range 3 {
		select {
		case <-events:
		case <-timeout:
			t.Fatal("jobs did not finish")
		}
	}
	wantLines(t, scrape(t, e),
		`toolgate_job_duration_seconds_count{kind="ops_test",outcome="ok"} 2`,
		`toolgate_job_duration_seconds_count{kind="ops_test",outcome="error"} 1`,
		`toolgate_job_failures_total{kind="ops_test"} 1`,
		`toolgate_job_queue_wait_seconds_count{kind="ops_test"} 3`,
		`toolgate_jobs{kind="ops_test",state="completed"} 2`,
		`toolgate_jobs{kind="ops_test",state="cancelled"} 1`,
	)
	// The failed job shows its error in the admin API.
	got := decodeAs[listJSON](t, opsDo(t, e, http.MethodGet, "/admin/jobs?state=cancelled", nil), http.StatusOK)
	if len(got.Jobs) != 1 || len(got.Jobs[0].Errors) != 1 || got.Jobs[0].Errors[0].Error == "" {
		t.Fatalf("cancelled job: %+v", got)
	}
}

// TestRetryAndCancelAbandonedJobs: a job left running by a process that died (the row
// River's table keeps: state running, attempted long ago by a client that is gone) is
// retried or cancelled at once by the admin API, once its attempt is older than its kind's
// timeout plus a minute; a running job younger than that may still have a live worker and
// keeps River's behaviour (retry 409 job_running, cancel 202 asking the worker to stop).
func TestRetryAndCancelAbandonedJobs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	rc, err := jobs.NewClient(jobs.Deps{Pool: pool, Logger: slog.New(slog.DiscardHandler)}, jobs.Options{}) // insert only
	if err != nil {
		t.Fatal(err)
	}
	// the default timeouts: a sync job is abandoned 3 minutes after its attempt began, an
	// enrichment 6, a re-weight 11
	e := api.New(api.Deps{Pool: pool, River: rc, Logger: slog.New(slog.DiscardHandler), Open: true})
	q := db.New(pool)
	src, err := q.CreateSource(ctx, db.CreateSourceParams{Name: "crashed", Kind: "mcp_http", Config: []byte(`{"url":"http://127.0.0.1:1/mcp"}`)})
	if err != nil {
		t.Fatal(err)
	}
	insert := func(args river.JobArgs) string {
		t.Helper()
		res, err := rc.Insert(ctx, args, nil)
		if err != nil {
			t.Fatal(err)
		}
		return strconv.FormatInt(res.Job.ID, 10)
	}
	// running sets a job to what a killed process leaves: running, attempted ago, by a client that is gone
	running := func(id, ago string, attempt int) {
		t.Helper()
		if _, err := pool.Exec(ctx, `UPDATE river_job SET state = 'running', attempt = $3, attempted_at = now() - $2::interval,
			attempted_by = '{dead-client}' WHERE id = $1`, id, ago, attempt); err != nil {
			t.Fatal(err)
		}
	}
	get := func(id string) jobJSON {
		t.Helper()
		return decodeAs[jobJSON](t, opsDo(t, e, http.MethodGet, "/admin/jobs/"+id, nil), http.StatusOK)
	}

	// An abandoned sync on its last attempt: retried now with one more attempt, the dead
	// process's sync run closed, and a new sync of the source is no longer a duplicate of it.
	sync := insert(jobs.SyncArgs{SourceID: src.ID})
	running(sync, "10 minutes", 8)
	var run int64
	if err := pool.QueryRow(ctx, `INSERT INTO sync_runs (source_id, state, started_at) VALUES ($1, 'running', now() - interval '10 minutes')
		RETURNING id`, src.ID).Scan(&run); err != nil {
		t.Fatal(err)
	}
	got := decodeAs[jobJSON](t, opsDo(t, e, http.MethodPost, "/admin/jobs/"+sync+"/retry", nil), http.StatusOK)
	if got.State != "available" || got.MaxAttempts != 9 || time.Since(got.ScheduledAt) > time.Minute ||
		len(got.Errors) != 1 || !strings.Contains(got.Errors[0].Error, "retried by an operator") {
		t.Fatalf("retried abandoned sync: %+v", got)
	}
	var runState string
	if err := pool.QueryRow(ctx, `SELECT state FROM sync_runs WHERE id = $1`, run).Scan(&runState); err != nil || runState != "failed" {
		t.Errorf("the dead process's sync run is %q (%v), want failed", runState, err)
	}

	// A live sync (attempt begun a minute ago): retry refused, cancel asks its worker to stop.
	running(sync, "1 minute", 1)
	wantError(t, e, http.MethodPost, "/admin/jobs/"+sync+"/retry", http.StatusConflict, "job_running")
	rec := opsDo(t, e, http.MethodPost, "/admin/jobs/"+sync+"/retry", nil)
	var refusal struct {
		Error struct {
			Message string
			Details struct {
				AttemptedAt time.Time `json:"attempted_at"`
				AbandonedAt time.Time `json:"abandoned_at"`
			}
		} `json:"error"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &refusal); err != nil || refusal.Error.Details.AbandonedAt.Sub(refusal.Error.Details.AttemptedAt) != 3*time.Minute {
		t.Errorf("job_running answer %s: want the moment it counts as abandoned, 3m after its attempt began", rec.Body)
	}
	if got := get(sync); got.State != "running" || len(got.Errors) != 1 {
		t.Fatalf("live sync changed by a refused retry: %+v", got)
	}
	got = decodeAs[jobJSON](t, opsDo(t, e, http.MethodPost, "/admin/jobs/"+sync+"/cancel", nil), http.StatusAccepted)
	if got.State != "running" || !strings.Contains(string(got.Metadata), "cancel_attempted_at") {
		t.Fatalf("cancel of a live sync: %+v", got)
	}

	// The age that counts is the kind's: 4 minutes is live for an enrichment (5m timeout).
	enrich := insert(jobs.EnrichToolArgs{ToolID: 1, ContentHash: "h"})
	running(enrich, "4 minutes", 1)
	wantError(t, e, http.MethodPost, "/admin/jobs/"+enrich+"/retry", http.StatusConflict, "job_running")
	running(enrich, "7 minutes", 1)
	if got := decodeAs[jobJSON](t, opsDo(t, e, http.MethodPost, "/admin/jobs/"+enrich+"/retry", nil), http.StatusOK); got.State != "available" {
		t.Fatalf("retry of an enrichment abandoned 7 minutes ago: %+v", got)
	}

	// An abandoned re-weight, cancelled: finalized at once, its building set failed, the
	// profile's current set untouched; a new re-weight can then start.
	before, err := q.GetProfileByName(ctx, "default")
	if err != nil {
		t.Fatal(err)
	}
	start, err := profiles.StartReweight(ctx, pool, jobs.NewQueue(rc), "default")
	if err != nil {
		t.Fatal(err)
	}
	reweight := strconv.FormatInt(start.JobID, 10)
	running(reweight, "10 minutes", 1) // within the re-weight's 10-minute timeout: live
	got = decodeAs[jobJSON](t, opsDo(t, e, http.MethodPost, "/admin/jobs/"+reweight+"/cancel", nil), http.StatusAccepted)
	if got.State != "running" {
		t.Fatalf("cancel of a live re-weight: %+v", got)
	}
	running(reweight, "20 minutes", 1)
	got = decodeAs[jobJSON](t, opsDo(t, e, http.MethodPost, "/admin/jobs/"+reweight+"/cancel", nil), http.StatusOK)
	if got.State != "cancelled" || got.FinalizedAt == nil || len(got.Errors) != 1 || !strings.Contains(got.Errors[0].Error, "cancelled by an operator") {
		t.Fatalf("cancel of an abandoned re-weight: %+v", got)
	}
	if set, err := q.GetVectorSet(ctx, start.SetID); err != nil || set.State != "failed" {
		t.Errorf("the cancelled re-weight's set: %+v, %v; want failed", set, err)
	}
	if after, err := q.GetProfileByName(ctx, "default"); err != nil || after.CurrentSet != before.CurrentSet {
		t.Errorf("current set %v after the cancel, was %v (%v)", after.CurrentSet, before.CurrentSet, err)
	}
	if again, err := profiles.StartReweight(ctx, pool, jobs.NewQueue(rc), "default"); err != nil || again.Duplicate || again.SetID == start.SetID {
		t.Errorf("re-weight after the cancel: %+v, %v; want a new job and set", again, err)
	}
	// A cancelled job is finished: cancelling again changes nothing, retrying runs it again.
	if got := decodeAs[jobJSON](t, opsDo(t, e, http.MethodPost, "/admin/jobs/"+reweight+"/cancel", nil), http.StatusOK); got.State != "cancelled" {
		t.Fatalf("second cancel: %+v", got)
	}
}

// TestJobsNameTheirSubject: a job whose args carry a source's or a tool's id is shown with
// that source's or tool's name, in the list and alone; a job whose subject is gone, or
// whose args carry none, has no subject.
func TestJobsNameTheirSubject(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	log := slog.New(slog.DiscardHandler)
	rc, err := jobs.NewClient(jobs.Deps{Pool: pool, Logger: log}, jobs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	queue := jobs.NewQueue(rc)
	testfactory.MCPSource(ctx, t, pool, "crm", &testfactory.SourceOpts{Interval: "off", Queue: queue})
	_, res := testfactory.Catalog(ctx, t, pool, "acme", []catalog.Tool{testfactory.Tool("get_weather", "Weather.")}, &testfactory.CatalogOpts{Queue: queue})
	if len(res.Changed) != 1 {
		t.Fatalf("catalog: %+v", res)
	}
	e := api.New(api.Deps{Pool: pool, River: rc, Logger: log, Open: true})

	type subjectJSON struct {
		ID      int64           `json:"id"`
		Kind    string          `json:"kind"`
		Args    json.RawMessage `json:"args"`
		Subject *struct {
			Kind string `json:"kind"`
			Name string `json:"name"`
		} `json:"subject"`
	}
	list := decodeAs[struct {
		Jobs []subjectJSON `json:"jobs"`
	}](t, opsDo(t, e, http.MethodGet, "/admin/jobs?kind=sync_source,enrich_tool", nil), http.StatusOK)
	got := map[string]string{}
	for _, j := range list.Jobs {
		if j.Subject == nil {
			t.Fatalf("job %d (%s, %s) has no subject", j.ID, j.Kind, j.Args)
		}
		got[j.Kind] = j.Subject.Kind + " " + j.Subject.Name
	}
	if len(list.Jobs) != 2 || got["sync_source"] != "source crm" || got["enrich_tool"] != "tool acme__get_weather" {
		t.Fatalf("subjects: %v of %+v", got, list.Jobs)
	}

	// Alone, and once its tool is gone.
	var enrichID int64
	for _, j := range list.Jobs {
		if j.Kind == "enrich_tool" {
			enrichID = j.ID
		}
	}
	path := "/admin/jobs/" + strconv.FormatInt(enrichID, 10)
	if one := decodeAs[subjectJSON](t, opsDo(t, e, http.MethodGet, path, nil), http.StatusOK); one.Subject == nil || one.Subject.Name != "acme__get_weather" {
		t.Fatalf("one job: %+v", one)
	}
	testfactory.Catalog(ctx, t, pool, "acme", nil, nil)
	if one := decodeAs[subjectJSON](t, opsDo(t, e, http.MethodGet, path, nil), http.StatusOK); one.Subject != nil {
		t.Fatalf("a job whose tool is gone: subject %+v", one.Subject)
	}
}
