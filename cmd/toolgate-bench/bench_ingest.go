package main

import (
	"context"
	"slices"

	"github.com/toolgate/toolgate/api"
	"github.com/toolgate/toolgate/internal/bench"
	"github.com/toolgate/toolgate/internal/bench/httpop"
	"github.com/toolgate/toolgate/internal/bench/ingest"
	"github.com/toolgate/toolgate/internal/postgres"
	"github.com/toolgate/toolgate/internal/setup"
	"github.com/toolgate/toolgate/jobs"
)

// runBenchIngest times making a catalog lexically searchable by import and by PUT
// /v1/sources/{name}/tools (internal/bench/ingest), in a fresh database
// (toolgate_bench_ingest, dropped at the end).
//
// With --enriching N the imports run against a server that is enriching: a catalog of N
// other tools is imported first and a River client with TOOLGATE_WORKERS workers (the
// configured providers) works its enrichment, and every timed import's, throughout.
func runBenchIngest(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags("bench ingest", env)
	toolsFlag := fs.String("tools", "5000,50000", "comma-separated catalog sizes")
	enriching := fs.Int("enriching", 0, "enrich a catalog of this many other tools while the imports run (0: no workers)")
	bf := addBenchFlags(fs, benchDefaults{warmup: 0, runs: 2, concurrency: "1"})
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
	dbURL, drop, err := env.server().Fresh(ctx, "toolgate_bench_ingest")
	if err != nil {
		return err
	}
	defer drop()
	pool, err := env.server().Connect(ctx, dbURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	if err := postgres.MigrateUp(ctx, pool); err != nil {
		return err
	}
	pgVersion, _ := bench.PostgresVersion(ctx, pool)
	// Insert-only unless --enriching: the enrichment jobs an import queues are stored, not
	// worked.
	deps := jobs.Deps{Pool: pool, Logger: env.log}
	opts := jobs.Options{}
	if *enriching > 0 {
		deps.Embedder, deps.Enricher, deps.Questions = setup.Embedder(env.cfg, nil), setup.Enricher(env.cfg, nil), env.cfg.Questions
		opts = jobs.Options{Work: true, MaxWorkers: env.cfg.Workers}
	}
	rc, err := jobs.NewClient(deps, opts)
	if err != nil {
		return err
	}
	if *enriching > 0 {
		if err := ingest.StartEnriching(ctx, env.log, pool, rc, jobs.NewQueue(rc), jobs.EnrichToolArgs{}.Kind(), *enriching); err != nil {
			return err
		}
		defer func() { _ = rc.StopAndCancel(context.WithoutCancel(ctx)) }()
	}
	// the benchmark measures catalogs of any size, the production limit aside
	base, stop, err := httpop.Serve(api.New(api.Deps{Pool: pool, Logger: env.log, Open: true, River: rc, Limits: api.Limits{MaxCatalogTools: slices.Max(sizes)}}))
	if err != nil {
		return err
	}
	defer stop()
	results, err := ingest.Run(ctx, ingest.Config{Sizes: sizes, Levels: levels, Pool: pool, Queue: jobs.NewQueue(rc), Base: base, Log: env.log})
	if err != nil {
		return err
	}
	bench.WriteReport(env.stdout, "Ingest (toolgate bench ingest)", append([]string{"bench", "ingest"}, args...), bench.DescribeMachine(pgVersion), results)
	return nil
}
