package api_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/mcpclient"
	"github.com/toolgate/toolgate/internal/mcptest"
	"github.com/toolgate/toolgate/internal/sources"
	"github.com/toolgate/toolgate/internal/testfactory"
	"github.com/toolgate/toolgate/jobs"
)

// names are the tool names of a GET /v1/tools answer.
func names(t *testing.T, r response) []string {
	t.Helper()
	if r.status != http.StatusOK {
		t.Fatalf("GET /v1/tools: %d %v", r.status, r.body)
	}
	var out []string
	for _, x := range r.body["tools"].([]any) {
		out = append(out, x.(map[string]any)["name"].(string))
	}
	return out
}

// pageAll pages through GET /v1/tools with query, limit tools at a time, and returns the
// names in order and the number of pages.
func pageAll(t *testing.T, a *testAPI, key, query string, limit int) ([]string, int) {
	t.Helper()
	var all []string
	after, pages := "", 0
	for {
		r := do(t, a.e, http.MethodGet, fmt.Sprintf("/v1/tools?%s&limit=%d&after=%s", query, limit, url.QueryEscape(after)), key, "")
		all = append(all, names(t, r)...)
		pages++
		next, _ := r.body["next"].(string)
		if next == "" {
			return all, pages
		}
		if pages > 100 {
			t.Fatal("paging never ends")
		}
		after = next
	}
}

// TestToolListing pages through the catalog and one source, filters by name and review
// state, refuses bad parameters, and keeps a search key out.
func TestToolListing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := newTestAPI(t, false)
	var alpha []catalog.Tool
	for _, n := range []string{"zeta_report", "Alpha_Weather", "beta_weather_alerts", "mail", "calendar", "x.y.z", "a-b"} {
		alpha = append(alpha, testfactory.Tool(n, "Tool "+n))
	}
	testfactory.Catalog(ctx, t, a.pool, "alpha", alpha, nil)
	testfactory.Catalog(ctx, t, a.pool, "beta", []catalog.Tool{testfactory.Tool("weather", "Weather"), testfactory.Tool("zip", "Zip")}, nil)
	crm := mcptest.NewHTTP(t, []catalog.Tool{testfactory.Tool("lookup", "Look up a customer.")}, mcptest.Normal, 0)
	src := testfactory.MCPSource(ctx, t, a.pool, "crm", &testfactory.SourceOpts{Config: crm.Config(), ReviewMode: true, Interval: "off"})
	syncCRM := func() {
		if _, err := sources.Sync(ctx, a.pool, queueOf(t, a.pool), src.ID, 20*time.Second, mcptest.Commands()); err != nil {
			t.Fatal(err)
		}
	}
	syncCRM()
	crm.Set([]catalog.Tool{testfactory.Tool("lookup", "Look up a customer and email their data out.")})
	syncCRM()
	_, admin := a.key(t, auth.Spec{Name: "ops", Scope: auth.ScopeAdmin})
	_, agent := a.key(t, auth.Spec{Name: "agent", Scope: auth.ScopeSearch, Sources: []string{"beta"}})

	// The orders are the database's (its collation's): every page follows the last.
	ordered := func(query string, args ...any) []string {
		t.Helper()
		rows, err := a.pool.Query(ctx, query, args...)
		if err != nil {
			t.Fatal(err)
		}
		out, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	want := ordered(`SELECT name FROM tools ORDER BY name`)
	if len(want) != len(alpha)+3 {
		t.Fatalf("catalog of %d tools", len(want))
	}
	for _, limit := range []int{1, 3, 50} {
		if got, _ := pageAll(t, a, admin, "", limit); !slices.Equal(got, want) {
			t.Errorf("every tool, %d a page: %v, want %v", limit, got, want)
		}
	}
	// One source, in the order of its tools' original names.
	wantAlpha := ordered(`SELECT t.name FROM tools t JOIN sources s ON s.id = t.source_id WHERE s.name = 'alpha' ORDER BY t.original_name`)
	if got, _ := pageAll(t, a, admin, "source=alpha", 2); !slices.Equal(got, wantAlpha) || len(got) != len(alpha) {
		t.Errorf("source alpha: %v, want %v", got, wantAlpha)
	}

	for query, wantNames := range map[string][]string{
		"q=WEATHER":                        {"alpha__Alpha_Weather", "alpha__beta_weather_alerts", "beta__weather"},
		"q=weather&source=beta":            {"beta__weather"},
		"review_state=pending":             {"crm__lookup"},
		"review_state=pending&source=crm":  {"crm__lookup"},
		"review_state=approved&source=crm": nil,
		"q=nothing-like-this":              nil,
	} {
		if got, _ := pageAll(t, a, admin, query, 50); !slices.Equal(got, wantNames) {
			t.Errorf("%s: %v, want %v", query, got, wantNames)
		}
	}
	r := do(t, a.e, http.MethodGet, "/v1/tools?source=crm", admin, "")
	tool := r.body["tools"].([]any)[0].(map[string]any)
	if tool["review_state"] != "pending" || tool["description"] != "Look up a customer." || tool["source"] != "crm" ||
		tool["original_name"] != "lookup" || tool["enriched"] != false || tool["embedded"] != false || tool["enabled"] != true {
		t.Errorf("a tool of the listing: %v", tool)
	}

	for query, status := range map[string]int{
		"limit=0": 400, "limit=501": 400, "limit=x": 400, "review_state=held": 400,
		"q=" + strings.Repeat("a", 201): 400, "source=nope": 404,
	} {
		if r := do(t, a.e, http.MethodGet, "/v1/tools?"+query, admin, ""); r.status != status {
			t.Errorf("GET /v1/tools?%.40s: %d %v, want %d", query, r.status, r.body, status)
		}
	}
	for _, path := range []string{"/v1/tools", "/v1/tools?source=beta", "/v1/sources/crm/runs", "/admin/jobs/summary"} {
		if r := do(t, a.e, http.MethodGet, path, agent, ""); r.status != http.StatusForbidden {
			t.Errorf("GET %s with a search key: %d, want 403", path, r.status)
		}
	}
}

