package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"time"

	"github.com/toolgate/toolgate/api"
	"github.com/toolgate/toolgate/internal/analytics"
	"github.com/toolgate/toolgate/internal/analytics/analyticsbench"
	"github.com/toolgate/toolgate/internal/bench"
	"github.com/toolgate/toolgate/internal/cli"
	"github.com/toolgate/toolgate/internal/postgres"
	"github.com/toolgate/toolgate/jobs"
)

// analyticsBenchURLs are the requests `toolgate bench analytics` times, each through the
// real HTTP server: every /admin/analytics endpoint with its default window, and the wider
// windows the console may ask for. Add a console endpoint here to have it measured.
var analyticsBenchURLs = []string{
	"/admin/analytics/searches?days=7&bucket=hour",
	"/admin/analytics/searches?days=30&bucket=day",
	"/admin/analytics/zero-results?days=7&limit=50",
	"/admin/analytics/zero-results?days=30&limit=50",
	"/admin/analytics/low-score?days=7&limit=50",
	"/admin/analytics/low-score?days=30&limit=50",
	"/admin/analytics/profiles?days=30",
	"/admin/analytics/tools?limit=50",
	"/admin/analytics/slowest?days=7&limit=50",
	"/admin/analytics/slowest?days=30&limit=500",
	"/admin/analytics/top-queries?days=7&limit=50",
	"/admin/analytics/top-queries?days=30&limit=50",
}

// consolePageURLs are the other GETs the console's pages make (docs/console.md; its search
// page's POST /search is measured by bench search), timed with analyticsBenchURLs after the
// rollup: the catalog's 100 sources hold 500 tools each.
var consolePageURLs = []string{
	"/v1/whoami",
	"/v1/sources",
	"/v1/sources/src001",
	"/v1/tools?source=src001&review_state=pending&limit=50",
	"/v1/tools?source=src001&limit=50",
	"/v1/tools?limit=50",
	"/v1/sources/src001/runs?limit=20",
	"/v1/tools/src001__tool_1",
	"/admin/profiles",
	"/admin/tunes",
	"/admin/experiments",
	"/admin/jobs/summary",
	"/admin/jobs?limit=50",
}

// runBenchAnalytics seeds a fresh database (toolgate_bench_analytics, dropped at the end)
// with a catalog and a retrieval log (internal/analytics/analyticsbench), times each of
// analyticsBenchURLs reading the log itself, rolls the log up as the search_rollup job
// does, and times them again on the rollups.
func runBenchAnalytics(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags("bench analytics", env)
	tools := fs.Int("tools", 50000, "tools in the catalog")
	searches := fs.Int("searches", 1000000, "searches in the retrieval log")
	days := fs.Int("days", 30, "days the searches are spread over (1..90)")
	liveRuns := fs.Int("live-runs", 3, "measured requests per URL before the rollup, reading the log itself (0: skip)")
	bf := addBenchFlags(fs, benchDefault(30))
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *tools < 1 || *searches < 1 || *days < 1 || *days > analytics.MaxDays || *liveRuns < 0 {
		return &cli.UsageError{Msg: fmt.Sprintf("--tools and --searches must be positive, --days from 1 to %d, --live-runs at least 0", analytics.MaxDays)}
	}
	levels, err := bf.options()
	if err != nil {
		return err
	}
	dbURL, drop, err := freshBenchDB(ctx, env, "toolgate_bench_analytics")
	if err != nil {
		return err
	}
	defer drop()
	mp, err := postgres.Connect(ctx, dbURL)
	if err != nil {
		return err
	}
	err = postgres.MigrateUp(ctx, mp)
	mp.Close()
	if err != nil {
		return err
	}
	// a new pool: connections made before the migration may not know its types
	pool, err := postgres.Connect(ctx, dbURL, poolOptions(env)...)
	if err != nil {
		return err
	}
	defer pool.Close()
	pgVersion, _ := bench.PostgresVersion(ctx, pool)

	t0 := time.Now()
	if err := analyticsbench.Seed(ctx, pool, *tools, *searches, *days, func(f string, a ...any) {
		env.log.Info("bench analytics: seed", "step", fmt.Sprintf(f, a...))
	}); err != nil {
		return err
	}
	seeded := time.Since(t0)

	// Warnings and errors only: an access-log line per request would measure the terminal.
	log := slog.New(slog.NewJSONHandler(env.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	// an insert-only River client: the jobs endpoints list through it
	rc, err := jobs.NewClient(jobs.Deps{Pool: pool, Logger: log}, jobs.Options{})
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: api.New(api.Deps{Pool: pool, Logger: log, Open: true, River: rc}), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	base := "http://" + ln.Addr().String()
	hc := &http.Client{Timeout: 5 * time.Minute}

	var live []bench.Result
	if *liveRuns > 0 {
		opts := bench.Options{Warmup: 1, Runs: *liveRuns, Concurrency: 1}
		for _, u := range analyticsBenchURLs {
			r, err := bench.Run(ctx, "GET "+u, opts, getOp(hc, base+u))
			if err != nil {
				return err
			}
			env.log.Info("bench analytics: from the log", "result", r.String())
			live = append(live, r)
		}
	}

	t1 := time.Now()
	rep, err := analytics.Rollup(ctx, pool, analytics.RollupOptions{})
	if err != nil {
		return err
	}
	rolled := time.Since(t1)
	env.log.Info("bench analytics: rolled up", "hours", rep.HoursRolled, "steps", rep.Steps, "elapsed", rolled.Round(time.Second).String())

	var results []bench.Result
	for _, u := range append(slices.Clone(analyticsBenchURLs), consolePageURLs...) {
		for _, opts := range levels {
			r, err := bench.Run(ctx, "GET "+u, opts, getOp(hc, base+u))
			if err != nil {
				return err
			}
			env.log.Info("bench analytics", "result", r.String())
			if r.FirstError != nil {
				return fmt.Errorf("GET %s: %w", u, r.FirstError)
			}
			results = append(results, r)
		}
	}
	machine := bench.DescribeMachine(pgVersion)
	writeBenchReport(env.stdout, "Search analytics on the rollups (toolgate bench analytics)", append([]string{"bench", "analytics"}, args...), machine, results)
	fmt.Fprintf(env.stdout, "\nSeeded %d tools and %d searches over %d days in %s; the first rollup of the whole log took %s (%d steps).\n",
		*tools, *searches, *days, seeded.Round(time.Second), rolled.Round(time.Second), rep.Steps)
	if len(live) > 0 {
		fmt.Fprintf(env.stdout, "\nThe same requests before the rollup, reading the log itself:\n\n%s", bench.Table(live))
	}
	return nil
}

// getOp GETs url; any status but 200 is an error.
func getOp(hc *http.Client, url string) bench.Op {
	return func(ctx context.Context, _ int) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := hc.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return err
		}
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%d %s", resp.StatusCode, body)
		}
		return nil
	}
}
