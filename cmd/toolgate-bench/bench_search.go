package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pgvector/pgvector-go"

	"github.com/toolgate/toolgate/api"
	"github.com/toolgate/toolgate/internal/bench"
	"github.com/toolgate/toolgate/internal/bench/chart"
	"github.com/toolgate/toolgate/internal/cli"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/postgres"
	"github.com/toolgate/toolgate/internal/search/searchbench"
)

// reuseBenchDB brings a kept bench database built by an earlier toolgate up to this one's
// schema and index, as `toolgate migrate up` does (searches of the current code would fail
// on the old schema, and time a half-built index after a migration that queues every
// tool), and opens it.
func reuseBenchDB(ctx context.Context, env *cliEnv, dbURL string) (*pgxpool.Pool, error) {
	mp, err := postgres.Connect(ctx, dbURL)
	if err != nil {
		return nil, err
	}
	err = migrateUp(ctx, env, mp)
	mp.Close()
	if err != nil {
		return nil, err
	}
	// a new pool: connections made before the migration may not know its types
	pool, err := postgres.Connect(ctx, dbURL, poolOptions(env)...)
	if err != nil {
		return nil, err
	}
	return pool, benchPartitions(ctx, pool)
}

// benchCatalogDB opens toolgate_bench_<n> on the DATABASE_URL server holding the
// searchbench catalog of n tools: reused as it is when reuse is set and it holds n tools,
// else dropped, created, migrated and built (minutes for 50,000 tools on 2 cores).
func benchCatalogDB(ctx context.Context, env *cliEnv, n int, reuse bool) (*pgxpool.Pool, error) {
	name := "toolgate_bench_" + strconv.Itoa(n)
	u, err := url.Parse(env.cfg.DatabaseURL)
	if err != nil {
		return nil, err
	}
	u.Path = "/" + name
	if reuse {
		if pool, err := postgres.Connect(ctx, u.String(), poolOptions(env)...); err == nil {
			var have int
			err := pool.QueryRow(ctx, `SELECT count(*) FROM tools`).Scan(&have)
			pool.Close()
			if err == nil && have == n {
				env.log.Info("bench: reusing catalog", "database", name, "tools", n)
				return reuseBenchDB(ctx, env, u.String())
			}
		}
	}
	// kept after the run (--reuse): its drop function is not called
	if _, _, err := freshBenchDB(ctx, env, name); err != nil {
		return nil, err
	}
	t0 := time.Now()
	build := func(ctx context.Context) error {
		// Separate pools: connections made before the migration do not know the vector
		// type, and those made before the build not its dimension.
		pool, err := postgres.Connect(ctx, u.String())
		if err != nil {
			return err
		}
		defer pool.Close()
		if err := postgres.MigrateUp(ctx, pool); err != nil {
			return err
		}
		built, err := postgres.Connect(ctx, u.String())
		if err != nil {
			return err
		}
		defer built.Close()
		return searchbench.Build(ctx, built, n, func(f string, args ...any) {
			env.log.Info("bench: build "+name, "step", fmt.Sprintf(f, args...), "elapsed", time.Since(t0).Round(time.Second).String())
		})
	}
	if err := build(ctx); err != nil {
		return nil, fmt.Errorf("build %s: %w", name, err)
	}
	pool, err := postgres.Connect(ctx, u.String(), poolOptions(env)...)
	if err != nil {
		return nil, err
	}
	if err := benchPartitions(ctx, pool); err != nil {
		pool.Close()
		return nil, err
	}
	return pool, nil
}

func benchPartitions(ctx context.Context, pool *pgxpool.Pool) error {
	_, err := db.New(pool).EnsureSearchLogPartitions(ctx, 2)
	return err
}

// benchServer serves the real API (open mode, hybrid search with the searchbench embedder)
// on a loopback listener and returns its base URL and the function stopping it.
func benchServer(env *cliEnv, pool *pgxpool.Pool) (string, func(), error) {
	// Warnings and errors only: an access-log line per request would measure the terminal.
	log := slog.New(slog.NewJSONHandler(env.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	svc, err := newSearch(env, pool, searchbench.Embedder{})
	if err != nil {
		return "", nil, err
	}
	e := api.New(api.Deps{Pool: pool, Logger: log, Open: true, Search: svc})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: e, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String(), func() { _ = srv.Close() }, nil
}

// searchOp posts a hybrid k=10 search per operation, cycling through queries; any status
// but 200 is an error.
func searchOp(base string, clients int, queries []string) bench.Op {
	return postSearchOp(benchClient(clients), base, queries, nil)
}

// benchClient is the keep-alive HTTP client of clients concurrent benchmark workers.
func benchClient(clients int) *http.Client {
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConns: clients, MaxIdleConnsPerHost: clients}}
}

