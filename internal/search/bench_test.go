package search_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pgvector/pgvector-go"

	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/search"
	"github.com/toolgate/toolgate/internal/search/searchbench"
)

// The search benchmark (docs/benchmarks.md, section Search):
//
//	go test -run '^$' -bench BenchmarkSearch -benchtime 2000x ./internal/search
//
// builds catalogs of TOOLGATE_BENCH_SIZES tools (default 5000,50000) with package
// searchbench (also behind `toolgate bench search`). It reports p50/p95/p99
// latency and throughput with 8 concurrent clients for hybrid k=10 search (also of 40-80-word
// requests, and with "explain": true), lexical search of very common words, and the bare pgvector KNN query on
// the same vectors (the floor).
// TOOLGATE_BENCH_CLIENTS changes the number of concurrent clients.

// benchDB builds a database with n tools, their vectors in the active profile's set and
// the HNSW index (searchbench.Build).
func benchDB(b testing.TB, n int) *pgxpool.Pool {
	b.Helper()
	pool := pgtest.NewPool(b)
	t0 := time.Now()
	if err := searchbench.Build(context.Background(), pool, n, func(f string, args ...any) {
		b.Logf("%s: "+f, append([]any{time.Since(t0).Round(time.Millisecond)}, args...)...)
	}); err != nil {
		b.Fatal(err)
	}
	return pool
}

// runConcurrent runs b.N calls of op from TOOLGATE_BENCH_CLIENTS clients (default 8) and
// reports latency percentiles and throughput.
func runConcurrent(b *testing.B, op func(i int) error) {
	clients := 8
	if s := os.Getenv("TOOLGATE_BENCH_CLIENTS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			b.Fatalf("TOOLGATE_BENCH_CLIENTS=%q: want a positive integer", s)
		}
		clients = n
	}
	lat := make([]time.Duration, b.N)
	var next int64
	var mu sync.Mutex
	var wg sync.WaitGroup
	var firstErr error
	b.ResetTimer()
	start := time.Now()
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				i := int(next)
				next++
				mu.Unlock()
				if i >= b.N {
					return
				}
				t0 := time.Now()
				if err := op(i); err != nil {
					mu.Lock()
					firstErr = err
					mu.Unlock()
					return
				}
				lat[i] = time.Since(t0)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if firstErr != nil {
		b.Fatal(firstErr)
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	pct := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.95), "p95-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "req/s")
}

func BenchmarkSearch(b *testing.B) {
	sizes := []int{5000, 50000}
	if s := os.Getenv("TOOLGATE_BENCH_SIZES"); s != "" {
		sizes = nil
		for _, f := range strings.Split(s, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil {
				b.Fatalf("TOOLGATE_BENCH_SIZES: %v", err)
			}
			sizes = append(sizes, n)
		}
	}
	for _, n := range sizes {
		t0 := time.Now()
		pool := benchDB(b, n)
		b.Logf("built %d tools in %s", n, time.Since(t0).Round(time.Second))
		setupOnce := func(*testing.B) *pgxpool.Pool { return pool }
		queries := searchbench.Queries(rand.New(rand.NewPCG(7, 7)))
		b.Run(fmt.Sprintf("tools=%d/hybrid", n), func(b *testing.B) {
			s := search.New(setupOnce(b), searchbench.Embedder{}, search.DefaultSettings(), discard())
			runConcurrent(b, func(i int) error {
				_, err := s.Search(context.Background(), callerOf(context.Background()), search.Request{Query: queries[i%len(queries)], K: 10})
				return err
			})
		})
		long := searchbench.LongQueries(rand.New(rand.NewPCG(7, 7)))
		b.Run(fmt.Sprintf("tools=%d/hybrid-long", n), func(b *testing.B) {
			s := search.New(setupOnce(b), searchbench.Embedder{}, search.DefaultSettings(), discard())
			runConcurrent(b, func(i int) error {
				_, err := s.Search(context.Background(), callerOf(context.Background()), search.Request{Query: long[i%len(long)], K: 10})
				return err
			})
		})
		b.Run(fmt.Sprintf("tools=%d/hybrid-explain", n), func(b *testing.B) {
			s := search.New(setupOnce(b), searchbench.Embedder{}, search.DefaultSettings(), discard())
			runConcurrent(b, func(i int) error {
				_, err := s.Search(context.Background(), callerOf(context.Background()), search.Request{Query: queries[i%len(queries)], K: 10, Explain: true})
				return err
			})
		})
		b.Run(fmt.Sprintf("tools=%d/hybrid-common-words", n), func(b *testing.B) {
			s := search.New(setupOnce(b), searchbench.Embedder{}, search.DefaultSettings(), discard())
			runConcurrent(b, func(i int) error {
				_, err := s.Search(context.Background(), callerOf(context.Background()), search.Request{Query: queries[i%3], K: 10})
				return err
			})
		})
		b.Run(fmt.Sprintf("tools=%d/lexical", n), func(b *testing.B) {
			s := search.New(setupOnce(b), nil, search.DefaultSettings(), discard())
			runConcurrent(b, func(i int) error {
				_, err := s.Search(context.Background(), callerOf(context.Background()), search.Request{Query: queries[i%len(queries)], K: 10, Mode: search.ModeLexical})
				return err
			})
		})
		b.Run(fmt.Sprintf("tools=%d/knn-floor", n), func(b *testing.B) {
			p := setupOnce(b)
			vecs := make([]pgvector.Vector, len(queries))
			for i, q := range queries {
				vecs[i] = pgvector.NewVector(searchbench.Vector(q))
			}
			runConcurrent(b, func(i int) error {
				rows, err := p.Query(context.Background(), searchbench.KNNFloor, vecs[i%len(vecs)])
				if err != nil {
					return err
				}
				rows.Close()
				return rows.Err()
			})
		})
	}
}
