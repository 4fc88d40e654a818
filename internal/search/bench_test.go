package search_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pgvector/pgvector-go"

	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/embed"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/search"
	"github.com/toolgate/toolgate/internal/search/searchbench"
)

// The search benchmark (docs/benchmarks.md, section Search):
//
//	go test -run '^$' -bench BenchmarkSearch -benchtime 2000x ./internal/search
//
// builds catalogs of TOOLGATE_BENCH_SIZES tools (default 5000,50000) with package
// searchbench (also behind `toolgate bench search`). It reports p50/p95/p99 latency and
// throughput with 8 concurrent clients (TOOLGATE_BENCH_CLIENTS) for hybrid k=10 search with
// the settings serve runs with the built-in embedder (also of 40-80-word requests, with
// "explain": true, and of very common words), the parts of a short search (without the
// meaning branch, each branch alone, nothing to find), and the bare pgvector KNN query on the
// same vectors (the floor).

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
// reports latency percentiles, throughput and the CPU time per call of this process (the
// search's Go: the clients are a loop) and of pool's PostgreSQL backends (their own work;
// the WAL writer's and the checkpointer's are not counted).
func runConcurrent(b *testing.B, pool *pgxpool.Pool, op func(i int) error) {
	goCPU0, pgCPU0, busy0 := processCPU(b), backendsCPU(b, pool), machineBusy(b)
	b.ResetTimer()
	start := time.Now()
	lat := timeCalls(b, op)
	elapsed := time.Since(start)
	b.StopTimer()
	busy := machineBusy(b) - busy0
	goCPU, pgCPU := processCPU(b)-goCPU0, usedSince(pgCPU0, backendsCPU(b, pool))
	p := percentiles(lat, 0.50, 0.95, 0.99)
	b.ReportMetric(p[0], "p50-ms")
	b.ReportMetric(p[1], "p95-ms")
	b.ReportMetric(p[2], "p99-ms")
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "req/s")
	b.ReportMetric(float64(goCPU.Microseconds())/1000/float64(b.N), "go-cpu-ms/op")
	b.ReportMetric(float64(pgCPU.Microseconds())/1000/float64(b.N), "pg-cpu-ms/op")
	b.ReportMetric(float64(busy.Microseconds())/1000/float64(b.N), "machine-cpu-ms/op")
}

// benchClients is how many clients the benchmarks run: TOOLGATE_BENCH_CLIENTS, default 8.
func benchClients(b *testing.B) int {
	s := os.Getenv("TOOLGATE_BENCH_CLIENTS")
	if s == "" {
		return 8
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		b.Fatalf("TOOLGATE_BENCH_CLIENTS=%q: want a positive integer", s)
	}
	return n
}

// timeCalls runs b.N calls of op from benchClients clients, each taking the next i, and
// returns each call's latency by i.
func timeCalls(b *testing.B, op func(i int) error) []time.Duration {
	clients := benchClients(b)
	lat := make([]time.Duration, b.N)
	var next int64
	var mu sync.Mutex
	var wg sync.WaitGroup
	var firstErr error
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
	if firstErr != nil {
		b.Fatal(firstErr)
	}
	return lat
}

// percentiles are the ps-quantiles of latencies, in milliseconds (one sort of a copy).
func percentiles(lat []time.Duration, ps ...float64) []float64 {
	sorted := slices.Clone(lat)
	slices.Sort(sorted)
	out := make([]float64, len(ps))
	for i, p := range ps {
		out[i] = float64(sorted[min(len(sorted)-1, int(p*float64(len(sorted))))].Microseconds()) / 1000
	}
	return out
}

// processCPU is the CPU time, user and system, this process has used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// backendsCPU reads the CPU time each client backend of pool's database has used so far
// (from /proc: the server runs on this machine). The pool opens all its connections first,
// so that the backends a run uses are those read before it.
func backendsCPU(b *testing.B, pool *pgxpool.Pool) map[int32]time.Duration {
	ctx := context.Background()
	var conns []*pgxpool.Conn
	for range pool.Config().MaxConns {
		c, err := pool.Acquire(ctx)
		if err != nil {
			b.Fatal(err)
		}
		conns = append(conns, c)
	}
	for _, c := range conns {
		c.Release()
	}
	rows, err := pool.Query(ctx, `SELECT pid FROM pg_stat_activity
		WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid()`)
	if err != nil {
		b.Fatal(err)
	}
	pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		b.Fatal(err)
	}
	out := make(map[int32]time.Duration, len(pids))
	for _, pid := range pids {
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue // a backend that ended
		}
		// the fields after the command's closing parenthesis: utime and stime are the 14th
		// and 15th of the line, in clock ticks (USER_HZ, 100)
		f := strings.Fields(string(raw[bytes.LastIndexByte(raw, ')')+2:]))
		var ticks int64
		for _, i := range []int{11, 12} {
			n, _ := strconv.ParseInt(f[i], 10, 64)
			ticks += n
		}
		out[pid] = time.Duration(ticks) * time.Second / 100
	}
	return out
}

