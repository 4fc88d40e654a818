package observed_test

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pgvector/pgvector-go"

	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/config"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/derrors"
	"github.com/toolgate/toolgate/internal/embed"
	"github.com/toolgate/toolgate/internal/enrich"
	"github.com/toolgate/toolgate/internal/lexical"
	"github.com/toolgate/toolgate/internal/observed"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/plan"
	"github.com/toolgate/toolgate/internal/search"
	"github.com/toolgate/toolgate/internal/testfactory"
)

// counting counts the texts its embedder is asked to embed; with limited set, it fails
// every call after the next `left` (a provider going down).
type counting struct {
	embed.Embedder
	texts   atomic.Int64
	limited atomic.Bool
	left    atomic.Int64
}

var errProviderDown = errors.New("the embedding provider is down")

func (c *counting) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if c.limited.Load() && c.left.Add(-1) < 0 {
		return nil, errProviderDown
	}
	c.texts.Add(int64(len(texts)))
	return c.Embedder.Embed(ctx, texts)
}

const (
	stock   = "fin__get_stock_price"
	email   = "fin__send_email"
	weather = "fin__get_weather"
	crm     = "crm__lookup_customer"
)

type env struct {
	pool   *pgxpool.Pool
	emb    *counting
	enrich *enrich.Service
	search *search.Service
	obs    *observed.Service
	keys   *auth.Keys
	ids    map[string]int64
}

func finTools(stockDescription string) []catalog.Tool {
	return []catalog.Tool{
		testfactory.Tool("get_stock_price", stockDescription),
		testfactory.Tool("send_email", "Send an email message to a recipient."),
		testfactory.Tool("get_weather", "Current weather forecast for a city."),
	}
}

// setup makes two catalog sources, fin and crm, enriched and embedded with a counting local
// embedder, and an observed-queries service keeping max queries per tool.
func setup(t *testing.T, max int) *env {
	t.Helper()
	return setupOn(context.Background(), t, pgtest.NewPool(t), max)
}

// setupOn is setup on a database of the caller's.
func setupOn(ctx context.Context, t *testing.T, pool *pgxpool.Pool, max int) *env {
	t.Helper()
	e := catalogOn(ctx, t, pool, max)
	testfactory.Enrich(ctx, t, e.enrich, slices.Collect(maps.Values(e.ids))...)
	if _, err := lexical.Flush(ctx, pool); err != nil {
		t.Fatal(err)
	}
	return e
}

// catalogOn is setupOn before the enrichment: the catalog imported (and indexed lexically).
func catalogOn(ctx context.Context, t *testing.T, pool *pgxpool.Pool, max int) *env {
	t.Helper()
	if _, err := db.New(pool).EnsureSearchLogPartitions(ctx, 2); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	e := &env{pool: pool, emb: &counting{Embedder: embed.NewLocal(384)}, keys: auth.NewKeys(pool, time.Now), ids: map[string]int64{}}
	e.enrich = &enrich.Service{Pool: pool, Logger: log, Embedder: e.emb, Enricher: enrich.Heuristic{}, Questions: 3}
	testfactory.Catalog(ctx, t, pool, "fin", finTools("Return the latest trading price of a stock ticker."), nil)
	testfactory.Catalog(ctx, t, pool, "crm", []catalog.Tool{testfactory.Tool("lookup_customer", "Find a customer record by name or email.")}, nil)
	rows, err := pool.Query(ctx, `SELECT id, name FROM tools`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id int64
		var name string
		if err := rows.Scan(&id, &name); err != nil {
			t.Fatal(err)
		}
		e.ids[name] = id
	}
	e.search = search.New(pool, embed.NewLocal(384), search.DefaultSettings(), log)
	e.obs = &observed.Service{Pool: pool, Enrich: e.enrich, Max: max, Logger: log}
	return e
}

// labelled searches query as c (lexically, no plan) and reports tool as called, with the
// outcome ok, as POST /search and POST /search/{id}/feedback do; the feedback becomes a label.
func (e *env) labelled(t *testing.T, c auth.Caller, query, tool string, ok bool) {
	t.Helper()
	ctx := context.Background()
	res, err := e.search.Search(ctx, c, search.Request{Query: query, K: 10, Mode: search.ModeLexical, Plan: plan.ModeNone})
	if err != nil {
		t.Fatalf("search %q: %v", query, err)
	}
	if !slices.ContainsFunc(res.Results, func(r search.Result) bool { return r.Name == tool }) {
		t.Fatalf("search %q did not return %s: %+v", query, tool, res.Results)
	}
	if _, err := e.search.RecordFeedback(ctx, c, res.SearchID, []search.Feedback{{Name: tool, Success: &ok}}); err != nil {
		t.Fatal(err)
	}
}

