package main

import (
	"context"
	"encoding/json"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/cli"
	"github.com/toolgate/toolgate/internal/experiments"
)

func experimentsStart(ctx context.Context, env *cliEnv, args []string) error {
	name, args := leadingArg(args)
	fs := newFlags("experiments start", env)
	candidate := fs.String("candidate", "", "the profile under test (required)")
	control := fs.String("control", "", "the profile it is compared with (default: the active profile)")
	share := fs.Float64("share", 0, "share of the units routed to the candidate, in (0, 1) (required)")
	unit := fs.String("unit", string(experiments.UnitSession), "what a search is assigned by: session or key")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if name == "" || fs.NArg() > 0 {
		return &cli.UsageError{Msg: "want experiments start NAME --candidate P [--control P] --share F [--unit session|key]"}
	}
	pool, err := openReady(ctx, env)
	if err != nil {
		return err
	}
	defer pool.Close()
	e, err := experiments.Start(ctx, pool, experiments.Definition{Name: name, Candidate: *candidate, Control: *control,
		Share: *share, Unit: experiments.Unit(*unit)})
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "experiment %s started (id %d): %g of the %ss to %s, the rest to %s\n",
		e.Name, e.ID, e.Share, e.Unit, e.Candidate, e.Control)
	return nil
}

func experimentsList(ctx context.Context, env *cliEnv, pool *pgxpool.Pool, args []string) error {
	es, err := experiments.List(ctx, pool)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tRUNNING\tCONTROL\tCANDIDATE\tSHARE\tUNIT\tSTARTED\tSTOPPED")
	for _, e := range es {
		running, stopped := "", "-"
		if e.Running {
			running = "*"
		}
		if e.StoppedAt != nil {
			stopped = e.StoppedAt.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%g\t%s\t%s\t%s\n", e.Name, running, e.Control, e.Candidate, e.Share, e.Unit,
			e.StartedAt.UTC().Format(time.RFC3339), stopped)
	}
	return tw.Flush()
}

// experimentsShow prints the experiment and the comparison of its arms as JSON, as
// GET /admin/experiments/{name}?max_per_key=N answers.
func experimentsShow(ctx context.Context, env *cliEnv, args []string) error {
	name, args := leadingArg(args)
	fs := newFlags("experiments show", env)
	maxPerKey := fs.Int("max-per-key", experiments.DefaultMaxPerKey, "the searches of one search key counted per arm, at most")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if name == "" || fs.NArg() > 0 {
		return &cli.UsageError{Msg: "want experiments show NAME [--max-per-key N]"}
	}
	if *maxPerKey < 1 {
		return cli.Usagef("--max-per-key %d: want a positive number of searches", *maxPerKey)
	}
	pool, err := openReady(ctx, env)
	if err != nil {
		return err
	}
	defer pool.Close()
	r, err := experiments.GetCapped(ctx, pool, name, *maxPerKey)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(env.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

func experimentsStop(ctx context.Context, env *cliEnv, pool *pgxpool.Pool, args []string) error {
	e, err := experiments.Stop(ctx, pool, args[0])
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "experiment %s stopped at %s\n", e.Name, e.StoppedAt.UTC().Format(time.RFC3339))
	return nil
}
