package api_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/api"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/jobs"
)

// TestOldJobErrorsAreScrubbed: job errors recorded before errors were scrubbed — quoting
// a source's URL with its user info and api_key, its Authorization header, or the URL of a
// source deleted since — are shown by /admin/jobs with those credentials masked, and
// jobs.ScrubJobErrors rewrites the rows themselves (once: a second pass changes nothing),
// leaving an error without credentials as it is.
func TestOldJobErrorsAreScrubbed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	rc, err := jobs.NewClient(jobs.Deps{Pool: pool, Logger: slog.New(slog.DiscardHandler)}, jobs.Options{}) // inserts, works nothing
	if err != nil {
		t.Fatal(err)
	}
	e := api.New(api.Deps{Pool: pool, River: rc, Logger: slog.New(slog.DiscardHandler), Open: true})
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	body := `{"name":"crm","kind":"mcp_http","url":"https://svc:hunter2@127.0.0.1:1/mcp?api_key=k-123456&region=eu",
		"headers":{"Authorization":"Bearer abcdef-token"},"interval":"off"}`
	if code, _ := send(t, srv, "POST", "/v1/sources", "application/json", body); code != http.StatusCreated {
		t.Fatalf("create source: %d", code)
	}
	canaries := []string{"hunter2", "k-123456", "abcdef-token", "oldpass", "t-999999"}
	planted := []string{
		`mcp connect: unreachable: Post "https://svc:hunter2@127.0.0.1:1/mcp?api_key=k-123456&region=eu": connection refused`,
		`mcp list tools: server said 401 to Authorization: Bearer abcdef-token`,
		`mcp connect: Post "https://olduser:oldpass@gone.example/mcp?token=t-999999": no such host`,
		`plain failure without secrets`,
	}
	var ids []int64
	for _, msg := range planted {
		// sync_source jobs are unique per source while unfinished: one source id each
		res, err := rc.Insert(ctx, jobs.SyncArgs{SourceID: int64(1000 + len(ids))}, nil)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.Job.ID)
		if _, err := pool.Exec(ctx, `UPDATE river_job SET state = 'discarded', finalized_at = now(), attempt = 1,
			errors = ARRAY[jsonb_build_object('at', now(), 'attempt', 1, 'error', $2::text, 'trace', '')]
			WHERE id = $1`, res.Job.ID, msg); err != nil {
			t.Fatal(err)
		}
	}
	leaks := func(where, text string) {
		t.Helper()
		for _, c := range canaries {
			if strings.Contains(text, c) {
				t.Errorf("%s shows %q: %s", where, c, text)
			}
		}
	}
	list := opsDo(t, e, http.MethodGet, "/admin/jobs?state=discarded", nil)
	if list.Code != http.StatusOK || !strings.Contains(list.Body.String(), "***") || !strings.Contains(list.Body.String(), planted[3]) {
		t.Fatalf("GET /admin/jobs: %d %s", list.Code, list.Body)
	}
	leaks("GET /admin/jobs", list.Body.String())
	for _, id := range ids {
		leaks("GET /admin/jobs/{id}", opsDo(t, e, http.MethodGet, "/admin/jobs/"+strconv.FormatInt(id, 10), nil).Body.String())
	}

	n, err := jobs.ScrubJobErrors(ctx, pool)
	if err != nil || n != 3 {
		t.Fatalf("ScrubJobErrors: %d rows, %v; want 3", n, err)
	}
	var stored string
	if err := pool.QueryRow(ctx, `SELECT string_agg(errors::text, ' ') FROM river_job`).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	leaks("river_job", stored)
	if !strings.Contains(stored, planted[3]) || !strings.Contains(stored, "https://***:***@127.0.0.1:1/mcp?api_key=***&region=eu") {
		t.Errorf("river_job after scrubbing: %s", stored)
	}
	if n, err := jobs.ScrubJobErrors(ctx, pool); err != nil || n != 0 {
		t.Errorf("second pass: %d rows, %v; want 0", n, err)
	}
}