// rank is tool's 1-based rank for query in mode, 0 when not returned.
func (e *env) rank(t *testing.T, query string, mode search.Mode, tool string) int {
	t.Helper()
	res, err := e.search.Search(context.Background(), search.Internal(), search.Request{Query: query, K: 10, Mode: mode, Plan: plan.ModeNone})
	if err != nil {
		t.Fatalf("search %q: %v", query, err)
	}
	for i, r := range res.Results {
		if r.Name == tool {
			return i + 1
		}
	}
	return 0
}

// observedOf are the tool's observed components, by ordinal.
func (e *env) observedOf(t *testing.T, tool string) []string {
	t.Helper()
	rows, err := db.New(e.pool).ListToolComponentsOfKind(context.Background(),
		db.ListToolComponentsOfKindParams{ToolID: e.ids[tool], Kind: "observed"})
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for i, r := range rows {
		if int(r.Ordinal) != i || r.Embedding == nil {
			t.Fatalf("observed component %d of %s: ordinal %d, embedded %v", i, tool, r.Ordinal, r.Embedding != nil)
		}
		out = append(out, r.Text)
	}
	return out
}

// vectors are every stored tool vector, as text, by set and tool.
func vectors(t *testing.T, pool *pgxpool.Pool) map[string]string {
	t.Helper()
	rows, err := pool.Query(context.Background(), `SELECT set_id || '/' || tool_id, embedding::text FROM tool_vectors`)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			t.Fatal(err)
		}
		out[k] = v
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// distance is the cosine distance of the tool's vector in the active profile's set to the
// local embedding of text.
func (e *env) distance(t *testing.T, tool, text string) float64 {
	t.Helper()
	vs, err := embed.NewLocal(384).Embed(context.Background(), []string{text})
	if err != nil {
		t.Fatal(err)
	}
	var d float64
	if err := e.pool.QueryRow(context.Background(), `
		SELECT v.embedding <=> $1 FROM tool_vectors v JOIN weight_profiles p ON p.current_set = v.set_id AND p.is_active
		WHERE v.tool_id = $2`, pgvector.NewVector(vs[0]), e.ids[tool]).Scan(&d); err != nil {
		t.Fatal(err)
	}
	return d
}

