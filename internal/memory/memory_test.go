package memory_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/derrors"
	"github.com/toolgate/toolgate/internal/embed"
	"github.com/toolgate/toolgate/internal/lexical"
	"github.com/toolgate/toolgate/internal/memory"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/search"
	"github.com/toolgate/toolgate/internal/testfactory"
)

type env struct {
	pool   *pgxpool.Pool
	keys   *auth.Keys
	search *search.Service
	memory *memory.Service
	uses   []testfactory.Use
}

// setup makes the misleading catalog (descriptions that point at another tool: the names
// alone tell the tools apart), enriched with the local embedder, and its services.
func setup(t *testing.T) *env {
	t.Helper()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	if _, err := db.New(pool).EnsureSearchLogPartitions(ctx, 2); err != nil {
		t.Fatal(err)
	}
	tools, uses := testfactory.MisleadingCatalog()
	_, res := testfactory.Catalog(ctx, t, pool, "src", tools, nil)
	testfactory.Enrich(ctx, t, testfactory.LocalEnricher(pool, 3), res.Changed...)
	if _, err := lexical.Flush(ctx, pool); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	emb := embed.NewLocal(384)
	st := search.DefaultSettings()
	st.QueryIDF = true
	return &env{pool: pool, keys: auth.NewKeys(pool, time.Now), uses: uses,
		search: search.New(pool, emb, st, log),
		memory: &memory.Service{Pool: pool, Embedder: emb, QueryIDF: true, Logger: log}}
}

