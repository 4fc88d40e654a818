package search_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/embed"
	"github.com/toolgate/toolgate/internal/provider"
	"github.com/toolgate/toolgate/internal/search"
)

// TestEmbeddingProviderDown: a query the provider cannot embed within the embed timeout
// (here: it answers 503 to every attempt, and retries would take far longer) gives a hybrid
// search its lexical results, flagged and logged as degraded, and fails a vector search
// with an EmbedError, each after one attempt: the timeout (300 ms) ends the search before
// the first retry (its backoff is at least 1 s) is made.
func TestEmbeddingProviderDown(t *testing.T) {
	t.Parallel()
	pool, _ := setup(t)
	var calls atomic.Int32
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write([]byte(`{"error":{"message":"overloaded","type":"server_error"}}`))
	}))
	defer down.Close()
	embedder := embed.NewOpenAI(embed.OpenAIConfig{
		Provider: provider.Config{BaseURL: down.URL + "/v1", Retries: 5, BaseBackoff: time.Second},
		Model:    "test", Dims: 32,
	})
	st := search.DefaultSettings()
	st.EmbedTimeout = 300 * time.Millisecond
	s := search.New(pool, embedder, st, discard())
	ctx := context.Background()

	resp, err := s.Search(ctx, callerOf(ctx), search.Request{Query: "latest stock price", K: 3})
	if err != nil {
		t.Fatalf("hybrid search with the provider down: %v", err)
	}
	if n := calls.Swap(0); n != 1 {
		t.Errorf("the hybrid search called the provider %d times, want once (the embed timeout ends the retries)", n)
	}
	if len(resp.Results) == 0 || resp.Results[0].Name != "acme__get_stock_price" || resp.Results[0].VectorRank != nil {
		t.Errorf("degraded hybrid results: %+v", resp.Results)
	}
	if !strings.Contains(resp.Degraded, "vector branch skipped") || strings.Contains(resp.Degraded, down.URL) {
		t.Errorf("degraded = %q", resp.Degraded)
	}
	var logged string
	if err := pool.QueryRow(ctx, `SELECT timings->>'degraded' FROM search_log WHERE id = $1`, resp.SearchID).Scan(&logged); err != nil || logged != resp.Degraded {
		t.Errorf("log row degraded = %q, %v; want %q", logged, err, resp.Degraded)
	}
	_, err = s.Search(ctx, callerOf(ctx), search.Request{Query: "latest stock price", Mode: search.ModeVector})
	var ee *search.EmbedError
	if !errors.As(err, &ee) {
		t.Fatalf("vector search with the provider down: %v, want an EmbedError", err)
	}
	if n := calls.Swap(0); n != 1 {
		t.Errorf("the vector search called the provider %d times, want once", n)
	}

	// With the provider up, the same service runs both branches and is not degraded.
	ok := search.New(pool, testEmbedder, st, discard())
	resp = mustSearch(t, ctx, ok, search.Request{Query: "latest stock price", K: 3})
	if resp.Degraded != "" {
		t.Errorf("healthy search degraded: %q", resp.Degraded)
	}
	// Timings (for metrics): the query embedding and the statement; no embedding when lexical.
	if resp.Timings.Embed <= 0 || resp.Timings.Statement <= 0 {
		t.Errorf("hybrid timings %+v", resp.Timings)
	}
	lex := mustSearch(t, ctx, ok, search.Request{Query: "latest stock price", K: 3, Mode: search.ModeLexical})
	if lex.Timings.Embed != 0 || lex.Timings.Statement <= 0 {
		t.Errorf("lexical timings %+v", lex.Timings)
	}
}

// TestQueryOfAnotherSpace: a process whose embedder is not the one the stored vectors were
// made by (a replica not yet restarted after another process moved the space to a new
// built-in default) answers a hybrid search from the keyword branch, flagged as degraded,
// instead of failing on pgvector's refusal to compare vectors of two dimensions; a vector
// search fails with that refusal.
func TestQueryOfAnotherSpace(t *testing.T) {
	t.Parallel()
	pool, _ := setup(t)
	ctx := context.Background()
	other := embed.NewLocal(testEmbedder.Dims() + 8)
	s := search.New(pool, other, search.DefaultSettings(), discard())
	resp, err := s.Search(ctx, callerOf(ctx), search.Request{Query: "latest stock price", K: 3})
	if err != nil {
		t.Fatalf("hybrid search with another space's query vector: %v", err)
	}
	if len(resp.Results) == 0 || resp.Results[0].Name != "acme__get_stock_price" || resp.Results[0].VectorRank != nil {
		t.Errorf("results: %+v", resp.Results)
	}
	if !strings.Contains(resp.Degraded, "another embedding space") {
		t.Errorf("degraded = %q", resp.Degraded)
	}
	if _, err := s.Search(ctx, callerOf(ctx), search.Request{Query: "latest stock price", Mode: search.ModeVector}); err == nil ||
		!strings.Contains(err.Error(), "different vector dimensions") {
		t.Fatalf("vector search with another space's query vector: %v", err)
	}
}
