package vectors_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pgvector/pgvector-go"

	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/tdwa"
	"github.com/toolgate/toolgate/internal/testfactory"
	"github.com/toolgate/toolgate/internal/vectors"
)

// toolVectors are the tool's vectors, by set, as text (exact comparison).
func toolVectors(ctx context.Context, t *testing.T, pool *pgxpool.Pool, toolID int64) map[int64]string {
	t.Helper()
	rows, err := pool.Query(ctx, "SELECT set_id, embedding::text FROM tool_vectors WHERE tool_id = $1", toolID)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int64]string{}
	for rows.Next() {
		var set int64
		var v string
		if err := rows.Scan(&set, &v); err != nil {
			t.Fatal(err)
		}
		out[set] = v
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// recombine runs Recombine as its callers do: in a transaction that holds the tool's row.
func recombine(ctx context.Context, t *testing.T, pool *pgxpool.Pool, toolID int64, sp vectors.Space) int {
	t.Helper()
	n := 0
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		q := db.New(tx)
		if _, err := q.LockToolHash(ctx, toolID); err != nil {
			return err
		}
		now, err := q.ListToolComponents(ctx, toolID)
		if err != nil {
			return err
		}
		n, err = vectors.Recombine(ctx, q, toolID, now, sp, tdwa.KindObserved, nil)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// Recombining an enriched tool from its stored components writes, in every set, exactly
// the vector its enrichment wrote.
func TestRecombineMatchesEnrichment(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	ids := testfactory.DemoCatalog(ctx, t, pool, 1, nil)
	svc := testfactory.LocalEnricher(pool, 3)
	testfactory.Enrich(ctx, t, svc, ids...)

	before := toolVectors(ctx, t, pool, ids[0])
	if len(before) == 0 {
		t.Fatal("the enriched tool has no vector")
	}
	if _, err := pool.Exec(ctx, "DELETE FROM tool_vectors WHERE tool_id = $1", ids[0]); err != nil {
		t.Fatal(err)
	}
	sp := vectors.Space{Model: svc.Embedder.Model(), Dims: svc.Embedder.Dims()}
	if n := recombine(ctx, t, pool, ids[0], sp); n != len(before) {
		t.Fatalf("wrote %d vectors, want %d", n, len(before))
	}
	after := toolVectors(ctx, t, pool, ids[0])
	for set, v := range before {
		if after[set] != v {
			t.Errorf("set %d: the recombined vector differs from the enriched one", set)
		}
	}
}

// A tool whose components have no vector of the space (waiting for its re-embedding) gets
// no vector from Recombine: its enrichment writes them.
func TestRecombineWaitsForEmbeddings(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	ids := testfactory.DemoCatalog(ctx, t, pool, 1, nil)
	testfactory.Enrich(ctx, t, testfactory.LocalEnricher(pool, 3), ids...)

	before := toolVectors(ctx, t, pool, ids[0])
	if n := recombine(ctx, t, pool, ids[0], vectors.Space{Model: "another-model", Dims: 3}); n != 0 {
		t.Fatalf("wrote %d vectors from components of another space", n)
	}
	after := toolVectors(ctx, t, pool, ids[0])
	if len(after) != len(before) {
		t.Fatalf("vectors changed: %d sets before, %d after", len(before), len(after))
	}
}

// A re-weight's batch that writes a vector of a tool another transaction is deleting waits
// for it and writes nothing for that tool, instead of failing the batch on the tool's
// foreign key (a re-weight running beside a PUT that removed tools failed its attempt).
func TestFillSetSkipsAToolDeletedMeanwhile(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	ids := testfactory.DemoCatalog(ctx, t, pool, 2, nil)
	testfactory.Enrich(ctx, t, testfactory.LocalEnricher(pool, 3), ids...)
	var setID int64
	if err := pool.QueryRow(ctx, `SELECT current_set FROM weight_profiles WHERE name = 'default'`).Scan(&setID); err != nil {
		t.Fatal(err)
	}
	var vec string
	if err := pool.QueryRow(ctx, `SELECT embedding::text FROM tool_vectors WHERE tool_id = $1 AND set_id = $2`, ids[0], setID).Scan(&vec); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `DELETE FROM tool_vectors WHERE set_id = $1`, setID); err != nil {
		t.Fatal(err)
	}

	deleter, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer deleter.Rollback(ctx)
	if _, err := deleter.Exec(ctx, `DELETE FROM tools WHERE id = $1`, ids[0]); err != nil {
		t.Fatal(err)
	}
	var v pgvector.Vector
	if err := v.Parse(vec); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		params := []db.InsertToolVectorParams{{SetID: setID, ToolID: ids[0], Embedding: v}, {SetID: setID, ToolID: ids[1], Embedding: v}}
		done <- db.ExecBatch(db.New(pool).InsertToolVector(ctx, params))
	}()
	// the batch waits for the delete in flight
	pgtest.WaitLockWait(t, pool, "InsertToolVector")
	if err := deleter.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the batch failed on the deleted tool: %v", err)
	}
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM tool_vectors WHERE set_id = $1`, setID).Scan(&n); err != nil || n != 1 {
		t.Fatalf("%d vectors in the set (%v), want the remaining tool's only", n, err)
	}
}

// The re-weight's catch-up (ReplaceInSet) read a tool's components before a concurrent
// delete of the tool committed: the tool is skipped, not the batch failed on the foreign
// key (seen as a re-weight job error while catalogs were replaced during a re-weight).
func TestReplaceInSetSkipsAToolDeletedMeanwhile(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	ids := testfactory.DemoCatalog(ctx, t, pool, 2, nil)
	testfactory.Enrich(ctx, t, testfactory.LocalEnricher(pool, 3), ids...)
	var setID int64
	if err := pool.QueryRow(ctx, `SELECT current_set FROM weight_profiles WHERE name = 'default'`).Scan(&setID); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `DELETE FROM tool_vectors WHERE set_id = $1`, setID); err != nil {
		t.Fatal(err)
	}
	rows, err := db.New(pool).ListComponentVectors(ctx, []int64{ids[0], ids[1]})
	if err != nil || len(rows) == 0 {
		t.Fatalf("%d component rows, %v", len(rows), err)
	}
	prof, err := tdwa.ParseProfile("tdwa", []byte(`{"name": 1, "description": 2}`))
	if err != nil {
		t.Fatal(err)
	}

	deleter, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer deleter.Rollback(ctx)
	if _, err := deleter.Exec(ctx, `DELETE FROM tools WHERE id = $1`, ids[0]); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := vectors.ReplaceInSet(ctx, db.New(pool), setID, prof, rows)
		done <- err
	}()
	// the batch waits for the delete in flight
	pgtest.WaitLockWait(t, pool, "INSERT INTO tool_vectors")
	if err := deleter.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the batch failed on the deleted tool: %v", err)
	}
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM tool_vectors WHERE set_id = $1`, setID).Scan(&n); err != nil || n != 1 {
		t.Fatalf("%d vectors in the set (%v), want the remaining tool's only", n, err)
	}
}
