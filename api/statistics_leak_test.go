package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/api"
	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/search"
	"github.com/toolgate/toolgate/internal/testfactory"
	"github.com/toolgate/toolgate/jobs"
)

// tenants is a server whose catalog has two sources, alpha and beta, an admin key and a
// search key restricted to alpha.
type tenants struct {
	h     http.Handler
	admin string
	alpha string
}

func newTenants(t *testing.T, alpha, beta []catalog.Tool) tenants {
	t.Helper()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	log := slog.New(slog.DiscardHandler)
	testfactory.Catalog(ctx, t, pool, "alpha", alpha, nil)
	testfactory.Catalog(ctx, t, pool, "beta", beta, nil)
	rc, err := jobs.NewClient(jobs.Deps{Pool: pool, Logger: log}, jobs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	keys := auth.NewKeys(pool, time.Now)
	_, admin, err := keys.Create(ctx, auth.Spec{Name: "ops", Scope: auth.ScopeAdmin})
	if err != nil {
		t.Fatal(err)
	}
	_, restricted, err := keys.Create(ctx, auth.Spec{Name: "tenant-alpha", Scope: auth.ScopeSearch, Sources: []string{"alpha"}})
	if err != nil {
		t.Fatal(err)
	}
	svc := search.New(pool, nil, search.DefaultSettings(), log)
	return tenants{h: api.New(api.Deps{Pool: pool, River: rc, Logger: log, Keys: keys, Search: svc}), admin: admin, alpha: restricted}
}

// putBeta replaces beta's catalog as an admin does (PUT /v1/sources/beta/tools, indexed
// when the call returns).
func (x tenants) putBeta(t *testing.T, tools []catalog.Tool) {
	t.Helper()
	var body strings.Builder
	for _, tl := range tools {
		line, err := json.Marshal(tl)
		if err != nil {
			t.Fatal(err)
		}
		body.Write(line)
		body.WriteByte('\n')
	}
	if r := do(t, x.h, http.MethodPut, "/v1/sources/beta/tools", x.admin, body.String()); r.status != http.StatusOK {
		t.Fatalf("PUT beta's catalog: %d %v", r.status, r.body)
	}
}

// lexical runs a lexical search with explanations as key and returns what the answer says of
// each result: its name, score, BM25 and the idf of each matched term, as one string per
// result (the numbers in full).
func (x tenants) lexical(t *testing.T, key, query string) []string {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "k": 50, "mode": "lexical", "plan": "none", "explain": true})
	r := do(t, x.h, http.MethodPost, "/search", key, string(body))
	if r.status != http.StatusOK {
		t.Fatalf("search %q: %d %v", query, r.status, r.body)
	}
	var out []string
	for _, res := range r.body["results"].([]any) {
		m := res.(map[string]any)
		s := fmt.Sprintf("%s score=%v bm25=%v", m["name"], m["score"], m["bm25"])
		if lex, _ := m["explanation"].(map[string]any)["lexical"].(map[string]any); lex != nil {
			for _, term := range lex["terms"].([]any) {
				tm := term.(map[string]any)
				s += fmt.Sprintf(" %s:idf=%v", tm["term"], tm["idf"])
			}
		}
		out = append(out, s)
	}
	return out
}

// termIDF is the idf the explanation of the first result gives term.
func termIDF(t *testing.T, results []string, term string) float64 {
	t.Helper()
	if len(results) == 0 {
		t.Fatalf("no result to read the idf of %q from", term)
	}
	for _, f := range strings.Fields(results[0]) {
		if v, ok := strings.CutPrefix(f, term+":idf="); ok {
			var idf float64
			if _, err := fmt.Sscan(v, &idf); err != nil {
				t.Fatal(err)
			}
			return idf
		}
	}
	t.Fatalf("%q not among the matched terms of %s", term, results[0])
	return 0
}

func sameResults(t *testing.T, what string, before, after []string) {
	t.Helper()
	if strings.Join(before, "\n") != strings.Join(after, "\n") {
		t.Errorf("%s: the restricted key's answer changed:\nbefore\n%s\nafter\n%s", what, strings.Join(before, "\n"), strings.Join(after, "\n"))
	}
}

func numbered(n int, name, desc string) []catalog.Tool {
	out := make([]catalog.Tool, n)
	for i := range out {
		out[i] = testfactory.Tool(fmt.Sprintf(name, i), fmt.Sprintf(desc, i))
	}
	return out
}

