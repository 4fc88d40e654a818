package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/api"
	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/gateway"
	"github.com/toolgate/toolgate/internal/llm"
	"github.com/toolgate/toolgate/internal/mcpclient"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/plan"
	"github.com/toolgate/toolgate/internal/provider"
	"github.com/toolgate/toolgate/internal/rerank"
	"github.com/toolgate/toolgate/internal/search"
	"github.com/toolgate/toolgate/internal/sources"
	"github.com/toolgate/toolgate/jobs"
)

// Canaries planted in credentials and in upstreams' own error texts. None may reach a
// non-admin caller or a public endpoint; the admin's views mask the credentials.
const (
	canaryDBUser   = "canarydbuser5k2"
	canaryDBPass   = "canarydbpass5k2"
	canaryDBName   = "canarydbname5k2"
	canaryURLUser  = "canaryurluser5k2"
	canaryURLPass  = "canaryurlpass5k2"
	canaryURLToken = "canaryurltoken5k2"
	canaryHeader   = "canaryheader5k2"
	canaryUpstream = "canaryupstream5k2"
)

// closedAddr is a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// noCanary fails when body holds a canary, or one of the extra strings (internal
// addresses, driver phrases).
func noCanary(t *testing.T, what string, body []byte, extra ...string) {
	t.Helper()
	for _, c := range append([]string{canaryDBUser, canaryDBPass, canaryDBName, canaryURLUser, canaryURLPass,
		canaryURLToken, canaryHeader, canaryUpstream}, extra...) {
		if bytes.Contains(body, []byte(c)) {
			t.Errorf("%s leaks %q: %s", what, c, body)
		}
	}
}

// raw sends a request and returns the status and the raw body.
func raw(t *testing.T, h http.Handler, method, path, key, body string) (int, []byte) {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code, rec.Body.Bytes()
}

