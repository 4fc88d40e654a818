package main

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/observed"
	"github.com/toolgate/toolgate/internal/upstreamauth"
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

// sourcesReencrypt seals every source's OAuth secrets under the first key of
// TOOLGATE_SECRET_KEYS (upstreamauth.Manager.Reencrypt).
func sourcesReencrypt(ctx context.Context, env *cliEnv, pool *pgxpool.Pool, _ []string) error {
	n, err := upstreamauth.New(pool, env.cfg.UpstreamAuth, env.log).Reencrypt(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "re-sealed %d secrets under key %s\n", n, env.cfg.UpstreamAuth.Keys.Primary())
	return nil
}
