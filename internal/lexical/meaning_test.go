package lexical_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/pgvector/pgvector-go"

	"github.com/toolgate/toolgate/internal/lexical"
	"github.com/toolgate/toolgate/internal/meaning"
	"github.com/toolgate/toolgate/internal/pgtest"
)

// The indexer stores each indexed tool's meaning, the one internal/meaning gives its name,
// title and description, and replaces it when the text changes; a tool whose text has no
// word with a sense has none, and a deleted tool's is removed by the flush after the delete.
func TestIndexerWritesMeanings(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	space, err := meaning.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	stored := func(name string) (pgvector.SparseVector, bool) {
		t.Helper()
		var v pgvector.SparseVector
		err := pool.QueryRow(ctx, `SELECT m.meaning FROM tool_meanings m JOIN tools t ON t.id = m.tool_id
			WHERE t.name = $1`, name).Scan(&v)
		if err != nil {
			return v, false
		}
		return v, true
	}
	want := func(text string) string {
		t.Helper()
		v, ok := space.Vector(text)
		if !ok {
			t.Fatalf("%q has no meaning", text)
		}
		return v.String()
	}
	exec(t, pool, `INSERT INTO sources (name, kind) VALUES ('m', 'catalog')`)
	exec(t, pool, `INSERT INTO tools (source_id, name, original_name, title, description, input_schema, content_hash)
		SELECT s.id, x.name, x.name, x.title, x.description, '{"type":"object"}', 'h'
		FROM sources s, (VALUES ('m__buy', 'Purchase', 'Buy shares of a company'),
		                        ('m__xq', NULL, 'XQ-7 ZB-9')) x (name, title, description)`)
	if _, err := lexical.Flush(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if v, ok := stored("m__buy"); !ok || v.String() != want("m__buy\nPurchase\nBuy shares of a company") {
		t.Fatalf("stored meaning %v (%v), want the one of its name, title and description", v, ok)
	}
	if _, ok := stored("m__xq"); ok {
		t.Fatal("a tool without a known word has a meaning")
	}

	exec(t, pool, `UPDATE tools SET description = 'Sell stock at market price' WHERE name = 'm__buy'`)
	if _, err := lexical.Flush(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if v, _ := stored("m__buy"); v.String() != want("m__buy\nPurchase\nSell stock at market price") {
		t.Fatal("the meaning did not follow the new description")
	}
	exec(t, pool, `UPDATE tools SET description = 'XQ-8' WHERE name = 'm__buy'`)
	exec(t, pool, `UPDATE tools SET title = NULL WHERE name = 'm__buy'`)
	exec(t, pool, `UPDATE tools SET name = 'm__zz' WHERE name = 'm__buy'`)
	if _, err := lexical.Flush(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if _, ok := stored("m__zz"); ok {
		t.Fatal("a tool whose text lost every known word kept its meaning")
	}
	exec(t, pool, `UPDATE tools SET description = 'Buy shares' WHERE name = 'm__zz'`)
	if _, err := lexical.Flush(ctx, pool); err != nil {
		t.Fatal(err)
	}
	exec(t, pool, `DELETE FROM tools WHERE name = 'm__zz'`)
	if _, err := lexical.Flush(ctx, pool); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM tool_meanings`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d meanings left after the delete (%v)", n, err)
	}
}

// Writers create, rename and delete tools while flushes run: no flush fails (a tool deleted
// between the indexer's read of its text and the write of its meaning once failed the
// indexer on a foreign key), and once the writers stop, the last flush leaves exactly one
// meaning per existing tool.
func TestMeaningsFollowConcurrentWriters(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	exec(t, pool, `INSERT INTO sources (name, kind) VALUES ('c', 'catalog')`)
	// A fixed amount of writing, flushed all along: each writer makes its rounds of changes,
	// the flushers flush until the writers are done.
	const rounds = 40
	stop := make(chan struct{})
	errs := make(chan error, 8)
	var writers, flushers sync.WaitGroup
	for w := range 2 {
		writers.Add(1)
		go func() {
			defer writers.Done()
			for i := range rounds {
				name := fmt.Sprintf("c__w%d_%d", w, i)
				for _, q := range []string{
					`INSERT INTO tools (source_id, name, original_name, description, input_schema, content_hash)
					 SELECT s.id, $1 || '_' || g, $1 || '_' || g, 'Buy shares of a company number ' || g, '{"type":"object"}', 'h'
					 FROM sources s, generate_series(1, 20) g WHERE s.name = 'c'`,
					`UPDATE tools SET description = 'Sell stock at market price' WHERE name LIKE $1 || '_%'`,
					`DELETE FROM tools WHERE name LIKE $1 || '_%' AND right(name, 1) IN ('1', '3', '5', '7')`,
				} {
					if _, err := pool.Exec(ctx, q, name); err != nil {
						errs <- err
						return
					}
				}
			}
		}()
	}
	for range 2 {
		flushers.Add(1)
		go func() {
			defer flushers.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := lexical.Flush(ctx, pool); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	writers.Wait()
	close(stop)
	flushers.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if _, err := lexical.Flush(ctx, pool); err != nil {
		t.Fatal(err)
	}
	var tools, meanings, orphans int
	if err := pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM tools), (SELECT count(*) FROM tool_meanings),
		(SELECT count(*) FROM tool_meanings m WHERE NOT EXISTS (SELECT 1 FROM tools t WHERE t.id = m.tool_id))`).
		Scan(&tools, &meanings, &orphans); err != nil {
		t.Fatal(err)
	}
	if tools == 0 || meanings != tools || orphans != 0 {
		t.Fatalf("%d tools, %d meanings, %d of a deleted tool", tools, meanings, orphans)
	}
}