// postSearchOp posts {"query": q, "k": 10} plus the extra fields to base/search with hc per
// operation, cycling through queries; any status but 200 is an error.
func postSearchOp(hc *http.Client, base string, queries []string, extra map[string]any) bench.Op {
	bodies := make([][]byte, len(queries))
	for i, q := range queries {
		body := map[string]any{"query": q, "k": 10}
		for k, v := range extra {
			body[k] = v
		}
		bodies[i], _ = json.Marshal(body)
	}
	var mu sync.Mutex
	next := 0
	return func(ctx context.Context, _ int) error {
		mu.Lock()
		body := bodies[next%len(bodies)]
		next++
		mu.Unlock()
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/search", bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := hc.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		if err != nil {
			return err
		}
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("POST /search: %d %s", resp.StatusCode, bytes.TrimSpace(data))
		}
		return nil
	}
}

// knnOp runs the bare pgvector KNN query on the active set: the floor under hybrid search.
func knnOp(pool *pgxpool.Pool) bench.Op {
	queries := searchbench.Queries(rand.New(rand.NewPCG(7, 7)))
	vecs := make([]pgvector.Vector, len(queries))
	for i, q := range queries {
		vecs[i] = pgvector.NewVector(searchbench.Vector(q))
	}
	var mu sync.Mutex
	next := 0
	return func(ctx context.Context, _ int) error {
		mu.Lock()
		v := vecs[next%len(vecs)]
		next++
		mu.Unlock()
		rows, err := pool.Query(ctx, searchbench.KNNFloor, v)
		if err != nil {
			return err
		}
		rows.Close()
		return rows.Err()
	}
}

func parseSizes(s string) ([]int, error) {
	var out []int
	for part := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || n < 10 {
			return nil, &cli.UsageError{Msg: fmt.Sprintf("--tools: %q is not a catalog size of at least 10", part)}
		}
		out = append(out, n)
	}
	return out, nil
}

// runBenchSearch measures POST /search (hybrid, k=10) through the real HTTP stack and the
// bare KNN query, per catalog size and concurrency level.
func runBenchSearch(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags("bench search", env)
	toolsFlag := fs.String("tools", "5000,50000", "comma-separated catalog sizes")
	reuse := fs.Bool("reuse", false, "reuse toolgate_bench_<n> when it already holds n tools")
	bf := addBenchFlags(fs, benchDefaults{warmup: 3, runs: 2000, concurrency: "8"})
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	levels, err := bf.options()
	if err != nil {
		return err
	}
	sizes, err := parseSizes(*toolsFlag)
	if err != nil {
		return err
	}
	var results []bench.Result
	var series []chart.Series
	var statements []string
	var pgVersion string
	for _, n := range sizes {
		pool, err := benchCatalogDB(ctx, env, n, *reuse)
		if err != nil {
			return err
		}
		if pgVersion == "" {
			pgVersion, _ = bench.PostgresVersion(ctx, pool)
		}
		base, stop, err := benchServer(env, pool)
		if err != nil {
			pool.Close()
			return err
		}
		short := searchbench.Queries(rand.New(rand.NewPCG(7, 7)))
		long := searchbench.LongQueries(rand.New(rand.NewPCG(7, 7)))
		since := time.Now()
		ops := []struct {
			name string
			op   func(clients int) bench.Op
		}{
			{"POST /search hybrid k=10", func(c int) bench.Op { return searchOp(base, c, short) }},
			{"POST /search hybrid k=10, 40-80-word queries", func(c int) bench.Op { return searchOp(base, c, long) }},
			{"pgvector KNN floor k=10", func(int) bench.Op { return knnOp(pool) }},
		}
		for _, o := range ops {
			s := chart.Series{Name: fmt.Sprintf("%s, %d tools", o.name, n)}
			for _, opts := range levels {
				name := fmt.Sprintf("%s, %d tools", o.name, n)
				r, err := bench.Run(ctx, name, opts, o.op(opts.Concurrency))
				if err != nil {
					stop()
					pool.Close()
					return err
				}
				env.log.Info("bench search", "result", r.String())
				if r.FirstError != nil && r.Errors == r.Runs {
					stop()
					pool.Close()
					return fmt.Errorf("%s: every operation failed, the first with: %w", name, r.FirstError)
				}
				if r.FirstError != nil {
					env.log.Warn("bench search: errors", "first", r.FirstError.Error())
				}
				results = append(results, r)
				s.X = append(s.X, float64(opts.Concurrency))
				s.Y = append(s.Y, float64(r.P95)/float64(time.Millisecond))
			}
			series = append(series, s)
		}
		st, err := statementTimes(ctx, pool, since)
		if err != nil {
			stop()
			pool.Close()
			return err
		}
		statements = append(statements, fmt.Sprintf("| %d | %.2f ms | %.2f ms | %.2f |", n, st.short, st.long, st.long/st.short))
		stop()
		pool.Close()
	}
	writeBenchReport(env.stdout, "Search (toolgate bench search)", append([]string{"bench", "search"}, args...), bench.DescribeMachine(pgVersion), results)
	fmt.Fprintf(env.stdout, "\nThe search statement inside PostgreSQL (search_log timings.db_ms, p50 over the runs above):\n\n"+
		"| tools | short queries | 40-80-word queries | ratio |\n|---:|---:|---:|---:|\n%s\n", strings.Join(statements, "\n"))
	if *bf.png != "" {
		return chart.LinePNG(*bf.png, "Search p95 latency", "concurrent clients", "p95 (ms)", series)
	}
	return nil
}

