package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/cli"
	"github.com/toolgate/toolgate/internal/profiles"
	"github.com/toolgate/toolgate/internal/setup"
	"github.com/toolgate/toolgate/internal/tune"
	"github.com/toolgate/toolgate/jobs"
)

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
	p, err := profiles.Get(ctx, pool, args[0])
	if err != nil {
		return err
	}
	enc := json.NewEncoder(env.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(p)
}

func profilesActivate(ctx context.Context, env *cliEnv, pool *pgxpool.Pool, args []string) error {
	p, err := profiles.Activate(ctx, pool, args[0])
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "profile %s is active (current set %s)\n", p.Name, setSummary(p.CurrentSet))
	return nil
}

// profilesReweight queues the profile's re-weight job, or with --wait runs it here and
// prints its progress.
func profilesReweight(ctx context.Context, env *cliEnv, args []string) error {
	name, args := leadingArg(args)
	fs := newFlags("profiles reweight", env)
	wait := fs.Bool("wait", false, "re-weight in this process and print progress instead of queueing a job")
	batch := fs.Int("batch", profiles.ReweightBatch, "tools per transaction (with --wait)")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if name == "" || fs.NArg() > 0 || *batch <= 0 {
		return &cli.UsageError{Msg: "want profiles reweight NAME [--wait] [--batch N>0]"}
	}
	pool, err := openReady(ctx, env)
	if err != nil {
		return err
	}
	defer pool.Close()
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

// profilesTune tunes TDWA weights from the labelled searches into a new profile NEW: it
// queues the profile_tune job, or with --wait runs it here with the configured embedder
// and prints its progress and result.
func profilesTune(ctx context.Context, env *cliEnv, args []string) error {
	name, args := leadingArg(args)
	fs := newFlags("profiles tune", env)
	opts := tune.Options{Profile: name}
	fs.StringVar(&opts.Baseline, "baseline", "", "profile to compare with (default: the active one)")
	fs.IntVar(&opts.SinceDays, "since-days", tune.DefaultSinceDays, "only searches of the last N days")
	fs.Float64Var(&opts.Holdout, "holdout", tune.DefaultHoldout, "share of the labelled searches held out (0.1 to 0.5)")
	fs.IntVar(&opts.MinSearches, "min-searches", tune.DefaultMinSearches, fmt.Sprintf("refuse with fewer labelled searches (at least %d)", tune.MinSearchesFloor))
	fs.IntVar(&opts.MaxSearches, "max-searches", tune.DefaultMaxSearches, "the most recent labelled searches used")
	fs.IntVar(&opts.MaxPerKey, "max-per-key", 0, "the most labelled searches of one search key used (0: a tenth of --max-searches)")
	fs.Uint64Var(&opts.Seed, "seed", 1, "seed of the random starting points and the bootstrap")
	wait := fs.Bool("wait", false, "tune in this process and print progress instead of queueing a job")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if name == "" || fs.NArg() > 0 {
		return &cli.UsageError{Msg: "want profiles tune NEW [--baseline P] [--since-days N] [--holdout F] [--min-searches N] [--max-searches N] [--max-per-key N] [--seed N] [--wait]"}
	}
	pool, err := openReady(ctx, env)
	if err != nil {
		return err
	}
	defer pool.Close()
	rc, err := jobs.NewClient(jobs.Deps{Pool: pool, Logger: env.log}, jobs.Options{})
	if err != nil {
		return err
	}
	queue := jobs.NewQueue(rc)
	if !*wait {
		started, err := tune.Start(ctx, pool, queue, opts)
		if err != nil {
			return err
		}
		fmt.Fprintf(env.stdout, "tune %d of %s against %s queued: job %d (GET /admin/tunes/%d)\n",
			started.Tune.ID, started.Tune.Profile, started.Tune.Baseline, started.JobID, started.Tune.ID)
		return nil
	}
	started, err := tune.Start(ctx, pool, runHere{queue}, opts)
	if err != nil {
		return err
	}
	last := time.Time{}
	st, err := searchSettings(env)
	if err != nil {
		return err
	}
	v, err := tune.Run(ctx, pool, setup.Embedder(env.cfg, nil), queue, started.Tune.ID, tune.RunOptions{Search: st, Logger: env.log,
		OnProgress: func(phase string, done, total int) {
			if total > 0 && (time.Since(last) >= time.Second || done == total) {
				last = time.Now()
				fmt.Fprintf(env.stdout, "%s: %d/%d\n", phase, done, total)
			}
		}})
	if err != nil {
		if ferr := tune.Fail(context.WithoutCancel(ctx), pool, started.Tune.ID, err); ferr != nil {
			env.log.Error("record the failed tune", "tune", started.Tune.ID, "err", ferr)
		}
		return err
	}
	r := v.Result
	fmt.Fprintf(env.stdout, "labelled searches: %d (%d training, %d held out, %d unranked)\n",
		r.Labels.Searches, r.Labels.Train, r.Labels.HeldOut, r.Labels.Unranked)
	fmt.Fprintf(env.stdout, "held-out MRR (fused ranking): %s %.4f, tuned %.4f; gain %+.4f, 95%% CI [%+.4f, %+.4f]: %s\n",
		r.Baseline.Name, r.HeldOut.Baseline.MRR, r.HeldOut.Tuned.MRR, r.Gain.Mean, r.Gain.CI95[0], r.Gain.CI95[1], r.Gain.Verdict)
	if !r.Created {
		fmt.Fprintf(env.stdout, "no weights better than %s's found on these labels: no profile created\n", r.Baseline.Name)
		return nil
	}
	fmt.Fprintf(env.stdout, "profile %s created (inactive): %s; fusion weights lexical %g, vector %g (%s's %g, %g); re-weight job %d builds its vectors\n",
		v.Profile, weightsText(r.Weights), r.Fusion.WeightLexical, r.Fusion.WeightVector,
		r.Baseline.Name, r.Baseline.Fusion.WeightLexical, r.Baseline.Fusion.WeightVector, r.Reweight.JobID)
	return nil
}

// runHere queues every job but the tune's own, which profilesTune --wait runs itself.
type runHere struct{ jobs.Queue }

func (runHere) TuneTx(context.Context, pgx.Tx, int64) (int64, error) { return 0, nil }

// profilesTunes lists the recent tunes.
func profilesTunes(ctx context.Context, env *cliEnv, pool *pgxpool.Pool, args []string) error {
	ts, err := tune.List(ctx, pool)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tPROFILE\tBASELINE\tSTATE\tSEARCHES\tHELD-OUT GAIN (95% CI)\tVERDICT")
	for _, t := range ts {
		searches, gain, verdict := "-", "-", "-"
		if r := t.Result; r != nil {
			searches = fmt.Sprint(r.Labels.Searches)
			gain = fmt.Sprintf("%+.4f [%+.4f, %+.4f]", r.Gain.Mean, r.Gain.CI95[0], r.Gain.CI95[1])
			verdict = r.Gain.Verdict
		} else if t.Error != nil {
			verdict = *t.Error
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, t.Profile, t.Baseline, t.State, searches, gain, verdict)
	}
	return tw.Flush()
}
