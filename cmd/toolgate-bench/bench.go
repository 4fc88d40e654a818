package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/toolgate/toolgate/internal/bench"
	"github.com/toolgate/toolgate/internal/bench/catalogparse"
	"github.com/toolgate/toolgate/internal/bench/chart"
	"github.com/toolgate/toolgate/internal/cli"
)

// benchCommand is one benchmark: what runs it and the one line its --help and the list
// of benchmarks show.
type benchCommand struct {
	run  command
	help string
}

// benchCommands is the registry of the benchmarks: one line per benchmark.
var benchCommands = map[string]benchCommand{
	"catalog":   {runBenchCatalog, "time catalog.Parse and Hash of a tool catalog (default: the 5,000-tool ScaleMCP build)"},
	"search":    {runBenchSearch, "POST /search (hybrid, k=10) over HTTP and the bare KNN query on catalogs of --tools sizes (database toolgate_bench_<n>)"},
	"peer":      {runBenchPeer, "POST /search next to a Bleve keyword index of the same catalog over HTTP (short and long requests, planned and unplanned), interleaved in --rounds"},
	"load":      {runBenchLoad, "POST /search from 8, 32 and 128 clients for --duration each on a 50,000-tool catalog, with errors and Go heap"},
	"ingest":    {runBenchIngest, "time import and PUT /v1/sources/{name}/tools of --tools sizes until lexically searchable (fresh database toolgate_bench_ingest)"},
	"sync":      {runBenchSync, "time the diff of a sync of a 5,000-tool source, unchanged and 1% changed (temporary source)"},
	"analytics": {runBenchAnalytics, "GET /admin/analytics/* on a seeded log of --searches searches and --tools tools, before and after the rollup (fresh database toolgate_bench_analytics)"},
}

// benchFlags are the harness flags every bench subcommand shares.
type benchFlags struct {
	warmup      *int
	runs        *int
	duration    *string
	concurrency *string
	png         *string
}

// benchDefaults are a subcommand's defaults of the harness flags, which --help shows.
type benchDefaults struct {
	warmup, runs int
	duration     string // "": --runs decides
	concurrency  string
}

// benchDefault are the harness flags' defaults of a subcommand that sets only --runs.
func benchDefault(runs int) benchDefaults {
	return benchDefaults{warmup: 3, runs: runs, concurrency: "1"}
}

func addBenchFlags(fs *flag.FlagSet, d benchDefaults) *benchFlags {
	return &benchFlags{
		warmup:      fs.Int("warmup", d.warmup, "unmeasured warm-up operations"),
		runs:        fs.Int("runs", d.runs, "measured operations per concurrency level"),
		duration:    fs.String("duration", d.duration, "measure for this long instead of --runs (e.g. 30s)"),
		concurrency: fs.String("concurrency", d.concurrency, "comma-separated worker counts to run, e.g. 1,2,4"),
		png:         fs.String("png", "", "write a plot of the results to this PNG file"),
	}
}

// options turns the flags into one harness configuration per concurrency level.
func (f *benchFlags) options() ([]bench.Options, error) {
	base := bench.Options{Warmup: *f.warmup, Runs: *f.runs}
	if *f.duration != "" {
		d, err := time.ParseDuration(*f.duration)
		if err != nil {
			return nil, &cli.UsageError{Msg: "--duration: " + err.Error()}
		}
		base.Duration = d
	}
	var out []bench.Options
	for part := range strings.SplitSeq(*f.concurrency, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || n < 1 {
			return nil, &cli.UsageError{Msg: fmt.Sprintf("--concurrency: %q is not a positive worker count", part)}
		}
		o := base
		o.Concurrency = n
		if err := o.Validate(); err != nil {
			return nil, &cli.UsageError{Msg: err.Error()}
		}
		out = append(out, o)
	}
	return out, nil
}

// runBenchCatalog times parsing and hashing a whole catalog file (internal/bench/catalogparse).
func runBenchCatalog(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags("bench catalog", env)
	file := fs.String("file", "testdata/scalemcp-1000/tools.jsonl", "catalog file in any format catalog.Parse reads")
	bf := addBenchFlags(fs, benchDefault(30))
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	levels, err := bf.options()
	if err != nil {
		return err
	}
	data, err := os.ReadFile(*file)
	if err != nil {
		return err
	}
	results, series, err := catalogparse.Run(ctx, env.log, data, levels)
	if err != nil {
		return err
	}
	bench.WriteReport(env.stdout, "Catalog parsing and hashing", append([]string{"bench", "catalog"}, args...), bench.DescribeMachine(""), results)
	if *bf.png != "" {
		return chart.LinePNG(*bf.png, "Catalog parse and hash throughput", "workers", "tools per second", series)
	}
	return nil
}