func (e *env) key(t *testing.T, spec auth.Spec) auth.Caller {
	t.Helper()
	spec.Scope = cmpScope(spec.Scope)
	k, _, err := e.keys.Create(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	return *k.Caller()
}

func cmpScope(s auth.Scope) auth.Scope {
	if s == "" {
		return auth.ScopeSearch
	}
	return s
}

func (e *env) sweep(t *testing.T) memory.SweepStats {
	t.Helper()
	st, err := e.memory.Sweep(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// rankings are the results (name and score) of each query for caller, as one text: two
// equal texts are the same answers.
func (e *env) rankings(t *testing.T, c auth.Caller, uses []testfactory.Use) (string, int) {
	t.Helper()
	var b strings.Builder
	top := 0
	for _, u := range uses {
		resp, err := e.search.Search(context.Background(), c, search.Request{Query: u.Query, K: 5, Plan: "none"})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range resp.Results {
			fmt.Fprintf(&b, "%s %.12f|", r.Name, r.Score)
		}
		b.WriteString("\n")
		if len(resp.Results) > 0 && resp.Results[0].Name == "src__"+u.Tools[0] {
			top++
		}
	}
	return b.String(), top
}

// sameRankings: a and b (rankings' output) name the same tools in the same order, with
// scores that differ by at most tol.
func sameRankings(a, b string, tol float64) bool {
	x, y := strings.FieldsFunc(a, isRankingSep), strings.FieldsFunc(b, isRankingSep)
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if x[i] == y[i] {
			continue
		}
		p, err1 := strconv.ParseFloat(x[i], 64)
		q, err2 := strconv.ParseFloat(y[i], 64)
		if err1 != nil || err2 != nil || math.Abs(p-q) > tol {
			return false
		}
	}
	return true
}

func isRankingSep(r rune) bool { return r == ' ' || r == '|' || r == '\n' }

// split: the first phrasing of each job is the traffic, the third the test.
func split(uses []testfactory.Use) (traffic, test []testfactory.Use) {
	for i, u := range uses {
		switch i % 3 {
		case 0:
			traffic = append(traffic, u)
		case 2:
			test = append(test, u)
		}
	}
	return traffic, test
}

// TestOwnTrafficImprovesOwnSearch: one search key's labelled searches, once swept, lift its
// own searches worded otherwise at once (no other key asked anything), while another key's
// answers stay the same to the last digit.
func TestOwnTrafficImprovesOwnSearch(t *testing.T) {
	t.Parallel()
	e := setup(t)
	a := e.key(t, auth.Spec{Name: "a"})
	b := e.key(t, auth.Spec{Name: "b"})
	traffic, test := split(e.uses)
	_, aBefore := e.rankings(t, a, test)
	bBefore, _ := e.rankings(t, b, test)

	if n := testfactory.LabelsAs(context.Background(), t, e.search, a, "src", traffic); n < len(traffic)/2 {
		t.Fatalf("%d of %d traffic searches labelled", n, len(traffic))
	}
	if st := e.sweep(t); st.Added == 0 {
		t.Fatalf("sweep %+v: no memory written", st)
	}
	_, aAfter := e.rankings(t, a, test)
	bAfter, _ := e.rankings(t, b, test)
	t.Logf("key a: %d → %d of %d test requests answered first", aBefore, aAfter, len(test))
	if aAfter <= aBefore || aAfter < len(test)*9/10 {
		t.Errorf("key a: %d → %d of %d first, want a gain to at least 90%% from its own traffic", aBefore, aAfter, len(test))
	}
	if bAfter != bBefore {
		t.Errorf("key b's answers changed after key a's traffic:\nbefore %s\nafter  %s", bBefore, bAfter)
	}
}

// TestTenantSharesAndOperatorTeachesAll: keys of one tenant learn from each other; the
// operator's (keyless) traffic teaches every tenant.
func TestTenantSharesAndOperatorTeachesAll(t *testing.T) {
	t.Parallel()
	e := setup(t)
	a1 := e.key(t, auth.Spec{Name: "a1", Tenant: "acme"})
	a2 := e.key(t, auth.Spec{Name: "a2", Tenant: "acme"})
	other := e.key(t, auth.Spec{Name: "other", Tenant: "globex"})
	traffic, test := split(e.uses)
	half := len(traffic) / 2
	_, a2Before := e.rankings(t, a2, test[:half])
	otherBefore, _ := e.rankings(t, other, test)
	testfactory.LabelsAs(context.Background(), t, e.search, a1, "src", traffic[:half])
	e.sweep(t)
	_, a2After := e.rankings(t, a2, test[:half])
	if a2After <= a2Before {
		t.Errorf("a2, same tenant as a1: %d → %d first, want a gain", a2Before, a2After)
	}
	if otherAfter, _ := e.rankings(t, other, test); otherAfter != otherBefore {
		t.Errorf("another tenant's answers changed after acme's traffic")
	}
	// the operator's traffic on the other half reaches globex
	_, oBefore := e.rankings(t, other, test[half:])
	testfactory.Labels(context.Background(), t, e.search, "src", traffic[half:])
	e.sweep(t)
	if _, oAfter := e.rankings(t, other, test[half:]); oAfter <= oBefore {
		t.Errorf("globex after the operator's traffic: %d → %d first, want a gain", oBefore, oAfter)
	}
}

// TestRevokedKeyStopsTeaching: a revoked key's memories are gone at once, without a sweep.
func TestRevokedKeyStopsTeaching(t *testing.T) {
	t.Parallel()
	e := setup(t)
	a := e.key(t, auth.Spec{Name: "a"})
	traffic, _ := split(e.uses)
	testfactory.LabelsAs(context.Background(), t, e.search, a, "src", traffic)
	if st := e.sweep(t); st.Added == 0 {
		t.Fatalf("sweep %+v: no memory written", st)
	}
	if _, err := e.keys.Revoke(context.Background(), "a"); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := e.pool.QueryRow(context.Background(), `SELECT count(*) FROM tool_memories`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d memories after the only teaching key was revoked (%v), want 0", n, err)
	}
	// a later sweep does not bring them back
	e.sweep(t)
	if err := e.pool.QueryRow(context.Background(), `SELECT count(*) FROM tool_memories`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d memories after a sweep, want 0", n)
	}
}

// TestDeletedToolAndSourceDropMemories: a tool's memories go with the tool, and a source's
// tools' with the source; a changed definition keeps them.
func TestDeletedToolAndSourceDropMemories(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()
	a := e.key(t, auth.Spec{Name: "a"})
	traffic, _ := split(e.uses)
	testfactory.LabelsAs(ctx, t, e.search, a, "src", traffic)
	e.sweep(t)
	count := func(where string) int {
		var n int
		if err := e.pool.QueryRow(ctx, `SELECT count(*) FROM tool_memories m JOIN tools t ON t.id = m.tool_id `+where).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	total := count("")
	if total == 0 || count(`WHERE t.name = 'src__archive_invoice'`) == 0 {
		t.Fatalf("%d memories, none of src__archive_invoice", total)
	}
	if _, err := e.pool.Exec(ctx, `UPDATE tools SET description = 'changed', content_hash = 'x' WHERE name = 'src__archive_invoice'`); err != nil {
		t.Fatal(err)
	}
	if n := count(""); n != total {
		t.Fatalf("%d memories after a definition changed, want %d", n, total)
	}
	if _, err := e.pool.Exec(ctx, `DELETE FROM tools WHERE name = 'src__archive_invoice'`); err != nil {
		t.Fatal(err)
	}
	var left int
	if err := e.pool.QueryRow(ctx, `SELECT count(*) FROM tool_memories`).Scan(&left); err != nil || left >= total {
		t.Fatalf("%d memories after the tool was deleted (of %d), want fewer", left, total)
	}
	if _, err := e.pool.Exec(ctx, `DELETE FROM sources WHERE name = 'src'`); err != nil {
		t.Fatal(err)
	}
	if err := e.pool.QueryRow(ctx, `SELECT count(*) FROM tool_memories`).Scan(&left); err != nil || left != 0 {
		t.Fatalf("%d memories after the source was deleted, want 0", left)
	}
}

// TestOAuthCallersTeachNothing: searches made with OAuth access tokens have no key (no
// tenant to teach, nothing to revoke) and are not the operator's keyless searches: however
// many subjects labelled them, they make no memory.
func TestOAuthCallersTeachNothing(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()
	traffic, _ := split(e.uses)
	for _, sub := range []string{"mallory", "eve", "trudy"} {
		c := auth.Caller{Name: auth.OAuthName("https://auth.example.com", sub), Scope: auth.ScopeSearch}
		if n := testfactory.LabelsAs(ctx, t, e.search, c, "src", traffic); n == 0 {
			t.Fatal("no search labelled")
		}
	}
	e.sweep(t)
	var n int
	if err := e.pool.QueryRow(ctx, `SELECT count(*) FROM tool_memories`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d memories from OAuth callers (%v), want none", n, err)
	}
}

// TestMemoriesAreUnitVectors: the memory branch's exact scan ranks by inner product, which
// is the cosine distance only for unit vectors: every memory embedding is stored at unit
// length, whoever writes it (the sweep, or a write of a longer vector), to the precision of
// the half-precision floats it is stored in (2^-11 a component).
func TestMemoriesAreUnitVectors(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()
	traffic, _ := split(e.uses)
	testfactory.Labels(ctx, t, e.search, "src", traffic)
	e.sweep(t)
	// a longer vector written straight into the table, as another writer might
	if _, err := e.pool.Exec(ctx, `UPDATE tool_memories
		SET embedding = (SELECT array_agg(x * 3 ORDER BY i)::vector FROM unnest(embedding::real[]) WITH ORDINALITY AS u (x, i))
		WHERE id = (SELECT min(id) FROM tool_memories)`); err != nil {
		t.Fatal(err)
	}
	var n int
	var worst float64
	if err := e.pool.QueryRow(ctx, `SELECT count(*), coalesce(max(abs(l2_norm(embedding) - 1)), 1)
		FROM tool_memories WHERE embedding IS NOT NULL`).Scan(&n, &worst); err != nil {
		t.Fatal(err)
	}
	if n == 0 || worst > 1e-3 {
		t.Fatalf("%d memory embeddings, the furthest from unit length by %g", n, worst)
	}
}

// TestForgetOneMemory: removing one memory of a tool (a tenant's) removes it alone (the
// operator's memory of the same query stays), a refresh of the tool does not learn it back from the searches made
// before, and a search of the same query made after teaches it again.
func TestForgetOneMemory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := setup(t)
	a := e.key(t, auth.Spec{Name: "a", Tenant: "acme"})
	traffic, _ := split(e.uses)
	testfactory.LabelsAs(ctx, t, e.search, a, "src", traffic)
	testfactory.Labels(ctx, t, e.search, "src", traffic)
	e.sweep(t)
	var tool string
	var toolID int64
	if err := e.pool.QueryRow(ctx, `SELECT t.name, t.id FROM tool_memories m JOIN tools t ON t.id = m.tool_id
		GROUP BY t.name, t.id HAVING count(*) >= 2 ORDER BY t.name LIMIT 1`).Scan(&tool, &toolID); err != nil {
		t.Fatalf("no tool with two memories: %v", err)
	}
	before, err := e.memory.List(ctx, tool)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(before, func(m memory.Memory) bool { return m.Tenant == "acme" })
	if i < 0 {
		t.Fatalf("%s's memories %+v: none of acme", tool, before)
	}
	gone := before[i]
	if n, err := e.memory.ForgetOne(ctx, tool, gone.ID); err != nil || n != 1 {
		t.Fatalf("forget %+v: %d %v, want 1 removed", gone, n, err)
	}
	queries := func() []string { // tenant: query
		t.Helper()
		list, err := e.memory.List(ctx, tool)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, m := range list {
			out = append(out, m.Tenant+": "+m.Query)
		}
		slices.Sort(out)
		return out
	}
	want := []string{}
	for j, m := range before {
		if j != i {
			want = append(want, m.Tenant+": "+m.Query)
		}
	}
	slices.Sort(want)
	if got := queries(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("after forgetting %q: %q, want the others %q", gone.Query, got, want)
	}
	var st memory.SweepStats
	if err := e.memory.Refresh(ctx, toolID, &st); err != nil {
		t.Fatal(err)
	}
	if got := queries(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("a refresh learned back %q: %q", gone.Query, got)
	}
	// the same query asked and labelled again, after the removal, teaches it again
	var use []testfactory.Use
	for _, u := range traffic {
		if u.Query == gone.Query {
			use = append(use, u)
		}
	}
	if n := testfactory.LabelsAs(ctx, t, e.search, a, "src", use); n == 0 {
		t.Fatalf("%q not labelled again", gone.Query)
	}
	if err := e.memory.Refresh(ctx, toolID, &st); err != nil {
		t.Fatal(err)
	}
	if got := queries(); !slices.Contains(got, "acme: "+gone.Query) {
		t.Errorf("after a new search of %q: %q, want it learned again", gone.Query, got)
	}

	if _, err := e.memory.ForgetOne(ctx, tool, gone.ID); !errors.Is(err, derrors.NotFound) {
		t.Errorf("forgetting a removed memory: %v, want not found", err)
	}
	if _, err := e.memory.ForgetOne(ctx, "src__no_such_tool", 1); !errors.Is(err, derrors.NotFound) {
		t.Errorf("a memory of no tool: %v, want not found", err)
	}
}

// TestExactAndIndexScansAgree: the memory branch scans a tenant with few memories exactly
// (the b-tree on tenant) and a large one through the HNSW index, by the per-tenant counts
// the sweep keeps; on a small tenant both find the same memories, so the answers are the
// same, for a tenant's key and for the operator: the same tools in the same order, each
// score to 1e-6 (both take the similarity of the memories they find as the same inner
// product).
func TestExactAndIndexScansAgree(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()
	a := e.key(t, auth.Spec{Name: "a", Tenant: "acme"})
	traffic, test := split(e.uses)
	half := len(traffic) / 2
	testfactory.LabelsAs(ctx, t, e.search, a, "src", traffic[:half])
	testfactory.Labels(ctx, t, e.search, "src", traffic[half:])
	e.sweep(t)

	counts := func() string {
		var got, want string
		if err := e.pool.QueryRow(ctx, `SELECT coalesce(string_agg(tenant || '=' || memories, ' ' ORDER BY tenant), '') FROM tool_memory_tenants`).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if err := e.pool.QueryRow(ctx, `SELECT coalesce(string_agg(tenant || '=' || n, ' ' ORDER BY tenant), '') FROM (SELECT tenant, count(*) AS n FROM tool_memories GROUP BY tenant) c`).Scan(&want); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("tenant counts %q, want %q (the memories per tenant)", got, want)
		}
		return got
	}
	if c := counts(); !strings.Contains(c, "acme=") || !strings.HasPrefix(c, "=") {
		t.Fatalf("tenant counts %q: want the operator's and acme's", c)
	}

	var indexed bool
	if err := e.pool.QueryRow(ctx, `SELECT to_regclass('tool_memories_hnsw') IS NOT NULL`).Scan(&indexed); err != nil || !indexed {
		t.Fatalf("no HNSW index of the memories (%v)", err)
	}
	withScan := func(exactMax int) *search.Service {
		st := search.DefaultSettings()
		st.QueryIDF, st.MemoryExactMax = true, exactMax
		return search.New(e.pool, embed.NewLocal(384), st, slog.New(slog.DiscardHandler))
	}
	for _, c := range []struct {
		name   string
		caller auth.Caller
	}{{"acme's key", a}, {"the operator", search.Internal()}} {
		e.search = withScan(-1) // every tenant through the HNSW index
		index, _ := e.rankings(t, c.caller, test)
		e.search = withScan(search.DefaultMemoryExactMax) // both tenants are small: exactly
		exact, top := e.rankings(t, c.caller, test)
		if !sameRankings(exact, index, 1e-6) {
			t.Errorf("%s: the exact scan and the HNSW walk answer differently:\nexact %s\nindex %s", c.name, exact, index)
		}
		if top < len(test)/2 {
			t.Errorf("%s: %d of %d test requests answered first, want the memories to act", c.name, top, len(test))
		}
	}

	// the counts follow the memories: a revoked key's go at once, its count at the next sweep
	if _, err := e.keys.Revoke(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	e.sweep(t)
	if c := counts(); strings.Contains(c, "acme=") {
		t.Fatalf("tenant counts %q after acme's only key was revoked", c)
	}
}

// TestIgnoredAndFailingToolDropsForItsTenant: a tool a tenant's searches return first while
// its agent uses another one, and whose calls fail, loses ground for that tenant at the
// next sweep; another tenant's answers stay the same to the last digit.
func TestIgnoredAndFailingToolDropsForItsTenant(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()
	st := search.DefaultSettings()
	st.QueryIDF, st.WeightDemotion, st.WeightMemory = true, 1, 0 // negative evidence alone
	e.search = search.New(e.pool, embed.NewLocal(384), st, slog.New(slog.DiscardHandler))
	e.memory.Demotions = true
	a := e.key(t, auth.Spec{Name: "a", Tenant: "acme"})
	b := e.key(t, auth.Spec{Name: "b", Tenant: "globex"})
	query := "invoice records to archive" // names no tool: the first place is the scores'
	first := func(c auth.Caller) (string, string) {
		t.Helper()
		resp, err := e.search.Search(ctx, c, search.Request{Query: query, K: 5, Plan: "none"})
		if err != nil || len(resp.Results) < 2 {
			t.Fatalf("search %q: %v (%d results)", query, err, len(resp.Results))
		}
		return resp.Results[0].Name, resp.Results[1].Name
	}
	ignored, _ := first(a)
	other := []testfactory.Use{{Query: query, Tools: []string{"archive_invoice"}}}
	bBefore, _ := e.rankings(t, b, other)
	ok, fail := true, false
	for range 3 {
		resp, err := e.search.Search(ctx, a, search.Request{Query: query, K: 5, Plan: "none"})
		if err != nil {
			t.Fatal(err)
		}
		if resp.Results[0].Name != ignored {
			t.Fatalf("first result %s, want %s again", resp.Results[0].Name, ignored)
		}
		// the agent calls the first tool, which fails, and then uses the second
		fb := []search.Feedback{{Name: ignored, Success: &fail}, {Name: resp.Results[1].Name, Success: &ok}}
		if _, err := e.search.RecordFeedback(ctx, a, resp.SearchID, fb); err != nil {
			t.Fatal(err)
		}
	}
	e.sweep(t)
	if now, _ := first(a); now == ignored {
		t.Errorf("acme: %s still first after 3 searches that used another tool and 3 failed calls", ignored)
	}
	// explain shows the factor to acme, and none to globex
	for _, c := range []struct {
		caller auth.Caller
		want   bool
	}{{a, true}, {b, false}} {
		resp, err := e.search.Search(ctx, c.caller, search.Request{Query: query, K: 10, Plan: "none", Explain: true})
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(resp.Results, func(r search.Result) bool { return r.Name == ignored })
		if i < 0 || resp.Results[i].Explanation == nil {
			t.Fatalf("%s: %s not among the 10 explained results", c.caller.Name, ignored)
		}
		if d := resp.Results[i].Explanation.Demotion; (d > 0 && d < 1) != c.want {
			t.Errorf("%s: explained demotion of %s %v, want one: %v", c.caller.Name, ignored, d, c.want)
		}
	}
	if bAfter, _ := e.rankings(t, b, other); bAfter != bBefore {
		t.Errorf("globex's answers changed after acme's evidence:\nbefore %s\nafter  %s", bBefore, bAfter)
	}
}
