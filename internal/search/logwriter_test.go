package search

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/pgtest"
)

func logParams(query string) logRow {
	return logRow{Query: query, Variants: []string{query}, Mode: "hybrid", K: 3,
		Filters: json.RawMessage(`{}`), Format: "raw", Results: json.RawMessage(`[{"name":"` + query + `","score":1}]`),
		Timings: json.RawMessage(`{}`), Endpoint: "internal"}
}

// holdLog locks search_log against inserts in a transaction of its own and returns its
// release: the batch being written then waits, and the rows of the searches that finish
// meanwhile queue for the next one.
func holdLog(t *testing.T, pool *pgxpool.Pool) func() {
	t.Helper()
	ctx := context.Background()
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `LOCK TABLE search_log IN EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	release := func() {
		once.Do(func() {
			if err := tx.Rollback(ctx); err != nil {
				t.Error(err)
			}
		})
	}
	// a test that fails before it releases the lock must not leave the writer waiting,
	// holding a connection the pool's cleanup would wait for
	t.Cleanup(release)
	return release
}

// waitQueued waits until n rows queue behind the batch being written (nothing signals it:
// the searches are blocked in write), and fails after a minute.
func waitQueued(t *testing.T, w *logWriter, n int) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
		w.mu.Lock()
		queued := len(w.queue)
		w.mu.Unlock()
		if queued == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d rows queued, want %d", queued, n)
		}
	}
}

type written struct {
	query string
	id    int64
	err   error
}

// writeAll writes one row per query, concurrently, and returns what each write returned.
func writeAll(w *logWriter, queries []string) []written {
	out := make([]written, len(queries))
	var wg sync.WaitGroup
	for i, q := range queries {
		wg.Go(func() {
			id, err := w.write(context.Background(), logParams(q))
			out[i] = written{q, id, err}
		})
	}
	wg.Wait()
	return out
}

// TestLogWriterBatchesConcurrentSearches: 64 searches at a time, 5 rounds, each get their
// own row, with their content, under the id they were given; rows that queued behind a
// batch being written are written together, in one transaction (one xmin), and a lone
// search's row is written at once.
func TestLogWriterBatchesConcurrentSearches(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	w := newLogWriter(pool, 0)

	// The first round's batches are certain: one row is being written (held), the other
	// 63 queue behind it.
	release := holdLog(t, pool)
	first := make(chan written, 1)
	go func() {
		id, err := w.write(ctx, logParams("held"))
		first <- written{"held", id, err}
	}()
	pgtest.WaitLockWait(t, pool, "name: InsertSearchLogs")
	var all []written
	var queries []string
	for g := range 63 {
		queries = append(queries, fmt.Sprintf("round 0 search %d", g))
	}
	done := make(chan []written)
	go func() { done <- writeAll(w, queries) }()
	waitQueued(t, w, 63)
	release()
	all = append(all, <-first)
	all = append(all, <-done...)
	// The other rounds run free: batches form as they happen to.
	for round := 1; round < 5; round++ {
		queries = queries[:0]
		for g := range 64 {
			queries = append(queries, fmt.Sprintf("round %d search %d", round, g))
		}
		all = append(all, writeAll(w, queries)...)
	}

	byID := map[int64]string{}
	for _, wr := range all {
		if wr.err != nil {
			t.Fatalf("%s: %v", wr.query, wr.err)
		}
		if _, dup := byID[wr.id]; dup {
			t.Fatalf("id %d given twice", wr.id)
		}
		byID[wr.id] = wr.query
	}
	rows, err := pool.Query(ctx, `SELECT id, query, results ->> 0, xmin::text FROM search_log`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n, batches := 0, map[string]int{}
	for rows.Next() {
		var id int64
		var query, result, xmin string
		if err := rows.Scan(&id, &query, &result, &xmin); err != nil {
			t.Fatal(err)
		}
		n++
		batches[xmin]++
		if byID[id] != query || !strings.Contains(result, `"name": "`+query+`"`) {
			t.Errorf("row %d: query %q, result %s; the search given this id wrote %q", id, query, result, byID[id])
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if n != len(all) {
		t.Fatalf("%d rows for %d searches", n, len(all))
	}
	if len(batches) >= n || len(batches) > n-62 {
		t.Fatalf("%d transactions for %d rows: the 63 queued rows were not one batch", len(batches), n)
	}
	// Idle again: a lone row is written at once, by its own search.
	if _, err := w.write(ctx, logParams("alone")); err != nil {
		t.Fatal(err)
	}
}

// TestLogWriterFailedBatch: a batch one of whose rows fails fails every search in it, and
// no search of the batches before or after.
func TestLogWriterFailedBatch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	// Raw DDL: a test-only trigger that refuses the row of the query "bad".
	if _, err := pool.Exec(ctx, `
		CREATE FUNCTION refuse_bad() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN IF NEW.query = 'bad' THEN RAISE EXCEPTION 'no log for bad'; END IF; RETURN NEW; END $$;
		CREATE TRIGGER refuse_bad BEFORE INSERT ON search_log FOR EACH ROW EXECUTE FUNCTION refuse_bad()`); err != nil {
		t.Fatal(err)
	}
	w := newLogWriter(pool, 0)

	release := holdLog(t, pool)
	first := make(chan error, 1)
	go func() {
		_, err := w.write(ctx, logParams("before"))
		first <- err
	}()
	pgtest.WaitLockWait(t, pool, "name: InsertSearchLogs")
	queries := []string{"good 1", "good 2", "bad", "good 3", "good 4"}
	done := make(chan []written)
	go func() { done <- writeAll(w, queries) }()
	waitQueued(t, w, len(queries))
	release()
	if err := <-first; err != nil {
		t.Fatalf("the batch before: %v", err)
	}
	for _, wr := range <-done {
		if wr.err == nil || !strings.Contains(wr.err.Error(), "no log for bad") {
			t.Errorf("%s, in the batch of the bad row: %v", wr.query, wr.err)
		}
	}
	after := writeAll(w, []string{"after 1", "after 2", "after 3"})
	for _, wr := range after {
		if wr.err != nil {
			t.Errorf("%s, after the failed batch: %v", wr.query, wr.err)
		}
	}
	var logged []string
	if err := pool.QueryRow(ctx, `SELECT array_agg(query ORDER BY query) FROM search_log`).Scan(&logged); err != nil {
		t.Fatal(err)
	}
	if want := []string{"after 1", "after 2", "after 3", "before"}; fmt.Sprint(logged) != fmt.Sprint(want) {
		t.Fatalf("logged %q, want %q", logged, want)
	}
}
