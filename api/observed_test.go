package api_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/riverqueue/river"

	"github.com/toolgate/toolgate/api"
	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/embed"
	"github.com/toolgate/toolgate/internal/enrich"
	"github.com/toolgate/toolgate/internal/gateway"
	"github.com/toolgate/toolgate/internal/search"
	"github.com/toolgate/toolgate/internal/testfactory"
	"github.com/toolgate/toolgate/jobs"
)

// TestObservedQueriesAreAdminOnly: the labelled searches of three search keys (the default
// threshold) make an observed query (the observed_queries job, run by River), which finds
// the tool for those keys, but no view a search key has shows its text: GET /v1/tools/{name} is admin-only (and shows it to an
// admin), and neither a raw search answer nor MCP find_tools carries components. Only an
// admin removes a source's observed queries.
func TestObservedQueriesAreAdminOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := searchableCatalog(t, "fin",
		testfactory.Tool("get_stock_price", "Return the latest trading price of a stock ticker."),
		testfactory.Tool("send_email", "Send an email message to a recipient."),
	)
	log := slog.New(slog.DiscardHandler)
	keys := auth.NewKeys(pool, time.Now)
	_, admin, err := keys.Create(ctx, auth.Spec{Name: "ops", Scope: auth.ScopeAdmin})
	if err != nil {
		t.Fatal(err)
	}
	_, agent, err := keys.Create(ctx, auth.Spec{Name: "agent", Scope: auth.ScopeSearch, Sources: []string{"fin"}})
	if err != nil {
		t.Fatal(err)
	}
	deps := jobs.Deps{Pool: pool, Logger: log, Embedder: embed.NewLocal(384), Enricher: enrich.Heuristic{}, Questions: 3, ObservedQueries: 5}
	rc, err := jobs.NewClient(deps, jobs.Options{Work: true, MaxWorkers: 2})
	if err != nil {
		t.Fatal(err)
	}
	svc := search.New(pool, embed.NewLocal(384), search.DefaultSettings(), log)
	g := gateway.New(pool, gateway.SearchFinder{Search: svc}, gateway.Options{BindLimit: 8})
	t.Cleanup(g.Close)
	e := api.New(api.Deps{Pool: pool, River: rc, Logger: log, Keys: keys, Search: svc, Gateway: g})

	const query = "stock price on the bourse"
	others := []string{agent}
	for _, name := range []string{"agent-2", "agent-3"} {
		_, k, err := keys.Create(ctx, auth.Spec{Name: name, Scope: auth.ScopeSearch, Sources: []string{"fin"}})
		if err != nil {
			t.Fatal(err)
		}
		others = append(others, k)
	}
	for _, k := range others {
		r := do(t, e, http.MethodPost, "/search", k, `{"query":"`+query+`","mode":"lexical","plan":"none"}`)
		if r.status != http.StatusOK {
			t.Fatalf("search: %d %v", r.status, r.body)
		}
		path := "/search/" + strconv.FormatInt(int64(r.body["search_id"].(float64)), 10) + "/feedback"
		if r := do(t, e, http.MethodPost, path, k, `{"tools":[{"name":"fin__get_stock_price","success":true}]}`); r.status != http.StatusCreated {
			t.Fatalf("feedback: %d %v", r.status, r.body)
		}
	}

	// The sweep, as River runs it.
	events := testfactory.JobEvents(t, rc)
	if err := rc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rc.Stop(context.Background()) })
	ins, err := rc.Insert(ctx, jobs.ObservedQueriesArgs{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ev := testfactory.WaitJob(t, events, time.Minute, "the observed_queries job", func(ev *river.Event) bool { return ev.Job.ID == ins.Job.ID })
	if ev.Kind != river.EventKindJobCompleted {
		t.Fatalf("observed_queries: %s %v", ev.Kind, ev.Job.Errors)
	}

	// An admin sees the observed query; a search key cannot read the tool at all.
	r := do(t, e, http.MethodGet, "/v1/tools/fin__get_stock_price", admin, "")
	if r.status != http.StatusOK || !hasObserved(r.body, query) {
		t.Fatalf("admin GET tool: %d, observed %q missing: %v", r.status, query, r.body["components"])
	}
	if r := do(t, e, http.MethodGet, "/v1/tools/fin__get_stock_price", agent, ""); r.status != http.StatusForbidden {
		t.Fatalf("search key GET tool: %d %v", r.status, r.body)
	}

	// The observed word finds the tool for the search key, in every format, but no answer
	// carries the query's text.
	for _, format := range []string{"raw", "openai", "anthropic", "mcp"} {
		r := do(t, e, http.MethodPost, "/search", agent, `{"query":"bourse","mode":"hybrid","plan":"none","format":"`+format+`"}`)
		raw, _ := json.Marshal(r.body)
		results, _ := r.body["results"].([]any)
		if r.status != http.StatusOK || len(results) == 0 || results[0].(map[string]any)["name"] != "fin__get_stock_price" {
			t.Fatalf("search bourse (%s): %d %s", format, r.status, raw)
		}
		if strings.Contains(string(raw), "on the bourse") || strings.Contains(string(raw), "observed") {
			t.Fatalf("search answer (%s) shows the observed query: %s", format, raw)
		}
	}
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", MaxRetries: -1,
			HTTPClient: &http.Client{Transport: bearerTransport{key: agent}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	found, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "find_tools", Arguments: map[string]any{"query": "bourse", "limit": 3}})
	if err != nil || found.IsError {
		t.Fatalf("find_tools: %v %+v", err, found)
	}
	text := found.Content[0].(*mcp.TextContent).Text
	if !strings.Contains(text, "fin__get_stock_price") || strings.Contains(text, "on the bourse") {
		t.Fatalf("find_tools bourse: %s", text)
	}
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	listed, _ := json.Marshal(list)
	if strings.Contains(string(listed), "on the bourse") {
		t.Fatalf("tools/list shows the observed query: %s", listed)
	}

	// Removal: admin only, 404 for an unknown source.
	const forget = "/v1/sources/fin/observed-queries"
	if r := do(t, e, http.MethodDelete, forget, agent, ""); r.status != http.StatusForbidden {
		t.Fatalf("search key DELETE: %d %v", r.status, r.body)
	}
	if r := do(t, e, http.MethodDelete, "/v1/sources/nope/observed-queries", admin, ""); r.status != http.StatusNotFound || r.errorCode() != "not_found" {
		t.Fatalf("DELETE unknown source: %d %v", r.status, r.body)
	}
	r = do(t, e, http.MethodDelete, forget, admin, "")
	if r.status != http.StatusOK || r.body["source"] != "fin" || r.body["tools"] != float64(1) || r.body["removed"] != float64(1) {
		t.Fatalf("admin DELETE: %d %v", r.status, r.body)
	}
	if r := do(t, e, http.MethodGet, "/v1/tools/fin__get_stock_price", admin, ""); hasObserved(r.body, query) {
		t.Fatalf("observed query left after DELETE: %v", r.body["components"])
	}
	r = do(t, e, http.MethodPost, "/search", agent, `{"query":"bourse","mode":"lexical","plan":"none"}`)
	if results, _ := r.body["results"].([]any); r.status != http.StatusOK || len(results) != 0 {
		t.Fatalf("bourse after DELETE: %d %v", r.status, r.body)
	}
	var left int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM tool_components WHERE kind = 'observed'`).Scan(&left); err != nil || left != 0 {
		t.Fatalf("%d observed components left (%v)", left, err)
	}
}

// hasObserved reports whether a GET /v1/tools/{name} body lists an observed component text.
func hasObserved(body map[string]any, text string) bool {
	comps, _ := body["components"].([]any)
	for _, c := range comps {
		m, _ := c.(map[string]any)
		if m["kind"] == "observed" && m["text"] == text {
			return true
		}
	}
	return false
}
