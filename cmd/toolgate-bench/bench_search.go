package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/toolgate/toolgate/internal/bench"
	"github.com/toolgate/toolgate/internal/bench/chart"
	"github.com/toolgate/toolgate/internal/bench/searchload"
	"github.com/toolgate/toolgate/internal/cli"
)

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
// bare KNN query, per catalog size and concurrency level (internal/bench/searchload).
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
	rep, err := searchload.Search(ctx, searchload.SearchConfig{Sizes: sizes, Levels: levels, Catalog: env.catalog(*reuse), Toolgate: env.toolgate, Log: env.log})
	if err != nil {
		return err
	}
	bench.WriteReport(env.stdout, "Search (toolgate bench search)", append([]string{"bench", "search"}, args...), bench.DescribeMachine(rep.PostgresVersion), rep.Results)
	rows := make([]string, len(sizes))
	for i, n := range sizes {
		st := rep.Statements[n]
		rows[i] = fmt.Sprintf("| %d | %.2f ms | %.2f ms | %.2f |", n, st.Short, st.Long, st.Long/st.Short)
	}
	fmt.Fprintf(env.stdout, "\nThe search statement inside PostgreSQL (search_log timings.db_ms, p50 over the runs above):\n\n"+
		"| tools | short queries | 40-80-word queries | ratio |\n|---:|---:|---:|---:|\n%s\n", strings.Join(rows, "\n"))
	if *bf.png != "" {
		return chart.LinePNG(*bf.png, "Search p95 latency", "concurrent clients", "p95 (ms)", rep.Series)
	}
	return nil
}

// runBenchLoad runs POST /search from 8, 32 and 128 clients for a duration each against a
// 50,000-tool catalog and reports throughput, latency, errors and the Go heap in use
// (internal/bench/searchload).
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
	rep, err := searchload.Load(ctx, searchload.LoadConfig{Tools: *n, Levels: levels, Catalog: env.catalog(*reuse), Toolgate: env.toolgate, Log: env.log})
	if err != nil {
		return err
	}
	bench.WriteReport(env.stdout, "Load (toolgate bench load)", append([]string{"bench", "load"}, args...), bench.DescribeMachine(rep.PostgresVersion), rep.Results)
	fmt.Fprint(env.stdout, rep.Heap)
	if *bf.png != "" {
		return chart.LinePNG(*bf.png, "Search throughput under load", "concurrent clients", "searches per second", []chart.Series{rep.Series})
	}
	return nil
}