// TestRestrictedKeyStatisticsLeakNothing: a key restricted to alpha scores with alpha's
// statistics alone. Its BM25 scores, fused scores and explained idf are the same, to the
// last digit, before and after an admin adds 100 payroll tools to beta; its idf of
// "payroll" is alpha's (N = 70, df = 42: 0.513), while the admin's moves.
func TestRestrictedKeyStatisticsLeakNothing(t *testing.T) {
	t.Parallel()
	alpha := append(numbered(42, "payroll_report_%d", "Run the payroll report of department %d."),
		numbered(28, "book_room_%d", "Book meeting room %d for a team.")...)
	beta := numbered(5, "forecast_%d", "Weather forecast for region %d.")
	x := newTenants(t, alpha, beta)

	before := x.lexical(t, x.alpha, "payroll report of a department")
	adminBefore := x.lexical(t, x.admin, "payroll report of a department")
	for _, r := range before {
		if !strings.HasPrefix(r, "alpha__payroll_report_") {
			t.Fatalf("restricted key: %s, want alpha's payroll tools only", r)
		}
	}
	if got, want := termIDF(t, before, "payrol"), math.Log(1+(70-42+0.5)/(42+0.5)); math.Abs(got-want) > 1e-9 {
		t.Errorf("restricted key's idf of payroll %v, want alpha's %v (N 70, df 42)", got, want)
	}

	x.putBeta(t, append(beta, numbered(100, "payroll_export_%d", "Export the payroll of company %d.")...))

	after := x.lexical(t, x.alpha, "payroll report of a department")
	sameResults(t, "100 payroll tools added to beta", before, after)
	// the admin sees every source: its statistics did move
	if a, b := termIDF(t, adminBefore, "payrol"), termIDF(t, x.lexical(t, x.admin, "payroll report of a department"), "payrol"); a == b {
		t.Errorf("the admin's idf of payroll did not move (%v): the test's change did not reach the statistics", a)
	}
}

// TestRestrictedKeyWordOracleLeaksNothing: a word of another tenant's tools does not change
// what a restricted key's query finds. The query is ten made-up words of alpha's own tools
// (each in 30 tools: with the default budget of 10 terms × 30 postings, exactly what the
// lexical branch fetches) and a probe word. Were the probe's document frequency counted
// over every source, a probe that beta's tools hold would be the rarest term, push alpha's
// tenth word past the budget and make the tools only that word matches vanish: whether
// they vanish would say whether another tenant's tools hold the probe.
func TestRestrictedKeyWordOracleLeaksNothing(t *testing.T) {
	t.Parallel()
	words := "blorf clorf dlorf florf glorf hlorf jlorf klorf mlorf"
	alpha := append(numbered(30, "common_%d", "Common "+words+" tool %d."),
		numbered(30, "zlorf_%d", "The zlorf tool %d.")...)
	beta := numbered(5, "forecast_%d", "Weather forecast for region %d.")
	x := newTenants(t, alpha, beta)
	query := words + " zlorf payroll"

	without := x.lexical(t, x.alpha, query)
	found := 0
	for _, r := range without {
		if strings.HasPrefix(r, "alpha__zlorf_") {
			found++
		}
	}
	if found == 0 {
		t.Fatalf("the query finds none of alpha's zlorf tools: %v", without)
	}

	// the probe word, in beta's tools only
	x.putBeta(t, append(beta, numbered(3, "payroll_%d", "Payroll export %d.")...))
	sameResults(t, "the probe word in beta's tools", without, x.lexical(t, x.alpha, query))
}

// explainedTerms are the lexemes the explanation of key's lexical search for query lists
// for its text.
func (x tenants) explainedTerms(t *testing.T, key, query string) []string {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "mode": "lexical", "plan": "none", "explain": true})
	r := do(t, x.h, http.MethodPost, "/search", key, string(body))
	if r.status != http.StatusOK {
		t.Fatalf("search %q: %d %v", query, r.status, r.body)
	}
	texts := r.body["explain"].(map[string]any)["texts"].([]any)
	var terms []string
	for _, term := range texts[0].(map[string]any)["terms"].([]any) {
		terms = append(terms, term.(string))
	}
	slices.Sort(terms)
	return terms
}

// TestRestrictedKeyQueryLanguagesLeakNothing: a key restricted to alpha, whose tools are
// English, has its query analysed in English alone, however many languages other sources
// hold: the terms its explanation lists are the same before and after an admin adds German
// tools to beta, while the admin's gain the German stems. Before, every query was analysed
// in every language of the index, and the restricted key's terms showed beta's German.
func TestRestrictedKeyQueryLanguagesLeakNothing(t *testing.T) {
	t.Parallel()
	alpha := numbered(5, "weather_report_%d", "Get the weather report of city %d.")
	beta := numbered(5, "book_room_%d", "Book meeting room %d for a team.")
	x := newTenants(t, alpha, beta)
	const query = "Wettervorhersagen Temperaturen weather"

	before := x.explainedTerms(t, x.alpha, query)
	adminBefore := x.explainedTerms(t, x.admin, query)
	x.putBeta(t, append(beta, testfactory.Tool("get_forecast", "Ruft die aktuellen Wettervorhersagen für eine Stadt ab und gibt die Temperaturen zurück.")))
	if after := x.explainedTerms(t, x.alpha, query); !slices.Equal(before, after) {
		t.Errorf("the restricted key's terms changed with beta's German tool: %v, then %v", before, after)
	}
	if after := x.explainedTerms(t, x.admin, query); !slices.Contains(after, "wettervorhersag") || slices.Equal(adminBefore, after) {
		t.Errorf("the admin's terms %v (before %v), want the German stem wettervorhersag among them", after, adminBefore)
	}
}
