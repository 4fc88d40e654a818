package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/api"
	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/gateway"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/search"
	"github.com/toolgate/toolgate/internal/sources"
	"github.com/toolgate/toolgate/jobs"

	"github.com/jackc/pgx/v5/pgxpool"
)

// mcpEnv is an API server with the MCP gateway over two sources: srca, a real MCP server
// whose one tool counts its calls, and srcb, a catalog.
type mcpEnv struct {
	pool    *pgxpool.Pool
	keys    *auth.Keys
	srv     *httptest.Server
	newSrv  func(t *testing.T) *httptest.Server // another instance on the same database
	upCalls *atomic.Int64
}

func newMCPEnv(t *testing.T) *mcpEnv {
	t.Helper()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	log := slog.New(slog.DiscardHandler)
	rc, err := jobs.NewClient(jobs.Deps{Pool: pool, Logger: log}, jobs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int64
	up := mcp.NewServer(&mcp.Implementation{Name: "upstream", Version: "1"}, nil)
	up.AddTool(&mcp.Tool{Name: "wire_money", Description: "Wire money to an account", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			calls.Add(1)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "wired"}}}, nil
		})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return up }, nil))
	t.Cleanup(ts.Close)
	q := jobs.NewQueue(rc)
	if _, _, err := sources.Import(ctx, pool, q, "srcb", []catalog.Tool{
		{Name: "weather", Description: "Weather forecast for a city", InputSchema: []byte(`{"type":"object"}`)},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO sources (name, kind, config) VALUES ('srca', 'mcp_http', jsonb_build_object('url', $1::text))`, ts.URL); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO tools (source_id, name, original_name, description, input_schema, content_hash)
		SELECT id, 'srca__wire_money', 'wire_money', 'Wire money to an account', '{"type":"object"}', repeat('a', 64) FROM sources WHERE name = 'srca'`); err != nil {
		t.Fatal(err)
	}
	keys := auth.NewKeys(pool, time.Now)
	e := &mcpEnv{pool: pool, keys: keys, upCalls: &calls}
	e.newSrv = func(t *testing.T) *httptest.Server {
		g := gateway.New(pool, gateway.SearchFinder{Search: search.New(pool, nil, search.DefaultSettings(), log)}, gateway.Options{
			CallTool: true, SessionIdle: time.Second,
		})
		t.Cleanup(g.Close)
		srv := httptest.NewServer(api.New(api.Deps{Pool: pool, River: rc, Logger: log, Gateway: g, Keys: keys}))
		t.Cleanup(srv.Close)
		return srv
	}
	e.srv = e.newSrv(t)
	return e
}

