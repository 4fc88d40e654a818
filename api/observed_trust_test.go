package api_test

import (
	"context"
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

// TestOneKeyCannotSteerRanking: one search key searching six phrases three times each and
// reporting srca__send_email as used does not make send_email an answer to another key's
// weather question (over REST and MCP find_tools), and none of its words ("offshore")
// finds the tool: a query becomes observed only once enough distinct keys asked it.
func TestOneKeyCannotSteerRanking(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := searchableCatalog(t, "srca",
		testfactory.Tool("get_weather", "Current weather forecast for a city."),
		testfactory.Tool("send_email", "Send an email message to a recipient."),
		testfactory.Tool("get_stock_price", "Return the latest trading price of a stock ticker."),
	)
	log := slog.New(slog.DiscardHandler)
	keys := auth.NewKeys(pool, time.Now)
	_, attacker, err := keys.Create(ctx, auth.Spec{Name: "attacker", Scope: auth.ScopeSearch, Sources: []string{"srca"}})
	if err != nil {
		t.Fatal(err)
	}
	_, victim, err := keys.Create(ctx, auth.Spec{Name: "victim", Scope: auth.ScopeSearch, Sources: []string{"srca"}})
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

	const weather = "what is the weather in paris"
	phrases := []string{weather, "weather in paris today", "paris weather forecast",
		"will it rain in paris", "offshore account transfer", "weather forecast offshore"}
	for range 3 {
		for _, p := range phrases {
			r := do(t, e, http.MethodPost, "/search", attacker, `{"query":"`+p+`","k":10,"plan":"none"}`)
			if r.status != http.StatusOK {
				t.Fatalf("search %q: %d %v", p, r.status, r.body)
			}
			path := "/search/" + strconv.FormatInt(int64(r.body["search_id"].(float64)), 10) + "/feedback"
			if r := do(t, e, http.MethodPost, path, attacker, `{"tools":[{"name":"srca__send_email","success":true}]}`); r.status != http.StatusCreated {
				t.Fatalf("feedback on %q: %d %v", p, r.status, r.body)
			}
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
	var planted int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM tool_components WHERE kind = 'observed'`).Scan(&planted); err != nil || planted != 0 {
		t.Fatalf("%d observed components after one key's searches (%v), want none", planted, err)
	}

	// REST, every mode: get_weather stays above send_email for the other key.
	for _, mode := range []string{"hybrid", "vector", "lexical"} {
		r := do(t, e, http.MethodPost, "/search", victim, `{"query":"`+weather+`","k":10,"mode":"`+mode+`","plan":"none"}`)
		results, _ := r.body["results"].([]any)
		var names []string
		for _, x := range results {
			names = append(names, x.(map[string]any)["name"].(string))
		}
		if r.status != http.StatusOK || len(names) == 0 || names[0] != "srca__get_weather" {
			t.Fatalf("%s search %q for another key: %d %q, want srca__get_weather first", mode, weather, r.status, names)
		}
	}
	// MCP find_tools: the same order.
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", MaxRetries: -1,
			HTTPClient: &http.Client{Transport: bearerTransport{key: victim}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	found, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "find_tools", Arguments: map[string]any{"query": weather, "limit": 3}})
	if err != nil || found.IsError {
		t.Fatalf("find_tools: %v %+v", err, found)
	}
	text := found.Content[0].(*mcp.TextContent).Text
	w, s := strings.Index(text, "srca__get_weather"), strings.Index(text, "srca__send_email")
	if w < 0 || (s >= 0 && s < w) {
		t.Fatalf("find_tools %q: get_weather at %d, send_email at %d, want get_weather first:\n%s", weather, w, s, text)
	}
	// No word only the other key searched finds anything: its queries did not leak.
	r := do(t, e, http.MethodPost, "/search", victim, `{"query":"offshore","mode":"lexical","plan":"none"}`)
	if results, _ := r.body["results"].([]any); r.status != http.StatusOK || len(results) != 0 {
		t.Fatalf("lexical offshore for another key: %d %v, want nothing", r.status, r.body)
	}
}
