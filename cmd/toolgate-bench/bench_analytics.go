package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/toolgate/toolgate/api"
	"github.com/toolgate/toolgate/internal/analytics"
	"github.com/toolgate/toolgate/internal/bench"
	"github.com/toolgate/toolgate/internal/bench/analyticsload"
	"github.com/toolgate/toolgate/internal/bench/httpop"
	"github.com/toolgate/toolgate/internal/cli"
	"github.com/toolgate/toolgate/jobs"
)

// runBenchAnalytics times the console's reads on a seeded retrieval log before and after
// the rollup (internal/bench/analyticsload), in a fresh database (toolgate_bench_analytics,
// dropped at the end).
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
	dbURL, drop, err := env.server().Fresh(ctx, "toolgate_bench_analytics")
	if err != nil {
		return err
	}
	defer drop()
	pool, err := env.server().Migrated(ctx, dbURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	pgVersion, _ := bench.PostgresVersion(ctx, pool)
	// Warnings and errors only: an access-log line per request would measure the terminal.
	log := slog.New(slog.NewJSONHandler(env.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	// an insert-only River client: the jobs endpoints list through it
	rc, err := jobs.NewClient(jobs.Deps{Pool: pool, Logger: log}, jobs.Options{})
	if err != nil {
		return err
	}
	base, stop, err := httpop.Serve(api.New(api.Deps{Pool: pool, Logger: log, Open: true, River: rc}))
	if err != nil {
		return err
	}
	defer stop()
	rep, err := analyticsload.Run(ctx, analyticsload.Config{Pool: pool, Base: base, Tools: *tools, Searches: *searches, Days: *days,
		LiveRuns: *liveRuns, Levels: levels, Log: env.log})
	if err != nil {
		return err
	}
	bench.WriteReport(env.stdout, "Search analytics on the rollups (toolgate bench analytics)", append([]string{"bench", "analytics"}, args...), bench.DescribeMachine(pgVersion), rep.Results)
	fmt.Fprintf(env.stdout, "\nSeeded %d tools and %d searches over %d days in %s; the first rollup of the whole log took %s (%d steps).\n",
		*tools, *searches, *days, rep.Seeded.Round(time.Second), rep.Rolled.Round(time.Second), rep.Steps)
	if len(rep.Live) > 0 {
		fmt.Fprintf(env.stdout, "\nThe same requests before the rollup, reading the log itself:\n\n%s", bench.Table(rep.Live))
	}
	return nil
}
