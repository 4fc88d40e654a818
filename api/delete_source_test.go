package api_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/toolgate/toolgate/api"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/jobs"
)

// TestDeleteSourceDropsItsQueuedEnrichJobs: deleting a source deletes, in the same
// transaction, the enrich_tool jobs of its tools that still wait (available, scheduled,
// retryable, pending), so that they hold up no other source's work; a running one and the
// jobs of other sources are left as they are.
func TestDeleteSourceDropsItsQueuedEnrichJobs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	log := slog.New(slog.DiscardHandler)
	rc, err := jobs.NewClient(jobs.Deps{Pool: pool, Logger: log}, jobs.Options{}) // inserts jobs, works none
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api.New(api.Deps{Pool: pool, River: rc, Logger: log, Open: true}))
	t.Cleanup(srv.Close)
	for _, name := range []string{"big", "other"} {
		var b strings.Builder
		for _, tool := range []string{"alpha", "beta", "gamma", "delta"} {
			b.WriteString(`{"name":"` + tool + `","description":"` + tool + ` of ` + name + `"}` + "\n")
		}
		if code, body := call(t, srv, "PUT", "/v1/sources/"+name+"/tools", b.String()); code != 200 {
			t.Fatalf("PUT %s: %d %v", name, code, body)
		}
	}
	toolIDs := map[string][]int64{}
	queued := func(source string) (waiting, running int) {
		t.Helper()
		err := pool.QueryRow(ctx, `
			SELECT count(*) FILTER (WHERE j.state <> 'running'), count(*) FILTER (WHERE j.state = 'running')
			FROM river_job j
			WHERE j.kind = 'enrich_tool' AND (j.args ->> 'tool_id')::bigint = ANY($1::bigint[])`, toolIDs[source]).Scan(&waiting, &running)
		if err != nil {
			t.Fatal(err)
		}
		return waiting, running
	}
	for _, name := range []string{"big", "other"} {
		rows, _ := pool.Query(ctx, `SELECT t.id FROM tools t JOIN sources s ON s.id = t.source_id WHERE s.name = $1`, name)
		ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil || len(ids) != 4 {
			t.Fatalf("tools of %s: %v %v", name, ids, err)
		}
		toolIDs[name] = ids
	}
	// One job of each waiting state, and one running, among big's.
	if _, err := pool.Exec(ctx, `
		WITH j AS (SELECT id, row_number() OVER (ORDER BY id) AS n FROM river_job
		           WHERE kind = 'enrich_tool' AND (args ->> 'tool_id')::bigint = ANY($1::bigint[]))
		UPDATE river_job r SET state = (ARRAY['scheduled', 'retryable', 'running', 'available'])[j.n]::river_job_state,
		       attempted_at = CASE WHEN j.n = 3 THEN now() END, attempt = CASE WHEN j.n = 3 THEN 1 ELSE 0 END,
		       scheduled_at = CASE WHEN j.n = 1 THEN now() + interval '1 hour' ELSE r.scheduled_at END
		FROM j WHERE r.id = j.id`, toolIDs["big"]); err != nil {
		t.Fatal(err)
	}
	if w, r := queued("big"); w != 3 || r != 1 {
		t.Fatalf("big before: %d waiting, %d running; want 3 and 1", w, r)
	}
	otherWaiting, _ := queued("other")
	if otherWaiting != 4 {
		t.Fatalf("other before: %d waiting, want 4", otherWaiting)
	}

	if code, body := call(t, srv, http.MethodDelete, "/v1/sources/big", ""); code != http.StatusNoContent {
		t.Fatalf("DELETE: %d %v", code, body)
	}
	if w, r := queued("big"); w != 0 || r != 1 {
		t.Errorf("big after: %d waiting, %d running; want 0 and the running one", w, r)
	}
	if w, _ := queued("other"); w != otherWaiting {
		t.Errorf("other after: %d waiting, want %d", w, otherWaiting)
	}
}
