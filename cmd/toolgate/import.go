package main

import (
	"context"
	"fmt"
	"os"

	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/cli"
	"github.com/toolgate/toolgate/internal/postgres"
	"github.com/toolgate/toolgate/internal/sources"
	"github.com/toolgate/toolgate/jobs"
)

func runImport(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags("import", env)
	source := fs.String("source", "", "catalog source to replace (created when missing)")
	file, args := leadingArg(args)
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if file == "" && fs.NArg() == 1 {
		file = fs.Arg(0)
	}
	if file == "" || *source == "" || fs.NArg() > 1 {
		return &cli.UsageError{Msg: "want FILE --source NAME"}
	}
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	tools, err := catalog.Parse(f)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stderr, "import: %d tools read from %s; replacing the catalog of source %s\n", len(tools), file, *source)
	pool, err := postgres.Connect(ctx, env.cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	rc, err := jobs.NewClient(jobs.Deps{Pool: pool, Logger: env.log}, jobs.Options{})
	if err != nil {
		return err
	}
	_, res, err := sources.Import(ctx, pool, jobs.NewQueue(rc), *source, tools)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "%s: %d created, %d updated, %d deleted, %d unchanged\n",
		*source, res.Created, res.Updated, res.Deleted, res.Unchanged)
	if n := res.Created + res.Updated; n > 0 {
		fmt.Fprintf(env.stderr, "import: searchable by keyword now; the server's workers (toolgate serve) enrich and embed the %d new or changed tools: follow them with GET /v1/sources/%s\n", n, *source)
	}
	return nil
}
