package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/gateway"
	"github.com/toolgate/toolgate/internal/lexical"
	"github.com/toolgate/toolgate/internal/mcpclient"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/search"
)

// stdioUpstreamEnv makes the test binary run the upstream test server on stdio (the
// mcp_stdio source of TestStdioUpstream starts it as a subprocess).
const stdioUpstreamEnv = "TOOLGATE_TEST_STDIO_UPSTREAM"

func TestMain(m *testing.M) {
	if os.Getenv(stdioUpstreamEnv) == "1" {
		u := &upstream{stop: make(chan struct{})}
		if err := u.server().Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// upstream is a real MCP server with a few tools, standing for a source server.
type upstream struct {
	stop       chan struct{} // ends slow_report calls still running when a test ends
	calls      atomic.Int64
	inits      atomic.Int64 // initialize requests over HTTP: the sessions clients opened
	mu         sync.Mutex
	authHeader string
}

type priceArgs struct {
	Symbol string `json:"symbol"`
}

type emailArgs struct {
	To   string `json:"to"`
	Body string `json:"body"`
}

func (u *upstream) server() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "upstream", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "get_stock_price", Description: "Get the latest stock price of a company by its ticker symbol"},
		func(ctx context.Context, req *mcp.CallToolRequest, in priceArgs) (*mcp.CallToolResult, any, error) {
			u.calls.Add(1)
			if req.Extra != nil && req.Extra.Header != nil {
				u.mu.Lock()
				u.authHeader = req.Extra.Header.Get("Authorization")
				u.mu.Unlock()
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "price of " + in.Symbol + ": 123.45"}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "send_email", Description: "Send an email message to a recipient"},
		func(ctx context.Context, req *mcp.CallToolRequest, in emailArgs) (*mcp.CallToolResult, any, error) {
			u.calls.Add(1)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "sent to " + in.To}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "slow_report", Description: "Build a slow quarterly report"},
		func(ctx context.Context, req *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, any, error) {
			u.calls.Add(1)
			select {
			case <-ctx.Done():
			case <-u.stop:
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "late"}}}, nil, nil
		})
	return s
}

// serveHTTP runs the upstream over Streamable HTTP.
func (u *upstream) serveHTTP(t testing.TB) *httptest.Server {
	t.Helper()
	srv := u.server()
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil {
			body, _ := io.ReadAll(r.Body)
			if bytes.Contains(body, []byte(`"method":"initialize"`)) {
				u.inits.Add(1)
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		mcpHandler.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	t.Cleanup(func() { close(u.stop) }) // runs first: Close waits for running handlers
	return ts
}

var (
	priceSchema = json.RawMessage(`{"type":"object","properties":{"symbol":{"type":"string","description":"ticker symbol"}},"required":["symbol"],"additionalProperties":false}`)
	emailSchema = json.RawMessage(`{"type":"object","properties":{"to":{"type":"string"},"body":{"type":"string"}},"required":["to","body"]}`)
	emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)
)

// upstreamTools is the catalog a sync of the upstream server would store.
func upstreamTools() []catalog.Tool {
	return []catalog.Tool{
		{Name: "get_stock_price", Description: "Get the latest stock price of a company by its ticker symbol", InputSchema: priceSchema},
		{Name: "send_email", Description: "Send an email message to a recipient", InputSchema: emailSchema},
		{Name: "slow_report", Description: "Build a slow quarterly report", InputSchema: emptySchema},
	}
}

// addSource stores a source and its tools as a sync would.
func addSource(t testing.TB, pool *pgxpool.Pool, name string, kind db.SourceKind, config any, tools []catalog.Tool) {
	t.Helper()
	ctx := context.Background()
	cfg, err := json.Marshal(config)
	if err != nil {
		t.Fatal(err)
	}
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		src, err := db.New(tx).CreateSource(ctx, db.CreateSourceParams{Name: name, Kind: kind, Config: cfg})
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
}

type env struct {
	pool *pgxpool.Pool
	up   *upstream
	g    *gateway.Gateway
}

// setup gives a fresh database with source "market" (an MCP server over Streamable HTTP,
// reached with a Bearer header from its config) and a gateway over it.
func setup(t testing.TB, opts gateway.Options) *env {
	t.Helper()
	pool := pgtest.NewPool(t)
	up := &upstream{stop: make(chan struct{})}
	ts := up.serveHTTP(t)
	addSource(t, pool, "market", "mcp_http", map[string]any{
		"url": ts.URL, "headers": map[string]string{"Authorization": "Bearer upstream-secret"},
	}, upstreamTools())
	return &env{pool: pool, up: up, g: newGateway(t, pool, opts)}
}

func newGateway(t testing.TB, pool *pgxpool.Pool, opts gateway.Options) *gateway.Gateway {
	t.Helper()
	opts.Backends = gateway.Backends{Lexical: true, Enricher: "none", Reranker: "none"}
	g := gateway.New(pool, gateway.SearchFinder{Search: search.New(pool, nil, search.DefaultSettings(), slog.New(slog.DiscardHandler))}, opts)
	t.Cleanup(g.Close)
	return g
}

// serveGateway serves the gateway's Streamable HTTP handler, with caller (may be nil) set
// as the auth middleware would.
func serveGateway(t testing.TB, h http.Handler, caller *auth.Caller) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if caller != nil {
			r = r.WithContext(auth.WithCaller(r.Context(), caller))
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts
}

// client is a real MCP client session that records tools/list_changed notifications.
type client struct {
	*mcp.ClientSession
	changed chan struct{}
}

func connect(t testing.TB, transport mcp.Transport) *client {
	t.Helper()
	c := &client{changed: make(chan struct{}, 100)}
	mc := mcp.NewClient(&mcp.Implementation{Name: "test-agent", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { c.changed <- struct{}{} },
	})
	cs, err := mc.Connect(context.Background(), transport, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	c.ClientSession = cs
	return c
}

func connectHTTP(t testing.TB, url string) *client {
	return connect(t, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1})
}

type foundTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
	Version     string          `json:"version"`
	Source      string          `json:"source"`
}

