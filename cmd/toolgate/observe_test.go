package main

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/config"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/postgres"
)

func TestReadPoolAndPoolSize(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.NewDB(t)
	env := &cliEnv{cfg: config.Config{DatabaseURL: url, DBMaxConns: 3, Role: config.RoleAll}, log: slog.New(slog.DiscardHandler), stdout: io.Discard, stderr: io.Discard}
	primary, err := postgres.Connect(ctx, url, poolOptions(env)...)
	if err != nil {
		t.Fatal(err)
	}
	defer primary.Close()
	if got := primary.Stat().MaxConns(); got != 3 {
		t.Fatalf("primary max conns %d, want TOOLGATE_DB_MAX_CONNS=3", got)
	}

	// No DATABASE_READ_URL: searches read the primary.
	read, closeRead, err := openReadPool(ctx, env, primary)
	if err != nil || read != primary {
		t.Fatalf("without a read URL: %v, %v", read, err)
	}
	closeRead()

	// A replica (here the same database) gets its own pool of the same size.
	env.cfg.DatabaseReadURL = url
	read, closeRead, err = openReadPool(ctx, env, primary)
	if err != nil || read == primary || read.Stat().MaxConns() != 3 {
		t.Fatalf("with a read URL: same pool %v, err %v", read == primary, err)
	}
	if err := read.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	closeRead()

	// A worker serves no searches and opens no read pool.
	env.cfg.Role = config.RoleWorker
	if read, _, err = openReadPool(ctx, env, primary); err != nil || read != primary {
		t.Fatalf("worker: %v", err)
	}

	// An unreachable replica fails the start with a message naming the setting.
	env.cfg.Role = config.RoleAPI
	env.cfg.DatabaseReadURL = "postgres://postgres@127.0.0.1:1/none?connect_timeout=2"
	if _, _, err = openReadPool(ctx, env, primary); err == nil {
		t.Fatal("unreachable replica accepted")
	} else if want := "DATABASE_READ_URL"; !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q does not name %s", err, want)
	}
}
