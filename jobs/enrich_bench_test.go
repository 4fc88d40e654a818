package jobs

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/dataset"
	"github.com/toolgate/toolgate/internal/embed"
	"github.com/toolgate/toolgate/internal/enrich"
	"github.com/toolgate/toolgate/internal/enrich/enrichtest"
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
// River working them all with deps.
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
		runUntilEnrichedN(b, deps, len(tools), workers)
		b.ReportMetric(float64(len(tools))/time.Since(start).Seconds(), "tools/s")
		b.StopTimer()
		if n := countRows(b, pool, `SELECT count(*) FROM tool_vectors`); n != len(tools)*5 {
			b.Fatalf("%d vectors, want %d", n, len(tools)*5)
		}
		pool.Close()
		b.StartTimer()
	}
}

// BenchmarkEnrichCatalogBuiltin: the 5,000-tool catalog (1,000 companies) with the
// heuristic enricher and the local embedder.
func BenchmarkEnrichCatalogBuiltin(b *testing.B) {
	benchEnrich(b, 1000, 10, func(b *testing.B, d Deps) Deps {
		d.Embedder, d.Enricher = embed.NewLocal(384), enrich.Heuristic{}
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
