package main

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/observed"
)

// sourcesForgetQueries removes the observed queries of the source's tools, as
// DELETE /v1/sources/{name}/observed-queries does.
func sourcesForgetQueries(ctx context.Context, env *cliEnv, pool *pgxpool.Pool, args []string) error {
	rep, err := (&observed.Service{Pool: pool, Logger: env.log}).Forget(ctx, args[0])
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "removed %d observed queries from %d tools of %s\n", rep.Removed, rep.Tools, rep.Source)
	return nil
}
