package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/postgres"
	"github.com/toolgate/toolgate/internal/profiles"
	"github.com/toolgate/toolgate/jobs"
)

// runProfiles administers weight profiles: list, show, activate, reweight [--wait].
func runProfiles(ctx context.Context, env *cliEnv, args []string) error {
	if len(args) == 0 {
		return &usageError{msg: "want list, show NAME, activate NAME or reweight NAME [--wait]"}
	}
	sub, args := args[0], args[1:]
	var run func(context.Context, *cliEnv, *pgxpool.Pool, []string) error
	switch sub {
	case "list":
		run = profilesList
	case "show":
		run = profilesShow
	case "activate":
		run = profilesActivate
	case "reweight":
		run = profilesReweight
	default:
		return &usageError{msg: fmt.Sprintf("unknown profiles command %q: want list, show, activate or reweight", sub)}
	}
	if sub != "list" && (len(args) == 0 || strings.HasPrefix(args[0], "-")) {
		return &usageError{msg: fmt.Sprintf("profiles %s wants a profile NAME", sub)}
	}
	pool, err := postgres.Connect(ctx, env.cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	if err := postgres.Ready(ctx, pool); err != nil {
		return fmt.Errorf("%w (run `toolgate migrate up` first)", err)
	}
	return run(ctx, env, pool, args)
}

func setSummary(s *profiles.Set) string {
	if s == nil {
		return "-"
	}
	return fmt.Sprintf("#%d %s %d/%d (%d vectors)", s.ID, s.State, s.Done, s.Total, s.Vectors)
}

func weightsText(w map[string]float64) string {
	keys := make([]string, 0, len(w))
	for k := range w {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%g", k, w[k])
	}
	return strings.Join(parts, ",")
}

func profilesList(ctx context.Context, env *cliEnv, pool *pgxpool.Pool, args []string) error {
	if len(args) > 0 {
		return &usageError{msg: "profiles list takes no arguments"}
	}
	ps, err := profiles.List(ctx, pool)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tACTIVE\tSTRATEGY\tCURRENT SET\tBUILDING\tWEIGHTS")
	for _, p := range ps {
		active := ""
		if p.Active {
			active = "*"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", p.Name, active, p.Strategy, setSummary(p.CurrentSet), setSummary(p.Building), weightsText(p.Weights))
	}
	return tw.Flush()
}

func profilesShow(ctx context.Context, env *cliEnv, pool *pgxpool.Pool, args []string) error {
	if len(args) != 1 {
		return &usageError{msg: "want profiles show NAME"}
	}
	p, err := profiles.Get(ctx, pool, args[0])
	if err != nil {
		return err
	}
	enc := json.NewEncoder(env.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(p)
}

func profilesActivate(ctx context.Context, env *cliEnv, pool *pgxpool.Pool, args []string) error {
	if len(args) != 1 {
		return &usageError{msg: "want profiles activate NAME"}
	}
	p, err := profiles.Activate(ctx, pool, args[0])
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "profile %s is active (current set %s)\n", p.Name, setSummary(p.CurrentSet))
	return nil
}

// profilesReweight queues the profile's re-weight job, or with --wait runs it here and
// prints its progress.
func profilesReweight(ctx context.Context, env *cliEnv, pool *pgxpool.Pool, args []string) error {
	name, args := leadingArg(args)
	fs := newFlags("profiles reweight", env)
	wait := fs.Bool("wait", false, "re-weight in this process and print progress instead of queueing a job")
	batch := fs.Int("batch", profiles.ReweightBatch, "tools per transaction (with --wait)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 || *batch <= 0 {
		return &usageError{msg: "want profiles reweight NAME [--wait] [--batch N>0]"}
	}
	if !*wait {
		rc, err := jobs.NewClient(jobs.Deps{Pool: pool, Logger: env.log}, jobs.Options{})
		if err != nil {
			return err
		}
		start, err := profiles.StartReweight(ctx, pool, jobs.NewQueue(rc), name)
		if err != nil {
			return err
		}
		what := "queued"
		if start.Duplicate {
			what = "already queued or running"
		}
		fmt.Fprintf(env.stdout, "re-weight of %s %s: job %d, vector set %d\n", name, what, start.JobID, start.SetID)
		return nil
	}
	began := time.Now()
	last := time.Time{}
	set, err := profiles.RunReweight(ctx, pool, name, profiles.ReweightOptions{BatchSize: *batch, Logger: env.log,
		OnProgress: func(done, total int) {
			if time.Since(last) >= time.Second || done == total {
				last = time.Now()
				fmt.Fprintf(env.stdout, "%s: %d/%d tools\n", name, done, total)
			}
		}})
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "re-weight of %s done in %s: vector set %d is current\n", name, time.Since(began).Round(time.Millisecond), set)
	return nil
}