func sweep(t *testing.T, s *observed.Service) observed.SweepStats {
	t.Helper()
	st, err := s.Sweep(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestOffByDefault(t *testing.T) {
	t.Parallel()
	cfg, err := config.Load(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ObservedQueries != 0 {
		t.Fatalf("TOOLGATE_OBSERVED_QUERIES defaults to %d, want 0 (off)", cfg.ObservedQueries)
	}
	for _, bad := range []string{"-1", "101", "ten"} {
		if _, err := config.Load(func(k string) string {
			if k == "TOOLGATE_OBSERVED_QUERIES" {
				return bad
			}
			return ""
		}); err == nil {
			t.Errorf("TOOLGATE_OBSERVED_QUERIES=%s accepted", bad)
		}
	}

	e := setup(t, cfg.ObservedQueries)
	before := vectors(t, e.pool)
	e.labelled(t, search.Internal(), "stock price on the bourse", stock, true)
	if st := sweep(t, e.obs); st != (observed.SweepStats{}) {
		t.Fatalf("a sweep with collection off did %+v", st)
	}
	if got := e.observedOf(t, stock); len(got) != 0 {
		t.Fatalf("observed queries with collection off: %q", got)
	}
	if after := vectors(t, e.pool); !maps.Equal(before, after) {
		t.Fatal("vectors changed with collection off")
	}
	// Turned on later, collection picks up the labels written while it was off.
	e.obs.Max = 5
	sweep(t, e.obs)
	if got := e.observedOf(t, stock); !slices.Equal(got, []string{"stock price on the bourse"}) {
		t.Fatalf("observed queries once on: %q", got)
	}
}

// TestObservedQueriesBecomeComponents: the queries of labelled searches become the tool's
// observed components: whitespace collapsed, de-duplicated case-insensitively (the most
// recent spelling kept), the most frequent first, at most N, too long ones, those equal to a
// synthetic question and those of failed calls left out; each text embedded once; the tool
// becomes findable, lexically and by vector, by a word only an observed query has; and
// enrichment keeps them.
func TestObservedQueriesBecomeComponents(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := setup(t, 2)
	me := search.Internal()
	questions, err := db.New(e.pool).ListToolComponentsOfKind(ctx, db.ListToolComponentsOfKindParams{ToolID: e.ids[stock], Kind: "question"})
	if err != nil || len(questions) == 0 {
		t.Fatalf("questions of %s: %v %v", stock, questions, err)
	}
	if e.rank(t, "bourse", search.ModeLexical, stock) != 0 {
		t.Fatal("bourse finds the tool before any observed query")
	}
	distBefore := e.distance(t, stock, "bourse")

	long := "stock price " + strings.Repeat("very ", 40)
	for range 4 {
		e.labelled(t, me, long, stock, true)                               // over 200 characters
		e.labelled(t, me, strings.ToUpper(questions[0].Text), stock, true) // a synthetic question
		e.labelled(t, me, "stock price that did not work", stock, false)   // the call failed
	}
	e.labelled(t, me, "price of a stock right now", stock, true)
	e.labelled(t, me, "share price of a stock", stock, true)
	e.labelled(t, me, "  stock   price on the BOURSE ", stock, true)
	e.labelled(t, me, "share price of a stock", stock, true)
	e.labelled(t, me, "STOCK price on the bourse", stock, true)
	e.labelled(t, me, "Stock price\ton the bourse", stock, true)
	e.labelled(t, me, "send an email about the stock price", email, true)

	texts := e.emb.texts.Load()
	st := sweep(t, e.obs)
	if st.Tools != 2 || st.Changed != 2 || st.Embedded != 3 {
		t.Fatalf("first sweep %+v, want 2 tools changed and 3 texts embedded", st)
	}
	if n := e.emb.texts.Load() - texts; n != 3 {
		t.Fatalf("%d texts embedded, want 3", n)
	}
	if got, want := e.observedOf(t, stock), []string{"Stock price on the bourse", "share price of a stock"}; !slices.Equal(got, want) {
		t.Fatalf("observed queries of %s: %q, want %q", stock, got, want)
	}
	if got := e.observedOf(t, email); !slices.Equal(got, []string{"send an email about the stock price"}) {
		t.Fatalf("observed queries of %s: %q", email, got)
	}
	if got := e.observedOf(t, weather); len(got) != 0 {
		t.Fatalf("observed queries of an unlabelled tool: %q", got)
	}

	// findable by a word only an observed query has
	if r := e.rank(t, "bourse", search.ModeLexical, stock); r != 1 {
		t.Fatalf("lexical rank of %s for bourse: %d, want 1", stock, r)
	}
	if r := e.rank(t, "bourse", search.ModeVector, stock); r != 1 {
		t.Fatalf("vector rank of %s for bourse: %d, want 1", stock, r)
	}
	if d := e.distance(t, stock, "bourse"); d >= distBefore {
		t.Fatalf("cosine distance to bourse %.4f, was %.4f: the vector did not take the observed queries", d, distBefore)
	}

	// Two more searches make "share price of a stock" the most frequent: the order changes,
	// nothing is embedded again.
	e.labelled(t, me, "share price of a stock", stock, true)
	e.labelled(t, me, "share price of a stock", stock, true)
	texts = e.emb.texts.Load()
	st = sweep(t, e.obs)
	if n := e.emb.texts.Load() - texts; n != 0 || st.Embedded != 0 || st.Changed != 1 {
		t.Fatalf("second sweep %+v embedded %d texts, want 1 tool changed and none embedded", st, n)
	}
	if got, want := e.observedOf(t, stock), []string{"share price of a stock", "Stock price on the bourse"}; !slices.Equal(got, want) {
		t.Fatalf("observed queries of %s: %q, want %q", stock, got, want)
	}
	if st := sweep(t, e.obs); st.Changed != 0 || st.Embedded != 0 {
		t.Fatalf("a sweep without new labels did %+v", st)
	}

	// A new definition is enriched again; its observed queries stay and stay in its vector.
	testfactory.Catalog(ctx, t, e.pool, "fin", finTools("Return the latest trading price of a listed company's stock."), nil)
	testfactory.Enrich(ctx, t, e.enrich, e.ids[stock])
	if _, err := lexical.Flush(ctx, e.pool); err != nil {
		t.Fatal(err)
	}
	if got := e.observedOf(t, stock); len(got) != 2 {
		t.Fatalf("observed queries after enrichment: %q", got)
	}
	if r := e.rank(t, "bourse", search.ModeVector, stock); r != 1 {
		t.Fatalf("vector rank of %s for bourse after enrichment: %d, want 1", stock, r)
	}
	if r := e.rank(t, "bourse", search.ModeLexical, stock); r != 1 {
		t.Fatalf("lexical rank of %s for bourse after enrichment: %d, want 1", stock, r)
	}

	// A tool deleted takes its observed queries with it (foreign key, ON DELETE CASCADE).
	testfactory.Catalog(ctx, t, e.pool, "fin", finTools("Return the latest trading price of a listed company's stock.")[1:], nil)
	var left int
	if err := e.pool.QueryRow(ctx, `SELECT count(*) FROM tool_components WHERE tool_id = $1`, e.ids[stock]).Scan(&left); err != nil || left != 0 {
		t.Fatalf("%d components of the deleted tool left (%v)", left, err)
	}
}

// TestKeyAndSourceLimits: a search made with a key feeds a tool only while that key may
// still see the tool's source and is not revoked.
func TestKeyAndSourceLimits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := setup(t, 10)
	e.obs.MinKeys = 1 // the limits of one key's searches, whatever the threshold
	caller := func(name string, sources []string) (auth.Key, auth.Caller) {
		k, _, err := e.keys.Create(ctx, auth.Spec{Name: name, Scope: auth.ScopeSearch, Sources: sources})
		if err != nil {
			t.Fatal(err)
		}
		return k, *k.Caller()
	}
	_, all := caller("all", nil)
	finKey, fin := caller("fin-only", []string{"fin"})
	_, gone := caller("gone", nil)
	_, both := caller("both", []string{"fin", "crm"})

	e.labelled(t, all, "stock price for every source", stock, true)
	e.labelled(t, fin, "stock price while fin was visible", stock, true)
	e.labelled(t, gone, "stock price of a revoked key", stock, true)
	e.labelled(t, both, "stock price of fin and crm", stock, true)
	e.labelled(t, both, "customer record of fin and crm", crm, true)
	if _, err := e.keys.Revoke(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	// No production path changes a key's sources (a key is revoked and made again): this
	// is the state of a key whose sources an operator changed in the database.
	if _, err := e.pool.Exec(ctx, `UPDATE api_keys SET sources = '{crm}' WHERE id = $1`, finKey.ID); err != nil {
		t.Fatal(err)
	}
	sweep(t, e.obs)
	if got, want := e.observedOf(t, stock), []string{"stock price of fin and crm", "stock price for every source"}; !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))) {
		t.Fatalf("observed queries of %s: %q, want %q", stock, got, want)
	}
	if got := e.observedOf(t, crm); !slices.Equal(got, []string{"customer record of fin and crm"}) {
		t.Fatalf("observed queries of %s: %q", crm, got)
	}
	// The same key, now limited to fin, no longer feeds crm's tool.
	if _, err := e.pool.Exec(ctx, `UPDATE api_keys SET sources = '{fin}' WHERE name = 'both'`); err != nil {
		t.Fatal(err)
	}
	e.labelled(t, all, "customer record for everyone", crm, true)
	sweep(t, e.obs)
	if got := e.observedOf(t, crm); !slices.Equal(got, []string{"customer record for everyone"}) {
		t.Fatalf("observed queries of %s after its key lost crm: %q", crm, got)
	}
}

