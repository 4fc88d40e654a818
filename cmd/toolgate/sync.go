package main

import (
	"context"
	"fmt"

	"github.com/toolgate/toolgate/internal/cli"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/postgres"
	"github.com/toolgate/toolgate/internal/sources"
	"github.com/toolgate/toolgate/internal/upstreamauth"
	"github.com/toolgate/toolgate/jobs"
)

// runSync syncs one MCP source now, in this process, through the same code as the River
// job, and prints what changed.
func runSync(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags("sync", env)
	timeout := fs.Duration("timeout", env.cfg.SyncTimeout, "bound on connecting and listing (TOOLGATE_SYNC_TIMEOUT)")
	name, args := leadingArg(args)
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if name == "" && fs.NArg() == 1 {
		name = fs.Arg(0)
	}
	if name == "" || fs.NArg() > 1 || *timeout <= 0 {
		return &cli.UsageError{Msg: "want NAME [--timeout 1m]"}
	}
	pool, err := postgres.Connect(ctx, env.cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	src, err := sources.ByName(ctx, db.New(pool), name)
	if err != nil {
		return err
	}
	rc, err := jobs.NewClient(jobs.Deps{Pool: pool, Logger: env.log}, jobs.Options{})
	if err != nil {
		return err
	}
	rep, err := sources.SyncWith(ctx, pool, jobs.NewQueue(rc), src.ID,
		sources.SyncOptions{Timeout: *timeout, Commands: stdioCommands(env.cfg), Limits: listLimits(env.cfg),
			Auth: upstreamauth.New(pool, env.cfg.UpstreamAuth, env.log)})
	if err != nil {
		return err
	}
	r := rep.Result
	fmt.Fprintf(env.stdout, "%s: %d created, %d updated, %d deleted, %d unchanged, %d pending review, %d skipped\n",
		name, r.Created, r.Updated, r.Deleted, r.Unchanged, r.Pending, len(rep.Skipped))
	for _, s := range rep.Skipped {
		fmt.Fprintf(env.stdout, "  skipped %s: %s\n", s.Name, s.Reason)
	}
	return nil
}