type findOutput struct {
	SearchID int64       `json:"search_id"`
	Tools    []foundTool `json:"tools"`
}

type toolError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func call(t testing.TB, c *client, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := c.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: protocol error %v (want a tool result)", name, err)
	}
	return res
}

func find(t testing.TB, c *client, query string, limit int) findOutput {
	t.Helper()
	res := call(t, c, "find_tools", map[string]any{"query": query, "limit": limit})
	if res.IsError {
		t.Fatalf("find_tools(%q) failed: %s", query, text(res))
	}
	var out findOutput
	if err := json.Unmarshal([]byte(text(res)), &out); err != nil {
		t.Fatalf("find_tools text is not JSON: %v: %s", err, text(res))
	}
	return out
}

// wantToolError checks res is an isError result with the structured body {code, message}.
func wantToolError(t *testing.T, res *mcp.CallToolResult, code string) toolError {
	t.Helper()
	if !res.IsError {
		t.Fatalf("want tool error %s, got success: %s", code, text(res))
	}
	var e toolError
	if err := json.Unmarshal([]byte(text(res)), &e); err != nil {
		t.Fatalf("error text is not JSON: %v: %s", err, text(res))
	}
	sc, _ := json.Marshal(res.StructuredContent)
	var structured toolError
	if err := json.Unmarshal(sc, &structured); err != nil || structured != e {
		t.Fatalf("structured content %s differs from text %s", sc, text(res))
	}
	if e.Code != code || e.Message == "" {
		t.Fatalf("want code %s with a message, got %+v", code, e)
	}
	return e
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func listed(t testing.TB, c *client) []string {
	t.Helper()
	res, err := c.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

// waitChanged waits for a tools/list_changed notification (bounded, so a missing one fails
// instead of hanging).
func waitChanged(t *testing.T, c *client) {
	t.Helper()
	select {
	case <-c.changed:
	case <-time.After(10 * time.Second):
		t.Fatal("no notifications/tools/list_changed received")
	}
}

func TestFindBindCallOverHTTP(t *testing.T) {
	t.Parallel()
	e := setup(t, gateway.Options{CallTool: true})
	c := connectHTTP(t, serveGateway(t, e.g.HTTPHandler(), nil).URL)

	if got := listed(t, c); !slices.Equal(got, []string{"call_tool", "find_tools"}) {
		t.Fatalf("initial tool list = %v, want only the meta-tools", got)
	}
	out := find(t, c, "stock price of a company", 5)
	if len(out.Tools) == 0 || out.Tools[0].Name != "market__get_stock_price" {
		t.Fatalf("find_tools ranked %+v, want market__get_stock_price first", out.Tools)
	}
	top := out.Tools[0]
	if len(top.Version) != 64 || top.Source != "market" || !strings.Contains(string(top.InputSchema), `"symbol"`) {
		t.Fatalf("returned schema lacks version/source/inputSchema: %+v", top)
	}
	waitChanged(t, c)
	if got := listed(t, c); !slices.Contains(got, "market__get_stock_price") {
		t.Fatalf("after find_tools the list is %v, want the retrieved tool bound", got)
	}

	res := call(t, c, "market__get_stock_price", map[string]any{"symbol": "ACME"})
	if res.IsError || text(res) != "price of ACME: 123.45" {
		t.Fatalf("proxied call = %v %q", res.IsError, text(res))
	}
	e.up.mu.Lock()
	defer e.up.mu.Unlock()
	if e.up.authHeader != "Bearer upstream-secret" {
		t.Fatalf("upstream saw Authorization %q, want the source config's", e.up.authHeader)
	}
}

// The gateway introduces itself with the binary's version, "devel" when none is given.
func TestServerInfoVersion(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	for _, tc := range []struct{ option, want string }{{"v1.2.3+4897f80c1a2b", "v1.2.3+4897f80c1a2b"}, {"", "devel"}} {
		g := newGateway(t, pool, gateway.Options{Version: tc.option})
		c := connectHTTP(t, serveGateway(t, g.HTTPHandler(), nil).URL)
		if got := c.InitializeResult().ServerInfo; got.Name != "toolgate" || got.Version != tc.want {
			t.Errorf("Options.Version %q: serverInfo %+v, want version %q", tc.option, got, tc.want)
		}
	}
}

// The gateway advertises its tools and that their list changes, and no logging: it sends
// its clients no log messages.
func TestServerCapabilities(t *testing.T) {
	t.Parallel()
	g := newGateway(t, pgtest.NewPool(t), gateway.Options{})
	c := connectHTTP(t, serveGateway(t, g.HTTPHandler(), nil).URL)
	caps, err := json.Marshal(c.InitializeResult().Capabilities)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]json.RawMessage
	if err := json.Unmarshal(caps, &got); err != nil {
		t.Fatal(err)
	}
	if string(got["tools"]) != `{"listChanged":true}` || got["logging"] != nil {
		t.Errorf("capabilities %s: want tools with listChanged and no logging", caps)
	}
}

func TestCallToolValidatesAndChecksVersion(t *testing.T) {
	t.Parallel()
	e := setup(t, gateway.Options{CallTool: true})
	c := connectHTTP(t, serveGateway(t, e.g.HTTPHandler(), nil).URL)
	out := find(t, c, "stock price", 1)
	version := out.Tools[0].Version

	for _, args := range []map[string]any{{}, {"symbol": 5}, {"symbol": "A", "extra": true}} {
		res := call(t, c, "call_tool", map[string]any{"name": "market__get_stock_price", "arguments": args})
		wantToolError(t, res, gateway.CodeInvalidArguments)
	}
	if n := e.up.calls.Load(); n != 0 {
		t.Fatalf("invalid arguments reached the upstream %d times", n)
	}
	res := call(t, c, "call_tool", map[string]any{"name": "market__get_stock_price", "arguments": map[string]any{"symbol": "ACME"}, "version": strings.Repeat("0", 64)})
	if msg := wantToolError(t, res, gateway.CodeStaleVersion).Message; !strings.Contains(msg, "find_tools") {
		t.Fatalf("stale version message does not tell to re-fetch: %q", msg)
	}
	res = call(t, c, "call_tool", map[string]any{"name": "market__get_stock_price", "arguments": map[string]any{"symbol": "ACME"}, "version": version})
	if res.IsError || text(res) != "price of ACME: 123.45" {
		t.Fatalf("call_tool = %v %q", res.IsError, text(res))
	}
}

func TestUnknownToolIsStructuredError(t *testing.T) {
	t.Parallel()
	e := setup(t, gateway.Options{CallTool: true})
	c := connectHTTP(t, serveGateway(t, e.g.HTTPHandler(), nil).URL)
	wantToolError(t, call(t, c, "market__no_such_tool", map[string]any{}), gateway.CodeUnknownTool)
	wantToolError(t, call(t, c, "nothing", nil), gateway.CodeUnknownTool)
	wantToolError(t, call(t, c, "call_tool", map[string]any{"name": "market__no_such_tool"}), gateway.CodeUnknownTool)
}

func TestEmptyQueryNeverReturnsCatalog(t *testing.T) {
	t.Parallel()
	e := setup(t, gateway.Options{CallTool: true, UseTool: true})
	c := connectHTTP(t, serveGateway(t, e.g.HTTPHandler(), nil).URL)
	for _, q := range []string{"", "   ", "\n\t"} {
		wantToolError(t, call(t, c, "find_tools", map[string]any{"query": q}), gateway.CodeEmptyQuery)
		wantToolError(t, call(t, c, "use_tool", map[string]any{"query": q, "params": map[string]any{}}), gateway.CodeEmptyQuery)
	}
	wantToolError(t, call(t, c, "find_tools", map[string]any{}), gateway.CodeEmptyQuery)
	// A query with no word in it finds nothing rather than everything.
	if out := find(t, c, "? !", 5); len(out.Tools) != 0 {
		t.Fatalf("punctuation-only query returned %d tools", len(out.Tools))
	}
	wantToolError(t, call(t, c, "find_tools", map[string]any{"query": "stock", "limit": 0}), gateway.CodeInvalidLimit)
	wantToolError(t, call(t, c, "find_tools", map[string]any{"query": "stock", "limit": 51}), gateway.CodeInvalidLimit)
	if got := listed(t, c); len(got) != 3 {
		t.Fatalf("rejected queries bound tools: %v", got)
	}
}

// TestQueriesTheSearchCannotTake: a query too long for the search (16,000 characters) or
// holding a NUL is the agent's to fix: invalid_query with the reason, not search_failed
// ("try again" would never help), and nothing is bound; a tool name with a NUL is an
// unknown tool, not an internal error.
func TestQueriesTheSearchCannotTake(t *testing.T) {
	t.Parallel()
	e := setup(t, gateway.Options{CallTool: true, UseTool: true})
	c := connectHTTP(t, serveGateway(t, e.g.HTTPHandler(), nil).URL)
	for _, q := range []string{strings.Repeat("stock price ", 1334)[:16000], "stock\x00price"} {
		res := wantToolError(t, call(t, c, "find_tools", map[string]any{"query": q}), gateway.CodeInvalidQuery)
		if !strings.Contains(res.Message, "query") {
			t.Errorf("message %q does not say what is wrong", res.Message)
		}
		wantToolError(t, call(t, c, "use_tool", map[string]any{"query": q, "params": map[string]any{}}), gateway.CodeInvalidQuery)
	}
	if got := listed(t, c); len(got) != 3 {
		t.Fatalf("rejected queries bound tools: %v", got)
	}
	// A tool name with a NUL names no tool (it is not an internal failure).
	wantToolError(t, call(t, c, "call_tool", map[string]any{"name": "market__get_stock\x00price"}), gateway.CodeUnknownTool)
	wantToolError(t, call(t, c, "market__get_stock\x00price", map[string]any{}), gateway.CodeUnknownTool)
}

// TestTransportChecks: the Streamable HTTP handler itself (mounted without the API in
// front) refuses a foreign Origin with 403 and an unsupported Mcp-Protocol-Version with
// 400, as the transport specification asks, and serves a supported one.
func TestTransportChecks(t *testing.T) {
	t.Parallel()
	e := setup(t, gateway.Options{})
	ts := serveGateway(t, e.g.HTTPHandler(), nil)
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	for _, tc := range []struct {
		header, value string
		status        int
	}{
		{"Origin", "http://evil.example.com", http.StatusForbidden},
		{"Origin", "null", http.StatusForbidden},
		{"Mcp-Protocol-Version", "1999-01-01", http.StatusBadRequest},
		{"Mcp-Protocol-Version", "2025-06-18", http.StatusOK},
		{"Origin", ts.URL, http.StatusOK},
	} {
		req, _ := http.NewRequest(http.MethodPost, ts.URL, strings.NewReader(initialize))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set(tc.header, tc.value)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("%s: %s: %d %s, want %d", tc.header, tc.value, resp.StatusCode, body, tc.status)
		}
	}
}