// machineBusy is the CPU time every process of the machine has used so far, all cores
// (/proc/stat: user to steal but idle and iowait; guest time is in user already): the search's Go and its backends, and also
// what they leave to others (the WAL writer, the clients' loop, anything else running).
func machineBusy(b *testing.B) time.Duration {
	raw, err := os.ReadFile("/proc/stat")
	if err != nil {
		b.Fatal(err)
	}
	line, _, _ := strings.Cut(string(raw), "\n")
	var ticks int64
	for i, f := range strings.Fields(line)[1:9] {
		if i == 3 || i == 4 { // idle, iowait
			continue
		}
		n, _ := strconv.ParseInt(f, 10, 64)
		ticks += n
	}
	return time.Duration(ticks) * time.Second / 100
}

// usedSince is the CPU time the backends of before used up to after.
func usedSince(before, after map[int32]time.Duration) time.Duration {
	var d time.Duration
	for pid, t := range after {
		if t0, ok := before[pid]; ok {
			d += t - t0
		}
	}
	return d
}

// servedSettings are the search settings serve runs with the built-in embedder: the defaults
// with the meaning branch and the vector confidence on (config.Load).
func servedSettings() search.Settings {
	st := search.DefaultSettings()
	st.WeightMeaning, st.VectorConfidence = search.DefaultWeightMeaning, search.DefaultVectorConfidence
	return st
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
		long := searchbench.LongQueries(rand.New(rand.NewPCG(7, 7)))
		short := func(i int) search.Request { return search.Request{Query: queries[i%len(queries)], K: 10} }
		served := servedSettings()
		noMeaning := served
		noMeaning.WeightMeaning = 0
		for _, c := range []struct {
			name     string
			embedder embed.Embedder
			settings search.Settings
			request  func(i int) search.Request
		}{
			{"hybrid", searchbench.Embedder{}, served, short},
			{"hybrid-long", searchbench.Embedder{}, served, func(i int) search.Request { return search.Request{Query: long[i%len(long)], K: 10} }},
			{"hybrid-explain", searchbench.Embedder{}, served, func(i int) search.Request {
				r := short(i)
				r.Explain = true
				return r
			}},
			{"hybrid-common-words", searchbench.Embedder{}, served, func(i int) search.Request { return short(i % 3) }},
			// the parts of a short search: without the meaning branch, one branch alone, and a
			// lexical search of words no tool has (no candidate: the fixed cost of a search)
			{"hybrid-no-meaning", searchbench.Embedder{}, noMeaning, short},
			{"lexical", nil, served, func(i int) search.Request {
				r := short(i)
				r.Mode = search.ModeLexical
				return r
			}},
			{"vector", searchbench.Embedder{}, served, func(i int) search.Request {
				r := short(i)
				r.Mode = search.ModeVector
				return r
			}},
			{"nothing", nil, served, func(int) search.Request {
				return search.Request{Query: "zqxjv wxqkz", K: 10, Mode: search.ModeLexical}
			}},
		} {
			b.Run(fmt.Sprintf("tools=%d/%s", n, c.name), func(b *testing.B) {
				s := search.New(setupOnce(b), c.embedder, c.settings, discard())
				runConcurrent(b, pool, func(i int) error {
					_, err := s.Search(context.Background(), callerOf(context.Background()), c.request(i))
					return err
				})
			})
		}
		// the lexical search of a key restricted to the catalog's source: its statistics are
		// summed over its allowed sources (search_source_lexemes, search_source_corpus)
		b.Run(fmt.Sprintf("tools=%d/lexical-restricted", n), func(b *testing.B) {
			s := search.New(setupOnce(b), nil, served, discard())
			tenant := auth.Caller{Name: "tenant", KeyID: 7, Scope: auth.ScopeSearch, Sources: []string{"bench"}}
			runConcurrent(b, pool, func(i int) error {
				r := short(i)
				r.Mode = search.ModeLexical
				_, err := s.Search(context.Background(), tenant, r)
				return err
			})
		})
		b.Run(fmt.Sprintf("tools=%d/knn-floor", n), func(b *testing.B) {
			p := setupOnce(b)
			vecs := make([]pgvector.Vector, len(queries))
			for i, q := range queries {
				vecs[i] = pgvector.NewVector(searchbench.Vector(q))
			}
			runConcurrent(b, pool, func(i int) error {
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
