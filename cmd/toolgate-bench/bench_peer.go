package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/toolgate/toolgate/internal/bench"
	"github.com/toolgate/toolgate/internal/bench/peer"
	"github.com/toolgate/toolgate/internal/cli"
)

// runBenchPeer measures toolgate's POST /search next to a Bleve keyword index of the same
// catalog served over HTTP, interleaved round after round (internal/bench/peer).
func runBenchPeer(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags("bench peer", env)
	toolsFlag := fs.String("tools", "200,5000", "comma-separated catalog sizes")
	reuse := fs.Bool("reuse", false, "reuse toolgate_bench_<n> when it already holds n tools")
	rounds := fs.Int("rounds", 2, "times each operation runs, interleaved with the others")
	bf := addBenchFlags(fs, benchDefaults{warmup: 50, runs: 1000, concurrency: "1,8"})
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *rounds < 1 {
		return &cli.UsageError{Msg: "--rounds: at least 1"}
	}
	levels, err := bf.options()
	if err != nil {
		return err
	}
	sizes, err := parseSizes(*toolsFlag)
	if err != nil {
		return err
	}
	rep, err := peer.Run(ctx, peer.Config{Sizes: sizes, Rounds: *rounds, Levels: levels, Catalog: env.catalog(*reuse), Toolgate: env.toolgate, Log: env.log})
	if err != nil {
		return err
	}
	bench.WriteReport(env.stdout, "Search next to a keyword engine (toolgate bench peer)", append([]string{"bench", "peer"}, args...), bench.DescribeMachine(rep.PostgresVersion), rep.Results)
	fmt.Fprintf(env.stdout, "\nLoad average (1, 5, 15 min): %s at the start, %s at the end.\n\n"+
		"p50 per round, and the ratios of the rounds' p50s:\n\n"+
		"| tools | clients | toolgate short | peer short | toolgate / peer | long, default plan | long, plan none | planned / unplanned | peer long |\n"+
		"|---:|---:|---|---|---|---|---|---|---|\n%s\n", rep.LoadStart, rep.LoadEnd, strings.Join(rep.Summary, "\n"))
	return nil
}