func TestUseTool(t *testing.T) {
	t.Parallel()
	e := setup(t, gateway.Options{UseTool: true})
	c := connectHTTP(t, serveGateway(t, e.g.HTTPHandler(), nil).URL)
	if got := listed(t, c); !slices.Equal(got, []string{"find_tools", "use_tool"}) {
		t.Fatalf("tool list %v, want find_tools and use_tool (call_tool off)", got)
	}
	res := call(t, c, "use_tool", map[string]any{"query": "send an email", "params": map[string]any{"to": "ann@example.com", "body": "hi"}})
	if res.IsError || text(res) != "sent to ann@example.com" {
		t.Fatalf("use_tool = %v %q", res.IsError, text(res))
	}
	wantToolError(t, call(t, c, "use_tool", map[string]any{"query": "send an email", "params": map[string]any{"to": 1}}), gateway.CodeInvalidArguments)
	wantToolError(t, call(t, c, "use_tool", map[string]any{"query": "zebra xylophone", "params": map[string]any{}}), gateway.CodeNoMatch)
}

func TestUpstreamDownOrSlow(t *testing.T) {
	t.Parallel()
	e := setup(t, gateway.Options{CallTool: true, CallTimeout: 500 * time.Millisecond})
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	addSource(t, e.pool, "offline", "mcp_http", map[string]any{"url": deadURL}, []catalog.Tool{
		{Name: "get_weather", Description: "Get the weather forecast for a city", InputSchema: emptySchema},
	})
	c := connectHTTP(t, serveGateway(t, e.g.HTTPHandler(), nil).URL)

	e1 := wantToolError(t, call(t, c, "offline__get_weather", map[string]any{}), gateway.CodeUpstreamError)
	if !strings.Contains(e1.Message, "offline") {
		t.Fatalf("error does not name the source: %q", e1.Message)
	}
	wantToolError(t, call(t, c, "market__slow_report", map[string]any{}), gateway.CodeUpstreamTimeout)
	// The session and the market source still work afterwards, on the same upstream
	// session: one call's timeout says nothing about the connection.
	res := call(t, c, "call_tool", map[string]any{"name": "market__get_stock_price", "arguments": map[string]any{"symbol": "X"}})
	if res.IsError {
		t.Fatalf("call after failures: %s", text(res))
	}
	if n := e.up.inits.Load(); n != 1 {
		t.Errorf("the market source's upstream session was opened %d times, want 1", n)
	}
}