// TestForgetRestoresVectors: removing a source's observed queries gives its tools back
// exactly the vectors they had before any, takes the words out of the lexical index, and
// forgets the searches made until then; later searches feed the tools again.
func TestForgetRestoresVectors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := setup(t, 10)
	me := search.Internal()
	// a building set is written too
	testfactory.Weights(ctx, t, e.pool, "var-2", map[string]float64{"name": 0.2, "description": 0.3, "question": 0.5, "observed": 0.5})
	building := testfactory.BeginReweight(ctx, t, e.pool, "var-2")
	current := testfactory.CurrentSet(ctx, t, e.pool, "var-2")
	before := vectors(t, e.pool)

	e.labelled(t, me, "stock price on the bourse", stock, true)
	e.labelled(t, me, "customer record in the rolodex", crm, true)
	sweep(t, e.obs)
	during := vectors(t, e.pool)
	changed := 0
	for k, v := range during {
		if before[k] != v {
			changed++
		}
	}
	// two tools in each of the 4 tdwa sets (default, var-1, var-2's current and building):
	// concat and mean take no weights but mean averages every kind the tool has
	if changed < 8 {
		t.Fatalf("%d vectors changed by the observed queries, want at least 8", changed)
	}

	rep, err := e.obs.Forget(ctx, "fin")
	if err != nil {
		t.Fatal(err)
	}
	if rep != (observed.ForgetReport{Source: "fin", Tools: 1, Removed: 1}) {
		t.Fatalf("forget: %+v", rep)
	}
	after := vectors(t, e.pool)
	for k, v := range after {
		set, tool, _ := strings.Cut(k, "/")
		want, ok := before[k]
		switch {
		case tool == strconv.FormatInt(e.ids[crm], 10):
			want = during[k] // crm keeps its observed query
		case !ok && set == strconv.FormatInt(building.ID, 10):
			// The re-weight has not run: the building set holds only the vectors of the
			// tools written since it began, with the same weights as var-2's current set
			// once the observed queries are gone.
			want = before[strconv.FormatInt(current, 10)+"/"+tool]
		}
		if v != want {
			t.Fatalf("vector %s after forgetting fin: not the one before", k)
		}
	}
	for k := range before {
		if _, ok := after[k]; !ok {
			t.Fatalf("vector %s gone", k)
		}
	}
	if got := e.observedOf(t, stock); len(got) != 0 {
		t.Fatalf("observed queries after forget: %q", got)
	}
	if e.rank(t, "bourse", search.ModeLexical, stock) != 0 {
		t.Fatal("bourse still finds the tool lexically")
	}
	if e.rank(t, "rolodex", search.ModeLexical, crm) != 1 {
		t.Fatal("another source's observed queries were removed")
	}
	// The labels are still there: a sweep does not bring the forgotten searches back.
	sweep(t, e.obs)
	if got := e.observedOf(t, stock); len(got) != 0 {
		t.Fatalf("forgotten queries came back: %q", got)
	}
	e.labelled(t, me, "stock price at the exchange", stock, true)
	sweep(t, e.obs)
	if got := e.observedOf(t, stock); !slices.Equal(got, []string{"stock price at the exchange"}) {
		t.Fatalf("observed queries after a new search: %q", got)
	}

	if _, err := e.obs.Forget(ctx, "nope"); !errors.Is(err, derrors.NotFound) {
		t.Fatalf("forget an unknown source: %v", err)
	}
}

