package jobs

import (
	"context"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/toolgate/toolgate/internal/dataset"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/enrich"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/sources"
)

// noQuestions is the heuristic enricher with a question step that has nothing usable to
// offer: a deterministic output that no repair can save.
type noQuestions struct{ enrich.Heuristic }

func (noQuestions) Questions(context.Context, enrich.Document, int) ([]string, enrich.Usage, error) {
	return []string{" ", ""}, enrich.Usage{}, nil
}

// TestEnrichJobRecordsUnrepairableOutput: a deterministic enricher's output that cannot be
// repaired is recorded as the step's failure and the job completes after one attempt, not
// retried into the same failure; the tool is stored with the components it has, so it
// still has a vector, and its source counts it.
func TestEnrichJobRecordsUnrepairableOutput(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tools := dataset.Tools(dataset.DemoCompanies[:1])[:1]
	if _, _, err := sources.Import(ctx, pool, NewQueue(insertClient(t, pool)), "fin", tools); err != nil {
		t.Fatal(err)
	}
	deps := localDeps(pool)
	deps.Enricher = noQuestions{}
	rc, err := NewClient(deps, Options{Work: true, MaxWorkers: 2})
	if err != nil {
		t.Fatal(err)
	}
	events, stop := rc.Subscribe(river.EventKindJobCompleted, river.EventKindJobFailed, river.EventKindJobCancelled)
	defer stop()
	if err := rc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rc.Stop(context.Background()) }()
	var job *rivertype.JobRow
	for job == nil {
		select {
		case ev := <-events:
			if ev.Job.Kind == (EnrichToolArgs{}).Kind() {
				job = ev.Job
			}
		case <-ctx.Done():
			t.Fatal("enrich_tool job did not finish")
		}
	}
	if job.State != "completed" || job.Attempt != 1 || len(job.Errors) != 0 {
		t.Fatalf("job %s after %d attempts, want completed after 1: %v", job.State, job.Attempt, job.Errors)
	}
	var id int64
	if err := pool.QueryRow(ctx, `SELECT id FROM tools`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	if n := countRows(t, pool, `SELECT count(*) FROM tool_vectors WHERE tool_id = $1`, id); n == 0 {
		t.Fatal("no vector for the tool")
	}
	for kind, want := range map[string]int{"name": 1, "description": 1, "question": 0, "profile_function": 1, "topics": 1} {
		if n := countRows(t, pool, `SELECT count(*) FROM tool_components WHERE tool_id = $1 AND kind = $2`, id, kind); n != want {
			t.Errorf("%d %s components, want %d", n, kind, want)
		}
	}
	// the failure is on record for this content and model (another model produces it)
	var failed string
	if err := pool.QueryRow(ctx, `SELECT output ->> 'failed' FROM tool_enrichments WHERE tool_id = $1 AND step = 'questions'`, id).Scan(&failed); err != nil || failed != "no questions" {
		t.Fatalf("recorded failure %q, %v", failed, err)
	}
	src, err := db.New(pool).ListSourceSummaries(ctx, nil)
	if err != nil || len(src) != 1 || src[0].EnrichmentFailed != 1 || src[0].Enriched != 1 {
		t.Fatalf("source summary %+v %v: want 1 tool enriched, 1 with a failed step", src, err)
	}
}
