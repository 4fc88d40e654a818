package search_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/dataset"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/plan"
	"github.com/toolgate/toolgate/internal/rerank"
	"github.com/toolgate/toolgate/internal/search"
	"github.com/toolgate/toolgate/internal/testfactory"
)

// datasetDB creates a database holding the ScaleMCP tools of the first n companies in the
// source "demo" (lexical index only: the searches here are lexical) and returns the
// heuristic planner with those companies' vocabulary.
func datasetDB(t *testing.T, n int) (*pgxpool.Pool, []dataset.Company, *plan.Heuristic) {
	t.Helper()
	pool := pgtest.NewPool(t)
	cs, err := dataset.Companies(n)
	if err != nil {
		t.Fatal(err)
	}
	testfactory.Catalog(context.Background(), t, pool, "demo", dataset.Tools(cs), nil)
	return pool, cs, plan.NewHeuristic(dataset.Aliases(cs))
}

func planService(pool *pgxpool.Pool, p plan.Planner, r rerank.Reranker, timeout time.Duration) *search.Service {
	st := search.DefaultSettings()
	st.Planner, st.Reranker, st.RerankTopN, st.RerankTimeout = p, r, 10, timeout
	return search.New(pool, nil, st, discard())
}

// revenueTool is the demo tool that answers the revenue of company c.
func revenueTool(t *testing.T, c dataset.Company) string {
	t.Helper()
	for _, tl := range dataset.Tools([]dataset.Company{c}) {
		if strings.Contains(tl.Name, "revenue") {
			return "demo__" + tl.Name
		}
	}
	t.Fatalf("no revenue tool for %s", c.Name)
	return ""
}

type logRow struct {
	Plan, Rerank, Results json.RawMessage
	Variants              []string
	Count                 int
}

func readLog(t *testing.T, pool *pgxpool.Pool, id int64) logRow {
	t.Helper()
	var l logRow
	if err := pool.QueryRow(context.Background(),
		`SELECT plan, rerank, results, variants, result_count FROM search_log WHERE id = $1`, id).
		Scan(&l.Plan, &l.Rerank, &l.Results, &l.Variants, &l.Count); err != nil {
		t.Fatal(err)
	}
	return l
}

func TestPlanFullFindsEveryCompany(t *testing.T) {
	t.Parallel()
	pool, cs, h := datasetDB(t, 20)
	ctx := context.Background()
	svc := planService(pool, h, nil, time.Second)
	picked := []dataset.Company{cs[2], cs[7], cs[13]}
	query := "What was the revenue of " + picked[0].Name + ", " + picked[1].Name + " and " + picked[2].Name + "?"
	want := make([]string, len(picked))
	for i, c := range picked {
		want[i] = revenueTool(t, c)
	}
	missing := func(r search.Response) []string {
		var out []string
		for _, w := range want {
			if !contains(names(r), w) {
				out = append(out, w)
			}
		}
		return out
	}

	none := mustSearch(t, ctx, svc, search.Request{Query: query, K: 3, Mode: search.ModeLexical})
	if len(missing(none)) == 0 {
		t.Fatalf("plan none found every company's tool in %v: the test query is too easy", names(none))
	}
	full := mustSearch(t, ctx, svc, search.Request{Query: query, K: 3, Mode: search.ModeLexical, Plan: plan.ModeFull})
	if m := missing(full); len(m) > 0 {
		t.Fatalf("plan full missed %v in %v (plan %+v)", m, names(full), full.Plan)
	}
	if full.Plan == nil || len(full.Plan.Intents) != 3 || full.Plan.Planner != plan.NameHeuristic {
		t.Fatalf("plan %+v", full.Plan)
	}
	intents := map[int]bool{}
	for _, r := range full.Results {
		if r.Intent == nil {
			t.Fatalf("result %s without intent", r.Name)
		}
		intents[*r.Intent] = true
	}
	if len(intents) != 3 {
		t.Errorf("intents placing the results: %v", intents)
	}
	if full.Rerank != nil {
		t.Errorf("rerank decision %+v without a reranker", full.Rerank)
	}

	l := readLog(t, pool, full.SearchID)
	var p plan.Plan
	if err := json.Unmarshal(l.Plan, &p); err != nil {
		t.Fatalf("plan %s: %v", l.Plan, err)
	}
	if p.Mode != plan.ModeFull || len(p.Intents) != 3 || p.Original != query {
		t.Errorf("logged plan %s", l.Plan)
	}
	var logged []struct {
		Name   string `json:"name"`
		Intent int    `json:"intent"`
	}
	if err := json.Unmarshal(l.Results, &logged); err != nil {
		t.Fatal(err)
	}
	var loggedNames []string
	for _, r := range logged {
		loggedNames = append(loggedNames, r.Name)
	}
	if !slices.Equal(loggedNames, names(full)) || l.Count != 3 {
		t.Errorf("logged results %s (count %d), response %v", l.Results, l.Count, names(full))
	}
	if !contains(l.Variants, "What was the revenue of "+picked[1].Name+"?") || len(l.Variants) != 3 {
		t.Errorf("logged variants %v", l.Variants)
	}

	// plan none logs no plan and no rerank decision
	l = readLog(t, pool, none.SearchID)
	if l.Plan != nil || l.Rerank != nil {
		t.Errorf("plan none logged plan %s rerank %s", l.Plan, l.Rerank)
	}
}

