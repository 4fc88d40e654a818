package main

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/cli"
	"github.com/toolgate/toolgate/internal/embed"
	"github.com/toolgate/toolgate/internal/enrich"
	"github.com/toolgate/toolgate/internal/postgres"
	"github.com/toolgate/toolgate/internal/setup"
	"github.com/toolgate/toolgate/jobs"
)

// runReembed makes the configured embedder the stored embedding space: every vector is
// dropped and rebuilt by enrich_tool jobs that the workers of `serve` run.
func runReembed(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags("reembed", env)
	embedder := fs.String("embedder", env.cfg.Embedder, "local, local-words or openai (TOOLGATE_EMBEDDER)")
	model := fs.String("model", env.cfg.EmbedModel, "embedding model of the openai embedder (TOOLGATE_EMBED_MODEL)")
	dims := fs.Int("dims", env.cfg.EmbedDims, "vector length (TOOLGATE_EMBED_DIMS)")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return &cli.UsageError{Msg: "reembed takes no arguments"}
	}
	env.cfg.Embedder, env.cfg.EmbedModel, env.cfg.EmbedDims = *embedder, *model, *dims
	if err := env.cfg.Validate(); err != nil {
		return err
	}
	e := setup.Embedder(env.cfg, env.providerObserver())
	pool, err := postgres.Connect(ctx, env.cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	if err := postgres.Ready(ctx, pool); err != nil {
		return err
	}
	rc, err := jobs.NewClient(jobs.Deps{Pool: pool, Logger: env.log}, jobs.Options{})
	if err != nil {
		return err
	}
	n, err := enrich.Reembed(ctx, pool, jobs.NewQueue(rc), e)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "embedding space is now %s (%d dims); %d tools queued for embedding\n", e.Model(), e.Dims(), n)
	return nil
}

// upgradeLocalVectors moves the stored vectors of an older version of the built-in local
// embedder to e's version (enrich.UpgradeLocalSpace) and says so; anything else is left to
// embed.EnsureSpace.
func upgradeLocalVectors(ctx context.Context, env *cliEnv, pool *pgxpool.Pool, queue enrich.Queue, e embed.Embedder) error {
	n, err := enrich.UpgradeLocalSpace(ctx, pool, queue, e)
	if err != nil {
		return fmt.Errorf("upgrading the stored vectors to %s: %w", e.Model(), err)
	}
	if n > 0 {
		env.log.Warn("the built-in embedder changed: every tool is embedded again; until its vectors are rebuilt, a tool is found by the lexical branch only",
			"embedder", e.Model(), "tools", n)
	}
	return nil
}
