package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/api"
	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/embed"
	"github.com/toolgate/toolgate/internal/enrich"
	"github.com/toolgate/toolgate/internal/lexical"
	"github.com/toolgate/toolgate/internal/mcptest"
	"github.com/toolgate/toolgate/internal/memory"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/search"
	"github.com/toolgate/toolgate/internal/sources"
	"github.com/toolgate/toolgate/jobs"
)

// concurrentCatalog is the catalog writer g sends in round r: 100 to 130 tools, some with a
// description of this writer and round (updates), some present only in some catalogs
// (creates and deletes), and one marker tool no other catalog has, so the stored catalog
// tells which write committed last.
func concurrentCatalog(r, g int) []catalog.Tool {
	var out []catalog.Tool
	for i := 0; i < 100; i++ {
		desc := fmt.Sprintf("Look up record kind %d of the ledger", i)
		if (i+g+r)%4 == 0 {
			desc = fmt.Sprintf("Look up record kind %d of the ledger, revision %d of writer %d", i, r, g)
		}
		out = append(out, catalog.Tool{Name: fmt.Sprintf("lookup_%02d", i), Description: desc,
			InputSchema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string","description":"Record id"}}}`)})
	}
	for i := 0; i < 45; i++ {
		if (i+g+r)%3 != 0 {
			out = append(out, catalog.Tool{Name: fmt.Sprintf("optional_%d", i), Description: fmt.Sprintf("Optional report %d", i),
				InputSchema: json.RawMessage(`{"type":"object"}`)})
		}
	}
	return append(out, catalog.Tool{Name: fmt.Sprintf("marker_r%d_w%d", r, g), Description: "Marks the write that committed last",
		InputSchema: json.RawMessage(`{"type":"object"}`)})
}

// Writers of every kind at once, in several rounds: 8 concurrent PUTs of one source's
// catalog, 8 PUTs to 8 other sources, syncs of an MCP source whose tool list keeps changing,
// the enrichment jobs all of them queue (worked by 4 River workers, with the debounced
// lexical index runs), re-weights of the default profile, and observed queries written to
// the tools (enrich.Service.SetObserved) and removed per source (DELETE
// /v1/sources/shared/observed-queries), and labelled searches swept into memories by two
// memory sweeps at once (their tools replaced and deleted meanwhile; every tenant listed).
// No request answers 5xx, no job
// fails, PostgreSQL reports no deadlock, each catalog ends equal to the last write that
// committed, and the lexical index holds exactly the searchable tools.
func TestConcurrentWritersNeverDeadlock(t *testing.T) {
	if testing.Short() {
		t.Skip("slow (a whole server, evaluation or concurrent run): the full suite, make test, runs it")
	}
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	log := slog.New(slog.DiscardHandler)
	rc, err := jobs.NewClient(jobs.Deps{Pool: pool, Logger: log, SyncTimeout: 20 * time.Second,
		Embedder: embed.NewLocal(64), Enricher: enrich.Heuristic{}, Questions: 3},
		jobs.Options{Work: true, MaxWorkers: 4})
	if err != nil {
		t.Fatal(err)
	}
	if err := rc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = rc.Stop(sctx)
	})
	srv := httptest.NewServer(api.New(api.Deps{Pool: pool, River: rc, Logger: log, Open: true}))
	defer srv.Close()
	observedWriter := &enrich.Service{Pool: pool, Logger: log, Embedder: embed.NewLocal(64)}
	if _, err := db.New(pool).EnsureSearchLogPartitions(ctx, 2); err != nil {
		t.Fatal(err)
	}
	searcher := search.New(pool, embed.NewLocal(64), search.DefaultSettings(), log)
	memoryWriter := &memory.Service{Pool: pool, Embedder: embed.NewLocal(64), ListFrom: 1, Logger: log}

	var failures []string
	var mu sync.Mutex
	fail := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		failures = append(failures, fmt.Sprintf(format, args...))
	}
	call := func(method, path string, body []byte) {
		req, err := http.NewRequest(method, srv.URL+path, bytes.NewReader(body))
		if err != nil {
			fail("%s %s: %v", method, path, err)
			return
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			fail("%s %s: %v", method, path, err)
			return
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		if resp.StatusCode >= 300 {
			fail("%s %s: %d %s", method, path, resp.StatusCode, data)
		}
	}
	jsonl := func(tools []catalog.Tool) []byte {
		var b bytes.Buffer
		for _, tl := range tools {
			line, _ := json.Marshal(tl)
			b.Write(append(line, '\n'))
		}
		return b.Bytes()
	}

	upstream := mcptest.NewHTTP(t, concurrentCatalog(0, 99), mcptest.Normal, 0)
	body, _ := json.Marshal(map[string]any{"name": "up", "kind": "mcp_http", "url": upstream.URL})
	call(http.MethodPost, "/v1/sources", body)
	up, err := db.New(pool).GetSourceByName(ctx, "up")
	if err != nil {
		t.Fatal(err)
	}

	const rounds, writers = 3, 8
	for r := 0; r < rounds; r++ {
		var wg sync.WaitGroup
		for g := 0; g < writers; g++ {
			wg.Go(func() { call(http.MethodPut, "/v1/sources/shared/tools", jsonl(concurrentCatalog(r, g))) })
			wg.Go(func() {
				call(http.MethodPut, fmt.Sprintf("/v1/sources/own-%d/tools", g), jsonl(concurrentCatalog(r, g)))
			})
		}
		for g := 0; g < 2; g++ {
			wg.Go(func() {
				for i := 0; i < 2; i++ {
					upstream.Set(concurrentCatalog(r, 50+2*g+i))
					if _, err := sources.Sync(ctx, pool, jobs.NewQueue(rc), up.ID, 20*time.Second, mcptest.Commands()); err != nil {
						fail("sync: %v", err)
					}
				}
			})
		}
		wg.Go(func() { call(http.MethodPost, "/admin/profiles/default/reweight", nil) })
		// observed queries written to the tools the other writers change, and removed
		wg.Go(func() {
			ids, err := db.New(pool).ListToolIDsAndHashes(ctx)
			if err != nil {
				fail("list tools: %v", err)
				return
			}
			for i, tl := range ids {
				if i%7 != r {
					continue
				}
				texts := []string{fmt.Sprintf("ledger record round %d", r), fmt.Sprintf("look up the ledger, query %d", i)}
				if _, err := observedWriter.SetObserved(ctx, tl.ID, texts); err != nil {
					fail("observed queries of tool %d: %v", tl.ID, err)
				}
			}
			if r > 0 { // the shared source exists once a round's PUTs are done
				call(http.MethodDelete, "/v1/sources/shared/observed-queries", nil)
			}
		})
		// searches labelled with their first result, and two memory sweeps at once
		wg.Go(func() {
			ok := true
			for i := range 10 {
				resp, err := searcher.Search(ctx, search.Internal(), search.Request{Query: fmt.Sprintf("look up record kind %d, round %d", i, r), K: 3})
				if err != nil {
					fail("search: %v", err)
					return
				}
				if len(resp.Results) == 0 {
					continue
				}
				if _, err := searcher.RecordFeedback(ctx, search.Internal(), resp.SearchID,
					[]search.Feedback{{Name: resp.Results[0].Name, Success: &ok}}); err != nil {
					fail("feedback: %v", err)
				}
			}
		})
		for range 2 {
			wg.Go(func() {
				for range 3 {
					if _, err := memoryWriter.Sweep(ctx); err != nil {
						fail("memory sweep: %v", err)
					}
				}
			})
		}
		wg.Wait()
	}

	// Every job finishes: the enrichments, the re-weights and the lexical index runs.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var open int
		// Raw SQL: river_job is River's table.
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM river_job
			WHERE state NOT IN ('completed', 'discarded', 'cancelled') AND kind <> 'sync_due_sources'
			  AND NOT (state = 'scheduled' AND kind IN ('search_log_maintenance', 'api_key_rate_cleanup', 'mcp_session_cleanup', 'search_rollup'))`).Scan(&open); err != nil {
			t.Fatal(err)
		}
		if open == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d jobs still unfinished after 2 minutes", open)
		}
		time.Sleep(100 * time.Millisecond)
	}
	rows, err := pool.Query(ctx, `SELECT kind, state::text, coalesce(errors::text, '') FROM river_job
		WHERE errors IS NOT NULL OR state IN ('discarded', 'cancelled')`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var kind, state, errs string
		if err := rows.Scan(&kind, &state, &errs); err != nil {
			t.Fatal(err)
		}
		fail("job %s %s: %s", kind, state, errs)
	}
	rows.Close()
	for _, f := range failures {
		t.Error(f)
	}
	if len(failures) > 0 {
		t.FailNow()
	}
	// PostgreSQL counts every deadlock it detected in this database (the backend reports
	// it within a second or so; any deadlock would also have failed a request or a job).
	var deadlocks int64
	if err := pool.QueryRow(ctx, `SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()`).Scan(&deadlocks); err != nil {
		t.Fatal(err)
	}
	if deadlocks != 0 {
		t.Fatalf("PostgreSQL detected %d deadlocks", deadlocks)
	}

	stored := func(source string) []catalog.Tool {
		rows, err := pool.Query(ctx, `SELECT t.original_name, t.description FROM tools t JOIN sources s ON s.id = t.source_id
			WHERE s.name = $1 ORDER BY t.original_name`, source)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []catalog.Tool
		for rows.Next() {
			var tl catalog.Tool
			if err := rows.Scan(&tl.Name, &tl.Description); err != nil {
				t.Fatal(err)
			}
			out = append(out, tl)
		}
		return out
	}
	same := func(got, want []catalog.Tool) bool {
		w := slices.Clone(want)
		slices.SortFunc(w, func(a, b catalog.Tool) int { return strings.Compare(a.Name, b.Name) })
		return slices.EqualFunc(got, w, func(a, b catalog.Tool) bool { return a.Name == b.Name && a.Description == b.Description })
	}
	// The shared source holds exactly one marker, of the last round's write that committed
	// last, and exactly that write's catalog.
	shared := stored("shared")
	var last []catalog.Tool
	for g := 0; g < writers; g++ {
		c := concurrentCatalog(rounds-1, g)
		if slices.ContainsFunc(shared, func(tl catalog.Tool) bool { return tl.Name == c[len(c)-1].Name }) {
			last = c
		}
	}
	if last == nil || !same(shared, last) {
		t.Errorf("shared source is not the catalog of the last PUT: %v", shared)
	}
	for g := 0; g < writers; g++ {
		if got := stored(fmt.Sprintf("own-%d", g)); !same(got, concurrentCatalog(rounds-1, g)) {
			t.Errorf("own-%d is not its last PUT: %v", g, got)
		}
	}
	if _, err := lexical.Flush(ctx, pool); err != nil {
		t.Fatal(err)
	}
	var indexed, searchable string
	if err := pool.QueryRow(ctx, `SELECT
		(SELECT coalesce(string_agg(tool_id::text, ',' ORDER BY tool_id), '') FROM search_docs),
		(SELECT coalesce(string_agg(id::text, ',' ORDER BY id), '') FROM tools WHERE enabled AND review_state = 'approved')`).Scan(&indexed, &searchable); err != nil {
		t.Fatal(err)
	}
	if indexed != searchable {
		t.Errorf("lexical index holds %s, searchable tools are %s", indexed, searchable)
	}
	// the memories: after a last sweep, some, each under its nearest list
	if _, err := memoryWriter.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	var memories, misfiled int
	if err := pool.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE m.list IS DISTINCT FROM
		(SELECT l.list FROM tool_memory_lists l WHERE l.tenant = m.tenant ORDER BY l.centroid <#> m.embedding LIMIT 1))
		FROM tool_memories m`).Scan(&memories, &misfiled); err != nil {
		t.Fatal(err)
	}
	if memories == 0 || misfiled != 0 {
		t.Errorf("%d memories, %d not under their nearest list: want some, all filed", memories, misfiled)
	}
}
