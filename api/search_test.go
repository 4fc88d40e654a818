package api_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/api"
	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/embed"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/provider"
	"github.com/toolgate/toolgate/internal/search"
	"github.com/toolgate/toolgate/internal/testfactory"
)

func TestSearchEndpoints(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	ctx := context.Background()
	price := testfactory.Tool("get_stock_price", "Latest stock price of a ticker")
	price.InputSchema = json.RawMessage(`{"type":"object","properties":{"ticker":{"type":"string"}}}`)
	testfactory.Catalog(ctx, t, pool, "acme", []catalog.Tool{price, testfactory.Tool("send_email", "Send an email")}, nil)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv := httptest.NewServer(api.New(api.Deps{Pool: pool, Logger: log, Open: true,
		Search: search.New(pool, nil, search.DefaultSettings(), log)}))
	defer srv.Close()

	post := func(path, body string) (int, map[string]any) {
		t.Helper()
		resp, err := http.Post(srv.URL+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return resp.StatusCode, m
	}

	code, m := post("/search", `{"query":"stock price","k":3,"format":"anthropic","mode":"lexical"}`)
	if code != 200 {
		t.Fatalf("search: %d %v", code, m)
	}
	metricsResp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	exposition, _ := io.ReadAll(metricsResp.Body)
	metricsResp.Body.Close()
	if !strings.Contains(string(exposition), `toolgate_search_duration_seconds_count{branch="total",mode="lexical"} 1`) ||
		!strings.Contains(string(exposition), `toolgate_search_duration_seconds_count{branch="statement",mode="lexical"} 1`) ||
		!strings.Contains(string(exposition), `toolgate_search_duration_seconds_count{branch="log",mode="lexical"} 1`) ||
		strings.Contains(string(exposition), `branch="embed"`) || strings.Contains(string(exposition), `branch="rerank"`) {
		t.Errorf("/metrics does not count the search:\n%s", exposition)
	}
	results := m["results"].([]any)
	first := results[0].(map[string]any)
	tool := first["tool"].(map[string]any)
	if first["name"] != "acme__get_stock_price" || tool["input_schema"] == nil || first["lexical_rank"] != 1.0 {
		t.Errorf("search result: %v", first)
	}
	id := int64(m["search_id"].(float64))
	if id <= 0 {
		t.Fatalf("search_id %v", m["search_id"])
	}
	// "explain": true adds an explanation to every result and explain to the answer; the
	// answer above, without it, has neither.
	if _, ok := m["explain"]; ok || first["explanation"] != nil {
		t.Errorf("explanations without explain: %v", m)
	}
	code, x := post("/search", `{"query":"stock price","k":3,"mode":"lexical","explain":true}`)
	if code != 200 {
		t.Fatalf("search with explain: %d %v", code, x)
	}
	explained := x["results"].([]any)[0].(map[string]any)
	explanation, _ := explained["explanation"].(map[string]any)
	lexical, _ := explanation["lexical"].(map[string]any)
	how, _ := x["explain"].(map[string]any)
	if lexical == nil || math.Abs(lexical["bm25"].(float64)-explained["bm25"].(float64)) > 1e-9 || explanation["vector"] != nil || explanation["fused_score"] != explained["score"] ||
		how["fusion"] != "minmax" || how["profile"] != "default" || len(how["texts"].([]any)) != 1 {
		t.Errorf("explained search: %v", x)
	}
	// a planned search's merge is timed too
	if code, m := post("/search", `{"query":"stock price","k":3,"mode":"lexical","plan":"full"}`); code != 200 || m["plan"] == nil {
		t.Fatalf("planned search: %d %v", code, m)
	}
	metricsResp, err = http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	exposition, _ = io.ReadAll(metricsResp.Body)
	metricsResp.Body.Close()
	if !strings.Contains(string(exposition), `toolgate_search_duration_seconds_count{branch="rerank",mode="lexical"} 1`) {
		t.Errorf("/metrics does not time the planned search's merge:\n%s", exposition)
	}
	if code, m := post("/search", `{"query":"x","explain":"yes"}`); code != 400 {
		t.Errorf("explain not a boolean: %d %v", code, m)
	}

	for _, tc := range []struct {
		body, code string
		status     int
	}{
		{`{"query":"   "}`, "invalid_request", 400},
		{`{"query":"` + strings.Repeat("a", 2001) + `"}`, "invalid_request", 400},
		{`{"query":"x","k":101}`, "invalid_request", 400},
		{`{"query":"x","k":0}`, "invalid_request", 400}, // not the default: only an absent k is
		{`{"query":"x","format":"yaml"}`, "invalid_request", 400},
		{`{"query":"x","mode":"semantic"}`, "invalid_request", 400},
		{`{"query":"x","sources":["nope"]}`, "unknown_source", 400},
		{`{"query":"x","profile":"nope"}`, "unknown_profile", 400},
		{`{"query":"x","mode":"vector"}`, "no_embedder", 400},
		{`{"query":"x","bogus":1}`, "invalid_request", 400},
		{`{"query":"x","plan":"all"}`, "invalid_request", 400},
		{`{"query":"x","plan":"full","queries":["y"]}`, "invalid_request", 400},
		{`{"query":"x","rerank":true}`, "invalid_request", 400},
	} {
		status, body := post("/search", tc.body)
		e, _ := body["error"].(map[string]any)
		if status != tc.status || e["code"] != tc.code {
			t.Errorf("%.60s: %d %v, want %d %s", tc.body, status, body, tc.status, tc.code)
		}
	}

	path := "/search/" + strconv.FormatInt(id, 10) + "/feedback"
	if code, m := post(path, `{"tools":[{"name":"acme__get_stock_price","success":true}]}`); code != 201 || m["recorded"] != 1.0 {
		t.Errorf("feedback: %d %v", code, m)
	}
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM search_feedback WHERE search_id = $1 AND success`, id).Scan(&n); err != nil || n != 1 {
		t.Errorf("feedback rows: %d %v", n, err)
	}
	if code, m := post("/search/999999/feedback", `{"tools":[{"name":"x","success":false}]}`); code != 404 {
		t.Errorf("unknown search: %d %v", code, m)
	}
	if code, m := post("/search/abc/feedback", `{"tools":[{"name":"x","success":false}]}`); code != 404 {
		t.Errorf("bad id: %d %v", code, m)
	}
	if code, m := post(path, `{"tools":[]}`); code != 400 {
		t.Errorf("no tools: %d %v", code, m)
	}
}

// TestSearchEmbedderDown: with the embedding provider down, a vector search answers 503
// embedder_unavailable quickly and a hybrid search answers 200 with its lexical results and
// a "degraded" note.
func TestSearchEmbedderDown(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	testfactory.Catalog(context.Background(), t, pool, "acme", []catalog.Tool{testfactory.Tool("get_stock_price", "Latest stock price of a ticker")}, nil)
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":{"message":"down"}}`, http.StatusBadGateway)
	}))
	defer down.Close()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	st := search.DefaultSettings()
	st.EmbedTimeout = 200 * time.Millisecond
	embedder := embed.NewOpenAI(embed.OpenAIConfig{Provider: provider.Config{BaseURL: down.URL, BaseBackoff: time.Second}, Model: "m", Dims: 8})
	srv := httptest.NewServer(api.New(api.Deps{Pool: pool, Logger: log, Open: true, Search: search.New(pool, embedder, st, log)}))
	defer srv.Close()

	for mode, want := range map[string]int{"vector": http.StatusServiceUnavailable, "hybrid": http.StatusOK} {
		resp, err := http.Post(srv.URL+"/search", "application/json", strings.NewReader(`{"query":"stock price","mode":"`+mode+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		json.NewDecoder(resp.Body).Decode(&m)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("%s: status %d %v, want %d", mode, resp.StatusCode, m, want)
		}
		switch mode {
		case "vector":
			if e, _ := m["error"].(map[string]any); e == nil || e["code"] != "embedder_unavailable" || strings.Contains(e["message"].(string), down.URL) {
				t.Errorf("vector: %v", m)
			}
		case "hybrid":
			if d, _ := m["degraded"].(string); !strings.Contains(d, "vector branch skipped") || len(m["results"].([]any)) != 1 {
				t.Errorf("hybrid: %v", m)
			}
		}
	}
}