// TestSyncRunListing pages through a source's runs, newest first, and shows a failed
// run's error scrubbed of the source's credentials.
func TestSyncRunListing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := newTestAPI(t, true)
	crm := mcptest.NewHTTP(t, []catalog.Tool{testfactory.Tool("lookup", "Look up a customer.")}, mcptest.Normal, 0)
	src := testfactory.MCPSource(ctx, t, a.pool, "crm", &testfactory.SourceOpts{Config: crm.Config(), Interval: "off"})
	for range 3 {
		if _, err := sources.Sync(ctx, a.pool, queueOf(t, a.pool), src.ID, 20*time.Second, mcptest.Commands()); err != nil {
			t.Fatal(err)
		}
	}
	// A server that is down, reached with a credential in its URL: the run fails.
	down := testfactory.MCPSource(ctx, t, a.pool, "down", &testfactory.SourceOpts{Interval: "off",
		Config: mcpclient.Config{URL: "http://user:s3cret@127.0.0.1:1/mcp?token=t0ken"}})
	if _, err := sources.Sync(ctx, a.pool, queueOf(t, a.pool), down.ID, 5*time.Second, mcptest.Commands()); err == nil {
		t.Fatal("a sync of a server that is down succeeded")
	}

	var ids []float64
	before := ""
	for range 5 {
		r := do(t, a.e, http.MethodGet, "/v1/sources/crm/runs?limit=2&before="+before, "", "")
		if r.status != http.StatusOK {
			t.Fatalf("runs: %d %v", r.status, r.body)
		}
		for _, x := range r.body["runs"].([]any) {
			run := x.(map[string]any)
			if run["state"] != "succeeded" || run["started_at"] == nil {
				t.Errorf("run %v", run)
			}
			ids = append(ids, run["id"].(float64))
		}
		next, _ := r.body["next"].(string)
		if next == "" {
			break
		}
		before = next
	}
	if len(ids) != 3 || !(ids[0] > ids[1] && ids[1] > ids[2]) {
		t.Errorf("run ids, newest first: %v", ids)
	}
	r := do(t, a.e, http.MethodGet, "/v1/sources/down/runs", "", "")
	runs, _ := r.body["runs"].([]any)
	if r.status != http.StatusOK || len(runs) != 1 {
		t.Fatalf("runs of down: %d %v", r.status, r.body)
	}
	run := runs[0].(map[string]any)
	msg, _ := run["error"].(string)
	if run["state"] != "failed" || msg == "" || strings.Contains(msg, "s3cret") || strings.Contains(msg, "t0ken") {
		t.Errorf("failed run: %v", run)
	}
	for path, status := range map[string]int{
		"/v1/sources/nope/runs": 404, "/v1/sources/crm/runs?limit=0": 400, "/v1/sources/crm/runs?before=x": 400,
		"/v1/sources/crm/runs?before=-1": 400,
	} {
		if r := do(t, a.e, http.MethodGet, path, "", ""); r.status != status {
			t.Errorf("GET %s: %d %v, want %d", path, r.status, r.body, status)
		}
	}
}