func TestPlanValidation(t *testing.T) {
	t.Parallel()
	pool, _, h := datasetDB(t, 2)
	svc := planService(pool, h, nil, time.Second)
	for _, r := range []search.Request{
		{Query: "revenue", Plan: "everything"},
		{Query: "revenue", Plan: plan.ModeFull, Queries: []string{"sales"}},
		{Query: "revenue", Rerank: new(true)}, // no reranker configured
	} {
		_, err := svc.Search(context.Background(), callerOf(context.Background()), r)
		var ie *search.InvalidRequestError
		if !errors.As(err, &ie) {
			t.Errorf("%+v: err %v, want InvalidRequestError", r, err)
		}
	}
}

// cohere is an httptest rerank API in Cohere's wire format that scores documents by the
// position of their text in order (the first listed text scores highest) or hangs.
type cohere struct {
	order []string // tool names, best first; others are left out of the answer
	hang  bool
	got   chan map[string]any
}

func (c *cohere) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Model     string   `json:"model"`
		Query     string   `json:"query"`
		Documents []string `json:"documents"`
		TopN      int      `json:"top_n"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || r.URL.Path != "/v2/rerank" {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	select {
	case c.got <- map[string]any{"query": body.Query, "docs": body.Documents, "top_n": body.TopN, "model": body.Model}:
	default:
	}
	if c.hang {
		<-r.Context().Done()
		return
	}
	type result struct {
		Index int     `json:"index"`
		Score float64 `json:"relevance_score"`
	}
	var res []result
	for rank, name := range c.order {
		for i, d := range body.Documents {
			if strings.HasPrefix(d, name+":") {
				res = append(res, result{Index: i, Score: 1 - float64(rank)/10})
			}
		}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"id": "r1", "results": res, "meta": map[string]any{"billed_units": map[string]int{"search_units": 1}}})
}

func newCohere(t *testing.T, c *cohere) rerank.Reranker {
	t.Helper()
	c.got = make(chan map[string]any, 1)
	srv := httptest.NewServer(c)
	t.Cleanup(srv.Close)
	r, err := rerank.NewHTTP(srv.URL+"/v2/rerank", "rk", "rerank-v3.5", rerank.StyleCohere, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestRerankReorders(t *testing.T) {
	t.Parallel()
	pool, cs, h := datasetDB(t, 5)
	ctx := context.Background()
	query := "revenue of " + cs[1].Name
	plain := mustSearch(t, ctx, planService(pool, h, nil, time.Second), search.Request{Query: query, K: 3, Mode: search.ModeLexical})
	if len(plain.Results) != 3 {
		t.Fatalf("fused results %v", names(plain))
	}
	// the reranker puts the fused third first and the fused first second
	api := &cohere{order: []string{plain.Results[2].Name, plain.Results[0].Name}}
	svc := planService(pool, h, newCohere(t, api), time.Second)
	got := mustSearch(t, ctx, svc, search.Request{Query: query, K: 3, Mode: search.ModeLexical})
	want := []string{plain.Results[2].Name, plain.Results[0].Name, plain.Results[1].Name}
	if !slices.Equal(names(got), want) {
		t.Fatalf("reranked %v, want %v (fused %v)", names(got), want, names(plain))
	}
	sent := <-api.got
	if sent["query"] != query || sent["top_n"] != 3 || sent["model"] != "rerank-v3.5" || len(sent["docs"].([]string)) < 3 {
		t.Errorf("rerank request %v", sent)
	}
	if got.Rerank == nil || !got.Rerank.Applied || got.Results[0].RerankScore == nil || got.Results[2].RerankScore != nil {
		t.Errorf("decision %+v, results %+v", got.Rerank, got.Results)
	}
	var d rerank.Decision
	if err := json.Unmarshal(readLog(t, pool, got.SearchID).Rerank, &d); err != nil {
		t.Fatal(err)
	}
	if d.Reranker != rerank.KindHTTP || !d.Applied || len(d.Scores) != 2 || d.Scores[0].ID != want[0] || d.Scores[0].FusedPos != 2 {
		t.Errorf("logged decision %+v", d)
	}

	// rerank: false keeps the fused order
	off := mustSearch(t, ctx, svc, search.Request{Query: query, K: 3, Mode: search.ModeLexical, Rerank: new(false)})
	if !slices.Equal(names(off), names(plain)) || off.Rerank != nil {
		t.Errorf("rerank false: %v %+v, want %v", names(off), off.Rerank, names(plain))
	}
}

func TestRerankTimeoutKeepsFusedOrder(t *testing.T) {
	t.Parallel()
	pool, cs, h := datasetDB(t, 5)
	ctx := context.Background()
	query := "revenue of " + cs[3].Name
	plain := mustSearch(t, ctx, planService(pool, h, nil, time.Second), search.Request{Query: query, K: 4, Mode: search.ModeLexical})
	svc := planService(pool, h, newCohere(t, &cohere{hang: true}), 200*time.Millisecond)
	got := mustSearch(t, ctx, svc, search.Request{Query: query, K: 4, Mode: search.ModeLexical})
	if !slices.Equal(names(got), names(plain)) {
		t.Fatalf("after a rerank timeout %v, want the fused %v", names(got), names(plain))
	}
	var d rerank.Decision
	if err := json.Unmarshal(readLog(t, pool, got.SearchID).Rerank, &d); err != nil {
		t.Fatal(err)
	}
	if d.Applied || d.Fallback != "timeout after 200ms" || got.Rerank == nil || got.Rerank.Fallback != d.Fallback {
		t.Errorf("logged decision %+v, response %+v", d, got.Rerank)
	}
}

// TestKeyDefaultPlan: a caller whose key has a default plan gets it when the request asks
// for none; an explicit plan (none included) or explicit variants win.
func TestKeyDefaultPlan(t *testing.T) {
	t.Parallel()
	pool, cs, h := datasetDB(t, 5)
	svc := planService(pool, h, nil, time.Second)
	ctx := auth.WithCaller(context.Background(), &auth.Caller{Name: "planner-key", Scope: auth.ScopeSearch, Plan: plan.ModeFull})
	query := "revenue of " + cs[0].Name + " and " + cs[3].Name

	got := mustSearch(t, ctx, svc, search.Request{Query: query, K: 4, Mode: search.ModeLexical})
	if got.Plan == nil || got.Plan.Mode != plan.ModeFull || len(got.Plan.Intents) != 2 {
		t.Errorf("key default full: plan %+v", got.Plan)
	}
	if got := mustSearch(t, ctx, svc, search.Request{Query: query, K: 4, Mode: search.ModeLexical, Plan: plan.ModeNone}); got.Plan != nil {
		t.Errorf("explicit plan none: plan %+v", got.Plan)
	}
	if got := mustSearch(t, ctx, svc, search.Request{Query: query, K: 4, Mode: search.ModeLexical, Queries: []string{"sales"}}); got.Plan != nil {
		t.Errorf("explicit variants: plan %+v", got.Plan)
	}
	if got := mustSearch(t, context.Background(), svc, search.Request{Query: query, K: 4, Mode: search.ModeLexical}); got.Plan != nil {
		t.Errorf("no key: plan %+v", got.Plan)
	}
}

// TestServerDefaultPlan: a request that asks for no plan (and whose key has none) is split
// into tasks by the heuristic planner; each task also carries the whole request, which is
// searched once for all of them; a one-task request stays a plain search; an explicit
// "none", or the setting at none, turns it off.
func TestServerDefaultPlan(t *testing.T) {
	t.Parallel()
	pool, cs, _ := datasetDB(t, 5)
	ctx := context.Background()
	svc := planService(pool, nil, nil, time.Second)
	twoTasks := "Get the total revenue of " + cs[0].Name + ". After that, show me the stock price history of " + cs[3].Name + "."

	got := mustSearch(t, ctx, svc, search.Request{Query: twoTasks, K: 4, Mode: search.ModeLexical})
	if got.Plan == nil || got.Plan.Mode != plan.ModeDecompose || got.Plan.Planner != plan.NameHeuristic || len(got.Plan.Intents) != 2 {
		t.Fatalf("default plan: %+v", got.Plan)
	}
	for i, in := range got.Plan.Intents {
		if len(in.Variants) != 1 || in.Variants[0] != twoTasks {
			t.Errorf("task %d %q: variants %q, want the whole request", i, in.Query, in.Variants)
		}
	}
	if !contains(names(got), revenueTool(t, cs[0])) || !slices.ContainsFunc(names(got), func(n string) bool {
		return strings.Contains(n, "history") && strings.Contains(n, strings.ToLower(strings.Fields(cs[3].Name)[0]))
	}) {
		t.Errorf("default plan results %v: want %s's revenue and %s's price history", names(got), cs[0].Name, cs[3].Name)
	}
	if l := readLog(t, pool, got.SearchID); len(l.Variants) != 3 {
		t.Errorf("logged texts %q: want the two tasks and the request, searched once", l.Variants)
	}

	oneTask := "total revenue of " + cs[0].Name
	one := mustSearch(t, ctx, svc, search.Request{Query: oneTask, K: 4, Mode: search.ModeLexical})
	plain := mustSearch(t, ctx, svc, search.Request{Query: oneTask, K: 4, Mode: search.ModeLexical, Plan: plan.ModeNone})
	if one.Plan != nil || !slices.Equal(names(one), names(plain)) {
		t.Errorf("one task: plan %+v, results %v, want none and %v", one.Plan, names(one), names(plain))
	}
	if l := readLog(t, pool, one.SearchID); string(l.Plan) != "" && string(l.Plan) != "null" {
		t.Errorf("one task logged a plan: %s", l.Plan)
	}
	if got := mustSearch(t, ctx, svc, search.Request{Query: twoTasks, K: 4, Mode: search.ModeLexical, Plan: plan.ModeNone}); got.Plan != nil {
		t.Errorf("explicit none: plan %+v", got.Plan)
	}
	st := search.DefaultSettings()
	st.DefaultPlan = plan.ModeNone
	if got := mustSearch(t, ctx, search.New(pool, nil, st, discard()), search.Request{Query: twoTasks, K: 4, Mode: search.ModeLexical}); got.Plan != nil {
		t.Errorf("default plan none: plan %+v", got.Plan)
	}
}
