package profiles_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/dataset"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/profiles"
	"github.com/toolgate/toolgate/internal/testfactory"
	"github.com/toolgate/toolgate/internal/vectors"
)

// partition describes a vector set's partition of tool_vectors (migration 0008,
// sql/functions/partitions.sql).
type partition struct {
	exists, attached, hnsw bool
}

func partitionOf(t *testing.T, pool *pgxpool.Pool, setID int64) partition {
	t.Helper()
	var p partition
	err := pool.QueryRow(context.Background(), `
		WITH r AS (SELECT to_regclass(toolgate_vector_partition($1)) AS rel)
		SELECT r.rel IS NOT NULL,
		       EXISTS (SELECT 1 FROM pg_inherits h WHERE h.inhrelid = r.rel AND h.inhparent = 'tool_vectors'::regclass),
		       EXISTS (SELECT 1 FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam
		               WHERE i.indrelid = r.rel AND a.amname = 'hnsw')
		FROM r`, setID).Scan(&p.exists, &p.attached, &p.hnsw)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestVectorSetPartitionLifecycle(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	ctx := context.Background()
	n := enrichedCatalog(t, pool, testfactory.LocalEnricher(pool, 10), 1)

	// every profile's first set (made ready by enrichment) has a partition holding every
	// tool; only the active profile's is indexed, the others' indexes are deferred ...
	for _, name := range []string{"default", "var-1", "var-2", "concat", "mean"} {
		set := testfactory.CurrentSet(context.Background(), t, pool, name)
		want := partition{true, true, name == "default"}
		if p := partitionOf(t, pool, set); p != want {
			t.Errorf("profile %s's current set partition: %+v, want %+v", name, p, want)
		}
		if got := countRows(t, pool, `SELECT count(*) FROM vector_sets WHERE id = $1 AND index_deferred`, set); got != btoi(name != "default") {
			t.Errorf("profile %s's current set: index_deferred %d", name, got)
		}
		if got := countRows(t, pool, `SELECT count(*) FROM tool_vectors WHERE set_id = $1`, set); got != n {
			t.Errorf("profile %s's current set holds %d vectors, want %d", name, got, n)
		}
	}
	// ... and built in bulk, once
	if built, err := vectors.BuildDeferredIndexes(ctx, pool); err != nil || built != 4 {
		t.Fatalf("built %d deferred indexes (%v), want 4", built, err)
	}
	if built, err := vectors.BuildDeferredIndexes(ctx, pool); err != nil || built != 0 {
		t.Fatalf("built %d deferred indexes again (%v), want 0", built, err)
	}
	for _, name := range []string{"default", "var-1", "var-2", "concat", "mean"} {
		if p := partitionOf(t, pool, testfactory.CurrentSet(context.Background(), t, pool, name)); p != (partition{true, true, true}) {
			t.Errorf("profile %s's current set partition after the build: %+v", name, p)
		}
	}
	if got := countRows(t, pool, `SELECT count(*) FROM vector_sets WHERE index_deferred`); got != 0 {
		t.Errorf("%d sets still marked index_deferred", got)
	}
	if got := countRows(t, pool, `SELECT count(*) FROM pg_inherits WHERE inhparent = 'tool_vectors'::regclass`); got != 5 {
		t.Errorf("%d partitions, want one per set (5)", got)
	}

	// a building set gets an attached partition without an index ...
	old := testfactory.CurrentSet(context.Background(), t, pool, "default")
	testfactory.Weights(context.Background(), t, pool, "default", map[string]float64{"name": 1})
	set := testfactory.BeginReweight(context.Background(), t, pool, "default")
	if p := partitionOf(t, pool, set.ID); p != (partition{true, true, false}) {
		t.Fatalf("building set partition: %+v, want attached without HNSW index", p)
	}
	// ... its index once built; the retired set's partition and row are gone
	if err := profiles.Reweight(ctx, pool, set.ID, profiles.ReweightOptions{BatchSize: 2}); err != nil {
		t.Fatal(err)
	}
	if p := partitionOf(t, pool, set.ID); p != (partition{true, true, true}) {
		t.Errorf("new current set partition: %+v, want attached with HNSW index", p)
	}
	if got := countRows(t, pool, `SELECT count(*) FROM tool_vectors WHERE set_id = $1`, set.ID); got != n {
		t.Errorf("new set holds %d vectors, want %d", got, n)
	}
	if p := partitionOf(t, pool, old); p.exists {
		t.Errorf("retired set %d's partition still exists: %+v", old, p)
	}
	if got := countRows(t, pool, `SELECT count(*) FROM vector_sets WHERE id = $1`, old); got != 0 {
		t.Errorf("retired set %d still stored", old)
	}

	// deleting a profile drops its sets' partitions
	v1 := testfactory.CurrentSet(context.Background(), t, pool, "var-1")
	if err := profiles.Delete(ctx, pool, "var-1"); err != nil {
		t.Fatal(err)
	}
	if p := partitionOf(t, pool, v1); p.exists {
		t.Errorf("deleted profile's set %d keeps its partition: %+v", v1, p)
	}
	if got := countRows(t, pool, `SELECT count(*) FROM tool_vectors`); got != 4*n {
		t.Errorf("%d vectors after deleting a profile, want %d", got, 4*n)
	}
}

func TestFailedReweightLeavesNoPartition(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	ctx := context.Background()
	n := enrichedCatalog(t, pool, testfactory.LocalEnricher(pool, 10), 1)
	old := testfactory.CurrentSet(context.Background(), t, pool, "default")
	testfactory.Weights(context.Background(), t, pool, "default", map[string]float64{"description": 1})
	set := testfactory.BeginReweight(context.Background(), t, pool, "default")

	cctx, cancel := context.WithCancel(ctx)
	_, err := profiles.RunReweight(cctx, pool, "default", profiles.ReweightOptions{BatchSize: 2, OnProgress: func(int, int) { cancel() }})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled re-weight: %v", err)
	}
	if p := partitionOf(t, pool, set.ID); p.exists {
		t.Fatalf("failed set %d keeps its partition: %+v", set.ID, p)
	}
	s, err := db.New(pool).GetVectorSet(ctx, set.ID)
	if err != nil || s.State != "failed" {
		t.Fatalf("failed set: %+v %v", s, err)
	}
	if cur := testfactory.CurrentSet(context.Background(), t, pool, "default"); cur != old {
		t.Errorf("current set %d, want the old %d", cur, old)
	}
	if p := partitionOf(t, pool, old); p != (partition{true, true, true}) {
		t.Errorf("old set partition: %+v", p)
	}
	if got := countRows(t, pool, `SELECT count(*) FROM tool_vectors WHERE set_id = $1`, old); got != n {
		t.Errorf("old set holds %d vectors, want %d", got, n)
	}
	// a later re-weight works on a fresh partition
	if _, err := profiles.RunReweight(ctx, pool, "default", profiles.ReweightOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := countRows(t, pool, `SELECT count(*) FROM tool_vectors v JOIN weight_profiles p ON p.current_set = v.set_id WHERE p.name = 'default'`); got != n {
		t.Errorf("after a new re-weight the profile has %d vectors, want %d", got, n)
	}
}

func TestEnrichmentDuringReweightLandsInBothSets(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	ctx := context.Background()
	svc := testfactory.LocalEnricher(pool, 10)
	n := enrichedCatalog(t, pool, svc, 1)
	old := testfactory.CurrentSet(context.Background(), t, pool, "default")
	testfactory.Weights(context.Background(), t, pool, "default", map[string]float64{"question": 1})
	set := testfactory.BeginReweight(context.Background(), t, pool, "default")

	// the build stops after its first batch ...
	cctx, cancel := context.WithCancel(ctx)
	if err := profiles.Reweight(cctx, pool, set.ID, profiles.ReweightOptions{BatchSize: 2, OnProgress: func(int, int) { cancel() }}); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted: %v", err)
	}
	// ... while new tools are enriched: they go into the current set and the building one
	_, res := testfactory.Catalog(ctx, t, pool, "fin2", dataset.Tools(dataset.DemoCompanies[1:2]), nil)
	for _, id := range res.Changed {
		testfactory.Enrich(ctx, t, svc, id)
		for _, s := range []int64{old, set.ID} {
			if got := countRows(t, pool, `SELECT count(*) FROM tool_vectors WHERE set_id = $1 AND tool_id = $2`, s, id); got != 1 {
				t.Fatalf("tool %d has %d vectors in set %d, want 1", id, got, s)
			}
		}
	}
	// the build resumes, indexes the partition and switches; every tool is in the new set
	if err := profiles.Reweight(ctx, pool, set.ID, profiles.ReweightOptions{BatchSize: 2}); err != nil {
		t.Fatal(err)
	}
	if cur := testfactory.CurrentSet(context.Background(), t, pool, "default"); cur != set.ID {
		t.Fatalf("current set %d, want %d", cur, set.ID)
	}
	if got := countRows(t, pool, `SELECT count(*) FROM tool_vectors WHERE set_id = $1`, set.ID); got != n+len(res.Changed) {
		t.Errorf("new set holds %d vectors, want %d", got, n+len(res.Changed))
	}
	if p := partitionOf(t, pool, set.ID); !p.hnsw {
		t.Errorf("new set partition not indexed: %+v", p)
	}
	// enrichment after the switch writes to the new set, not to the dropped old one
	id := res.Changed[0]
	if _, err := pool.Exec(ctx, `UPDATE tools SET description = description || ' (updated)', content_hash = 'changed' WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.EnrichTool(ctx, id, "changed"); err != nil {
		t.Fatalf("enrichment after the switch: %v", err)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Activating a profile whose index is deferred builds it first; its set is complete either
// way.
func TestActivateBuildsDeferredIndex(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	ctx := context.Background()
	n := enrichedCatalog(t, pool, testfactory.LocalEnricher(pool, 10), 1)
	set := testfactory.CurrentSet(ctx, t, pool, "var-1")
	if p := partitionOf(t, pool, set); p.hnsw {
		t.Fatalf("var-1's first set is indexed before its activation: %+v", p)
	}
	v, err := profiles.Activate(ctx, pool, "var-1")
	if err != nil {
		t.Fatal(err)
	}
	if !v.Active || v.CurrentSet == nil || v.CurrentSet.ID != set || v.CurrentSet.IndexDeferred || v.CurrentSet.Vectors != n {
		t.Fatalf("activated: %+v (current set %+v), want set %d indexed with %d vectors", v, v.CurrentSet, set, n)
	}
	if p := partitionOf(t, pool, set); !p.hnsw {
		t.Errorf("var-1's set after its activation: %+v, want indexed", p)
	}
	if p := partitionOf(t, pool, testfactory.CurrentSet(ctx, t, pool, "var-2")); p.hnsw {
		t.Errorf("var-2's set was indexed by another profile's activation: %+v", p)
	}
}
