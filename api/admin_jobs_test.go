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
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/labstack/echo/v4"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/toolgate/toolgate/api"
	"github.com/toolgate/toolgate/internal/metrics"
	"github.com/toolgate/toolgate/internal/pgtest"
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
	ID      int64           `json:"id"`
	Kind    string          `json:"kind"`
	State   string          `json:"state"`
	Attempt int             `json:"attempt"`
	Args    json.RawMessage `json:"args"`
	Errors  []struct {
		Error string `json:"error"`
	} `json:"errors"`
	FinalizedAt *time.Time `json:"finalized_at"`
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