// TestSweepResumes: a sweep cut short (here by the embedding provider failing) records the
// tools it finished, and the next sweep goes on from there instead of starting over.
func TestSweepResumes(t *testing.T) {
	t.Parallel()
	e := setup(t, 3)
	observed.SetBatch(e.obs, 1)
	me := search.Internal()
	e.labelled(t, me, "stock price on the bourse", stock, true)
	e.labelled(t, me, "mail a colleague by email", email, true)
	e.labelled(t, me, "weather forecast for tomorrow's picnic", weather, true)

	e.emb.left.Store(1) // the first tool's embedding works, the second's fails
	e.emb.limited.Store(true)
	if _, err := e.obs.Sweep(context.Background()); !errors.Is(err, errProviderDown) {
		t.Fatalf("sweep with the provider down: %v", err)
	}
	done := 0
	for _, tool := range []string{stock, email, weather} {
		done += len(e.observedOf(t, tool))
	}
	if done != 1 {
		t.Fatalf("%d tools refreshed before the provider failed, want 1", done)
	}
	e.emb.limited.Store(false)
	if st := sweep(t, e.obs); st.Tools != 2 || st.Changed != 2 {
		t.Fatalf("the resumed sweep %+v, want the 2 tools left", st)
	}
	for _, tool := range []string{stock, email, weather} {
		if len(e.observedOf(t, tool)) != 1 {
			t.Fatalf("%s has no observed query after the resumed sweep", tool)
		}
	}
}

// TestConcurrentSweeps: two sweeps at once (River runs one, but a second process may start
// one) both end without error, round after round, and leave each tool the observed queries
// of its labels, as one sweep does.
func TestConcurrentSweeps(t *testing.T) {
	t.Parallel()
	e := setup(t, 3)
	me := search.Internal()
	queries := map[string][]string{
		stock:   {"stock price on the bourse", "the stock price of a software maker"},
		email:   {"mail a colleague by email", "an email to my boss"},
		weather: {"weather forecast for tomorrow's picnic", "the weather on saturday"},
	}
	for round := range 2 {
		for tool, qs := range queries {
			e.labelled(t, me, qs[round], tool, true)
		}
		var wg sync.WaitGroup
		errs := make(chan error, 2)
		for range 2 {
			wg.Go(func() {
				if _, err := e.obs.Sweep(context.Background()); err != nil {
					errs <- err
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("round %d: %v", round, err)
		}
		for tool, qs := range queries {
			got := e.observedOf(t, tool)
			slices.Sort(got)
			want := slices.Clone(qs[:round+1])
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("round %d: %s has observed queries %q, want %q", round, tool, got, want)
			}
		}
	}
}