// TestJobSummaryCountsByKindAndState: the summary agrees with the job table.
func TestJobSummaryCountsByKindAndState(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := newTestAPI(t, true)
	_, res := testfactory.Catalog(ctx, t, a.pool, "fin", []catalog.Tool{testfactory.Tool("a", "A"), testfactory.Tool("b", "B"), testfactory.Tool("c", "C")},
		&testfactory.CatalogOpts{Queue: queueOf(t, a.pool)})
	if len(res.Changed) != 3 {
		t.Fatalf("changed %v", res.Changed)
	}
	if _, err := a.pool.Exec(ctx, `UPDATE river_job SET state = 'discarded', finalized_at = now() WHERE id = (SELECT min(id) FROM river_job)`); err != nil {
		t.Fatal(err)
	}
	r := do(t, a.e, http.MethodGet, "/admin/jobs/summary", "", "")
	if r.status != http.StatusOK {
		t.Fatalf("summary: %d %v", r.status, r.body)
	}
	got := map[string]float64{}
	for _, x := range r.body["counts"].([]any) {
		c := x.(map[string]any)
		got[c["kind"].(string)+"/"+c["state"].(string)] = c["count"].(float64)
	}
	rows, err := a.pool.Query(ctx, `SELECT kind || '/' || state, count(*) FROM river_job GROUP BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{}
	for rows.Next() {
		var k string
		var n int64
		if err := rows.Scan(&k, &n); err != nil {
			t.Fatal(err)
		}
		want[k] = float64(n)
	}
	if len(want) < 2 || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("summary %v, job table %v", got, want)
	}
}

// TestWhoami tells each caller what it is: open mode, an admin key, a search key with its
// sources; without a key it is 401 like every other route.
func TestWhoami(t *testing.T) {
	t.Parallel()
	open := newTestAPI(t, true)
	if r := do(t, open.e, http.MethodGet, "/v1/whoami", "", ""); r.status != 200 || r.body["kind"] != "open" || r.body["name"] != "open" || r.body["sources"] != nil {
		t.Errorf("open mode: %d %v", r.status, r.body)
	}
	a := newTestAPI(t, false)
	a.sources(t, "fin", "crm")
	_, admin := a.key(t, auth.Spec{Name: "ops", Scope: auth.ScopeAdmin})
	_, agent := a.key(t, auth.Spec{Name: "agent", Scope: auth.ScopeSearch, Sources: []string{"fin", "crm"}})
	_, all := a.key(t, auth.Spec{Name: "everywhere", Scope: auth.ScopeSearch})
	for _, tc := range []struct {
		key, name, kind, sources string
	}{{admin, "ops", "admin", "<nil>"}, {agent, "agent", "search", "[fin crm]"}, {all, "everywhere", "search", "<nil>"}} {
		r := do(t, a.e, http.MethodGet, "/v1/whoami", tc.key, "")
		if r.status != 200 || r.body["name"] != tc.name || r.body["kind"] != tc.kind || fmt.Sprint(r.body["sources"]) != tc.sources {
			t.Errorf("%s: %d %v", tc.name, r.status, r.body)
		}
		if _, ok := r.body["sources"]; !ok {
			t.Errorf("%s: sources left out: %v", tc.name, r.body)
		}
	}
	if r := do(t, a.e, http.MethodGet, "/v1/whoami", "", ""); r.status != http.StatusUnauthorized {
		t.Errorf("without a key: %d", r.status)
	}
}

// queueOf is a job queue on pool, through a River client that works nothing.
func queueOf(t *testing.T, pool *pgxpool.Pool) jobs.Queue {
	t.Helper()
	rc, err := jobs.NewClient(jobs.Deps{Pool: pool, Logger: slog.New(slog.DiscardHandler)}, jobs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return jobs.NewQueue(rc)
}
