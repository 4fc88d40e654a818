package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/postgres"
	"github.com/toolgate/toolgate/internal/testfactory"
)

func TestMigrateDownToZeroAndUpWithData(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)

	if err := postgres.Ready(ctx, pool); err != nil {
		t.Fatalf("fresh database not ready: %v", err)
	}
	testfactory.Catalog(ctx, t, pool, "demo", []catalog.Tool{testfactory.Tool("t", "d")}, nil)

	if err := postgres.MigrateDown(ctx, pool, 0); err != nil {
		t.Fatalf("down: %v", err)
	}
	st, err := postgres.Status(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}
	if st.Version != 0 || st.RiverCurrent {
		t.Fatalf("after down: %+v, want version 0 and no river tables", st)
	}
	if err := postgres.Ready(ctx, pool); err == nil {
		t.Fatal("Ready succeeded on an empty schema")
	}

	if err := postgres.MigrateUp(ctx, pool); err != nil {
		t.Fatalf("up again: %v", err)
	}
	if err := postgres.Ready(ctx, pool); err != nil {
		t.Fatalf("not ready after up: %v", err)
	}
	st, _ = postgres.Status(ctx, pool)
	if st.Version != postgres.LatestVersion() {
		t.Fatalf("version %d, want %d", st.Version, postgres.LatestVersion())
	}
}

func TestIsUnavailable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// Nothing listens on port 1: the pool opens, but no connection can be made.
	cfgURL := "postgres://postgres@127.0.0.1:1/none?sslmode=disable"
	_, err := postgres.Connect(ctx, cfgURL)
	if !postgres.IsUnavailable(err) {
		t.Errorf("connect to a closed port: %v is not unavailable", err)
	}
	pool := pgtest.NewPool(t)
	_, err = pool.Exec(ctx, `SELEC 1`)
	if err == nil || postgres.IsUnavailable(err) {
		t.Errorf("syntax error %v counted as unavailable", err)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	_, err = pool.Exec(short, `SELECT pg_sleep(5)`)
	if err == nil || postgres.IsUnavailable(err) {
		t.Errorf("caller's deadline %v counted as unavailable", err)
	}
	if postgres.IsUnavailable(nil) || !postgres.IsUnavailable(&postgres.NotReadyError{Reason: "x"}) {
		t.Error("nil or NotReadyError misclassified")
	}
}
