package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/postgres"
	"github.com/toolgate/toolgate/internal/testfactory"
)

func TestProfilesCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("slow (a whole server, evaluation or concurrent run): the full suite, make test, runs it")
	}
	t.Parallel()
	url := pgtest.NewDB(t)
	getenv := func(k string) string {
		if k == "DATABASE_URL" {
			return url
		}
		return ""
	}
	toolgate := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := run(args, getenv, &out, &errOut)
		return code, out.String(), errOut.String()
	}
	ctx := context.Background()
	pool, err := postgres.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	testfactory.Catalog(ctx, t, pool, "fin", []catalog.Tool{{Name: "quote", Description: "Stock quote"}, {Name: "news", Description: "Company news"}}, nil)
	// Stored component vectors of 3 dimensions, as enrichment would leave them, but with no
	// vector set made: the state of profiles created after the catalog was enriched.
	if _, err := pool.Exec(ctx, `INSERT INTO tool_components (tool_id, kind, text, text_hash, embedding, model)
		SELECT id, k, name, 'h', CASE k WHEN 'name' THEN '[1,0,0]' ELSE '[0,1,0]' END::vector, 'm'
		FROM tools, unnest(ARRAY['name', 'question']) k`); err != nil {
		t.Fatal(err)
	}

	if code, _, stderr := toolgate("profiles", "activate", "var-1"); code != 1 || !strings.Contains(stderr, "re-weight it first") {
		t.Fatalf("activate before any vectors: exit %d %q", code, stderr)
	}
	code, out, stderr := toolgate("profiles", "reweight", "var-1", "--wait", "--batch", "1")
	if code != 0 || !strings.Contains(out, "var-1: 2/2 tools") || !strings.Contains(out, "is current") {
		t.Fatalf("reweight --wait: exit %d %q %q", code, out, stderr)
	}
	var vectors int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM tool_vectors v JOIN weight_profiles p ON p.current_set = v.set_id
		WHERE p.name = 'var-1'`).Scan(&vectors); err != nil || vectors != 2 {
		t.Fatalf("var-1 current set holds %d vectors (%v), want 2", vectors, err)
	}
	if code, out, _ := toolgate("profiles", "activate", "var-1"); code != 0 || !strings.Contains(out, "var-1 is active") {
		t.Fatalf("activate: exit %d %q", code, out)
	}
	code, out, _ = toolgate("profiles", "list")
	if code != 0 || !strings.Contains(out, "ready 2/2 (2 vectors)") {
		t.Fatalf("list: exit %d %q", code, out)
	}
	if code, out, _ := toolgate("profiles", "show", "var-1"); code != 0 || !strings.Contains(out, `"active": true`) {
		t.Fatalf("show: exit %d %q", code, out)
	}
	if code, out, _ := toolgate("profiles", "reweight", "var-2"); code != 0 || !strings.Contains(out, "queued: job") {
		t.Fatalf("reweight (queue): exit %d %q", code, out)
	}
	if code, _, stderr := toolgate("profiles", "show", "nope"); code != 1 || !strings.Contains(stderr, `no weight profile named "nope"`) {
		t.Fatalf("show unknown: exit %d %q", code, stderr)
	}
	if code, _, _ := toolgate("profiles", "reweight"); code != 2 {
		t.Fatalf("reweight without a name: exit %d, want 2", code)
	}
}
