package main

import (
	"context"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/lexical"
	"github.com/toolgate/toolgate/internal/postgres"
)

func runMigrate(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags("migrate", env)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return &usageError{msg: "want up, down [N] or version"}
	}
	pool, err := postgres.Connect(ctx, env.cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	switch fs.Arg(0) {
	case "up":
		if err := migrateUp(ctx, env, pool); err != nil {
			return err
		}
	case "down":
		steps := 0
		if fs.NArg() > 1 {
			n, err := strconv.Atoi(fs.Arg(1))
			if err != nil || n < 1 {
				return &usageError{msg: fmt.Sprintf("down %q: want a positive number of steps", fs.Arg(1))}
			}
			steps = n
		}
		if err := postgres.MigrateDown(ctx, pool, steps); err != nil {
			return err
		}
	case "version":
	default:
		return &usageError{msg: fmt.Sprintf("unknown migrate action %q: want up, down [N] or version", fs.Arg(0))}
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

// migrateUp applies the migrations, then indexes what they queued for the lexical index
// (migration 0011 queues the whole catalog), so that the catalog is searchable when the
// command returns or the server starts.
func migrateUp(ctx context.Context, env *cliEnv, pool *pgxpool.Pool) error {
	if err := postgres.MigrateUp(ctx, pool); err != nil {
		return err
	}
	st, err := lexical.Flush(ctx, pool)
	if err != nil {
		return err
	}
	if st.Indexed > 0 {
		env.log.Info("lexical index built", "tools", st.Indexed)
	}
	return nil
}
