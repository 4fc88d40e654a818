package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/api"
	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/gateway"
	"github.com/toolgate/toolgate/internal/lexical"
	"github.com/toolgate/toolgate/internal/mcptest"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/search"
	"github.com/toolgate/toolgate/jobs"
)

// analyticsURLs are the analytics endpoints, each with valid parameters.
var analyticsURLs = []string{
	"/admin/analytics/searches?days=1&bucket=hour",
	"/admin/analytics/latency?days=1&bucket=hour",
	"/admin/analytics/zero-results?days=1",
	"/admin/analytics/low-score?days=1",
	"/admin/analytics/profiles?days=1",
	"/admin/analytics/learning?days=1&tenant=acme",
	"/admin/analytics/tools?limit=10",
	"/admin/analytics/slowest?days=1",
	"/admin/analytics/top-queries?days=1",
	"/admin/searches?days=1&q=weather",
}

// analyticsEnv is an API server (keys required) with the MCP gateway over "market", a real
// MCP server of four tools, and the admin and search keys.
type analyticsEnv struct {
	pool          *pgxpool.Pool
	g             *gateway.Gateway
	srv           *httptest.Server
	admin, search string
}

func newAnalyticsEnv(t *testing.T) *analyticsEnv {
	t.Helper()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	schema := json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)
	tools := []catalog.Tool{
		{Name: "get_weather", Description: "Get the weather forecast for a city", InputSchema: schema},
		{Name: "get_air_quality", Description: "Get the air quality of a city from its weather station", InputSchema: schema},
		{Name: "send_email", Description: "Send an email message to a recipient", InputSchema: schema},
		{Name: "book_flight", Description: "Book a flight ticket between two airports", InputSchema: schema},
	}
	up := mcptest.NewHTTP(t, tools, mcptest.Normal, 0)
	cfg, err := json.Marshal(up.Config())
	if err != nil {
		t.Fatal(err)
	}
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		src, err := db.New(tx).CreateSource(ctx, db.CreateSourceParams{Name: "market", Kind: db.SourceMCPHTTP, Config: cfg})
		if err != nil {
			return err
		}
		_, err = catalog.Apply(ctx, tx, src, tools, catalog.ApplyOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lexical.Flush(ctx, pool); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	rc, err := jobs.NewClient(jobs.Deps{Pool: pool, Logger: log}, jobs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	svc := search.New(pool, nil, search.DefaultSettings(), log)
	g := gateway.New(pool, gateway.SearchFinder{Search: svc}, gateway.Options{CallTool: true})
	t.Cleanup(g.Close)
	keys := auth.NewKeys(pool, time.Now)
	srv := httptest.NewServer(api.New(api.Deps{Pool: pool, River: rc, Logger: log, Gateway: g, Keys: keys, Search: svc}))
	t.Cleanup(srv.Close)
	e := &analyticsEnv{pool: pool, g: g, srv: srv}
	for _, k := range []struct {
		name  string
		scope auth.Scope
		text  *string
	}{{"ops", auth.ScopeAdmin, &e.admin}, {"agent", auth.ScopeSearch, &e.search}} {
		if _, *k.text, err = keys.Create(ctx, auth.Spec{Name: k.name, Scope: k.scope}); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

// do sends a request with key and decodes the JSON answer into out (when not nil).
func (e *analyticsEnv) do(t *testing.T, method, path, key, body string, out any) int {
	t.Helper()
	req, err := http.NewRequest(method, e.srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: %d %s: %v", method, path, resp.StatusCode, raw, err)
		}
	}
	return resp.StatusCode
}

// get GETs path with the admin key, fails unless it answers 200, and returns the body.
func (e *analyticsEnv) get(t *testing.T, path string) map[string]any {
	t.Helper()
	var out map[string]any
	if code := e.do(t, http.MethodGet, path, e.admin, "", &out); code != http.StatusOK {
		t.Fatalf("GET %s: %d %v", path, code, out)
	}
	return out
}

// waitLabel waits for the gateway's label writes (done after a call, in the background)
// and returns the search the label of tool labels.
func (e *analyticsEnv) waitLabel(t *testing.T, tool string) int64 {
	t.Helper()
	e.g.WaitLabels()
	rows, err := e.pool.Query(context.Background(), `SELECT search_id FROM search_labels WHERE tool_name = $1`, tool)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != 1 {
		t.Fatalf("labels of %s: searches %v, want one", tool, ids)
	}
	return ids[0]
}

// keysOf returns the sorted keys of the JSON object o.
func keysOf(o any) []string {
	m, _ := o.(map[string]any)
	return slices.Sorted(maps.Keys(m))
}

func first(body map[string]any, list string) map[string]any {
	l, _ := body[list].([]any)
	if len(l) == 0 {
		return nil
	}
	m, _ := l[0].(map[string]any)
	return m
}

// TestAnalyticsSeeWhatAnMCPSessionChose: an MCP session finds a tool with find_tools and
// calls it; search_tool_popularity, search_used_rank and search_profile_quality show the
// call, and so do /admin/analytics/tools, /searches and /profiles. A POST /search is
// logged as rest, whatever its body says and even with the session's id, and a call never
// labels it; a query that found nothing shows with the filters that emptied it. Every
// answer has the shape of the contract.
func TestAnalyticsSeeWhatAnMCPSessionChose(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newAnalyticsEnv(t)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: e.srv.URL + "/mcp", MaxRetries: -1,
			HTTPClient: &http.Client{Transport: bearerTransport{key: e.search}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "find_tools", Arguments: map[string]any{"query": "weather forecast for a city", "limit": 2}})
	if err != nil || res.IsError {
		t.Fatalf("find_tools: %v %+v", err, res)
	}
	var found struct {
		SearchID int64 `json:"search_id"`
		Tools    []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &found); err != nil {
		t.Fatal(err)
	}
	const chosen, second = "market__get_weather", "market__get_air_quality"
	if len(found.Tools) != 2 || found.Tools[0].Name != chosen || found.Tools[1].Name != second {
		t.Fatalf("find_tools returned %+v, want %s then %s", found.Tools, chosen, second)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: chosen, Arguments: map[string]any{"city": "Paris"}})
	if err != nil || res.IsError {
		t.Fatalf("call %s: %v %+v", chosen, err, res)
	}
	if id := e.waitLabel(t, chosen); id != found.SearchID {
		t.Fatalf("the call labelled search %d, want the find_tools %d", id, found.SearchID)
	}

	// the views
	var returned, returnedFirst, called, succeeded int64
	var source string
	if err := e.pool.QueryRow(ctx, `SELECT returned, returned_first, called, succeeded, source FROM search_tool_popularity
		WHERE tool_name = $1`, chosen).Scan(&returned, &returnedFirst, &called, &succeeded, &source); err != nil {
		t.Fatal(err)
	}
	if returned != 1 || returnedFirst != 1 || called != 1 || succeeded != 1 || source != "market" {
		t.Errorf("search_tool_popularity: returned %d, first %d, called %d, succeeded %d, source %s; want 1 1 1 1 market",
			returned, returnedFirst, called, succeeded, source)
	}
	var searchID, rank int64
	var profile, mode, endpoint, labelSource string
	var ok bool
	if err := e.pool.QueryRow(ctx, `SELECT search_id, rank, profile, mode, endpoint, label_source, success FROM search_used_rank
		WHERE tool_name = $1`, chosen).Scan(&searchID, &rank, &profile, &mode, &endpoint, &labelSource, &ok); err != nil {
		t.Fatal(err)
	}
	if searchID != found.SearchID || rank != 1 || profile != "default" || mode != "hybrid" || endpoint != "find_tools" ||
		labelSource != "call" || !ok {
		t.Errorf("search_used_rank: search %d rank %d profile %s mode %s endpoint %s source %s success %v",
			searchID, rank, profile, mode, endpoint, labelSource, ok)
	}
	var used int64
	var mrr, hit1 float64
	if err := e.pool.QueryRow(ctx, `SELECT used, mrr, hit_at_1 FROM search_profile_quality WHERE profile = 'default' AND mode = 'hybrid'`).
		Scan(&used, &mrr, &hit1); err != nil {
		t.Fatal(err)
	}
	if used != 1 || mrr != 1 || hit1 != 1 {
		t.Errorf("search_profile_quality: used %d, mrr %v, hit@1 %v; want 1 1 1", used, mrr, hit1)
	}

	// the JSON answers
	tools := e.get(t, "/admin/analytics/tools?limit=10")
	if !slices.Equal(keysOf(tools), []string{"never_called", "never_returned", "popular"}) {
		t.Errorf("tools answer keys %v", keysOf(tools))
	}
	if p := first(tools, "popular"); p["name"] != chosen || p["called"] != 1.0 || p["succeeded"] != 1.0 || p["returned"] != 1.0 ||
		p["returned_first"] != 1.0 || !slices.Equal(keysOf(p), []string{"called", "name", "returned", "returned_first", "succeeded"}) {
		t.Errorf("popular: %v", tools["popular"])
	}
	if n := first(tools, "never_called"); n["name"] != second || n["source"] != "market" || n["returned"] != 1.0 ||
		!slices.Equal(keysOf(n), []string{"name", "returned", "source"}) {
		t.Errorf("never_called: %v", tools["never_called"])
	}
	never, _ := tools["never_returned"].([]any)
	var neverNames []string
	for _, x := range never {
		neverNames = append(neverNames, x.(map[string]any)["name"].(string))
		if !slices.Equal(keysOf(x), []string{"name", "source"}) {
			t.Errorf("never_returned entry %v", x)
		}
	}
	if !slices.Equal(neverNames, []string{"market__book_flight", "market__send_email"}) {
		t.Errorf("never_returned: %v", neverNames)
	}
	searches := e.get(t, "/admin/analytics/searches?days=1&bucket=hour")
	b := first(searches, "buckets")
	if n := len(searches["buckets"].([]any)); n != 1 || b["endpoint"] != "find_tools" || b["searches"] != 1.0 || b["labelled"] != 1.0 ||
		b["zero_result"] != 0.0 || !slices.Equal(keysOf(b), []string{"endpoint", "labelled", "low_confidence", "low_score", "searches", "start", "zero_result"}) {
		t.Errorf("searches: %v", searches)
	}
	if start, err := time.Parse(time.RFC3339, fmt.Sprint(b["start"])); err != nil || !start.Equal(start.Truncate(time.Hour)) {
		t.Errorf("bucket start %v: %v", b["start"], err)
	}
	latency := e.get(t, "/admin/analytics/latency?days=1&bucket=hour&endpoint=find_tools")
	var took float64
	if err := e.pool.QueryRow(context.Background(), `SELECT latency_ms FROM search_log`).Scan(&took); err != nil {
		t.Fatal(err)
	}
	if l := first(latency, "buckets"); l["searches"] != 1.0 ||
		!slices.Equal(keysOf(l), []string{"p50_ms", "p95_ms", "p99_ms", "searches", "start"}) {
		t.Errorf("latency: %v", latency)
	} else if p50, p99 := l["p50_ms"].(float64), l["p99_ms"].(float64); p50 < took/1.19 || p99 > took*1.19 || p50 > p99 {
		t.Errorf("latency percentiles of one search of %.2f ms: %v", took, l)
	}
	if rest := e.get(t, "/admin/analytics/latency?days=1&endpoint=rest"); len(rest["buckets"].([]any)) != 0 {
		t.Errorf("latency of rest searches, when there were none: %v", rest)
	}
	profiles := e.get(t, "/admin/analytics/profiles?days=1")
	d := first(profiles, "days")
	if d["profile"] != "default" || d["day"] != time.Now().UTC().Format(time.DateOnly) || d["searches"] != 1.0 || d["labelled"] != 1.0 ||
		d["label_rate"] != 1.0 || d["mrr"] != 1.0 ||
		!slices.Equal(keysOf(d), []string{"day", "label_rate", "labelled", "mrr", "profile", "searches"}) {
		t.Errorf("profiles: %v", profiles)
	}
	// the search counts for the tenant whose memories it read: the agent's key's own, named
	// by the key
	tenant := "key:agent"
	learning := e.get(t, "/admin/analytics/learning?days=1&tenant="+tenant)
	if d := first(learning, "days"); d["searches"] != 1.0 || d["labelled"] != 1.0 || learning["tenant"] != tenant ||
		!slices.Equal(learning["tenants"].([]any), []any{tenant}) {
		t.Errorf("learning of %s: %v", tenant, learning)
	}
	if d := first(e.get(t, "/admin/analytics/learning?days=1&tenant=(operator)"), "days"); d["searches"] != 0.0 || d["labelled"] != 0.0 {
		t.Errorf("learning of the operator, who searched nothing: %v", d)
	}

	// POST /search cannot say it is a find_tools...
	var refused map[string]any
	if code := e.do(t, http.MethodPost, "/search", e.search, `{"query":"weather","endpoint":"find_tools"}`, &refused); code != http.StatusBadRequest {
		t.Fatalf("a body naming the endpoint: %d %v, want 400", code, refused)
	}
	// ... and with the session's id it is a rest search, which a call never labels: the
	// session's call of the second tool labels its find_tools, the older search.
	var rest struct {
		SearchID int64 `json:"search_id"`
		Results  []struct {
			Name string `json:"name"`
		} `json:"results"`
	}
	if code := e.do(t, http.MethodPost, "/search", e.search, fmt.Sprintf(`{"query":"weather forecast for a city","k":2,"session_id":%q}`, cs.ID()), &rest); code != http.StatusOK ||
		len(rest.Results) != 2 || rest.Results[1].Name != second {
		t.Fatalf("POST /search with the session's id: %d %+v", code, rest)
	}
	if err := e.pool.QueryRow(ctx, `SELECT endpoint FROM search_log WHERE id = $1`, rest.SearchID).Scan(&endpoint); err != nil || endpoint != "rest" {
		t.Fatalf("POST /search logged as %q (%v), want rest", endpoint, err)
	}
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: second, Arguments: map[string]any{"city": "Paris"}}); err != nil || res.IsError {
		t.Fatalf("call %s: %v %+v", second, err, res)
	}
	if id := e.waitLabel(t, second); id != found.SearchID {
		t.Errorf("the call of %s labelled search %d, want the find_tools %d, not the POST /search %d", second, id, found.SearchID, rest.SearchID)
	}

	// A query that found nothing, with the filter that emptied it.
	if code := e.do(t, http.MethodPost, "/search", e.search, `{"query":"weather forecast","tags":["no-such-tag"]}`, &rest); code != http.StatusOK || len(rest.Results) != 0 {
		t.Fatalf("filtered search: %d %+v", code, rest)
	}
	zero := first(e.get(t, "/admin/analytics/zero-results?days=1"), "queries")
	if zero["query"] != "weather forecast" || zero["endpoint"] != "rest" || fmt.Sprint(zero["filters"]) != "map[tags:[no-such-tag]]" ||
		zero["searches"] != 1.0 || !slices.Equal(keysOf(zero), []string{"endpoint", "filters", "last_seen", "query", "searches"}) {
		t.Errorf("zero-results: %v", zero)
	}
	var filters string
	if err := e.pool.QueryRow(ctx, `SELECT filters::text FROM search_zero_result_queries WHERE query = 'weather forecast'`).Scan(&filters); err != nil ||
		filters != `{"tags": ["no-such-tag"]}` {
		t.Errorf("search_zero_result_queries filters %s %v", filters, err)
	}

	// A weak keyword match: every tool has the word "city" (df = N, idf about 0.1), and the
	// gateway's search has no embedder, so BM25 below 1 makes it a low-score search.
	if code := e.do(t, http.MethodPost, "/search", e.search, `{"query":"city"}`, &rest); code != http.StatusOK || len(rest.Results) == 0 {
		t.Fatalf("search city: %d %+v", code, rest)
	}
	// The other searches are listed too when their answer had no good match (without an
	// embedder, a keyword match on three tools is not a confident one).
	low := e.get(t, "/admin/analytics/low-score?days=1")
	var l map[string]any
	for _, x := range low["queries"].([]any) {
		q := x.(map[string]any)
		var unsure bool
		if err := e.pool.QueryRow(ctx, `SELECT bool_and(no_good_match) FROM search_log WHERE query = $1`, q["query"]).Scan(&unsure); err != nil {
			t.Fatal(err)
		}
		switch {
		case q["query"] == "city":
			l = q
		case !unsure:
			t.Errorf("low-score lists %v, whose searches had a good match", q)
		}
	}
	if l == nil || l["mode"] != "hybrid" ||
		l["endpoint"] != "rest" || fmt.Sprint(l["filters"]) != "map[]" || l["searches"] != 1.0 || l["top_score"].(float64) <= 0 ||
		!slices.Equal(keysOf(l), []string{"endpoint", "filters", "last_seen", "mode", "query", "searches", "top_score"}) {
		t.Errorf("low-score: %v", low)
	}

	// The other answers' shapes.
	top := first(e.get(t, "/admin/analytics/top-queries?days=1"), "queries")
	if top["query"] != "weather forecast for a city" || top["searches"] != 2.0 || top["zero_result"] != 0.0 ||
		!slices.Equal(keysOf(top), []string{"last_seen", "query", "searches", "zero_result"}) {
		t.Errorf("top-queries: %v", top)
	}
	slow := e.get(t, "/admin/analytics/slowest?days=1")
	s0 := first(slow, "searches")
	if n := len(slow["searches"].([]any)); n != 4 || s0["latency_ms"].(float64) <= 0 ||
		!slices.Equal(keysOf(s0), []string{"created_at", "endpoint", "id", "latency_ms", "mode", "query", "result_count"}) {
		t.Errorf("slowest: %v", slow)
	}
}

