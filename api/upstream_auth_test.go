package api_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/api"
	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/gateway"
	"github.com/toolgate/toolgate/internal/mcptest"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/search"
	"github.com/toolgate/toolgate/internal/sources"
	"github.com/toolgate/toolgate/internal/upstreamauth"
	"github.com/toolgate/toolgate/jobs"
)

// upstreamAuthAPI is toolgate serving the API and /mcp with OAuth to its sources on, a real
// authorization server (oidc-provider) and a real MCP server protected by it.
type upstreamAuthAPI struct {
	srv           *httptest.Server
	pool          *pgxpool.Pool
	queue         jobs.Queue
	auth          *upstreamauth.Manager
	up            *mcptest.ProtectedServer
	admin, search string
}

func newUpstreamAuthAPI(t *testing.T) *upstreamAuthAPI {
	t.Helper()
	ctx := context.Background()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	public := "http://" + ln.Addr().String()
	upSrv := httptest.NewUnstartedServer(nil)
	as := mcptest.StartAuthServer(t, mcptest.AuthServerConfig{
		Resources: []string{"http://" + upSrv.Listener.Addr().String() + "/mcp"}, Scopes: "tools:read"})
	up := mcptest.NewProtectedServer(t, upSrv, as.Issuer)

	pool := pgtest.NewPool(t)
	log := slog.New(slog.DiscardHandler)
	rc, err := jobs.NewClient(jobs.Deps{Pool: pool, Logger: log}, jobs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	keys, err := upstreamauth.ParseKeys(upstreamauth.NewKey())
	if err != nil {
		t.Fatal(err)
	}
	m := upstreamauth.New(pool, upstreamauth.Settings{Keys: keys, PublicURL: public}, log)
	svc := search.New(pool, nil, search.DefaultSettings(), log)
	g := gateway.New(pool, gateway.SearchFinder{Search: svc}, gateway.Options{
		CallTool: true, BindLimit: 16, Backends: gateway.Backends{Lexical: true, Enricher: "none", Reranker: "none"}, Auth: m,
	})
	t.Cleanup(g.Close)
	srv := httptest.NewUnstartedServer(api.New(api.Deps{Pool: pool, River: rc, Logger: log, Gateway: g, Search: svc, UpstreamAuth: m}))
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	keyStore := auth.NewKeys(pool, time.Now)
	_, admin, err := keyStore.Create(ctx, auth.Spec{Name: "ops", Scope: auth.ScopeAdmin})
	if err != nil {
		t.Fatal(err)
	}
	_, searchKey, err := keyStore.Create(ctx, auth.Spec{Name: "agent", Scope: auth.ScopeSearch})
	if err != nil {
		t.Fatal(err)
	}
	return &upstreamAuthAPI{srv: srv, pool: pool, queue: jobs.NewQueue(rc), auth: m, up: up, admin: admin, search: searchKey}
}

// do sends a request with key as bearer ("" for none) and extra headers, and returns the
// status and the body.
func (a *upstreamAuthAPI) do(t *testing.T, method, path, key, body string, header ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(path, "http") {
		req.URL, _ = req.URL.Parse(a.srv.URL + path)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw)
}

// authorization is the authorization state GET /v1/sources/up shows.
func (a *upstreamAuthAPI) authorization(t *testing.T) (state string, body string) {
	t.Helper()
	code, body := a.do(t, http.MethodGet, "/v1/sources/up", a.admin, "")
	var v struct {
		Authorization *struct{ State string } `json:"authorization"`
	}
	if code != http.StatusOK || json.Unmarshal([]byte(body), &v) != nil || v.Authorization == nil {
		t.Fatalf("GET /v1/sources/up: %d %s", code, body)
	}
	return v.Authorization.State, body
}

// callTool calls the source's echo tool through toolgate's /mcp call_tool.
func (a *upstreamAuthAPI) callTool(t *testing.T) *mcp.CallToolResult {
	t.Helper()
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: a.srv.URL + "/mcp", MaxRetries: -1, HTTPClient: &http.Client{Transport: bearerTransport{key: a.search}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "call_tool", Arguments: map[string]any{"name": "up__echo", "arguments": map[string]any{"text": "hi"}}})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestUpstreamOAuthFlow: an admin creates an mcp_http source configured for OAuth, starts
// its authorization (a search key and no key are refused), signs in at the source's
// authorization server and comes back to the callback (from the authorization server's
// site, as a browser does); the source shows as authorized, syncs, and its tool is called
// through /mcp with the token, which no answer of the API shows. The callback works once
// and only for a state toolgate issued. Revoking (admin only) forgets the tokens and the
// calls stop.
func TestUpstreamOAuthFlow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := newUpstreamAuthAPI(t)
	code, body := a.do(t, http.MethodPost, "/v1/sources", a.admin, `{"name": "up", "kind": "mcp_http", "url": "`+a.up.URL+`", "oauth": {}, "interval": "off"}`)
	if code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, body)
	}
	if state, _ := a.authorization(t); state != upstreamauth.StateUnauthorized {
		t.Fatalf("state of a new source %q, want unauthorized", state)
	}

	// only an admin starts an authorization
	for key, want := range map[string]int{"": http.StatusUnauthorized, a.search: http.StatusForbidden} {
		if code, body := a.do(t, http.MethodPost, "/v1/sources/up/oauth/authorize", key, ""); code != want {
			t.Errorf("authorize with key %.4q: %d %s, want %d", key, code, body, want)
		}
	}
	code, body = a.do(t, http.MethodPost, "/v1/sources/up/oauth/authorize", a.admin, "")
	var start upstreamauth.Start
	if code != http.StatusOK || json.Unmarshal([]byte(body), &start) != nil || start.AuthorizationURL == "" {
		t.Fatalf("authorize: %d %s", code, body)
	}

	// a state toolgate did not issue is refused, whoever sends it
	if code, body := a.do(t, http.MethodGet, upstreamauth.CallbackPath+"?state=forged&code=x", "", ""); code != http.StatusForbidden ||
		!strings.Contains(body, "unknown_state") {
		t.Errorf("callback with a forged state: %d %s", code, body)
	}
	cb := mcptest.SignIn(t, start.AuthorizationURL, a.srv.URL+upstreamauth.CallbackPath)
	code, body = a.do(t, http.MethodGet, cb.String(), "", "", "Sec-Fetch-Site", "cross-site")
	if code != http.StatusOK || !strings.Contains(body, "authorized") {
		t.Fatalf("callback: %d %s", code, body)
	}
	if code, body := a.do(t, http.MethodGet, cb.String(), "", "", "Sec-Fetch-Site", "cross-site"); code != http.StatusForbidden {
		t.Errorf("second use of the callback: %d %s, want 403", code, body)
	}
	if state, _ := a.authorization(t); state != upstreamauth.StateAuthorized {
		t.Fatalf("state after the callback %q, want authorized", state)
	}
	var jobs int
	if err := a.pool.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = 'sync_source' AND state = 'available'`).Scan(&jobs); err != nil || jobs == 0 {
		t.Errorf("no sync queued by the callback (%v)", err)
	}

	var id int64
	if err := a.pool.QueryRow(ctx, `SELECT id FROM sources WHERE name = 'up'`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	if rep, err := sources.SyncWith(ctx, a.pool, a.queue, id, sources.SyncOptions{Timeout: 20 * time.Second, Auth: a.auth}); err != nil || rep.Result.Created != 1 {
		t.Fatalf("sync: %+v %v", rep, err)
	}
	res := a.callTool(t)
	if res.IsError || res.Content[0].(*mcp.TextContent).Text != "echo: hi" {
		t.Fatalf("call_tool: %+v", res.Content[0])
	}
	tokens := a.up.Accepted()
	if len(tokens) == 0 {
		t.Fatal("the server saw no token")
	}
	_, list := a.do(t, http.MethodGet, "/v1/sources", a.admin, "")
	_, one := a.authorization(t)
	for _, tok := range tokens {
		if strings.Contains(list+one, tok) {
			t.Fatal("an API answer holds the access token")
		}
	}

	// only an admin revokes; then the tool cannot be called
	if code, _ := a.do(t, http.MethodPost, "/v1/sources/up/oauth/revoke", a.search, ""); code != http.StatusForbidden {
		t.Errorf("revoke with a search key: %d, want 403", code)
	}
	code, body = a.do(t, http.MethodPost, "/v1/sources/up/oauth/revoke", a.admin, "")
	if code != http.StatusOK || !strings.Contains(body, `"revoked_at_server":true`) {
		t.Fatalf("revoke: %d %s", code, body)
	}
	if state, _ := a.authorization(t); state != upstreamauth.StateUnauthorized {
		t.Errorf("state after revoke %q, want unauthorized", state)
	}
	served := a.up.Requests()
	if res := a.callTool(t); !res.IsError {
		t.Errorf("call_tool after revoke succeeded: %+v", res.Content[0])
	}
	if a.up.Requests() != served {
		t.Error("a call after revoke reached the server with a token")
	}
}

// TestUpstreamOAuthNeedsKeys: without TOOLGATE_SECRET_KEYS an OAuth source is refused at
// creation with an error naming the setting, and a source without OAuth cannot be authorized.
func TestUpstreamOAuthNeedsKeys(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	log := slog.New(slog.DiscardHandler)
	rc, err := jobs.NewClient(jobs.Deps{Pool: pool, Logger: log}, jobs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api.New(api.Deps{Pool: pool, River: rc, Logger: log, Open: true,
		UpstreamAuth: upstreamauth.New(pool, upstreamauth.Settings{PublicURL: "http://127.0.0.1:9"}, log)}))
	t.Cleanup(srv.Close)
	a := &upstreamAuthAPI{srv: srv}
	code, body := a.do(t, http.MethodPost, "/v1/sources", "", `{"name": "up", "kind": "mcp_http", "url": "http://127.0.0.1:9/mcp", "oauth": {}}`)
	if code != http.StatusConflict || !strings.Contains(body, "secret_keys_missing") || !strings.Contains(body, "TOOLGATE_SECRET_KEYS") {
		t.Errorf("create an OAuth source without keys: %d %s", code, body)
	}
	if code, body := a.do(t, http.MethodPost, "/v1/sources", "", `{"name": "plain", "kind": "mcp_http", "url": "http://127.0.0.1:9/mcp"}`); code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, body)
	}
	if code, body := a.do(t, http.MethodPost, "/v1/sources/plain/oauth/authorize", "", ""); code != http.StatusConflict {
		t.Errorf("authorize a source without oauth: %d %s", code, body)
	}
}
