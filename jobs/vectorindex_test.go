package jobs

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertest"
	"github.com/riverqueue/river/rivertype"

	"github.com/toolgate/toolgate/internal/pgtest"
)

// unindexedSets counts the ready sets whose partition has no HNSW index.
const unindexedSets = `SELECT count(*) FROM vector_sets s WHERE s.state = 'ready' AND NOT EXISTS (
	SELECT 1 FROM pg_indexes i WHERE i.tablename = toolgate_vector_partition(s.id) AND i.indexdef LIKE '%USING hnsw%')`

// The other profiles' indexes of a new catalog wait for the end of its enrichment: the
// vector_index job snoozes while enrich_tool jobs wait, then builds them, and every set
// holds every tool throughout.
func TestVectorIndexAfterTheEnrichmentBurst(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	ctx := context.Background()
	tools := importDemo(t, pool, 2)
	// one tool enriched outside River: the first enrichment makes the sets
	var id int64
	var hash string
	if err := pool.QueryRow(ctx, `SELECT id, content_hash FROM tools ORDER BY id LIMIT 1`).Scan(&id, &hash); err != nil {
		t.Fatal(err)
	}
	deps := localDeps(pool)
	if _, err := deps.enrichService().EnrichTool(ctx, id, hash); err != nil {
		t.Fatal(err)
	}
	if n := countRows(t, pool, `SELECT count(*) FROM vector_sets WHERE index_deferred`); n != 4 {
		t.Fatalf("%d sets with a deferred index, want the 4 of the profiles that are not active", n)
	}
	if n := countRows(t, pool, unindexedSets); n != 4 {
		t.Fatalf("%d sets without an index, want 4", n)
	}
	if n := countRows(t, pool, `SELECT count(*) FROM tool_vectors WHERE tool_id = $1`, id); n != 5 {
		t.Fatalf("the enriched tool has %d vectors, want one in each of the 5 sets", n)
	}

	// the burst is under way (its jobs wait): the job snoozes and builds nothing
	wctx := rivertest.WorkContext(ctx, insertClient(t, pool))
	err := (&VectorIndexWorker{deps: deps}).Work(wctx, &river.Job[VectorIndexArgs]{JobRow: &rivertype.JobRow{}})
	var snooze *rivertype.JobSnoozeError
	if !errors.As(err, &snooze) {
		t.Fatalf("vector_index during the burst: %v, want a snooze", err)
	}
	if n := countRows(t, pool, unindexedSets); n != 4 {
		t.Fatalf("%d sets without an index after a snoozed run, want 4", n)
	}

	// River works the burst; the enrichments ask for the job, which builds after them
	rc, err := NewClient(deps, Options{Work: true, MaxWorkers: 4})
	if err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := rc.Start(rctx); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rc.Stop(context.Background()) }()
	for countRows(t, pool, `SELECT count(*) FROM vector_sets WHERE index_deferred`) > 0 {
		select {
		case <-rctx.Done():
			t.Fatal("the deferred indexes were not built")
		case <-time.After(100 * time.Millisecond):
		}
	}
	if n := countRows(t, pool, `SELECT count(*) FROM river_job WHERE kind = 'enrich_tool' AND state <> 'completed'`); n != 0 {
		t.Errorf("%d enrich_tool jobs unfinished when the indexes were built", n)
	}
	if n := countRows(t, pool, unindexedSets); n != 0 {
		t.Errorf("%d sets without an index", n)
	}
	if n := countRows(t, pool, `SELECT count(*) FROM tool_vectors`); n != 5*len(tools) {
		t.Errorf("%d vectors, want %d", n, 5*len(tools))
	}
}
