package main

import (
	"context"
	"os"

	"github.com/toolgate/toolgate/internal/bench"
	"github.com/toolgate/toolgate/internal/bench/syncdiff"
	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/postgres"
)

// runBenchSync times toolgate's side of a sync of a large source, the server's listing
// excluded (internal/bench/syncdiff), in a temporary source of the configured database.
func runBenchSync(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags("bench sync", env)
	file := fs.String("file", "testdata/scalemcp-1000/tools.jsonl", "catalog file in any format catalog.Parse reads")
	bf := addBenchFlags(fs, benchDefault(20))
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	levels, err := bf.options()
	if err != nil {
		return err
	}
	f, err := os.Open(*file)
	if err != nil {
		return err
	}
	tools, err := catalog.Parse(f)
	f.Close()
	if err != nil {
		return err
	}
	pool, err := postgres.Connect(ctx, env.cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	results, err := syncdiff.Run(ctx, pool, tools, levels)
	if err != nil {
		return err
	}
	pgVersion, err := bench.PostgresVersion(ctx, pool)
	if err != nil {
		return err
	}
	bench.WriteReport(env.stdout, "Sync diff", append([]string{"bench", "sync"}, args...), bench.DescribeMachine(pgVersion), results)
	return nil
}
