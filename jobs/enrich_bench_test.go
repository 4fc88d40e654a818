package jobs

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/toolgate/toolgate/internal/dataset"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/embed"
	"github.com/toolgate/toolgate/internal/enrich"
	"github.com/toolgate/toolgate/internal/enrich/enrichtest"
	"github.com/toolgate/toolgate/internal/lexicon"
	"github.com/toolgate/toolgate/internal/llm"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/postgres"
	"github.com/toolgate/toolgate/internal/provider"
	"github.com/toolgate/toolgate/internal/sources"
)

// syntheticCompanies makes n distinct companies for catalog-scale benchmarks.
func syntheticCompanies(n int) []dataset.Company {
	out := make([]dataset.Company, n)
	for i := range out {
		out[i] = dataset.Company{Name: fmt.Sprintf("Company %04d Holdings", i), Ticker: fmt.Sprintf("C%04d", i)}
	}
	return out
}

// benchEnrich imports companies' tools (enqueuing one enrich_tool job per tool) and times
// River working them all with deps (enriched-s, and tools/s from it), then until the
// deferred HNSW indexes of the profiles that are not active are built (indexed-s, the
// benchmark's time: every profile's set complete and indexed).
func benchEnrich(b *testing.B, companies int, workers int, mkDeps func(b *testing.B, d Deps) Deps) {
	tools := dataset.Tools(syntheticCompanies(companies))
	for b.Loop() {
		b.StopTimer()
		ctx := context.Background()
		// as many connections as workers plus River's own, as a production pool would have
		pool, err := postgres.Connect(ctx, pgtest.NewDB(b)+"&pool_max_conns="+fmt.Sprint(workers+6))
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := sources.Import(ctx, pool, NewQueue(insertClient(b, pool)), "fin", tools); err != nil {
			b.Fatal(err)
		}
		deps := mkDeps(b, Deps{Pool: pool, Logger: slog.New(slog.DiscardHandler), Questions: 10})
		b.StartTimer()
		start := time.Now()
		enriched := runUntilIndexed(b, deps, len(tools), workers)
		b.ReportMetric(float64(len(tools))/enriched.Seconds(), "tools/s")
		b.ReportMetric(enriched.Seconds(), "enriched-s")
		b.ReportMetric(time.Since(start).Seconds(), "indexed-s")
		b.StopTimer()
		if n := countRows(b, pool, `SELECT count(*) FROM tool_vectors`); n != len(tools)*5 {
			b.Fatalf("%d vectors, want %d", n, len(tools)*5)
		}
		if n := countRows(b, pool, `SELECT count(*) FROM vector_sets s WHERE NOT EXISTS (SELECT 1 FROM pg_indexes i
			WHERE i.tablename = toolgate_vector_partition(s.id) AND i.indexdef LIKE '%USING hnsw%')`); n != 0 {
			b.Fatalf("%d vector sets without their HNSW index", n)
		}
		pool.Close()
		b.StartTimer()
	}
}

// BenchmarkEnrichCatalogBuiltin: the 5,000-tool catalog (1,000 companies) with the
// built-in providers as serve builds them: the heuristic enricher with the built-in
// lexicon's knowledge expansion, and the local embedder.
func BenchmarkEnrichCatalogBuiltin(b *testing.B) {
	benchEnrich(b, 1000, 10, func(b *testing.B, d Deps) Deps {
		d.Embedder, d.Enricher = embed.NewLocal(384), enrich.Heuristic{Lexicon: lexicon.Builtin}
		return d
	})
}

// BenchmarkEnrichCatalogOpenAI: 1,000 tools through the OpenAI-compatible clients against
// an httptest server speaking the wire format, 3 chat calls and 1 embeddings call per tool,
// at a provider concurrency of 16.
func BenchmarkEnrichCatalogOpenAI(b *testing.B) {
	benchEnrich(b, 200, 16, func(b *testing.B, d Deps) Deps {
		_, srv := enrichtest.New(b)
		pc := provider.Config{BaseURL: srv.URL + "/v1", Key: enrichtest.Key, Concurrency: 16, Retries: 3}
		d.Embedder = embed.NewOpenAI(embed.OpenAIConfig{Provider: pc, Model: "text-embedding-test", Dims: 64, MaxBatch: 256})
		d.Enricher = enrich.NewLLM(llm.New(llm.Config{Provider: pc, Model: "gpt-test"}), false)
		return d
	})
}

// runUntilIndexed works the jobs with a River client until want enrich_tool jobs completed,
// then until no vector set waits for its deferred index, and returns when the first
// happened (since its start).
func runUntilIndexed(b *testing.B, deps Deps, want, workers int) time.Duration {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	rc, err := NewClient(deps, Options{Work: true, MaxWorkers: workers})
	if err != nil {
		b.Fatal(err)
	}
	events, stop := rc.Subscribe(river.EventKindJobCompleted, river.EventKindJobFailed)
	defer stop()
	start := time.Now()
	if err := rc.Start(ctx); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = rc.Stop(context.Background()) }()
	done, enriched := 0, time.Duration(0)
	for {
		if done == want && enriched == 0 {
			enriched = time.Since(start)
		}
		if enriched > 0 {
			deferred, err := db.New(deps.Pool).HasDeferredVectorIndex(ctx)
			if err != nil {
				b.Fatal(err)
			}
			if !deferred {
				return enriched
			}
		}
		select {
		case ev := <-events:
			kind := ev.Job.Kind
			if ev.Kind == river.EventKindJobFailed && (kind == EnrichToolArgs{}.Kind() || kind == VectorIndexArgs{}.Kind()) {
				b.Fatalf("%s failed: %v", kind, ev.Job.Errors)
			}
			if ev.Kind == river.EventKindJobCompleted && kind == (EnrichToolArgs{}).Kind() {
				done++
			}
		case <-time.After(100 * time.Millisecond):
		case <-ctx.Done():
			b.Fatalf("%d of %d jobs done", done, want)
		}
	}
}