// post sends one JSON-RPC body to /mcp with key and session id (either may be "") and
// returns the status and body.
func (e *mcpEnv) post(t *testing.T, srv *httptest.Server, key, session, body string, header map[string]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	for k, v := range header {
		if v == "" {
			req.Header.Del(k)
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw)
}

// openSession connects a go-sdk client with key and waits until its session is stored.
func (e *mcpEnv) openSession(t *testing.T, key string) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: e.srv.URL + "/mcp", MaxRetries: -1, HTTPClient: &http.Client{Transport: bearerTransport{key: key}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	deadline := time.Now().Add(10 * time.Second)
	for {
		var n int
		if err := e.pool.QueryRow(ctx, `SELECT count(*) FROM mcp_sessions WHERE id = $1`, cs.ID()).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 1 {
			return cs
		}
		if time.Now().After(deadline) {
			t.Fatal("the session was never stored")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestMCPSessionOfRevokedKeyNotTakenOverByItsName: a session opened by key "victim" (every
// source) cannot be used, once victim is revoked, by a new key that took the name
// "victim" but may only see srcb: neither on the instance holding the session nor on
// another one, and its call never reaches srca's server. The revocation ended the session.
func TestMCPSessionOfRevokedKeyNotTakenOverByItsName(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newMCPEnv(t)
	_, victim, err := e.keys.Create(ctx, auth.Spec{Name: "victim", Scope: auth.ScopeSearch})
	if err != nil {
		t.Fatal(err)
	}
	cs := e.openSession(t, victim)
	// The victim may call srca's tool: the setup works.
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "call_tool", Arguments: map[string]any{"name": "srca__wire_money", "arguments": map[string]any{}}})
	if err != nil || res.IsError || e.upCalls.Load() != 1 {
		t.Fatalf("victim's own call: %v %+v, upstream calls %d", err, res, e.upCalls.Load())
	}
	if _, err := e.keys.Revoke(ctx, "victim"); err != nil {
		t.Fatal(err)
	}
	var rows int
	if err := e.pool.QueryRow(ctx, `SELECT count(*) FROM mcp_sessions WHERE id = $1`, cs.ID()).Scan(&rows); err != nil || rows != 0 {
		t.Errorf("the revoked key's session is still stored (%d rows, %v)", rows, err)
	}
	_, attacker, err := e.keys.Create(ctx, auth.Spec{Name: "victim", Scope: auth.ScopeSearch, Sources: []string{"srcb"}})
	if err != nil {
		t.Fatal(err)
	}
	callBody := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"call_tool","arguments":{"name":"srca__wire_money","arguments":{}}}}`
	for i, srv := range []*httptest.Server{e.srv, e.newSrv(t)} {
		status, body := e.post(t, srv, attacker, cs.ID(), callBody, nil)
		if status != http.StatusNotFound && status != http.StatusForbidden {
			t.Errorf("instance %d: the new key of the same name used the old session: %d %s", i, status, body)
		}
	}
	if n := e.upCalls.Load(); n != 1 {
		t.Fatalf("the new key reached srca's server (%d calls, want 1)", n)
	}
}

// TestMCPBatchIsRefused: a POST body that is a JSON array (a JSON-RPC batch) is 400
// batch_not_supported, whatever the protocol version (the SDK would run one for 2025-03-26,
// the version assumed without Mcp-Protocol-Version), and none of its searches runs: a
// batch would be one request for the key's rate limit however many calls it holds.
func TestMCPBatchIsRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newMCPEnv(t)
	_, key, err := e.keys.Create(ctx, auth.Spec{Name: "agent", Scope: auth.ScopeSearch, RatePerMin: 50})
	if err != nil {
		t.Fatal(err)
	}
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/mcp", strings.NewReader(init))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	session := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || session == "" {
		t.Fatalf("initialize: %d, session %q", resp.StatusCode, session)
	}
	e.post(t, e.srv, key, session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, map[string]string{"Mcp-Protocol-Version": ""})
	var batch []string
	for i := range 30 {
		batch = append(batch, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"find_tools","arguments":{"query":"weather"}}}`, i+2))
	}
	body := " \n[" + strings.Join(batch, ",") + "]"
	for _, version := range []string{"", "2025-03-26", "2025-06-18"} {
		status, answer := e.post(t, e.srv, key, session, body, map[string]string{"Mcp-Protocol-Version": version})
		if status != http.StatusBadRequest || !strings.Contains(answer, `"code":"batch_not_supported"`) {
			t.Errorf("batch with protocol version %q: %d %s, want 400 batch_not_supported", version, status, answer)
		}
	}
	var searches int
	if err := e.pool.QueryRow(ctx, `SELECT count(*) FROM search_log`).Scan(&searches); err != nil {
		t.Fatal(err)
	}
	if searches != 0 {
		t.Fatalf("a refused batch ran %d searches", searches)
	}
	// One message per request still works.
	status, answer := e.post(t, e.srv, key, session, batch[0], map[string]string{"Mcp-Protocol-Version": ""})
	if status != http.StatusOK || !strings.Contains(answer, "weather") {
		t.Fatalf("a single find_tools: %d %s", status, answer)
	}
}

// TestMCPHostAndMediaType: with keys, /mcp reached on a loopback address answers whatever
// the Host (a reverse proxy on the same host serving it under a public name), as the REST
// endpoints do; a POST body must be application/json, as every JSON body of the API (415
// unsupported_media_type otherwise, a missing Content-Type included).
func TestMCPHostAndMediaType(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newMCPEnv(t)
	_, key, err := e.keys.Create(ctx, auth.Spec{Name: "agent", Scope: auth.ScopeSearch})
	if err != nil {
		t.Fatal(err)
	}
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	for _, host := range []string{"10.0.0.1", "mcp.example.com", "mcp.example.com:443"} {
		req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/mcp", strings.NewReader(init))
		req.Host = host
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("Host %s: %d %s, want 200", host, resp.StatusCode, raw)
		}
	}
	for _, ct := range []string{"text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded", "-"} {
		h := map[string]string{"Content-Type": ct}
		if ct == "-" {
			h["Content-Type"] = "" // no Content-Type at all
		}
		status, body := e.post(t, e.srv, key, "", init, h)
		if status != http.StatusUnsupportedMediaType || !strings.Contains(body, `"code":"unsupported_media_type"`) {
			t.Errorf("Content-Type %q: %d %s, want 415 unsupported_media_type", ct, status, body)
		}
	}
	if status, body := e.post(t, e.srv, key, "", init, map[string]string{"Content-Type": "application/json; charset=utf-8"}); status != http.StatusOK {
		t.Errorf("application/json with charset: %d %s", status, body)
	}
}

// TestMCPOpenModeStillRefusesRebindingHosts: without keys the DNS-rebinding refusal stays.
func TestMCPOpenModeStillRefusesRebindingHosts(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	log := slog.New(slog.DiscardHandler)
	g := gateway.New(pool, gateway.SearchFinder{Search: search.New(pool, nil, search.DefaultSettings(), log)}, gateway.Options{})
	t.Cleanup(g.Close)
	srv := httptest.NewServer(api.New(api.Deps{Pool: pool, Logger: log, Gateway: g, Open: true}))
	t.Cleanup(srv.Close)
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
	req.Host = "rebind.example.com"
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(raw), "forbidden_host") {
		t.Fatalf("open mode, Host rebind.example.com: %d %s", resp.StatusCode, raw)
	}
}
