package sources_test

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/sources"
	"github.com/toolgate/toolgate/jobs"
)

// BenchmarkListings times the listings the console pages through, on a catalog of 50,000
// tools (49,000 in one source, 1,000 in another) with their 50,000 waiting enrich_tool jobs
// and 2,000 sync runs of one source: a page of 50 tools (first, and 40,000 tools deep), of
// the small source, the filters that match nothing (the worst case: the whole index is
// read), a page of sync runs deep in the history, and the job counts by kind and state.
func BenchmarkListings(b *testing.B) {
	ctx := context.Background()
	pool := pgtest.NewPool(b)
	rc, err := jobs.NewClient(jobs.Deps{Pool: pool, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, jobs.Options{})
	if err != nil {
		b.Fatal(err)
	}
	all := benchCatalog(50000)
	if _, _, err := sources.Import(ctx, pool, jobs.NewQueue(rc), "big", all[:49000]); err != nil {
		b.Fatal(err)
	}
	small, _, err := sources.Import(ctx, pool, jobs.NewQueue(rc), "small", all[49000:])
	if err != nil {
		b.Fatal(err)
	}
	// Sync runs as a source synced every 10 minutes for two weeks leaves them (no
	// production path makes 2,000 runs quickly).
	if _, err := pool.Exec(ctx, `INSERT INTO sync_runs (source_id, state, unchanged, started_at, finished_at)
		SELECT $1, 'succeeded', 1000, now() - make_interval(mins => 10 * g), now() - make_interval(mins => 10 * g)
		FROM generate_series(1, 2000) g`, small.ID); err != nil {
		b.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `ANALYZE`); err != nil {
		b.Fatal(err)
	}
	var after40k string
	if err := pool.QueryRow(ctx, `SELECT name FROM tools ORDER BY name OFFSET 40000 LIMIT 1`).Scan(&after40k); err != nil {
		b.Fatal(err)
	}
	var runBefore int64
	if err := pool.QueryRow(ctx, `SELECT id FROM sync_runs WHERE source_id = $1 ORDER BY started_at DESC, id DESC OFFSET 1500 LIMIT 1`,
		small.ID).Scan(&runBefore); err != nil {
		b.Fatal(err)
	}

	for _, bc := range []struct {
		name string
		q    sources.ToolQuery
		want int
	}{
		{"tools/first-page", sources.ToolQuery{Limit: 50}, 50},
		{"tools/40000-deep", sources.ToolQuery{Limit: 50, After: after40k}, 50},
		{"tools/source-of-1000", sources.ToolQuery{Source: "small", Limit: 50}, 50},
		{"tools/name-matching-none", sources.ToolQuery{Q: "no-such-tool", Limit: 50}, 0},
		{"tools/pending-none", sources.ToolQuery{ReviewState: db.ReviewPending, Limit: 50}, 0},
		{"tools/pending-none-in-source", sources.ToolQuery{Source: "big", ReviewState: db.ReviewPending, Limit: 50}, 0},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				if n := len(page(b, pool, bc.q).Tools); n != bc.want {
					b.Fatalf("%d tools, want %d", n, bc.want)
				}
			}
		})
	}
	b.Run("runs/page-1500-deep", func(b *testing.B) {
		for b.Loop() {
			_, runs, err := sources.Runs(ctx, pool, "small", runBefore, 50)
			if err != nil || len(runs) != 50 {
				b.Fatalf("%d runs, %v", len(runs), err)
			}
		}
	})
	b.Run("jobs/summary", func(b *testing.B) {
		for b.Loop() {
			counts, err := jobs.Summary(ctx, pool)
			if err != nil || len(counts) == 0 || counts[0].Count != 50000 {
				b.Fatalf("%v %v", counts, err)
			}
		}
	})
}

func page(b *testing.B, pool *pgxpool.Pool, q sources.ToolQuery) sources.ToolPage {
	b.Helper()
	p, err := sources.ListTools(context.Background(), pool, q)
	if err != nil {
		b.Fatal(err)
	}
	return p
}
