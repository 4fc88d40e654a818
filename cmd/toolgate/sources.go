package main

import (
	"context"
	"fmt"

	"github.com/toolgate/toolgate/internal/observed"
	"github.com/toolgate/toolgate/internal/postgres"
)

// runSources manages sources from the command line: forget-queries NAME removes the
// observed queries of the source's tools, as DELETE /v1/sources/{name}/observed-queries does.
func runSources(ctx context.Context, env *cliEnv, args []string) error {
	if len(args) != 2 || args[0] != "forget-queries" {
		return &usageError{msg: "want sources forget-queries NAME"}
	}
	pool, err := postgres.Connect(ctx, env.cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	if err := postgres.Ready(ctx, pool); err != nil {
		return fmt.Errorf("%w (run `toolgate migrate up` first)", err)
	}
	rep, err := (&observed.Service{Pool: pool, Logger: env.log}).Forget(ctx, args[1])
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "removed %d observed queries from %d tools of %s\n", rep.Removed, rep.Tools, rep.Source)
	return nil
}
