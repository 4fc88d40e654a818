package sources_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/sources"
	"github.com/toolgate/toolgate/internal/testfactory"
	"github.com/toolgate/toolgate/jobs"
)

func tool(name, desc string) catalog.Tool { return testfactory.Tool(name, desc) }

// TestImport is sources.Import; each subtest has a fresh database (River's style: a setup
// that returns the test's bundle, one t.Run per case).
func TestImport(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	type testBundle struct {
		pool  *pgxpool.Pool
		queue jobs.Queue
	}
	setup := func(t *testing.T) *testBundle {
		t.Helper()
		pool := pgtest.NewPool(t)
		rc, err := jobs.NewClient(jobs.Deps{Pool: pool, Logger: slog.New(slog.DiscardHandler)}, jobs.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return &testBundle{pool: pool, queue: jobs.NewQueue(rc)}
	}
	importTools := func(b *testBundle, source string, tools ...catalog.Tool) (catalog.Result, error) {
		_, res, err := sources.Import(ctx, b.pool, b.queue, source, tools)
		return res, err
	}
	storedHashes := func(t *testing.T, pool *pgxpool.Pool) map[string]string {
		t.Helper()
		rows, err := pool.Query(ctx, `SELECT name, content_hash FROM tools`)
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

	t.Run("DiffsByHash", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		res, err := importTools(b, "fin", tool("a", "A"), tool("b", "B"), tool("c", "C"))
		if err != nil {
			t.Fatal(err)
		}
		if res.Created != 3 || len(res.Changed) != 3 {
			t.Fatalf("first import: %+v", res)
		}
		res, err = importTools(b, "fin", tool("a", "A"), tool("b", "B changed"), tool("d", "D"))
		if err != nil {
			t.Fatal(err)
		}
		if res.Created != 1 || res.Updated != 1 || res.Deleted != 1 || res.Unchanged != 1 || len(res.Changed) != 2 {
			t.Fatalf("second import: %+v", res)
		}
		got := storedHashes(t, b.pool)
		if len(got) != 3 || got["fin__b"] != tool("b", "B changed").Hash() || got["fin__c"] != "" {
			t.Fatalf("stored: %v", got)
		}
		res, err = importTools(b, "fin", tool("a", "A"), tool("b", "B changed"), tool("d", "D"))
		if err != nil || res.Unchanged != 3 || len(res.Changed) != 0 {
			t.Fatalf("idempotent import: %+v %v", res, err)
		}
		var revisions int
		if err := b.pool.QueryRow(ctx, `SELECT count(*) FROM tool_revisions`).Scan(&revisions); err != nil {
			t.Fatal(err)
		}
		if revisions != 6 { // 3 created, then 1 created + 1 updated + 1 deleted
			t.Fatalf("revisions = %d, want 6", revisions)
		}
		q := db.New(b.pool)
		src, err := q.GetSourceByName(ctx, "fin")
		if err != nil {
			t.Fatal(err)
		}
		run, err := q.LastSyncRun(ctx, src.ID)
		if err != nil || run.Unchanged != 3 || run.State != db.SyncSucceeded {
			t.Fatalf("last sync run %+v, %v", run, err)
		}
	})

	t.Run("RejectsBadInputAndKeepsCatalog", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		if _, err := importTools(b, "fin", tool("a", "A"), tool("b", "B")); err != nil {
			t.Fatal(err)
		}
		before := storedHashes(t, b.pool)

		bad := tool("c", "C")
		bad.InputSchema = json.RawMessage(`"not an object"`)
		_, err := importTools(b, "fin", tool("a", "A changed"), bad)
		var inv *catalog.InvalidToolError
		if !errors.As(err, &inv) {
			t.Fatalf("got %v, want *catalog.InvalidToolError", err)
		}
		if _, err := importTools(b, "Bad_Name", tool("a", "A")); !errors.As(err, &inv) {
			t.Fatalf("bad source name: got %v", err)
		}
		// the message states the whole rule: "-abc" has only allowed characters
		if _, err := importTools(b, "-abc", tool("a", "A")); !errors.As(err, &inv) || !strings.Contains(err.Error(), "the first not -") {
			t.Fatalf("source name starting with -: got %v", err)
		}
		after := storedHashes(t, b.pool)
		if len(after) != len(before) || after["fin__a"] != before["fin__a"] {
			t.Fatalf("catalog changed by a rejected import: %v -> %v", before, after)
		}
	})

	t.Run("IntoNonCatalogSourceFails", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		testfactory.MCPSource(ctx, t, b.pool, "remote", nil)
		_, err := importTools(b, "remote", tool("a", "A"))
		var kindErr *sources.SourceKindError
		if !errors.As(err, &kindErr) {
			t.Fatalf("got %v, want *sources.SourceKindError", err)
		}
	})
}