// TestDatabaseOutageLeaksNothing: during a real outage (pools on a port nothing listens
// on, with a canary user, password and database name in their URLs) the answers to a
// search key and the public /readyz say the database is unavailable, never the driver's
// words.
func TestDatabaseOutageLeaksNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	addr := closedAddr(t)
	deadURL := fmt.Sprintf("postgres://%s:%s@%s/%s?sslmode=disable&connect_timeout=2", canaryDBUser, canaryDBPass, addr, canaryDBName)
	dead, err := pgxpool.New(ctx, deadURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(dead.Close)
	log := slog.New(slog.DiscardHandler)
	extra := []string{addr, "failed to connect", "dial"}

	// The primary is down: every keyed request fails looking its key up.
	down := api.New(api.Deps{Pool: dead, Logger: log, Keys: auth.NewKeys(dead, time.Now),
		Gateway: gateway.New(dead, gateway.SearchFinder{Search: search.New(dead, nil, search.DefaultSettings(), log)}, gateway.Options{}),
		Search:  search.New(dead, nil, search.DefaultSettings(), log)})
	key := "tg_aaaaaaaaaa_" + strings.Repeat("b", 52)
	for _, tc := range []struct{ method, path, key, body string }{
		{http.MethodPost, "/search", key, `{"query":"weather"}`},
		{http.MethodPost, "/mcp", key, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`},
		{http.MethodGet, "/v1/capabilities", key, ""},
		{http.MethodGet, "/readyz", "", ""},
	} {
		code, body := raw(t, down, tc.method, tc.path, tc.key, tc.body)
		if code != http.StatusServiceUnavailable {
			t.Errorf("%s %s with the database down: %d %s, want 503", tc.method, tc.path, code, body)
		}
		noCanary(t, tc.method+" "+tc.path, body, extra...)
	}

	// The primary is up, the read replica down: the key is found, the search fails.
	pool := pgtest.NewPool(t)
	_, search1, err := auth.NewKeys(pool, time.Now).Create(ctx, auth.Spec{Name: "agent", Scope: auth.ScopeSearch})
	if err != nil {
		t.Fatal(err)
	}
	replicaDown := api.New(api.Deps{Pool: pool, ReadPool: dead, Logger: log,
		Search: search.New(pool, nil, search.DefaultSettings(), log, search.WithReadPool(dead))})
	for _, tc := range []struct{ method, path, key, body string }{
		{http.MethodPost, "/search", search1, `{"query":"weather"}`},
		{http.MethodGet, "/readyz", "", ""},
	} {
		code, body := raw(t, replicaDown, tc.method, tc.path, tc.key, tc.body)
		if code != http.StatusServiceUnavailable {
			t.Errorf("%s %s with the replica down: %d %s, want 503", tc.method, tc.path, code, body)
		}
		noCanary(t, tc.method+" "+tc.path+" (replica down)", body, extra...)
	}
	if _, body := raw(t, replicaDown, http.MethodGet, "/readyz", "", ""); !bytes.Contains(body, []byte("read replica: database not ready: unreachable")) {
		t.Errorf("readyz does not say what is not ready: %s", body)
	}
}

// TestUpstreamFailuresLeakNothing: a search key calling tools of sources that are down,
// answer a JSON-RPC error, or fail the HTTP request gets a structured upstream_unavailable
// naming the source only: not the source's URL (credentials in its user info and query),
// its address, its headers or its own error text. The admin's views of the sources mask
// the credentials, in the config and in the recorded sync errors.
func TestUpstreamFailuresLeakNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	log := slog.New(slog.DiscardHandler)
	rc, err := jobs.NewClient(jobs.Deps{Pool: pool, Logger: log}, jobs.Options{})
	if err != nil {
		t.Fatal(err)
	}

	// An upstream whose answers carry internal detail: "echo" answers a JSON-RPC error,
	// and an HTTP request calling "boom" gets a 500 with an internal message.
	upstream := mcp.NewServer(&mcp.Implementation{Name: "upstream", Version: "1"}, nil)
	for _, name := range []string{"echo", "boom"} {
		upstream.AddTool(&mcp.Tool{Name: name, Description: "Echo the weather " + name, InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return nil, &jsonrpc.Error{Code: -32000, Message: "pq: password authentication failed for 10.9.8.7 " + canaryUpstream}
			})
	}
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return upstream }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if bytes.Contains(body, []byte(`"name":"boom"`)) {
			http.Error(w, "internal error at db-7.internal: "+canaryUpstream, http.StatusInternalServerError)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		sdk.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	withCreds := func(base string) string {
		return strings.Replace(base, "http://", "http://"+canaryURLUser+":"+canaryURLPass+"@", 1) + "/mcp?token=" + canaryURLToken + "&region=eu"
	}
	addr := closedAddr(t)
	q := db.New(pool)
	for name, url := range map[string]string{"live": withCreds(ts.URL), "down": withCreds("http://" + addr)} {
		cfg, _ := json.Marshal(map[string]any{"url": url, "headers": map[string]string{"Authorization": "Bearer " + canaryHeader}})
		if _, err := q.CreateSource(ctx, db.CreateSourceParams{Name: name, Kind: "mcp_http", Config: cfg}); err != nil {
			t.Fatal(err)
		}
	}
	live, _ := q.GetSourceByName(ctx, "live")
	if _, err := sources.Sync(ctx, pool, jobs.NewQueue(rc), live.ID, 10*time.Second, mcpclient.CommandPolicy{}); err != nil {
		t.Fatalf("sync live: %v", err)
	}
	down, _ := q.GetSourceByName(ctx, "down")
	_, syncErr := sources.Sync(ctx, pool, jobs.NewQueue(rc), down.ID, 10*time.Second, mcpclient.CommandPolicy{})
	if syncErr == nil {
		t.Fatal("sync of a source that is down succeeded")
	}
	// What a River job records of a failed sync is this error's text.
	noCanary(t, "the error of a failed sync", []byte(syncErr.Error()))
	if _, err := pool.Exec(ctx, `INSERT INTO tools (source_id, name, original_name, description, input_schema, content_hash)
		VALUES ($1, 'down__echo', 'echo', 'Echo the weather', '{"type":"object"}', 'h')`, down.ID); err != nil {
		t.Fatal(err)
	}

	g := gateway.New(pool, gateway.SearchFinder{Search: search.New(pool, nil, search.DefaultSettings(), log)},
		gateway.Options{CallTool: true, CallTimeout: 10 * time.Second})
	t.Cleanup(g.Close)
	srv := httptest.NewServer(api.New(api.Deps{Pool: pool, River: rc, Logger: log, Gateway: g}))
	t.Cleanup(srv.Close)
	keys := auth.NewKeys(pool, time.Now)
	_, searchKey, err := keys.Create(ctx, auth.Spec{Name: "agent", Scope: auth.ScopeSearch})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", MaxRetries: -1, HTTPClient: &http.Client{Transport: bearerTransport{key: searchKey}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for tool, want := range map[string]string{
		"down__echo": "source down could not be reached",
		"live__echo": "source live answered the call with JSON-RPC error -32000",
		"live__boom": "source live failed the call",
	} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "call_tool", Arguments: map[string]any{"name": tool, "arguments": map[string]any{}}})
		if err != nil {
			t.Fatalf("call %s: %v", tool, err)
		}
		body, _ := json.Marshal(res)
		if !res.IsError || !bytes.Contains(body, []byte(gateway.CodeUpstreamError)) || !bytes.Contains(body, []byte(want)) {
			t.Errorf("call %s: %s, want %s: %q", tool, body, gateway.CodeUpstreamError, want)
		}
		noCanary(t, "calling "+tool, body, addr, "10.9.8.7", "db-7.internal", strings.TrimPrefix(ts.URL, "http://"))
	}

	// The admin sees the sources with their credentials masked, and why the sync failed.
	_, admin, err := keys.Create(ctx, auth.Spec{Name: "ops", Scope: auth.ScopeAdmin})
	if err != nil {
		t.Fatal(err)
	}
	code, body := raw(t, srv.Config.Handler, http.MethodGet, "/v1/sources", admin, "")
	if code != http.StatusOK {
		t.Fatalf("list sources: %d %s", code, body)
	}
	noCanary(t, "GET /v1/sources", body)
	for _, want := range []string{`"url":"http://***:***@` + addr + `/mcp?token=***\u0026region=eu"`, `"Authorization":"***"`, `mcp connect: unreachable`} {
		if !bytes.Contains(body, []byte(want)) {
			t.Errorf("GET /v1/sources lacks %s: %s", want, body)
		}
	}
}

// TestProviderFailuresLeakNothing: when the reranker and the query planner's model cannot
// be reached, a search still answers and says why it fell back, without the providers'
// URLs (credentials in their user info and query).
func TestProviderFailuresLeakNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	log := slog.New(slog.DiscardHandler)
	rc, err := jobs.NewClient(jobs.Deps{Pool: pool, Logger: log}, jobs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r := do(t, api.New(api.Deps{Pool: pool, River: rc, Logger: log, Open: true}), http.MethodPut, "/v1/sources/wx/tools", "",
		`{"name":"get_weather","description":"Get the weather forecast for a city"}`); r.status != http.StatusOK {
		t.Fatalf("import: %d %v", r.status, r.body)
	}
	addr := closedAddr(t)
	providerURL := fmt.Sprintf("http://%s:%s@%s/v1?api_key=%s", canaryURLUser, canaryURLPass, addr, canaryURLToken)
	rr, err := rerank.NewHTTP(providerURL, canaryHeader, "m", rerank.StyleCohere, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	settings := search.DefaultSettings()
	settings.Reranker = rr
	settings.Planner = plan.NewLLM(llm.New(llm.Config{Provider: provider.Config{BaseURL: providerURL, Key: canaryHeader}, Model: "m"}),
		plan.NewHeuristic(nil), 2*time.Second)
	e := api.New(api.Deps{Pool: pool, River: rc, Logger: log, Search: search.New(pool, nil, settings, log)})
	_, key, err := auth.NewKeys(pool, time.Now).Create(ctx, auth.Spec{Name: "agent", Scope: auth.ScopeSearch})
	if err != nil {
		t.Fatal(err)
	}
	code, body := raw(t, e, http.MethodPost, "/search", key, `{"query":"weather forecast","plan":"rewrite","rerank":true,"mode":"lexical"}`)
	noCanary(t, "a search with its providers down", body, addr, "dial")
	if n := bytes.Count(body, []byte(`"fallback":"provider error: unreachable"`)); code != http.StatusOK || n != 2 {
		t.Errorf("search: %d %s, want 200 with the planner's and the reranker's fallback", code, body)
	}
}