// heapSampler records runtime.MemStats.HeapInuse every second.
type heapSampler struct {
	mu      sync.Mutex
	samples []uint64
	stop    chan struct{}
	done    chan struct{}
}

func startHeapSampler() *heapSampler {
	h := &heapSampler{stop: make(chan struct{}), done: make(chan struct{})}
	h.sample()
	go func() {
		defer close(h.done)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-h.stop:
				return
			case <-t.C:
				h.sample()
			}
		}
	}()
	return h
}

func (h *heapSampler) sample() {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	h.mu.Lock()
	h.samples = append(h.samples, m.HeapInuse)
	h.mu.Unlock()
}

// finish stops sampling and returns the first, peak and last samples.
func (h *heapSampler) finish() (start, peak, end uint64) {
	close(h.stop)
	<-h.done
	h.sample()
	for _, s := range h.samples {
		peak = max(peak, s)
	}
	return h.samples[0], peak, h.samples[len(h.samples)-1]
}

// runBenchLoad runs POST /search from 8, 32 and 128 clients for a duration each against a
// 50,000-tool catalog and reports throughput, latency, errors and the Go heap in use.
func runBenchLoad(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags("bench load", env)
	n := fs.Int("tools", 50000, "catalog size")
	reuse := fs.Bool("reuse", false, "reuse toolgate_bench_<n> when it already holds n tools")
	bf := addBenchFlags(fs, benchDefaults{warmup: 20, runs: 1, duration: "30s", concurrency: "8,32,128"})
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	levels, err := bf.options()
	if err != nil {
		return err
	}
	if levels[0].Duration == 0 {
		return &cli.UsageError{Msg: "--duration: bench load needs a duration"}
	}
	if _, err := parseSizes(strconv.Itoa(*n)); err != nil {
		return err
	}
	pool, err := benchCatalogDB(ctx, env, *n, *reuse)
	if err != nil {
		return err
	}
	defer pool.Close()
	pgVersion, _ := bench.PostgresVersion(ctx, pool)
	base, stop, err := benchServer(env, pool)
	if err != nil {
		return err
	}
	defer stop()
	var results []bench.Result
	var heap strings.Builder
	heap.WriteString("\n| Clients | Errors | First error | Heap in use at start | peak | end | end after GC |\n|---:|---:|---|---:|---:|---:|---:|\n")
	s := chart.Series{Name: "POST /search hybrid k=10"}
	for _, opts := range levels {
		runtime.GC()
		h := startHeapSampler()
		r, err := bench.Run(ctx, fmt.Sprintf("POST /search hybrid k=10, %d tools, %s", *n, opts.Duration), opts, searchOp(base, opts.Concurrency, searchbench.Queries(rand.New(rand.NewPCG(7, 7)))))
		start, peak, end := h.finish()
		if err != nil {
			return err
		}
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		first := ""
		if r.FirstError != nil {
			first = strings.ReplaceAll(r.FirstError.Error(), "|", `\|`)
			if errors.Is(r.FirstError, context.DeadlineExceeded) {
				first = "client timeout: " + first
			}
		}
		env.log.Info("bench load", "result", r.String(), "heap_start", mib(start), "heap_peak", mib(peak), "heap_end", mib(end))
		fmt.Fprintf(&heap, "| %d | %d | %s | %s | %s | %s | %s |\n", opts.Concurrency, r.Errors, first, mib(start), mib(peak), mib(end), mib(m.HeapInuse))
		results = append(results, r)
		s.X = append(s.X, float64(opts.Concurrency))
		s.Y = append(s.Y, r.Throughput)
	}
	writeBenchReport(env.stdout, "Load (toolgate bench load)", append([]string{"bench", "load"}, args...), bench.DescribeMachine(pgVersion), results)
	fmt.Fprint(env.stdout, heap.String())
	if *bf.png != "" {
		return chart.LinePNG(*bf.png, "Search throughput under load", "concurrent clients", "searches per second", []chart.Series{s})
	}
	return nil
}

func mib(b uint64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

type statementP50 struct{ short, long float64 }

// statementTimes is the p50 of the search statement's own time (the retrieval log's db_ms)
// of the searches logged since, for queries under 40 words and for longer ones.
func statementTimes(ctx context.Context, pool *pgxpool.Pool, since time.Time) (statementP50, error) {
	var st statementP50
	// Raw SQL: a one-off report over the retrieval log of the benchmark database.
	err := pool.QueryRow(ctx, `
		SELECT coalesce(percentile_cont(0.5) WITHIN GROUP (ORDER BY (timings->>'db_ms')::float8)
		                FILTER (WHERE cardinality(regexp_split_to_array(query, '\s+')) < 40), 0),
		       coalesce(percentile_cont(0.5) WITHIN GROUP (ORDER BY (timings->>'db_ms')::float8)
		                FILTER (WHERE cardinality(regexp_split_to_array(query, '\s+')) >= 40), 0)
		FROM search_log WHERE created_at >= $1`, since).Scan(&st.short, &st.long)
	return st, err
}
