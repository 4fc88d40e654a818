package jobs

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/toolgate/toolgate/internal/dataset"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/embed"
	"github.com/toolgate/toolgate/internal/enrich"
	"github.com/toolgate/toolgate/internal/enrich/enrichtest"
	"github.com/toolgate/toolgate/internal/llm"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/provider"
	"github.com/toolgate/toolgate/internal/testfactory"
)

func openAIDeps(pool *pgxpool.Pool, srv *httptest.Server, judge bool, retries int) Deps {
	pc := provider.Config{BaseURL: srv.URL + "/v1", Key: enrichtest.Key, Timeout: 5 * time.Second, Concurrency: 4,
		Retries: retries, BaseBackoff: time.Millisecond}
	return Deps{
		Pool:      pool,
		Logger:    slog.New(slog.DiscardHandler),
		Embedder:  embed.NewOpenAI(embed.OpenAIConfig{Provider: pc, Model: "text-embedding-test", Dims: 64, MaxBatch: 8}),
		Enricher:  enrich.NewLLM(llm.New(llm.Config{Provider: pc, Model: "gpt-test"}), judge),
		Questions: 3,
	}
}

func insertClient(t testing.TB, pool *pgxpool.Pool) *river.Client[pgx.Tx] {
	t.Helper()
	rc, err := NewClient(Deps{Pool: pool, Logger: slog.New(slog.DiscardHandler)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return rc
}

// importOne imports one demo tool and returns its id and hash.
func importOne(t *testing.T, pool *pgxpool.Pool) (int64, string) {
	t.Helper()
	_, res := testfactory.Catalog(context.Background(), t, pool, "fin", dataset.Tools(dataset.DemoCompanies[:1])[:1], nil)
	if len(res.Changed) != 1 {
		t.Fatalf("changed %v", res.Changed)
	}
	tool, err := db.New(pool).GetToolByID(context.Background(), res.Changed[0])
	if err != nil {
		t.Fatal(err)
	}
	return tool.ID, tool.ContentHash
}

func countRows(t testing.TB, pool *pgxpool.Pool, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestEnrichWorkerRetriesProviderErrors: the worker returns a provider's error, so River
// retries the job, and a retry once the provider is back enriches the tool.
func TestEnrichWorkerRetriesProviderErrors(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	f, srv := enrichtest.New(t)
	deps := openAIDeps(pool, srv, false, 2)
	// one batch, so that the failures answered are those of one enrichment attempt
	deps.Embedder = embed.NewOpenAI(embed.OpenAIConfig{Provider: provider.Config{BaseURL: srv.URL + "/v1", Key: enrichtest.Key,
		Retries: 2, BaseBackoff: time.Millisecond}, Model: "text-embedding-test", Dims: 64, MaxBatch: 64})
	id, hash := importOne(t, pool)
	f.Fail("/v1/embeddings", 500, 500, 500, 500, 500, 500)
	w := &EnrichToolWorker{deps: deps}
	if err := w.Work(context.Background(), &river.Job[EnrichToolArgs]{Args: EnrichToolArgs{ToolID: id, ContentHash: hash}}); err == nil {
		t.Fatal("worker swallowed the provider error")
	}
	// once the provider is back, the retry succeeds
	f.Recover("/v1/embeddings")
	if err := w.Work(context.Background(), &river.Job[EnrichToolArgs]{Args: EnrichToolArgs{ToolID: id, ContentHash: hash}}); err != nil {
		t.Fatal(err)
	}
	if n := countRows(t, pool, `SELECT count(*) FROM tool_vectors WHERE tool_id = $1`, id); n != 5 {
		t.Fatalf("%d vectors after the retry", n)
	}
}

// TestEnrichToolProviderHangs points enrichment at an OpenAI-compatible server that accepts
// requests and never answers (docs/faults.md): every attempt ends at the provider timeout
// (TOOLGATE_LLM_TIMEOUT), the job fails with a timeout error River retries, and nothing of
// the tool's enrichment is written.
func TestEnrichToolProviderHangs(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	release := make(chan struct{})
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	pc := provider.Config{BaseURL: srv.URL + "/v1", Key: enrichtest.Key, Timeout: 200 * time.Millisecond, Concurrency: 4,
		Retries: 1, BaseBackoff: time.Millisecond}
	deps := Deps{Pool: pool, Logger: slog.New(slog.DiscardHandler), Questions: 3,
		Embedder: embed.NewOpenAI(embed.OpenAIConfig{Provider: pc, Model: "text-embedding-test", Dims: 64, MaxBatch: 8}),
		Enricher: enrich.NewLLM(llm.New(llm.Config{Provider: pc, Model: "gpt-test"}), false)}
	id, hash := importOne(t, pool)
	w := &EnrichToolWorker{deps: deps}
	// The server answers nothing before release, closed when the test ends, and the job's
	// context has no deadline: Work returns at all only because each attempt ended at the
	// provider timeout, which the error says.
	err := w.Work(context.Background(), &river.Job[EnrichToolArgs]{Args: EnrichToolArgs{ToolID: id, ContentHash: hash}})
	var pe *provider.ProviderError
	if !errors.As(err, &pe) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want a provider timeout error for River to retry, got %v", err)
	}
	if calls.Load() < 2 {
		t.Errorf("%d provider calls, want the first attempt and its retry", calls.Load())
	}
	for _, table := range []string{"tool_components", "tool_enrichments", "tool_vectors"} {
		if n := countRows(t, pool, `SELECT count(*) FROM `+table+` WHERE tool_id = $1`, id); n != 0 {
			t.Fatalf("%d rows in %s after a timed-out job", n, table)
		}
	}
}
