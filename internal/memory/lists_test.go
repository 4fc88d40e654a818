package memory_test

import (
	"context"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/memory"
	"github.com/toolgate/toolgate/internal/search"
	"github.com/toolgate/toolgate/internal/testfactory"
)

// checkLists: every tenant the sweep counted at least from memories of has about √n lists
// (n its embedded memories when they were made), unit centroids, and each embedded memory
// filed under the list of its nearest centroid; a smaller tenant has none, and all its
// memories are under -1. It returns the tenants with lists.
func checkLists(ctx context.Context, t *testing.T, pool *pgxpool.Pool, from int) int {
	t.Helper()
	rows, err := pool.Query(ctx, `SELECT c.tenant, c.memories, c.lists, c.listed,
		(SELECT count(*) FROM tool_memory_lists l WHERE l.tenant = c.tenant),
		(SELECT count(*) FROM tool_memory_lists l WHERE l.tenant = c.tenant AND abs(l2_norm(l.centroid) - 1) > 1e-2),
		(SELECT count(*) FROM tool_memories m WHERE m.tenant = c.tenant AND m.embedding IS NOT NULL
		   AND m.list IS DISTINCT FROM coalesce((SELECT l.list FROM tool_memory_lists l WHERE l.tenant = m.tenant
		                                          ORDER BY l.centroid <#> m.embedding LIMIT 1), -1))
		FROM tool_memory_tenants c ORDER BY c.tenant`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	listed := 0
	for rows.Next() {
		var tenant string
		var memories, lists, listedAt, centroids, notUnit, misfiled int
		if err := rows.Scan(&tenant, &memories, &lists, &listedAt, &centroids, &notUnit, &misfiled); err != nil {
			t.Fatal(err)
		}
		if memories < from {
			if lists != 0 || centroids != 0 || misfiled != 0 {
				t.Errorf("tenant %q: %d memories, below %d, but %d lists (%d centroids, %d memories filed)", tenant, memories, from, lists, centroids, misfiled)
			}
			continue
		}
		listed++
		if want := int(math.Round(math.Sqrt(float64(listedAt)))); lists != want || centroids != lists || memories >= 2*listedAt || 2*memories <= listedAt {
			t.Errorf("tenant %q: %d memories in %d lists (%d centroids), made at %d memories (want √%[5]d ≈ %d, made again once the count doubles or halves)", tenant, memories, lists, centroids, listedAt, want)
		}
		if notUnit != 0 || misfiled != 0 {
			t.Errorf("tenant %q: %d centroids not unit vectors, %d memories not under their nearest centroid", tenant, notUnit, misfiled)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return listed
}

// TestListsKeepLearning: a tenant with at least ListFrom memories has them split into lists
// at the sweep, each memory under its nearest centroid; the search then reads a quarter of
// its lists and still learns (most test requests answered first, as without lists); a memory
// whose embedding changes is under -1 (read by every search) until the next sweep files it;
// a tenant that falls below ListFrom loses its lists, as every tenant does with
// TOOLGATE_MEMORY_LISTS_FROM=0, and a change of embedding space drops them all.
func TestListsKeepLearning(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()
	a := e.key(t, auth.Spec{Name: "a", Tenant: "acme"})
	traffic, test := split(e.uses)
	testfactory.LabelsAs(ctx, t, e.search, a, "src", traffic)
	e.sweep(t)
	_, exactTop := e.rankings(t, a, test)

	var n int
	if err := e.pool.QueryRow(ctx, `SELECT memories FROM tool_memory_tenants WHERE tenant = 'acme'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	e.memory.ListFrom = n // acme's memories make lists, nobody else's
	if st := e.sweep(t); st.Tenants != 1 {
		t.Fatalf("sweep %+v: want acme's lists made", st)
	}
	if got := checkLists(ctx, t, e.pool, n); got != 1 {
		t.Fatalf("%d tenants with lists, want acme", got)
	}
	var lists int
	if err := e.pool.QueryRow(ctx, `SELECT lists FROM tool_memory_tenants WHERE tenant = 'acme'`).Scan(&lists); err != nil || lists < 4 {
		t.Fatalf("acme: %d lists (%v), want at least 4 so that a search reads some of them", lists, err)
	}
	_, listTop := e.rankings(t, a, test)
	t.Logf("acme: %d memories in %d lists: %d of %d test requests answered first (%d reading every memory)", n, lists, listTop, len(test), exactTop)
	if listTop < len(test)*8/10 || listTop < exactTop-len(test)/10 {
		t.Errorf("with lists, %d of %d test requests answered first, want most (%d without)", listTop, len(test), exactTop)
	}

	// a re-embedded memory waits under -1, then is filed
	if _, err := e.pool.Exec(ctx, `UPDATE tool_memories SET embedding = (SELECT embedding FROM tool_memories WHERE tenant = 'acme' ORDER BY id DESC LIMIT 1)
		WHERE id = (SELECT min(id) FROM tool_memories WHERE tenant = 'acme')`); err != nil {
		t.Fatal(err)
	}
	var waiting int
	if err := e.pool.QueryRow(ctx, `SELECT count(*) FROM tool_memories WHERE tenant = 'acme' AND list = -1`).Scan(&waiting); err != nil || waiting != 1 {
		t.Fatalf("%d memories under -1 after one was embedded again (%v), want 1", waiting, err)
	}
	// ... where every search reads it: the request of the memory whose embedding it took
	// finds it too, and it votes for its own tool
	var query, movedTool, ownTool string
	if err := e.pool.QueryRow(ctx, `SELECT
		(SELECT query FROM tool_memories WHERE tenant = 'acme' ORDER BY id DESC LIMIT 1),
		(SELECT t.name FROM tool_memories m JOIN tools t ON t.id = m.tool_id WHERE m.tenant = 'acme' AND m.list = -1),
		(SELECT t.name FROM tool_memories m JOIN tools t ON t.id = m.tool_id WHERE m.tenant = 'acme' ORDER BY m.id DESC LIMIT 1)`).
		Scan(&query, &movedTool, &ownTool); err != nil {
		t.Fatal(err)
	}
	if movedTool == ownTool {
		t.Fatalf("the moved memory is of %s, as the one it copied: pick another", ownTool)
	}
	resp, err := e.search.Search(ctx, a, search.Request{Query: query, K: 10, Plan: "none", Explain: true})
	if err != nil {
		t.Fatal(err)
	}
	voted := false
	for _, r := range resp.Results {
		if r.Name == movedTool && r.Explanation != nil && r.Explanation.Memory != nil && r.Explanation.Memory.Share > 0 {
			voted = true
		}
	}
	if !voted {
		t.Fatalf("%q: %s, whose memory is under -1, got no memory vote: list -1 is not read", query, movedTool)
	}
	if st := e.sweep(t); st.Tenants != 1 {
		t.Fatalf("sweep %+v: want acme's new memory filed", st)
	}
	checkLists(ctx, t, e.pool, n)

	// below ListFrom: no lists
	e.memory.ListFrom = n + 1
	if st := e.sweep(t); st.Tenants != 1 {
		t.Fatalf("sweep %+v: want acme's lists dropped", st)
	}
	if got := checkLists(ctx, t, e.pool, n+1); got != 0 {
		t.Fatalf("%d tenants with lists above ListFrom", got)
	}

	// TOOLGATE_MEMORY_LISTS_FROM=0: never
	e.memory.ListFrom = n
	e.sweep(t)
	e.memory.ListFrom = memory.ListFromSetting(0)
	e.sweep(t)
	if got := checkLists(ctx, t, e.pool, math.MaxInt); got != 0 {
		t.Fatalf("%d tenants with lists with TOOLGATE_MEMORY_LISTS_FROM=0", got)
	}

	// a new space drops every list
	e.memory.ListFrom = n
	e.sweep(t)
	if _, err := e.pool.Exec(ctx, `SELECT toolgate_retype_memories(384, false)`); err != nil {
		t.Fatal(err)
	}
	var left int
	if err := e.pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM tool_memory_lists) + (SELECT count(*) FROM tool_memories WHERE list <> -1)
		+ (SELECT coalesce(sum(lists), 0) FROM tool_memory_tenants)`).Scan(&left); err != nil || left != 0 {
		t.Fatalf("after a change of space: %d lists, filed memories and counts left (%v)", left, err)
	}
}

// setupThreeTenants is setup with labelled searches of two tenants' keys (acme, bolt: the
// traffic requests, bolt's from the second on) and of the operator (every request).
func setupThreeTenants(t *testing.T) *env {
	t.Helper()
	e := setup(t)
	ctx := context.Background()
	traffic, _ := split(e.uses)
	for i, tenant := range []string{"acme", "bolt"} {
		k := e.key(t, auth.Spec{Name: tenant, Tenant: tenant})
		testfactory.LabelsAs(ctx, t, e.search, k, "src", traffic[i:])
	}
	testfactory.Labels(ctx, t, e.search, "src", e.uses)
	return e
}

// TestConcurrentSweepsKeepListsWhole: sweeps running at once, while memories are embedded
// again, never leave a memory outside the lists the search reads: after each round and a
// last quiet sweep, every memory is under its nearest centroid.
func TestConcurrentSweepsKeepListsWhole(t *testing.T) {
	t.Parallel()
	e := setupThreeTenants(t)
	ctx := context.Background()
	e.memory.ListFrom = 4
	for round := range 5 {
		var wg sync.WaitGroup
		errs := make(chan error, 3)
		for range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := e.memory.Sweep(ctx); err != nil {
					errs <- err
				}
			}()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			// a third of the memories take another one's embedding: they go under -1
			_, err := e.pool.Exec(ctx, `UPDATE tool_memories m SET embedding = o.embedding FROM tool_memories o
				WHERE o.id = m.id + 1 AND m.id % 3 = $1 AND o.embedding IS NOT NULL`, round%3)
			if err != nil {
				errs <- err
			}
		}()
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("round %d: %v", round, err)
		}
		if _, err := e.memory.Sweep(ctx); err != nil {
			t.Fatal(err)
		}
		if got := checkLists(ctx, t, e.pool, 4); got < 3 {
			t.Fatalf("round %d: %d tenants with lists, want the operator, acme and bolt", round, got)
		}
	}
}

