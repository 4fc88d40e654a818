package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/toolgate/toolgate/internal/pgtest"
)

// TestBenchPeerCommand builds a tiny catalog in toolgate_bench_139, runs toolgate and the
// Bleve peer over HTTP, interleaved in two rounds, and drops it: every operation of both
// servers succeeds and the summary has one row per concurrency level.
func TestBenchPeerCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("slow (a whole server, evaluation or concurrent run): the full suite, make test, runs it")
	}
	t.Parallel()
	getenv := func(k string) string {
		if k == "DATABASE_URL" {
			return pgtest.ServerURL()
		}
		return ""
	}
	t.Cleanup(func() {
		ctx := context.Background()
		if c, err := pgx.Connect(ctx, pgtest.ServerURL()); err == nil {
			_, _ = c.Exec(ctx, `DROP DATABASE IF EXISTS toolgate_bench_139 WITH (FORCE)`)
			c.Close(ctx)
		}
	})
	var out, errOut bytes.Buffer
	if code := run([]string{"peer", "--tools", "139", "--runs", "8", "--warmup", "1", "--rounds", "2", "--concurrency", "1,2"}, getenv, &out, &errOut); code != 0 {
		t.Fatalf("bench peer: exit %d: %s", code, errOut.String())
	}
	for _, want := range []string{
		"### Search next to a keyword engine (toolgate bench peer)",
		"| toolgate POST /search hybrid k=10, 139 tools, round 1 | 1 | 8 | 0 |",
		"| Bleve peer POST /search k=10, 139 tools, round 2 | 2 | 8 | 0 |",
		"| toolgate POST /search hybrid k=10, 40-80-word requests, plan none, 139 tools, round 2 | 2 | 8 | 0 |",
		"| Bleve peer POST /search k=10, 40-80-word requests, 139 tools, round 1 | 1 | 8 | 0 |",
		"\n| 139 | 1 | ", "\n| 139 | 2 | ",
		"Load average (1, 5, 15 min): ",
	} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("bench peer output lacks %q:\n%s", want, out.String())
		}
	}
	if code := run([]string{"peer", "--tools", "139", "--rounds", "0"}, getenv, &out, &errOut); code != 2 {
		t.Errorf("--rounds 0: exit %d, want 2 (usage)", code)
	}
}
