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
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/api"
	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/dataset"
	"github.com/toolgate/toolgate/internal/gateway"
	"github.com/toolgate/toolgate/internal/mcptest"
	"github.com/toolgate/toolgate/internal/oauth"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/search"
	"github.com/toolgate/toolgate/internal/sources"
	"github.com/toolgate/toolgate/jobs"
)

var (
	oauthAgent  = mcptest.AuthClient{ID: "agent", Secret: "agent-secret"}
	oauthOps    = mcptest.AuthClient{ID: "ops", Secret: "ops-secret"}
	oauthNarrow = mcptest.AuthClient{ID: "narrow", Secret: "narrow-secret", Claims: map[string]any{"toolgate_sources": []string{"elsewhere"}}}
)

// syncBuffer is a log destination safe for the server's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

type oauthAPI struct {
	srv      *httptest.Server
	as       *mcptest.AuthServer
	resource string
	key      string // a search API key
	log      *syncBuffer
	down     string // a trusted issuer that cannot be reached
	// upAuth collects the Authorization headers srca's upstream server received
	upAuth *syncBuffer
}

// newOAuthAPI serves the API with the demo catalog, API keys and the access tokens of a
// real authorization server (and of one that is down), logging at debug level into a buffer.
func newOAuthAPI(t *testing.T) *oauthAPI {
	t.Helper()
	ctx := context.Background()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	resource := "http://" + ln.Addr().String()
	as := mcptest.StartAuthServer(t, mcptest.AuthServerConfig{
		Resources: []string{resource + "/mcp", resource, "http://127.0.0.1:1/elsewhere"},
		Clients:   []mcptest.AuthClient{oauthAgent, oauthOps, oauthNarrow},
	})
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + closed.Addr().String()
	closed.Close()

	pool := pgtest.NewPool(t)
	logs := &syncBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	rc, err := jobs.NewClient(jobs.Deps{Pool: pool, Logger: log}, jobs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := sources.Import(ctx, pool, jobs.NewQueue(rc), "demo", dataset.Tools(dataset.DemoCompanies[:2])); err != nil {
		t.Fatal(err)
	}
	// srca: a real MCP server whose one tool the tests call through toolgate
	upAuth := &syncBuffer{}
	up := mcp.NewServer(&mcp.Implementation{Name: "upstream", Version: "1"}, nil)
	up.AddTool(&mcp.Tool{Name: "wire_money", Description: "Wire money to an account", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "wired"}}}, nil
		})
	upHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return up }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(upAuth, "%s\n", r.Header.Get("Authorization"))
		upHandler.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	if _, err := pool.Exec(ctx, `INSERT INTO sources (name, kind, config) VALUES ('srca', 'mcp_http', jsonb_build_object('url', $1::text))`, ts.URL); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO tools (source_id, name, original_name, description, input_schema, content_hash)
		SELECT id, 'srca__wire_money', 'wire_money', 'Wire money to an account', '{"type":"object"}', repeat('a', 64) FROM sources WHERE name = 'srca'`); err != nil {
		t.Fatal(err)
	}
	svc := search.New(pool, nil, search.DefaultSettings(), slog.New(slog.DiscardHandler))
	g := gateway.New(pool, gateway.SearchFinder{Search: svc}, gateway.Options{
		CallTool: true, BindLimit: 16, Backends: gateway.Backends{Lexical: true, Enricher: "none", Reranker: "none"},
	})
	t.Cleanup(g.Close)
	verifier := oauth.NewVerifier(oauth.Settings{Issuers: []string{as.Issuer, down}, Resource: resource}, log)
	srv := httptest.NewUnstartedServer(api.New(api.Deps{Pool: pool, River: rc, Logger: log, Gateway: g, Search: svc, OAuth: verifier}))
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	_, key, err := auth.NewKeys(pool, time.Now).Create(ctx, auth.Spec{Name: "agent-key", Scope: auth.ScopeSearch})
	if err != nil {
		t.Fatal(err)
	}
	return &oauthAPI{srv: srv, as: as, resource: resource, key: key, log: logs, down: down, upAuth: upAuth}
}

// do sends a request with credential as its bearer ("" for none) and returns the status,
// the WWW-Authenticate header and the decoded body.
func (o *oauthAPI) do(t *testing.T, method, path, credential, body string) (int, string, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, o.srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if credential != "" {
		req.Header.Set("Authorization", "Bearer "+credential)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return resp.StatusCode, resp.Header.Get("WWW-Authenticate"), out
}

// findTools connects to /mcp with credential and calls find_tools.
func (o *oauthAPI) findTools(t *testing.T, credential string) (*mcp.ClientSession, []string) {
	t.Helper()
	ctx := context.Background()
	client := &http.Client{Transport: bearerTransport{key: credential}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: o.srv.URL + "/mcp", MaxRetries: -1, HTTPClient: client}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "find_tools", Arguments: map[string]any{"query": "stock price", "limit": 3}})
	if err != nil || res.IsError {
		t.Fatalf("find_tools: %v %+v", err, res)
	}
	var out struct{ Tools []struct{ Name string } }
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &out); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range out.Tools {
		names = append(names, tool.Name)
	}
	return cs, names
}

// TestOAuthProtectedResource: with OAuth on, toolgate publishes its Protected Resource
// Metadata, challenges a request without a credential toward it, serves find_tools over
// /mcp and the REST API to a token of the right scope as it does to a key, refuses a token
// without the scope with 403 insufficient_scope and a bad token with 401 invalid_token,
// keeps MCP sessions to the token's subject, and keeps serving API keys whatever the
// tokens and issuers do. No token reaches the log.
func TestOAuthProtectedResource(t *testing.T) {
	t.Parallel()
	o := newOAuthAPI(t)
	var tokens []string
	token := func(c mcptest.AuthClient, resource, scope string) string {
		tok := o.as.ClientToken(t, c, resource, scope)
		tokens = append(tokens, tok)
		return tok
	}

	// the metadata of the server and of /mcp (RFC 9728)
	for path, want := range map[string]string{oauth.MetadataPath: o.resource, oauth.MetadataPath + "/mcp": o.resource + "/mcp"} {
		status, _, md := o.do(t, "GET", path, "", "")
		servers, _ := md["authorization_servers"].([]any)
		scopes, _ := md["scopes_supported"].([]any)
		if status != 200 || md["resource"] != want || len(servers) != 2 || servers[0] != o.as.Issuer || len(scopes) != 2 || scopes[0] != "toolgate:search" {
			t.Fatalf("GET %s: %d %v", path, status, md)
		}
	}

	// no credential: a challenge naming the metadata of the resource asked for
	status, challenge, body := o.do(t, "POST", "/mcp", "", `{}`)
	if status != 401 || !strings.Contains(challenge, `resource_metadata="`+o.resource+`/.well-known/oauth-protected-resource/mcp"`) || errorCode(body) != "unauthorized" {
		t.Fatalf("/mcp without a credential: %d %q %v", status, challenge, body)
	}
	status, challenge, _ = o.do(t, "GET", "/v1/sources", "", "")
	if status != 401 || !strings.Contains(challenge, `resource_metadata="`+o.resource+`/.well-known/oauth-protected-resource"`) {
		t.Fatalf("/v1/sources without a credential: %d %q", status, challenge)
	}

	// a search token finds tools over /mcp, for the resource /mcp or the server's root
	search := token(oauthAgent, o.resource+"/mcp", "toolgate:search")
	cs, names := o.findTools(t, search)
	if len(names) != 3 || !strings.HasPrefix(names[0], "demo__") {
		t.Fatalf("find_tools with a token: %v", names)
	}
	if _, names := o.findTools(t, token(oauthAgent, o.resource, "toolgate:search")); len(names) != 3 {
		t.Fatalf("find_tools with a token for the root: %v", names)
	}
	// the sources claim limits what the caller sees, as a key's sources do
	if _, names := o.findTools(t, token(oauthNarrow, o.resource+"/mcp", "toolgate:search")); len(names) != 0 {
		t.Fatalf("find_tools with a token limited to another source: %v", names)
	}
	// a call through toolgate carries toolgate's own credentials upstream, never the token
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "call_tool", Arguments: map[string]any{"name": "srca__wire_money", "arguments": map[string]any{}}})
	if err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != "wired" {
		t.Fatalf("call_tool with a token: %v %+v", err, res)
	}
	if seen := o.upAuth.String(); strings.TrimSpace(seen) != "" {
		t.Fatalf("the upstream server received Authorization headers %q", seen)
	}
	status, _, body = o.do(t, "GET", "/v1/whoami", search, "")
	if status != 200 || body["name"] != "oauth:"+o.as.Issuer+"#agent" || body["kind"] != "search" {
		t.Fatalf("whoami with a token: %d %v", status, body)
	}

	// another subject's token cannot use the session
	admin := token(oauthOps, o.resource, "toolgate:admin")
	req, _ := http.NewRequest("POST", o.srv.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"tools/list"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+admin)
	req.Header.Set("Mcp-Session-Id", cs.ID())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("another subject's token on the session: %d, want 403", resp.StatusCode)
	}

	// scopes: admin routes need the admin scope
	status, challenge, body = o.do(t, "GET", "/v1/sources", search, "")
	if status != 403 || errorCode(body) != "insufficient_scope" ||
		!strings.Contains(challenge, `error="insufficient_scope", scope="toolgate:admin"`) || !strings.Contains(challenge, "resource_metadata=") {
		t.Fatalf("/v1/sources with a search token: %d %q %v", status, challenge, body)
	}
	if status, _, body = o.do(t, "GET", "/v1/sources", admin, ""); status != 200 {
		t.Fatalf("/v1/sources with an admin token: %d %v", status, body)
	}
	status, challenge, body = o.do(t, "POST", "/mcp", token(oauthAgent, o.resource+"/mcp", ""), `{}`)
	if status != 403 || errorCode(body) != "insufficient_scope" || !strings.Contains(challenge, `scope="toolgate:search"`) {
		t.Fatalf("/mcp with a token of no scope: %d %q %v", status, challenge, body)
	}

	// bad tokens: 401 invalid_token with the challenge; a down issuer: 503
	for name, bad := range map[string]string{
		"wrong audience": token(oauthAgent, "http://127.0.0.1:1/elsewhere", "toolgate:search"),
		"malformed":      "not-a-token",
	} {
		status, challenge, body = o.do(t, "POST", "/search", bad, `{"query":"stock price"}`)
		if status != 401 || errorCode(body) != "invalid_token" || !strings.Contains(challenge, `error="invalid_token"`) {
			t.Fatalf("%s: %d %q %v", name, status, challenge, body)
		}
	}
	downToken := unsignedLooking(t, o.down)
	tokens = append(tokens, downToken)
	status, _, body = o.do(t, "POST", "/search", downToken, `{"query":"stock price"}`)
	if status != 503 || errorCode(body) != "authorization_server_unavailable" {
		t.Fatalf("token of an unreachable issuer: %d %v", status, body)
	}

	// API keys keep working beside all of it
	if status, _, body = o.do(t, "POST", "/search", o.key, `{"query":"stock price"}`); status != 200 {
		t.Fatalf("search with a key: %d %v", status, body)
	}
	if _, names := o.findTools(t, o.key); len(names) != 3 {
		t.Fatalf("find_tools with a key: %v", names)
	}

	logs := o.log.String()
	if !strings.Contains(logs, "route=/mcp") {
		t.Fatalf("the log recorded no request: %q", logs)
	}
	for _, tok := range tokens {
		if strings.Contains(logs, tok) || strings.Contains(logs, tok[strings.LastIndexByte(tok, '.')+1:]) {
			t.Fatalf("a token is in the log")
		}
	}
}

// unsignedLooking is a well-formed ES256 token claiming iss (signed by a throwaway key).
func unsignedLooking(t *testing.T, iss string) string {
	t.Helper()
	return mcptest.ForgedToken(t, iss, "toolgate-test", "http://127.0.0.1")
}

// TestOAuthTypeScriptClientFlow: the MCP TypeScript SDK's client, given only toolgate's /mcp
// URL, completes the MCP authorization flow (401, Protected Resource Metadata, the
// authorization server's metadata, dynamic client registration, authorization code with
// PKCE and a resource indicator, token) and then finds and calls a tool.
func TestOAuthTypeScriptClientFlow(t *testing.T) {
	t.Parallel()
	o := newOAuthAPI(t)
	res := mcptest.RunOAuthClient(t, o.as.Modules, o.srv.URL+"/mcp", "stock price", "srca__wire_money")
	if len(res.Tools) != 3 || !strings.HasPrefix(res.Tools[0], "demo__") || res.Called != "wired" || res.IsError {
		t.Fatalf("the client found %v and call_tool answered %q (error %v)", res.Tools, res.Called, res.IsError)
	}
	if res.Resource != o.resource+"/mcp" || res.PKCE != "S256" || !strings.Contains(res.Scope, "toolgate:search") {
		t.Fatalf("authorization request: resource %q, PKCE %q, scope %q", res.Resource, res.PKCE, res.Scope)
	}
	if seen := o.upAuth.String(); strings.TrimSpace(seen) != "" {
		t.Fatalf("the upstream server received Authorization headers %q", seen)
	}
}
