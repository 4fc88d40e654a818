package main

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/toolgate/toolgate/internal/config"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/postgres"
)

func TestPoolSize(t *testing.T) {
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
}
