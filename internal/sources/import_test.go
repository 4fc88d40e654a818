package sources_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/sources"
	"github.com/toolgate/toolgate/jobs"
)

func tool(name, desc string) catalog.Tool {
	return catalog.Tool{Name: name, Description: desc, InputSchema: json.RawMessage(`{"type":"object"}`)}
}

func importTools(t *testing.T, pool *pgxpool.Pool, source string, tools ...catalog.Tool) (catalog.Result, error) {
	t.Helper()
	rc, err := jobs.NewClient(jobs.Deps{Pool: pool, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, jobs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, res, err := sources.Import(context.Background(), pool, jobs.NewQueue(rc), source, tools)
	return res, err
}

func storedHashes(t *testing.T, pool *pgxpool.Pool) map[string]string {
	t.Helper()
	rows, err := pool.Query(context.Background(), `SELECT name, content_hash FROM tools`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var n, h string
		if err := rows.Scan(&n, &h); err != nil {
			t.Fatal(err)
		}
		out[n] = h
	}
	return out
}

func TestImportDiffsByHash(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)

	res, err := importTools(t, pool, "fin", tool("a", "A"), tool("b", "B"), tool("c", "C"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Created != 3 || len(res.Changed) != 3 {
		t.Fatalf("first import: %+v", res)
	}
	res, err = importTools(t, pool, "fin", tool("a", "A"), tool("b", "B changed"), tool("d", "D"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Created != 1 || res.Updated != 1 || res.Deleted != 1 || res.Unchanged != 1 || len(res.Changed) != 2 {
		t.Fatalf("second import: %+v", res)
	}
	got := storedHashes(t, pool)
	if len(got) != 3 || got["fin__b"] != tool("b", "B changed").Hash() || got["fin__c"] != "" {
		t.Fatalf("stored: %v", got)
	}
	res, err = importTools(t, pool, "fin", tool("a", "A"), tool("b", "B changed"), tool("d", "D"))
	if err != nil || res.Unchanged != 3 || len(res.Changed) != 0 {
		t.Fatalf("idempotent import: %+v %v", res, err)
	}
	var revisions int
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM tool_revisions`).Scan(&revisions); err != nil {
		t.Fatal(err)
	}
	if revisions != 6 { // 3 created, then 1 created + 1 updated + 1 deleted
		t.Fatalf("revisions = %d, want 6", revisions)
	}
	run, err := db.New(pool).LastSyncRun(context.Background(), mustSource(t, pool, "fin").ID)
	if err != nil || run.Unchanged != 3 || run.State != "succeeded" {
		t.Fatalf("last sync run %+v, %v", run, err)
	}
}

func TestImportRejectsBadInputAndKeepsCatalog(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	if _, err := importTools(t, pool, "fin", tool("a", "A"), tool("b", "B")); err != nil {
		t.Fatal(err)
	}
	before := storedHashes(t, pool)

	bad := tool("c", "C")
	bad.InputSchema = json.RawMessage(`"not an object"`)
	_, err := importTools(t, pool, "fin", tool("a", "A changed"), bad)
	var inv *catalog.InvalidToolError
	if !errors.As(err, &inv) {
		t.Fatalf("got %v, want *catalog.InvalidToolError", err)
	}
	if _, err := importTools(t, pool, "Bad_Name", tool("a", "A")); !errors.As(err, &inv) {
		t.Fatalf("bad source name: got %v", err)
	}
	after := storedHashes(t, pool)
	if len(after) != len(before) || after["fin__a"] != before["fin__a"] {
		t.Fatalf("catalog changed by a rejected import: %v -> %v", before, after)
	}
}

func TestImportIntoNonCatalogSourceFails(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	if _, err := pool.Exec(context.Background(), `INSERT INTO sources (name, kind) VALUES ('remote', 'mcp_http')`); err != nil {
		t.Fatal(err)
	}
	_, err := importTools(t, pool, "remote", tool("a", "A"))
	var kindErr *sources.SourceKindError
	if !errors.As(err, &kindErr) {
		t.Fatalf("got %v, want *sources.SourceKindError", err)
	}
}

func mustSource(t *testing.T, pool *pgxpool.Pool, name string) db.Source {
	t.Helper()
	s, err := db.New(pool).GetSourceByName(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
