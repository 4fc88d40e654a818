package api_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/api"
	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/gateway"
	"github.com/toolgate/toolgate/internal/lexical"
	"github.com/toolgate/toolgate/internal/mcptest"
	"github.com/toolgate/toolgate/internal/metrics"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/search"
)

// TestRetrievalMetrics drives searches, find_tools calls and labels through the server
// and reads them back from /metrics: REST searches with and without results, feedback
// (a new label, then a repeat that is not one), find_tools calls over /mcp (answered and
// refused), a use_tool call (a search of its own endpoint) and a proxied call that labels
// the session's search (then a second call of the same tool, which labels nothing new).
func TestRetrievalMetrics(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	tools := []catalog.Tool{
		{Name: "get_stock_price", Description: "Get the latest stock price of a company by its ticker symbol",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"symbol":{"type":"string"}}}`)},
		{Name: "send_email", Description: "Send an email message to a recipient",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"to":{"type":"string"},"body":{"type":"string"}}}`)},
	}
	upstream := mcptest.NewHTTP(t, tools, mcptest.Normal, 0)
	cfg, err := json.Marshal(upstream.Config())
	if err != nil {
		t.Fatal(err)
	}
	if err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		src, err := db.New(tx).CreateSource(ctx, db.CreateSourceParams{Name: "market", Kind: db.SourceKind("mcp_http"), Config: cfg})
		if err != nil {
			return err
		}
		_, err = catalog.Apply(ctx, tx, src, tools, catalog.ApplyOptions{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := lexical.Flush(ctx, pool); err != nil {
		t.Fatal(err)
	}

	log := slog.New(slog.DiscardHandler)
	m := metrics.New()
	svc := search.New(pool, nil, search.DefaultSettings(), log, search.WithMetrics(m))
	g := gateway.New(pool, gateway.SearchFinder{Search: svc}, gateway.Options{CallTool: true, UseTool: true, Metrics: m})
	t.Cleanup(g.Close)
	srv := httptest.NewServer(api.New(api.Deps{Pool: pool, Logger: log, Open: true, Search: svc, Gateway: g, Metrics: m}))
	t.Cleanup(srv.Close)

	post := func(path, body string, want int) map[string]any {
		t.Helper()
		resp, err := http.Post(srv.URL+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != want {
			t.Fatalf("POST %s %s: %d %v %v", path, body, resp.StatusCode, out, err)
		}
		return out
	}
	found := post("/search", `{"query":"stock price"}`, 200)
	if n := len(found["results"].([]any)); n == 0 {
		t.Fatal("the REST search found nothing")
	}
	if n := len(post("/search", `{"query":"zebra xylophone"}`, 200)["results"].([]any)); n != 0 {
		t.Fatalf("the zero-result search found %d tools", n)
	}
	feedback := "/search/" + strconv.FormatInt(int64(found["search_id"].(float64)), 10) + "/feedback"
	for range 2 { // the second report replaces the first: one label
		post(feedback, `{"tools":[{"name":"market__get_stock_price","success":true}]}`, 201)
	}

	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	callTool := func(name string, args map[string]any, wantError bool) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil || res.IsError != wantError {
			t.Fatalf("%s %v: %v %+v", name, args, err, res)
		}
	}
	callTool("find_tools", map[string]any{"query": "send an email message", "limit": 2}, false)
	callTool("find_tools", map[string]any{"query": "   "}, true)
	// use_tool searches too, under its own endpoint: no find_tools call, and no label
	callTool("use_tool", map[string]any{"query": "latest stock price", "params": map[string]any{"symbol": "ACME"}}, false)
	for range 2 { // the second call labels the same search with the same tool: no new label
		callTool("call_tool", map[string]any{"name": "market__send_email", "arguments": map[string]any{"to": "a@b.c", "body": "hi"}}, false)
	}
	cs.Close()
	g.Close() // waits for the label writes in flight

	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	exposition := string(raw)
	for _, want := range []string{
		`toolgate_searches_total{endpoint="rest",mode="hybrid",profile="default",result="hits"} 1`,
		`toolgate_searches_total{endpoint="rest",mode="hybrid",profile="default",result="zero"} 1`,
		`toolgate_searches_total{endpoint="find_tools",mode="hybrid",profile="default",result="hits"} 1`,
		`toolgate_searches_total{endpoint="use_tool",mode="hybrid",profile="default",result="hits"} 1`,
		`toolgate_mcp_find_tools_calls_total{outcome="ok"} 1`,
		`toolgate_mcp_find_tools_calls_total{outcome="refused"} 1`,
		`toolgate_search_labels_total{label_source="call",profile="default",source="market"} 1`,
		`toolgate_search_labels_total{label_source="feedback",profile="default",source="market"} 1`,
	} {
		if !strings.Contains(exposition, want+"\n") {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if strings.Contains(exposition, `endpoint="find_tools",mode="hybrid",profile="default",result="zero"`) {
		t.Error("the refused find_tools call counted as a search")
	}
	if t.Failed() {
		t.Logf("/metrics:\n%s", grepLines(exposition, "toolgate_searches_total", "toolgate_mcp_find_tools", "toolgate_search_labels"))
	}
}

// grepLines are the lines of s that start with one of the prefixes.
func grepLines(s string, prefixes ...string) string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		for _, p := range prefixes {
			if strings.HasPrefix(line, p) {
				out = append(out, line)
				break
			}
		}
	}
	return strings.Join(out, "\n")
}