// TestFeedbackOnlyFromTheSearchingKey: a search key may report feedback only on its own
// searches (another key's search is not found) and only about tools that search returned
// (not a tool of a source it cannot see, not a 10 KB name; a longer body is over the limit); nothing refused is stored.
func TestFeedbackOnlyFromTheSearchingKey(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	ctx := context.Background()
	testfactory.Catalog(ctx, t, pool, "acme", []catalog.Tool{testfactory.Tool("get_stock_price", "Latest stock price of a ticker")}, nil)
	testfactory.Catalog(ctx, t, pool, "vault", []catalog.Tool{testfactory.Tool("get_secret_price", "Secret stock price")}, nil)
	keys := auth.NewKeys(pool, time.Now)
	_, a, err := keys.Create(ctx, auth.Spec{Name: "agent-a", Scope: auth.ScopeSearch, Sources: []string{"acme"}})
	if err != nil {
		t.Fatal(err)
	}
	_, b, err := keys.Create(ctx, auth.Spec{Name: "agent-b", Scope: auth.ScopeSearch})
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	srv := httptest.NewServer(api.New(api.Deps{Pool: pool, Logger: log, Keys: keys, Search: search.New(pool, nil, search.DefaultSettings(), log)}))
	defer srv.Close()
	post := func(key, path, body string) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		json.NewDecoder(resp.Body).Decode(&m)
		return resp.StatusCode, m
	}
	code, m := post(a, "/search", `{"query":"stock price","mode":"lexical"}`)
	if code != 200 {
		t.Fatalf("search: %d %v", code, m)
	}
	path := "/search/" + strconv.FormatInt(int64(m["search_id"].(float64)), 10) + "/feedback"
	feedback := func(name string) string {
		return `{"tools":[{"name":` + strconv.Quote(name) + `,"success":true}]}`
	}
	if code, m := post(b, path, feedback("acme__get_stock_price")); code != 404 || errorCode(m) != "not_found" {
		t.Errorf("another key's feedback: %d %v, want 404 not_found", code, m)
	}
	for _, name := range []string{"vault__get_secret_price", strings.Repeat("n", 10_000)} {
		if code, m := post(a, path, feedback(name)); code != 400 || errorCode(m) != "invalid_request" {
			t.Errorf("feedback on %.30q: %d %v, want 400 invalid_request", name, code, m)
		}
	}
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM search_feedback`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("refused feedback stored %d rows (%v)", n, err)
	}
	if code, m := post(a, path, feedback("acme__get_stock_price")); code != 201 {
		t.Errorf("the searcher's feedback: %d %v", code, m)
	}
}

// TestFeedbackNamingAToolTwice: a report naming the same tool more than once is one report
// of that tool whose last entry wins (as a later report replaces an earlier one), not a 500
// from the label upsert meeting the same row twice.
func TestFeedbackNamingAToolTwice(t *testing.T) {
	t.Parallel()
	srv := newInputServer(t)
	code, m := call(t, srv, "POST", "/search", `{"query":"stock price","mode":"lexical"}`)
	if code != 200 {
		t.Fatalf("search: %d %v", code, m)
	}
	path := "/search/" + strconv.FormatInt(int64(m["search_id"].(float64)), 10) + "/feedback"
	code, m = call(t, srv, "POST", path, `{"tools":[{"name":"acme__get_stock_price","success":true},{"name":" acme__get_stock_price","success":false}]}`)
	if code != 201 || m["recorded"] != 1.0 {
		t.Fatalf("feedback naming a tool twice: %d %v, want 201 with recorded 1", code, m)
	}
}
