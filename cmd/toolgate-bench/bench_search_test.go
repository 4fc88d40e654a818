package main

import (
	"bytes"
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/toolgate/toolgate/internal/pgtest"
)

// TestBenchSearchAndLoadCommands builds a tiny catalog in toolgate_bench_137, measures it
// over HTTP with both commands (the second reusing the catalog) and drops it.
func TestBenchSearchAndLoadCommands(t *testing.T) {
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
			_, _ = c.Exec(ctx, `DROP DATABASE IF EXISTS toolgate_bench_137 WITH (FORCE)`)
			c.Close(ctx)
		}
	})
	var out, errOut bytes.Buffer
	if code := run([]string{"search", "--tools", "137", "--runs", "10", "--warmup", "1", "--concurrency", "2"}, getenv, &out, &errOut); code != 0 {
		t.Fatalf("bench search: exit %d: %s", code, errOut.String())
	}
	for _, want := range []string{"### Search (toolgate bench search)", "| POST /search hybrid k=10, 137 tools | 2 | 10 | 0 |", "| pgvector KNN floor k=10, 137 tools | 2 | 10 | 0 |"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("bench search output lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	errOut.Reset()
	// a kept catalog whose upgrade queued every tool again (as migration 0026 did) is
	// indexed before it is measured, as `toolgate migrate up` would
	benchURL, err := url.Parse(pgtest.ServerURL())
	if err != nil {
		t.Fatal(err)
	}
	benchURL.Path = "/toolgate_bench_137"
	ctx := context.Background()
	bc, err := pgx.Connect(ctx, benchURL.String())
	if err != nil {
		t.Fatal(err)
	}
	defer bc.Close(ctx)
	if _, err := bc.Exec(ctx, `INSERT INTO search_queue (tool_id) SELECT id FROM tools`); err != nil {
		t.Fatal(err)
	}
	if code := run([]string{"load", "--tools", "137", "--reuse", "--duration", "500ms", "--warmup", "1", "--concurrency", "2,4"}, getenv, &out, &errOut); code != 0 {
		t.Fatalf("bench load: exit %d: %s", code, errOut.String())
	}
	for _, want := range []string{"### Load (toolgate bench load)", "| Clients | Errors |", "\n| 2 | 0 |  |", "\n| 4 | 0 |  |"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("bench load output lacks %q:\n%s", want, out.String())
		}
	}
	if !strings.Contains(errOut.String(), "reusing catalog") {
		t.Errorf("--reuse rebuilt the catalog: %s", errOut.String())
	}
	var queued int
	if err := bc.QueryRow(ctx, `SELECT count(*) FROM search_queue`).Scan(&queued); err != nil || queued != 0 {
		t.Errorf("after --reuse: %d tools left in the lexical queue (%v), want 0", queued, err)
	}
	for _, args := range [][]string{{"search", "--tools", "5"}, {"load", "--duration", "0s"}} {
		if code := run(args, getenv, &out, &errOut); code != 2 {
			t.Errorf("%v: exit %d, want 2 (usage)", args, code)
		}
	}
}
