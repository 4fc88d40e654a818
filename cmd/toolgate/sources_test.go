package main

import (
	"context"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/postgres"
	"github.com/toolgate/toolgate/internal/testfactory"
)

func TestSourcesForgetQueries(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.NewDB(t)
	pool, err := postgres.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	_, res := testfactory.Catalog(ctx, t, pool, "fin", []catalog.Tool{testfactory.Tool("get_stock_price", "Latest stock price of a ticker.")}, nil)
	svc := testfactory.LocalEnricher(pool, 2)
	testfactory.Enrich(ctx, t, svc, res.Changed...)
	if _, err := svc.SetObserved(ctx, res.Changed[0], []string{"stock price on the bourse", "quote for a ticker"}); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"DATABASE_URL": url}
	code, stdout, stderr := runCLI(t, env, "sources", "forget-queries", "fin")
	if code != 0 || strings.TrimSpace(stdout) != "removed 2 observed queries from 1 tools of fin" {
		t.Fatalf("forget-queries fin: %d %q %q", code, stdout, stderr)
	}
	var left int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM tool_components WHERE kind = 'observed'`).Scan(&left); err != nil || left != 0 {
		t.Fatalf("%d observed components left (%v)", left, err)
	}
	if code, _, stderr := runCLI(t, env, "sources", "forget-queries", "nope"); code != 1 || !strings.Contains(stderr, `source "nope" not found`) {
		t.Fatalf("forget-queries nope: %d %q", code, stderr)
	}
	if code, _, stderr := runCLI(t, env, "sources", "forget"); code != 2 || !strings.Contains(stderr, "forget-queries NAME") {
		t.Fatalf("sources forget: %d %q", code, stderr)
	}
}