func TestCatalogToolIsNotCallable(t *testing.T) {
	t.Parallel()
	e := setup(t, gateway.Options{CallTool: true})
	// The catalog accepts a schema without "type"; binding it must still work.
	addSource(t, e.pool, "docs", "catalog", map[string]any{}, []catalog.Tool{
		{Name: "lookup_manual", Description: "Look up the product manual", InputSchema: json.RawMessage(`{"properties":{"page":{"type":"integer"}}}`)},
	})
	c := connectHTTP(t, serveGateway(t, e.g.HTTPHandler(), nil).URL)
	find(t, c, "product manual", 1)
	tools, err := c.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var bound *mcp.Tool
	for _, tool := range tools.Tools {
		if tool.Name == "docs__lookup_manual" {
			bound = tool
		}
	}
	if bound == nil {
		t.Fatalf("tool with a type-less schema not bound: %+v", tools.Tools)
	}
	if sch, _ := json.Marshal(bound.InputSchema); !strings.Contains(string(sch), `"type":"object"`) || !strings.Contains(string(sch), `"page"`) {
		t.Fatalf("bound schema %s", sch)
	}
	wantToolError(t, call(t, c, "docs__lookup_manual", map[string]any{}), gateway.CodeNotCallable)
}

func TestConcurrentSessionsHaveOwnBindings(t *testing.T) {
	t.Parallel()
	e := setup(t, gateway.Options{CallTool: true})
	url := serveGateway(t, e.g.HTTPHandler(), nil).URL
	a, b := connectHTTP(t, url), connectHTTP(t, url)
	var wg sync.WaitGroup
	wg.Go(func() { find(t, a, "stock price", 1) })
	wg.Go(func() { find(t, b, "send email", 1) })
	wg.Wait()
	if got := listed(t, a); !slices.Contains(got, "market__get_stock_price") || slices.Contains(got, "market__send_email") {
		t.Fatalf("session a lists %v", got)
	}
	if got := listed(t, b); !slices.Contains(got, "market__send_email") || slices.Contains(got, "market__get_stock_price") {
		t.Fatalf("session b lists %v", got)
	}
}