// TestSweepCutShortFinishes: a sweep stopped at any point (its context cancelled: its open
// transaction rolls back, as a killed process's does) leaves nothing half written, and the
// next sweep finishes the work: the same memories, lists and counts as a sweep that was
// never stopped.
func TestSweepCutShortFinishes(t *testing.T) {
	t.Parallel()
	e := setupThreeTenants(t)
	ctx := context.Background()
	e.memory.ListFrom = 4
	memory.SetBatch(e.memory, 2)
	reset := func() {
		t.Helper()
		if _, err := e.pool.Exec(ctx, `TRUNCATE tool_memories, tool_memory_lists, tool_memory_tenants;
			UPDATE memory_sweep SET labels_until = '1970-01-01', sweeping_until = NULL, after_tool = 0, min_keys = NULL`); err != nil {
			t.Fatal(err)
		}
	}
	state := func() string {
		t.Helper()
		var s string
		if err := e.pool.QueryRow(ctx, `SELECT
			(SELECT string_agg(format('%s %s %s %s %s %s %s', m.tool_id, m.tenant, m.key_id, m.norm, m.searches, m.list, m.embedding), E'\n'
			        ORDER BY m.tool_id, m.tenant, m.key_id, m.norm) FROM tool_memories m)
			|| E'\n' || (SELECT string_agg(format('%s %s %s', l.tenant, l.list, l.centroid), E'\n' ORDER BY l.tenant, l.list) FROM tool_memory_lists l)
			|| E'\n' || (SELECT string_agg(format('%s %s %s %s', c.tenant, c.memories, c.lists, c.listed), E'\n' ORDER BY c.tenant) FROM tool_memory_tenants c)`).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	reset()
	e.sweep(t)
	want := state()
	if checkLists(ctx, t, e.pool, 4) < 3 {
		t.Fatal("the uncut sweep listed fewer than three tenants")
	}
	cut := 0
	for _, after := range []time.Duration{time.Millisecond, 5 * time.Millisecond, 20 * time.Millisecond,
		50 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond} {
		reset()
		short, cancel := context.WithTimeout(ctx, after)
		_, err := e.memory.Sweep(short)
		cancel()
		if err != nil {
			cut++
			var memories, lists int
			if err := e.pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM tool_memories), (SELECT count(*) FROM tool_memory_lists)`).Scan(&memories, &lists); err != nil {
				t.Fatal(err)
			}
			t.Logf("stopped after %s: %d memories and %d lists written", after, memories, lists)
		}
		e.sweep(t)
		if got := state(); got != want {
			t.Fatalf("stopped after %s (%v), then swept: the memories, lists and counts differ from an uncut sweep's:\n%s\nwant\n%s", after, err, got, want)
		}
	}
	t.Logf("%d of 7 sweeps stopped part way", cut)
	if cut < 3 {
		t.Errorf("only %d of 7 sweeps were stopped part way: the test did not cut them", cut)
	}

	// stopped while making the lists alone
	for _, after := range []time.Duration{20 * time.Millisecond, 100 * time.Millisecond, 150 * time.Millisecond, 200 * time.Millisecond, 250 * time.Millisecond} {
		reset()
		e.memory.ListFrom = -1
		e.sweep(t)
		e.memory.ListFrom = 4
		short, cancel := context.WithTimeout(ctx, after)
		_, err := e.memory.Cluster(short)
		cancel()
		var listed int
		if err := e.pool.QueryRow(ctx, `SELECT count(*) FROM tool_memory_tenants WHERE lists > 0`).Scan(&listed); err != nil {
			t.Fatal(err)
		}
		t.Logf("lists stopped after %s: %d tenants listed (%v)", after, listed, err)
		e.sweep(t)
		if got := state(); got != want {
			t.Fatalf("lists stopped after %s (%v), then swept: the memories, lists and counts differ from an uncut sweep's:\n%s\nwant\n%s", after, err, got, want)
		}
	}
}
