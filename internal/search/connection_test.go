package search_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/toolgate/toolgate/internal/derrors"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/postgres"
	"github.com/toolgate/toolgate/internal/rerank"
	"github.com/toolgate/toolgate/internal/search"
)

// blockingRerank is a rerank API in Cohere's wire format that answers only when released:
// each request first reports on entered, then waits for release.
type blockingRerank struct {
	entered chan struct{}
	release chan struct{}
}

func (b *blockingRerank) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Documents []string `json:"documents"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	b.entered <- struct{}{}
	select {
	case <-b.release:
	case <-r.Context().Done():
		return
	}
	type result struct {
		Index int     `json:"index"`
		Score float64 `json:"relevance_score"`
	}
	res := make([]result, len(body.Documents))
	for i := range body.Documents {
		res[i] = result{Index: i, Score: 1 / float64(i+1)}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"id": "r1", "results": res})
}

// TestRerankHoldsNoConnection: a reranked search calls the reranker with no pooled connection
// held. With a pool of 4 and 8 reranked searches waiting on a reranker that has not
// answered, no connection is in use, and a plain search answers. (Holding one per rerank, 4
// searches took the pool and the other 4 and the plain search waited for it.)
func TestRerankHoldsNoConnection(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.NewDB(t)
	pool, err := postgres.Connect(ctx, url, postgres.WithMaxConns(4))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	fill(t, pool)

	b := &blockingRerank{entered: make(chan struct{}, 8), release: make(chan struct{})}
	srv := httptest.NewServer(b)
	defer srv.Close()
	rr, err := rerank.NewHTTP(srv.URL+"/v2/rerank", "rk", "rerank-v3.5", rerank.StyleCohere, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	st := search.DefaultSettings()
	st.Reranker, st.RerankTimeout = rr, time.Minute
	s := search.New(pool, testEmbedder, st, discard())

	const inFlight = 8
	var wg sync.WaitGroup
	errs := make(chan error, inFlight)
	for range inFlight {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := s.Search(ctx, search.Internal(), search.Request{Query: "send an email message", K: 3})
			if err == nil && (resp.Rerank == nil || !resp.Rerank.Applied) {
				t.Errorf("reranked search: decision %+v", resp.Rerank)
			}
			errs <- err
		}()
	}
	entered := time.After(time.Minute)
	for i := range inFlight {
		select {
		case <-b.entered:
		case <-entered:
			t.Fatalf("%d of %d reranked searches reached the reranker in a minute: the others wait for a connection", i, inFlight)
		}
	}
	if n := pool.Stat().AcquiredConns(); n != 0 {
		t.Errorf("%d connections in use while %d searches wait for the reranker, want 0", n, inFlight)
	}
	plainCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	off := false
	if resp, err := s.Search(plainCtx, search.Internal(), search.Request{Query: "latest stock price", K: 3, Rerank: &off}); err != nil || len(resp.Results) == 0 {
		t.Errorf("plain search beside %d waiting reranks: %+v, %v", inFlight, resp.Results, err)
	}
	close(b.release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("reranked search: %v", err)
		}
	}
}

// TestStatementTimeout: a search statement that runs past Settings.StatementTimeout (here it
// waits for a lock another session holds on tools) is cancelled and fails with
// ErrStatementTimeout, an outage (503), and its connection is free again. The timeout is
// set with the statement, so it bounds the execution of the statement the connection has
// prepared (the first search on a connection prepares it first, unbounded).
func TestStatementTimeout(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.NewDB(t)
	pool, err := postgres.Connect(ctx, url, postgres.WithMaxConns(1))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	fill(t, pool)
	st := search.DefaultSettings()
	st.StatementTimeout = 200 * time.Millisecond
	s := search.New(pool, testEmbedder, st, discard())
	req := search.Request{Query: "latest stock price", K: 3, Plan: "none"}
	mustSearch(t, ctx, s, req) // prepares the statements on the pool's one connection

	locker, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer locker.Close(ctx)
	tx, err := locker.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Raw SQL: a lock no production path takes, to hold the statement.
	if _, err := tx.Exec(ctx, `LOCK TABLE tools IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	_, err = s.Search(ctx, search.Internal(), req)
	if !errors.Is(err, search.ErrStatementTimeout) || !errors.Is(err, derrors.Unavailable) {
		t.Errorf("search held past its timeout: %v, want ErrStatementTimeout", err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if resp := mustSearch(t, ctx, s, req); len(resp.Results) == 0 {
		t.Errorf("search after the lock: no results")
	}
}
