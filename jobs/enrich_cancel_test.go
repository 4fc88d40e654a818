package jobs

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/toolgate/toolgate/internal/dataset"
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

// TestEnrichJobCancelsUnrepairableOutput: a deterministic enricher's output that cannot be
// repaired ends the job cancelled after one attempt, not retried into the same failure,
// and the tool is stored with the components it has, so it still has a vector.
func TestEnrichJobCancelsUnrepairableOutput(t *testing.T) {
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
	if job.State != "cancelled" || job.Attempt != 1 {
		t.Fatalf("job %s after %d attempts, want cancelled after 1: %v", job.State, job.Attempt, job.Errors)
	}
	if len(job.Errors) != 1 || !strings.Contains(job.Errors[0].Error, "enrichment questions: malformed output: no questions") {
		t.Fatalf("errors %v", job.Errors)
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
	// the failed step is not stored, so a later job with a fixed enricher produces it
	if n := countRows(t, pool, `SELECT count(*) FROM tool_enrichments WHERE tool_id = $1 AND step = 'questions'`, id); n != 0 {
		t.Fatalf("%d stored question outputs", n)
	}
}
