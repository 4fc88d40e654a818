package main

import (
	"context"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/cli"
	"github.com/toolgate/toolgate/internal/postgres"
	"github.com/toolgate/toolgate/internal/setup"
)

func runMigrateUp(ctx context.Context, env *cliEnv, args []string) error {
	return migrateCommand(ctx, env, "up", args, 0, func(pool *pgxpool.Pool, _ []string) error {
		return migrateUp(ctx, env, pool)
	})
}

func runMigrateDown(ctx context.Context, env *cliEnv, args []string) error {
	return migrateCommand(ctx, env, "down", args, 1, func(pool *pgxpool.Pool, args []string) error {
		steps := 0
		if len(args) > 0 {
			n, err := strconv.Atoi(args[0])
			if err != nil || n < 1 {
				return &cli.UsageError{Msg: fmt.Sprintf("down %q: want a positive number of steps", args[0])}
			}
			steps = n
		}
		return postgres.MigrateDown(ctx, pool, steps)
	})
}

func runMigrateVersion(ctx context.Context, env *cliEnv, args []string) error {
	return migrateCommand(ctx, env, "version", args, 0, func(*pgxpool.Pool, []string) error { return nil })
}

// migrateCommand runs one migrate action with at most maxArgs arguments, then prints the
// schema version it leaves. Unlike the other commands it needs no migrated schema.
func migrateCommand(ctx context.Context, env *cliEnv, action string, args []string, maxArgs int,
	do func(*pgxpool.Pool, []string) error) error {
	args, err := parseArgs("migrate "+action, env, args)
	if err != nil {
		return err
	}
	if len(args) > maxArgs {
		return &cli.UsageError{Msg: "want " + lookup("migrate "+action).usage}
	}
	pool, err := postgres.Connect(ctx, env.cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	if err := do(pool, args); err != nil {
		return err
	}
	st, err := postgres.Status(ctx, pool)
	if err != nil {
		return err
	}
	dirty := ""
	if st.Dirty {
		dirty = " (dirty)"
	}
	fmt.Fprintf(env.stdout, "schema version %d%s of %d; river tables current: %t\n", st.Version, dirty, st.Latest, st.RiverCurrent)
	return nil
}

// migrateUp applies the migrations and indexes what they queued, so that the catalog is
// searchable when the command returns or the server starts.
func migrateUp(ctx context.Context, env *cliEnv, pool *pgxpool.Pool) error {
	return setup.MigrateUp(ctx, pool, env.log)
}