func TestBindingIsBoundedOldestDropped(t *testing.T) {
	t.Parallel()
	e := setup(t, gateway.Options{BindLimit: 2})
	c := connectHTTP(t, serveGateway(t, e.g.HTTPHandler(), nil).URL)
	find(t, c, "stock price", 1)
	find(t, c, "send email", 1)
	find(t, c, "slow quarterly report", 1)
	got := listed(t, c)
	want := []string{"find_tools", "market__send_email", "market__slow_report"}
	if !slices.Equal(got, want) {
		t.Fatalf("list after 3 bindings with limit 2 = %v, want %v", got, want)
	}
	// The dropped tool is still callable by name: it is proxied, not refused.
	if res := call(t, c, "market__get_stock_price", map[string]any{"symbol": "Q"}); res.IsError {
		t.Fatalf("call of a dropped tool: %s", text(res))
	}
}

func TestSessionServedByAnotherInstance(t *testing.T) {
	t.Parallel()
	e := setup(t, gateway.Options{CallTool: true})
	other := newGateway(t, e.pool, gateway.Options{CallTool: true})
	ha, hb := e.g.HTTPHandler(), other.HTTPHandler()
	var useB atomic.Bool
	lb := serveGateway(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if useB.Load() {
			hb.ServeHTTP(w, r)
		} else {
			ha.ServeHTTP(w, r)
		}
	}), nil)
	c := connectHTTP(t, lb.URL)
	find(t, c, "stock price", 1)

	var stored int
	if err := e.pool.QueryRow(context.Background(), `SELECT count(*) FROM mcp_session_tools WHERE tool_name = 'market__get_stock_price'`).Scan(&stored); err != nil || stored != 1 {
		t.Fatalf("binding rows = %d, %v", stored, err)
	}
	useB.Store(true)
	if got := listed(t, c); !slices.Contains(got, "market__get_stock_price") {
		t.Fatalf("second instance lists %v, want the tool bound on the first", got)
	}
	if res := call(t, c, "market__get_stock_price", map[string]any{"symbol": "B"}); res.IsError || text(res) != "price of B: 123.45" {
		t.Fatalf("call on second instance = %s", text(res))
	}
	// Bound on B, listed back on A.
	find(t, c, "send email", 1)
	useB.Store(false)
	if got := listed(t, c); !slices.Contains(got, "market__send_email") {
		t.Fatalf("first instance lists %v after a binding on the second", got)
	}
}

func TestSessionOfAnotherKeyIsRefused(t *testing.T) {
	t.Parallel()
	e := setup(t, gateway.Options{})
	h := e.g.HTTPHandler()
	c := connectHTTP(t, serveGateway(t, h, &auth.Caller{Name: "alice", KeyID: 1, Scope: auth.ScopeSearch}).URL)
	find(t, c, "stock", 1)
	var id string
	if err := e.pool.QueryRow(context.Background(), `SELECT id FROM mcp_sessions`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	// Another key presenting alice's session id, on this instance and on a fresh one: one
	// of another name, and one that took the name alice (the first alice revoked).
	for _, other := range []*auth.Caller{
		{Name: "mallory", KeyID: 2, Scope: auth.ScopeSearch},
		{Name: "alice", KeyID: 3, Scope: auth.ScopeSearch},
	} {
		for _, handler := range []http.Handler{h, newGateway(t, e.pool, gateway.Options{}).HTTPHandler()} {
			ts := serveGateway(t, handler, other)
			req, _ := http.NewRequest(http.MethodPost, ts.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
			req.Header.Set("Mcp-Session-Id", id)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusForbidden {
				t.Fatalf("key %d (%s) got %d, want 403", other.KeyID, other.Name, resp.StatusCode)
			}
		}
	}
}

// TestMethodsActForTheRequestsCaller: every method acts for the caller of the request
// carrying it, not for the one that opened the session: when the same key's caller comes
// with fewer sources, find and call are limited to those.
func TestMethodsActForTheRequestsCaller(t *testing.T) {
	t.Parallel()
	e := setup(t, gateway.Options{CallTool: true})
	addSource(t, e.pool, "mail", "catalog", map[string]any{}, []catalog.Tool{
		{Name: "send_newsletter", Description: "Send a newsletter email to subscribers", InputSchema: emptySchema},
	})
	var current atomic.Pointer[auth.Caller]
	current.Store(&auth.Caller{Name: "agent", KeyID: 5, Scope: auth.ScopeSearch})
	handler := e.g.HTTPHandler()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r = r.WithContext(auth.WithCaller(r.Context(), current.Load()))
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	c := connectHTTP(t, ts.URL)
	if out := find(t, c, "send email stock price", 10); len(out.Tools) < 2 {
		t.Fatalf("every source: found %+v", out.Tools)
	}
	current.Store(&auth.Caller{Name: "agent", KeyID: 5, Scope: auth.ScopeSearch, Sources: []string{"mail"}})
	out := find(t, c, "send email stock price", 10)
	if len(out.Tools) != 1 || out.Tools[0].Name != "mail__send_newsletter" {
		t.Fatalf("the request's caller is limited to mail, found %+v", out.Tools)
	}
	wantToolError(t, call(t, c, "call_tool", map[string]any{"name": "market__get_stock_price", "arguments": map[string]any{"symbol": "A"}}), gateway.CodeUnknownTool)
	wantToolError(t, call(t, c, "market__get_stock_price", map[string]any{"symbol": "A"}), gateway.CodeUnknownTool)
	if n := e.up.calls.Load(); n != 0 {
		t.Fatalf("a call outside the request caller's sources reached the upstream (%d)", n)
	}
}

func TestCallerSourcesLimitFindAndCall(t *testing.T) {
	t.Parallel()
	e := setup(t, gateway.Options{CallTool: true})
	addSource(t, e.pool, "mail", "catalog", map[string]any{}, []catalog.Tool{
		{Name: "send_newsletter", Description: "Send a newsletter email to subscribers", InputSchema: emptySchema},
	})
	caller := &auth.Caller{Name: "mail-only", Scope: auth.ScopeSearch, Sources: []string{"mail"}}
	c := connectHTTP(t, serveGateway(t, e.g.HTTPHandler(), caller).URL)
	out := find(t, c, "send email stock price", 10)
	if len(out.Tools) != 1 || out.Tools[0].Name != "mail__send_newsletter" {
		t.Fatalf("caller limited to mail found %+v", out.Tools)
	}
	wantToolError(t, call(t, c, "market__get_stock_price", map[string]any{"symbol": "A"}), gateway.CodeUnknownTool)
	if n := e.up.calls.Load(); n != 0 {
		t.Fatalf("a call outside the caller's sources reached the upstream")
	}
}

func TestCapabilitiesResource(t *testing.T) {
	t.Parallel()
	e := setup(t, gateway.Options{CallTool: true, BindLimit: 7})
	c := connectHTTP(t, serveGateway(t, e.g.HTTPHandler(), nil).URL)
	res, err := c.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "toolgate://capabilities"})
	if err != nil {
		t.Fatal(err)
	}
	var caps gateway.Capabilities
	if err := json.Unmarshal([]byte(res.Contents[0].Text), &caps); err != nil {
		t.Fatal(err)
	}
	if !caps.Backends.Lexical || caps.Backends.Vector || caps.BindLimit != 7 || !slices.Equal(caps.Tools, []string{"find_tools", "call_tool"}) {
		t.Fatalf("capabilities = %+v", caps)
	}
}

