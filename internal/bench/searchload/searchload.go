// Package searchload measures POST /search through the real HTTP stack on the searchbench
// catalogs: per catalog size and client count next to the bare KNN query (Search), and
// under sustained load with the Go heap (Load).
package searchload

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"runtime"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/bench"
	"github.com/toolgate/toolgate/internal/bench/benchdb"
	"github.com/toolgate/toolgate/internal/bench/chart"
	"github.com/toolgate/toolgate/internal/bench/httpop"
	"github.com/toolgate/toolgate/internal/search/searchbench"
)

// Catalog opens the searchbench catalog of n tools (benchdb.Server.Catalog).
type Catalog func(ctx context.Context, n int) (*pgxpool.Pool, error)

// SearchConfig is what Search measures.
type SearchConfig struct {
	Sizes    []int           // catalog sizes
	Levels   []bench.Options // one run per concurrency level
	Catalog  Catalog
	Toolgate httpop.Toolgate
	Log      *slog.Logger
}

// SearchReport is what Search measured.
type SearchReport struct {
	Results []bench.Result
	Series  []chart.Series // p95 in ms per client count, one series per operation and size
	// Statements are the statement's own p50 per size, short and long queries.
	Statements      map[int]benchdb.StatementP50
	PostgresVersion string
}

// Search measures, per catalog size and concurrency level, POST /search (hybrid, k=10) with
// short and with 40-80-word queries, and the bare KNN query.
func Search(ctx context.Context, c SearchConfig) (SearchReport, error) {
	rep := SearchReport{Statements: map[int]benchdb.StatementP50{}}
	for _, n := range c.Sizes {
		if err := searchSize(ctx, c, n, &rep); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// searchSize measures the catalog of n tools into rep.
func searchSize(ctx context.Context, c SearchConfig, n int, rep *SearchReport) error {
	pool, err := c.Catalog(ctx, n)
	if err != nil {
		return err
	}
	defer pool.Close()
	if rep.PostgresVersion == "" {
		rep.PostgresVersion, _ = bench.PostgresVersion(ctx, pool)
	}
	base, stop, err := c.Toolgate(pool)
	if err != nil {
		return err
	}
	defer stop()
	short := searchbench.Queries(rand.New(rand.NewPCG(7, 7)))
	long := searchbench.LongQueries(rand.New(rand.NewPCG(7, 7)))
	since := time.Now()
	ops := []struct {
		name string
		op   func(clients int) bench.Op
	}{
		{"POST /search hybrid k=10", func(cl int) bench.Op { return httpop.PostSearch(httpop.Client(cl), base, short, nil) }},
		{"POST /search hybrid k=10, 40-80-word queries", func(cl int) bench.Op { return httpop.PostSearch(httpop.Client(cl), base, long, nil) }},
		{"pgvector KNN floor k=10", func(int) bench.Op { return benchdb.KNN(pool) }},
	}
	for _, o := range ops {
		s := chart.Series{Name: fmt.Sprintf("%s, %d tools", o.name, n)}
		for _, opts := range c.Levels {
			name := fmt.Sprintf("%s, %d tools", o.name, n)
			r, err := bench.RunLogged(ctx, c.Log, "bench search", name, opts, o.op(opts.Concurrency))
			if err != nil {
				return err
			}
			rep.Results = append(rep.Results, r)
			s.X = append(s.X, float64(opts.Concurrency))
			s.Y = append(s.Y, float64(r.P95)/float64(time.Millisecond))
		}
		rep.Series = append(rep.Series, s)
	}
	st, err := benchdb.StatementTimes(ctx, pool, since)
	rep.Statements[n] = st
	return err
}

// LoadConfig is what Load measures.
type LoadConfig struct {
	Tools    int             // catalog size
	Levels   []bench.Options // one timed run per client count
	Catalog  Catalog
	Toolgate httpop.Toolgate
	Log      *slog.Logger
}

// LoadReport is what Load measured.
type LoadReport struct {
	Results []bench.Result
	// Heap is the Markdown table of errors and Go heap in use per client count.
	Heap            string
	Series          chart.Series // searches per second per client count
	PostgresVersion string
}

// Load runs POST /search from each level's clients for its duration against the catalog of
// c.Tools tools and reports throughput, latency, errors and the Go heap in use.
func Load(ctx context.Context, c LoadConfig) (LoadReport, error) {
	var rep LoadReport
	pool, err := c.Catalog(ctx, c.Tools)
	if err != nil {
		return rep, err
	}
	defer pool.Close()
	rep.PostgresVersion, _ = bench.PostgresVersion(ctx, pool)
	base, stop, err := c.Toolgate(pool)
	if err != nil {
		return rep, err
	}
	defer stop()
	var heap strings.Builder
	heap.WriteString("\n| Clients | Errors | First error | Heap in use at start | peak | end | end after GC |\n|---:|---:|---|---:|---:|---:|---:|\n")
	rep.Series = chart.Series{Name: "POST /search hybrid k=10"}
	for _, opts := range c.Levels {
		runtime.GC()
		h := bench.StartHeapSampler()
		op := httpop.PostSearch(httpop.Client(opts.Concurrency), base, searchbench.Queries(rand.New(rand.NewPCG(7, 7))), nil)
		r, err := bench.Run(ctx, fmt.Sprintf("POST /search hybrid k=10, %d tools, %s", c.Tools, opts.Duration), opts, op)
		start, peak, end := h.Finish()
		if err != nil {
			return rep, err
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
		c.Log.Info("bench load", "result", r.String(), "heap_start", bench.MiB(start), "heap_peak", bench.MiB(peak), "heap_end", bench.MiB(end))
		fmt.Fprintf(&heap, "| %d | %d | %s | %s | %s | %s | %s |\n", opts.Concurrency, r.Errors, first, bench.MiB(start), bench.MiB(peak), bench.MiB(end), bench.MiB(m.HeapInuse))
		rep.Results = append(rep.Results, r)
		rep.Series.X = append(rep.Series.X, float64(opts.Concurrency))
		rep.Series.Y = append(rep.Series.Y, r.Throughput)
	}
	rep.Heap = heap.String()
	return rep, nil
}
