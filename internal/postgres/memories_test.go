package postgres_test

import (
	"context"
	"math"
	"testing"

	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/postgres"
	"github.com/toolgate/toolgate/internal/testfactory"
)

// The memories' embeddings survive their change of type both ways: at half precision
// (halfvec) with the HNSW index and the b-tree on tenant and list that holds them, on tenant
// alone without lists (a migrate down to 55), back to single precision
// (vector) with the HNSW index alone on a migrate down, and again up; each time with the
// column's dimension and every stored value to half precision. A space too large for a
// b-tree entry (1,536 dimensions) gets the HNSW index and a b-tree on tenant and list
// that holds nothing more.
func TestMemoryEmbeddingsKeepAcrossTheirTypes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	testfactory.Catalog(ctx, t, pool, "demo", []catalog.Tool{testfactory.Tool("t", "d")}, nil)
	if _, err := pool.Exec(ctx, `SELECT toolgate_retype_memories(4, true)`); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO tool_memories (tool_id, tenant, norm, query, embedding, searches, labelled_at)
		SELECT id, '', 'q', 'q', '[3,0,4,0]', 1, now() FROM tools`); err != nil {
		t.Fatal(err)
	}
	indexes := func() string {
		t.Helper()
		var names string
		if err := pool.QueryRow(ctx, `SELECT coalesce(string_agg(c.relname, ' ' ORDER BY c.relname), '')
			FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
			WHERE i.indrelid = 'tool_memories'::regclass AND c.relname IN ('tool_memories_hnsw', 'tool_memories_tenant_embedding', 'tool_memories_tenant_list')`).Scan(&names); err != nil {
			t.Fatal(err)
		}
		return names
	}
	check := func(when, wantType, wantIndexes string) {
		t.Helper()
		var typ string
		var x []float32
		if err := pool.QueryRow(ctx, `SELECT format_type(a.atttypid, a.atttypmod), (SELECT embedding::real[] FROM tool_memories)
			FROM pg_attribute a WHERE a.attrelid = 'tool_memories'::regclass AND a.attname = 'embedding'`).Scan(&typ, &x); err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		if got := indexes(); typ != wantType || got != wantIndexes {
			t.Fatalf("%s: %s with indexes %q, want %s with %q", when, typ, got, wantType, wantIndexes)
		}
		want := []float64{0.6, 0, 0.8, 0} // stored at unit length
		for i := range want {
			if math.Abs(float64(x[i])-want[i]) > 1e-3 {
				t.Fatalf("%s: embedding %v, want %v", when, x, want)
			}
		}
	}
	check("at the latest version", "halfvec(4)", "tool_memories_hnsw tool_memories_tenant_list")
	if err := postgres.MigrateDownTo(ctx, pool, 55); err != nil {
		t.Fatal(err)
	}
	check("down to no lists", "halfvec(4)", "tool_memories_hnsw tool_memories_tenant_embedding")
	if err := postgres.MigrateDownTo(ctx, pool, 54); err != nil {
		t.Fatal(err)
	}
	check("down to single precision", "vector(4)", "tool_memories_hnsw")
	if err := postgres.MigrateUp(ctx, pool); err != nil {
		t.Fatal(err)
	}
	check("up again", "halfvec(4)", "tool_memories_hnsw tool_memories_tenant_list")
	if _, err := pool.Exec(ctx, `UPDATE tool_memories SET embedding = NULL`); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `SELECT toolgate_retype_memories(1536, false)`); err != nil {
		t.Fatal(err)
	}
	if got := indexes(); got != "tool_memories_hnsw tool_memories_tenant_list" {
		t.Fatalf("at 1,536 dimensions: indexes %q, want the HNSW index and the b-tree on tenant and list", got)
	}
	var included int
	if err := pool.QueryRow(ctx, `SELECT indnatts - indnkeyatts FROM pg_index WHERE indexrelid = 'tool_memories_tenant_list'::regclass`).Scan(&included); err != nil || included != 0 {
		t.Fatalf("at 1,536 dimensions the b-tree on tenant and list includes %d columns (%v), want none: an entry cannot hold the embedding", included, err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO tool_memories (tool_id, tenant, norm, query, embedding, searches, labelled_at)
		SELECT id, '', 'r', 'r', array_fill(1, ARRAY[1536])::vector, 1, now() FROM tools`); err != nil {
		t.Fatalf("a memory of 1,536 dimensions: %v", err)
	}
}