func TestInMemoryTransportAndStdioUpstream(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	addSource(t, pool, "local", "mcp_stdio", map[string]any{
		"command": exe, "args": []string{"-test.run=^$"}, "env": map[string]string{stdioUpstreamEnv: "1"},
	}, upstreamTools())
	g := newGateway(t, pool, gateway.Options{CallTool: true, Commands: mcpclient.NewCommandPolicy([][]string{{exe, "env=" + stdioUpstreamEnv}})})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, ct := mcp.NewInMemoryTransports()
	done := make(chan error, 1)
	go func() { done <- g.Serve(ctx, st, nil) }()
	c := connect(t, ct)

	out := find(t, c, "email", 5)
	if len(out.Tools) != 1 || out.Tools[0].Name != "local__send_email" {
		t.Fatalf("find = %+v", out.Tools)
	}
	waitChanged(t, c)
	res := call(t, c, "local__send_email", map[string]any{"to": "bo@example.com", "body": "x"})
	if res.IsError || text(res) != "sent to bo@example.com" {
		t.Fatalf("call through stdio upstream = %v %q", res.IsError, text(res))
	}
	// The stdio session's binding is stored too.
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM mcp_session_tools`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("stored bindings = %d, %v", n, err)
	}
	_ = c.Close()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after the client closed")
	}
}

// TestStdioUpstreamOutsideTheAllowlist: a call to a tool of an mcp_stdio source whose
// command TOOLGATE_STDIO_COMMANDS does not hold (the source was stored before the allowlist
// changed) starts nothing and answers command_not_allowed.
func TestStdioUpstreamOutsideTheAllowlist(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	marker := filepath.Join(t.TempDir(), "marker")
	addSource(t, pool, "local", "mcp_stdio", map[string]any{"command": "/bin/sh", "args": []string{"-c", "touch " + marker}}, upstreamTools())
	g := newGateway(t, pool, gateway.Options{CallTool: true, Commands: mcpclient.NewCommandPolicy([][]string{{"npx"}})})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, ct := mcp.NewInMemoryTransports()
	go func() { _ = g.Serve(ctx, st, nil) }()
	c := connect(t, ct)
	res := call(t, c, "call_tool", map[string]any{"name": "local__send_email", "arguments": map[string]any{"to": "a", "body": "b"}})
	if e := wantToolError(t, res, "command_not_allowed"); !strings.Contains(e.Message, "TOOLGATE_STDIO_COMMANDS") {
		t.Fatalf("message %q does not name the setting", e.Message)
	}
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the refused command ran: %v", err)
	}
}

func TestUpstreamRestartReconnects(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	first, second := &upstream{stop: make(chan struct{})}, &upstream{stop: make(chan struct{})}
	var current atomic.Pointer[http.Handler]
	serve := func(u *upstream) {
		srv := u.server()
		var h http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
		current.Store(&h)
	}
	serve(first)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { (*current.Load()).ServeHTTP(w, r) }))
	t.Cleanup(ts.Close)
	addSource(t, pool, "market", "mcp_http", map[string]any{"url": ts.URL}, upstreamTools())
	g := newGateway(t, pool, gateway.Options{CallTool: true})
	c := connectHTTP(t, serveGateway(t, g.HTTPHandler(), nil).URL)

	if res := call(t, c, "market__get_stock_price", map[string]any{"symbol": "A"}); res.IsError {
		t.Fatal(text(res))
	}
	// The upstream restarts: its sessions are gone and it answers 404 for the old one.
	serve(second)
	if res := call(t, c, "market__get_stock_price", map[string]any{"symbol": "B"}); res.IsError || text(res) != "price of B: 123.45" {
		t.Fatalf("call after upstream restart: %s", text(res))
	}
	if first.calls.Load() != 1 || second.calls.Load() != 1 {
		t.Fatalf("calls: first %d, second %d; want one each", first.calls.Load(), second.calls.Load())
	}
}

// TestIdleSessionsLeaveMemory: a session idle for SessionIdle is dropped from memory
// without any other session being opened (before, only opening a session swept).
func TestIdleSessionsLeaveMemory(t *testing.T) {
	t.Parallel()
	e := setup(t, gateway.Options{CallTool: true, SessionIdle: 200 * time.Millisecond})
	h := e.g.HTTPHandler()
	c := connectHTTP(t, serveGateway(t, h, nil).URL)
	find(t, c, "stock price", 1)
	if h.InMemory() == 0 {
		t.Fatal("no session in memory after use")
	}
	deadline := time.Now().Add(10 * time.Second)
	for h.InMemory() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the idle session never left memory")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A tool its server names outside [A-Za-z0-9_.-]{1,128} is found, bound and called under
// its catalog name, and the call reaches the server under the server's own name.
func TestToolWithServerNameIsCalledByItsOriginalName(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	const original = "PDF&URLTool"
	srv := mcp.NewServer(&mcp.Implementation{Name: "docs", Version: "1"}, &mcp.ServerOptions{Logger: slog.New(slog.DiscardHandler)})
	srv.AddTool(&mcp.Tool{Name: original, InputSchema: emptySchema}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "called " + req.Params.Name}}}, nil
	})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	addSource(t, pool, "docs", "mcp_http", map[string]any{"url": ts.URL},
		[]catalog.Tool{{Name: original, Description: "Read a PDF document at a URL", InputSchema: emptySchema}})
	c := connectHTTP(t, serveGateway(t, newGateway(t, pool, gateway.Options{CallTool: true}).HTTPHandler(), nil).URL)

	const name = "docs__PDF_URLTool-f1f9486c" // catalog.CatalogName, as docs/sync.md documents it
	if out := find(t, c, "read a PDF document", 1); len(out.Tools) != 1 || out.Tools[0].Name != name {
		t.Fatalf("find_tools returned %+v, want %s", out.Tools, name)
	}
	waitChanged(t, c)
	if got := listed(t, c); !slices.Contains(got, name) {
		t.Fatalf("tool list %v lacks %s", got, name)
	}
	for _, res := range []*mcp.CallToolResult{
		call(t, c, name, map[string]any{}),
		call(t, c, "call_tool", map[string]any{"name": name, "arguments": map[string]any{}}),
	} {
		if res.IsError || text(res) != "called "+original {
			t.Errorf("call = %v %q, want the server called as %q", res.IsError, text(res), original)
		}
	}
}

// A tool whose catalog name the model APIs refuse (a ".", more than 64 characters) is
// returned by find_tools and listed under its function name; called by that name (listed,
// through call_tool, or from another session where it is not listed), or by its catalog
// name, it reaches its server under the server's own name and labels the search with the
// catalog name.
func TestToolListedUnderItsFunctionName(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	long := "lookup_" + strings.Repeat("x", 70)
	srv := mcp.NewServer(&mcp.Implementation{Name: "docs", Version: "1"}, &mcp.ServerOptions{Logger: slog.New(slog.DiscardHandler)})
	for _, n := range []string{"v1.search_docs", long} {
		srv.AddTool(&mcp.Tool{Name: n, InputSchema: emptySchema}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "called " + req.Params.Name}}}, nil
		})
	}
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	addSource(t, pool, "docs", "mcp_http", map[string]any{"url": ts.URL}, []catalog.Tool{
		{Name: "v1.search_docs", Description: "Search the documentation pages", InputSchema: emptySchema},
		{Name: long, Description: "Lookup of an invoice by its number", InputSchema: emptySchema},
	})
	g := newGateway(t, pool, gateway.Options{CallTool: true})
	url := serveGateway(t, g.HTTPHandler(), &auth.Caller{Name: "agent", KeyID: 7, Scope: auth.ScopeSearch}).URL
	c := connectHTTP(t, url)
	other := connectHTTP(t, url)
	api := regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)
	for _, tc := range []struct{ query, original string }{
		{"search the documentation pages", "v1.search_docs"},
		{"invoice number lookup", long},
	} {
		name := "docs__" + tc.original
		fn := catalog.FunctionName(name)
		out := find(t, c, tc.query, 1)
		if len(out.Tools) != 1 || out.Tools[0].Name != fn || !api.MatchString(fn) {
			t.Fatalf("find_tools %q returned %+v, want %s", tc.query, out.Tools, fn)
		}
		waitChanged(t, c)
		if got := listed(t, c); !slices.Contains(got, fn) || slices.Contains(got, name) {
			t.Fatalf("tool list %v: want %s, not %s", got, fn, name)
		}
		for _, res := range []*mcp.CallToolResult{
			call(t, c, fn, map[string]any{}),
			call(t, c, "call_tool", map[string]any{"name": fn, "arguments": map[string]any{}}),
			call(t, c, "call_tool", map[string]any{"name": name, "arguments": map[string]any{}}),
			call(t, other, fn, map[string]any{}),
		} {
			if res.IsError || text(res) != "called "+tc.original {
				t.Errorf("%s: call = %v %q, want the server called as %q", fn, res.IsError, text(res), tc.original)
			}
		}
		g.WaitLabels()
		var labelled string
		if err := pool.QueryRow(context.Background(), `SELECT tool_name FROM search_labels WHERE search_id = $1`, out.SearchID).Scan(&labelled); err != nil || labelled != name {
			t.Errorf("label of search %d: %q, %v; want %s", out.SearchID, labelled, err, name)
		}
	}
	if res := call(t, c, "call_tool", map[string]any{"name": catalog.FunctionName("docs__v2.search_docs")}); !res.IsError {
		t.Errorf("a function name of no tool was called: %q", text(res))
	}
}

// One key holds at most SessionsPerKey sessions in memory: opening more sets its least
// recently used initialized ones aside (not another key's), and a session set aside still
// works — its next request rebuilds it from its row. A session still in its handshake is
// not set aside: when all of a key's sessions are, a new one is refused (429), until they
// have waited HandshakeIdle: then the oldest is abandoned and the new one takes its place.
func TestSessionsPerKeyInMemory(t *testing.T) {
	t.Parallel()
	const handshakeIdle = time.Second
	e := setup(t, gateway.Options{CallTool: true, SessionsPerKey: 2, HandshakeIdle: handshakeIdle})
	h := e.g.HTTPHandler()
	a := serveGateway(t, h, &auth.Caller{Name: "a", KeyID: 1, Scope: auth.ScopeSearch}).URL
	b := serveGateway(t, h, &auth.Caller{Name: "b", KeyID: 2, Scope: auth.ScopeSearch}).URL
	other := connectHTTP(t, b)
	stored := func(key int64) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for n, s := h.InMemoryOf(key); s < n; n, s = h.InMemoryOf(key) {
			if time.Now().After(deadline) {
				t.Fatalf("key %d: %d of %d sessions stored after 10 s", key, s, n)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	var sessions []*client
	for range 5 {
		stored(1) // the handshake ends with the row written, after the client's Connect returns
		// A client whose standalone stream the server ends reconnects it (the go-sdk's
		// default retries), which rebuilds its session.
		sessions = append(sessions, connect(t, &mcp.StreamableClientTransport{Endpoint: a}))
		if n, _ := h.InMemoryOf(1); n > 2 {
			t.Fatalf("key 1 holds %d sessions in memory, want at most 2", n)
		}
	}
	if n, _ := h.InMemoryOf(2); n != 1 {
		t.Fatalf("key 2 holds %d sessions in memory, want its 1", n)
	}
	for i, c := range append(sessions, other) {
		stored(1)
		if out := find(t, c, "stock price of a company", 1); len(out.Tools) != 1 {
			t.Fatalf("session %d: find_tools returned %+v", i, out.Tools)
		}
	}
	if n, _ := h.InMemoryOf(1); n > 2 {
		t.Fatalf("after use, key 1 holds %d sessions in memory, want at most 2", n)
	}

	// Two sessions of key 3 in their handshake (initialize answered, no initialized yet):
	// a third initialize is 429 too_many_sessions, not the loss of one of them.
	c := serveGateway(t, h, &auth.Caller{Name: "c", KeyID: 3, Scope: auth.ScopeSearch}).URL
	initialize := func() int {
		req, _ := http.NewRequest(http.MethodPost, c, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	for i, want := range []int{http.StatusOK, http.StatusOK, http.StatusTooManyRequests} {
		if got := initialize(); got != want {
			t.Fatalf("initialize %d of key 3: %d, want %d", i+1, got, want)
		}
	}
	// Clients that never finish their handshake do not lock the key out for SessionIdle.
	// HandshakeIdle passing is the thing under test: the sleep is that wait, not ordering.
	time.Sleep(handshakeIdle + 100*time.Millisecond)
	if got := initialize(); got != http.StatusOK {
		t.Fatalf("initialize of key 3 after its handshakes were abandoned: %d, want 200", got)
	}
	if n, stored := h.InMemoryOf(3); n != 2 || stored != 0 {
		t.Errorf("key 3 holds %d sessions in memory (%d stored), want 2 in their handshake", n, stored)
	}
}

// Only initialize opens a session: a request without a session id that is anything else
// (the go-sdk client probes with server/discover first) is 400 missing_session_id and
// leaves nothing in memory, so one connecting client holds one session.
func TestOnlyInitializeOpensASession(t *testing.T) {
	t.Parallel()
	e := setup(t, gateway.Options{})
	h := e.g.HTTPHandler()
	url := serveGateway(t, h, &auth.Caller{Name: "a", KeyID: 1, Scope: auth.ScopeSearch}).URL
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"find_tools","arguments":{"query":"x"}}}`,
	} {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		msg, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Mcp-Session-Id") != "" || !strings.Contains(string(msg), "only initialize opens a session") {
			t.Errorf("%s: %d %q (session %q), want 400 and no session", body, resp.StatusCode, msg, resp.Header.Get("Mcp-Session-Id"))
		}
	}
	if n := h.InMemory(); n != 0 {
		t.Fatalf("%d sessions in memory after requests without a session id, want 0", n)
	}
	connectHTTP(t, url)
	if n := h.InMemory(); n != 1 {
		t.Fatalf("%d sessions in memory after one client connected, want 1", n)
	}
}
