package search_test

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pgvector/pgvector-go"

	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/memory"
	"github.com/toolgate/toolgate/internal/search"
	"github.com/toolgate/toolgate/internal/search/searchbench"
)

// The cost of learning (docs/benchmarks.md, section Learning):
//
//	go test -run '^$' -bench BenchmarkSearchMemories -benchtime 1000x -timeout 30m ./internal/search
//
// 5,000 tools and 100,000 memories spread over 100 tenants (1,000 each, one teaching key
// per tenant), embedded with the benchmark's embedder; a search key of one tenant searches
// hybrid k=10 with the settings serve runs with, the memory branch off (weight 0) and on
// (weight 1), alternately, five times each, in one run (a loaded machine's drift falls on
// both alike). Then the interleaved run: the two alternate in blocks of 8 searches per
// client, a fraction of a second each, so that the machine's drift falls on both alike
// while each block still loads the server with its own setting (clients searching at a
// block's edge are the only mix); it reports each side's p50 and the rise.
func BenchmarkSearchMemories(b *testing.B) {
	const tools, tenants, perTenant, reps = 5000, 100, 1000, 5
	pool := benchDB(b, tools)
	ctx := context.Background()
	t0 := time.Now()
	caller := seedMemories(ctx, b, pool, tenants, perTenant)
	b.Logf("seeded %d memories in %s", tenants*perTenant, time.Since(t0).Round(time.Second))
	queries := searchbench.Queries(rand.New(rand.NewPCG(7, 7)))
	on := servedSettings()
	on.WeightMemory = 1
	off := on
	off.WeightMemory = 0
	for rep := range reps {
		for _, c := range []struct {
			name     string
			settings search.Settings
		}{{"learning-off", off}, {"learning-on", on}} {
			b.Run(fmt.Sprintf("tools=%d/memories=%d/%s/rep=%d", tools, tenants*perTenant, c.name, rep+1), func(b *testing.B) {
				s := search.New(pool, searchbench.Embedder{}, c.settings, discard())
				runConcurrent(b, pool, func(i int) error {
					_, err := s.Search(ctx, caller, search.Request{Query: queries[i%len(queries)], K: 10})
					return err
				})
			})
		}
	}
	b.Run(fmt.Sprintf("tools=%d/memories=%d/interleaved", tools, tenants*perTenant), func(b *testing.B) {
		sides := [2]*search.Service{search.New(pool, searchbench.Embedder{}, off, discard()),
			search.New(pool, searchbench.Embedder{}, on, discard())}
		block := 8 * benchClients(b)
		side := func(i int) int { return i / block % 2 }
		b.ResetTimer()
		lat := timeCalls(b, func(i int) error {
			_, err := sides[side(i)].Search(ctx, caller, search.Request{Query: queries[i%len(queries)], K: 10})
			return err
		})
		b.StopTimer()
		if b.N <= block {
			return // the one call that sizes the run: no block of the other side yet
		}
		var byside [2][]time.Duration
		for i, d := range lat {
			byside[side(i)] = append(byside[side(i)], d)
		}
		offP50, onP50 := percentiles(byside[0], 0.50)[0], percentiles(byside[1], 0.50)[0]
		b.ReportMetric(offP50, "off-p50-ms")
		b.ReportMetric(onP50, "on-p50-ms")
		b.ReportMetric(100*(onP50/offP50-1), "p50-rise-%")
	})
}

// seedMemories writes perTenant memories for each of tenants tenants, each taught by a
// search key of its tenant, as the memory sweep would have (texts worded like the
// benchmark's queries, on random tools, written tool by tool), builds their indexes, and
// returns a search key of the first tenant.
func seedMemories(ctx context.Context, b testing.TB, pool *pgxpool.Pool, tenants, perTenant int) auth.Caller {
	b.Helper()
	var toolIDs []int64
	rows, err := pool.Query(ctx, `SELECT id FROM tools ORDER BY id`)
	if err == nil {
		toolIDs, err = pgx.CollectRows(rows, pgx.RowTo[int64])
	}
	if err != nil {
		b.Fatal(err)
	}
	keys := auth.NewKeys(pool, time.Now)
	rng := rand.New(rand.NewPCG(3, 3))
	texts := searchbench.Queries(rand.New(rand.NewPCG(11, 11)))
	var first auth.Caller
	var rowsOut [][]any
	for t := range tenants {
		k, _, err := keys.Create(ctx, auth.Spec{Name: fmt.Sprintf("bench-%03d", t), Scope: auth.ScopeSearch, Tenant: fmt.Sprintf("t%03d", t)})
		if err != nil {
			b.Fatal(err)
		}
		if t == 0 {
			first = *k.Caller()
		}
		for j := range perTenant {
			text := fmt.Sprintf("%s %d", texts[rng.IntN(len(texts))], j)
			rowsOut = append(rowsOut, []any{toolIDs[rng.IntN(len(toolIDs))], *k.Tenant, k.ID, text, text,
				pgvector.NewVector(searchbench.Vector(text)), 1, time.Now()})
		}
	}
	// in the order the sweep writes them, tool by tool: a tenant's memories are spread over
	// the table, not one run of pages
	slices.SortStableFunc(rowsOut, func(x, y []any) int { return cmp.Compare(x[0].(int64), y[0].(int64)) })
	if _, err := pool.CopyFrom(ctx, pgx.Identifier{"tool_memories"},
		[]string{"tool_id", "tenant", "key_id", "norm", "query", "embedding", "searches", "labelled_at"},
		pgx.CopyFromRows(rowsOut)); err != nil {
		b.Fatal(err)
	}
	// the per-tenant counts the memory sweep keeps, which choose each tenant's scan, and
	// the lists it splits a tenant's memories into (before the indexes: filing a memory
	// writes a new row version, which the HNSW index would take in one at a time)
	if err := db.New(pool).RecountMemoryTenants(ctx); err != nil {
		b.Fatal(err)
	}
	if _, err := (&memory.Service{Pool: pool}).Cluster(ctx); err != nil {
		b.Fatal(err)
	}
	// the column takes the space's dimension and its indexes are built over all rows at
	// once (as a change of embedding space does: toolgate_retype_memories)
	if _, err := pool.Exec(ctx, `SELECT toolgate_retype_memories($1, true)`, searchbench.Dims); err != nil {
		b.Fatal(err)
	}
	var indexed bool
	if err := pool.QueryRow(ctx, `SELECT to_regclass('tool_memories_hnsw') IS NOT NULL`).Scan(&indexed); err != nil || !indexed {
		b.Fatalf("memory index: %v (built %v)", err, indexed)
	}
	// as autovacuum would after the inserts: the statistics, and the visibility map that lets
	// the exact scan read a tenant's memories from the b-tree that holds them alone
	if _, err := pool.Exec(ctx, `VACUUM ANALYZE tool_memories, tool_memory_tenants, tool_memory_lists`); err != nil {
		b.Fatal(err)
	}
	return first
}