// TestAnalyticsAreAdminOnly: every analytics endpoint needs a key, and an admin one.
func TestAnalyticsAreAdminOnly(t *testing.T) {
	t.Parallel()
	e := newAnalyticsEnv(t)
	for _, u := range analyticsURLs {
		var body map[string]any
		for _, c := range []struct {
			key  string
			want int
			code string
		}{{"", http.StatusUnauthorized, "unauthorized"}, {e.search, http.StatusForbidden, "forbidden"}, {e.admin, http.StatusOK, ""}} {
			body = nil
			got := e.do(t, http.MethodGet, u, c.key, "", &body)
			if got != c.want || errorCode(body) != c.code {
				t.Errorf("GET %s with key %q: %d %v, want %d %s", u, c.key, got, body, c.want, c.code)
			}
		}
	}
}

// TestAnalyticsBadParams: a malformed or out-of-range parameter is 400 invalid_param.
func TestAnalyticsBadParams(t *testing.T) {
	t.Parallel()
	e := newAnalyticsEnv(t)
	for _, u := range analyticsURLs {
		path, _, _ := strings.Cut(u, "?")
		for _, q := range []string{"days=0", "days=91", "days=seven", "limit=0", "limit=501", "limit=1.5", "bucket=week", "tenant=two+words"} {
			var body map[string]any
			if got := e.do(t, http.MethodGet, path+"?"+q, e.admin, "", &body); got != http.StatusBadRequest || errorCode(body) != "invalid_param" {
				t.Errorf("GET %s?%s: %d %v, want 400 invalid_param", path, q, got, body)
			}
		}
	}
}
