package api_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/api"
	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/dataset"
	"github.com/toolgate/toolgate/internal/gateway"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/search"
	"github.com/toolgate/toolgate/internal/sources"
	"github.com/toolgate/toolgate/jobs"
)

// TestMCPEndpointAndCapabilities drives /mcp with the go-sdk client through the Echo server
// and reads GET /v1/capabilities.
func TestMCPEndpointAndCapabilities(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	rc, err := jobs.NewClient(jobs.Deps{Pool: pool, Logger: log}, jobs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := sources.Import(ctx, pool, jobs.NewQueue(rc), "demo", dataset.Tools(dataset.DemoCompanies[:2])); err != nil {
		t.Fatal(err)
	}
	g := gateway.New(pool, gateway.SearchFinder{Search: search.New(pool, nil, search.DefaultSettings(), slog.New(slog.DiscardHandler))}, gateway.Options{
		CallTool: true, BindLimit: 16, Backends: gateway.Backends{Lexical: true, Enricher: "none", Reranker: "none"},
	})
	t.Cleanup(g.Close)
	srv := httptest.NewServer(api.New(api.Deps{Pool: pool, River: rc, Logger: log, Gateway: g}))
	t.Cleanup(srv.Close)

	// /mcp and /v1/capabilities need a key; a search-scoped one is enough.
	resp, err := http.Post(srv.URL+"/mcp", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("/mcp without a key: %d, want 401", resp.StatusCode)
	}
	_, key, err := auth.NewKeys(pool, time.Now).Create(ctx, auth.Spec{Name: "agent", Scope: auth.ScopeSearch})
	if err != nil {
		t.Fatal(err)
	}
	bearer := &http.Client{Transport: bearerTransport{key: key}}

	req, _ := http.NewRequest("GET", srv.URL+"/v1/capabilities", nil)
	resp, err = bearer.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	json.NewDecoder(resp.Body).Decode(&body)
	resp.Body.Close()
	status := resp.StatusCode
	backends, _ := body["backends"].(map[string]any)
	if status != 200 || backends["lexical"] != true || backends["vector"] != false || body["bind_limit"] != float64(16) || body["call_proxying"] != true {
		t.Fatalf("capabilities: %d %v", status, body)
	}

	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", MaxRetries: -1, HTTPClient: bearer}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "find_tools", Arguments: map[string]any{"query": "stock price", "limit": 3}})
	if err != nil || res.IsError {
		t.Fatalf("find_tools: %v %+v", err, res)
	}
	var out struct {
		Tools []struct{ Name, Version string } `json:"tools"`
	}
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Tools) != 3 || !strings.HasPrefix(out.Tools[0].Name, "demo__") || len(out.Tools[0].Version) != 64 {
		t.Fatalf("find_tools over /mcp returned %+v", out.Tools)
	}
}

// bearerTransport adds an API key to every request.
type bearerTransport struct{ key string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return http.DefaultTransport.RoundTrip(r)
}

// TestMCPRefusalsAreJSON: /mcp follows the Streamable HTTP transport's rules and answers
// every refusal in the API's error shape: an unsupported Mcp-Protocol-Version is 400, a
// foreign Origin (with a valid Host) 403, and the transport's own refusals (no session id,
// an unknown session, a malformed body, another method) are {"error":{"code","message"}},
// not plain text.
func TestMCPRefusalsAreJSON(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	log := slog.New(slog.DiscardHandler)
	g := gateway.New(pool, gateway.SearchFinder{Search: search.New(pool, nil, search.DefaultSettings(), log)}, gateway.Options{})
	t.Cleanup(g.Close)
	srv := httptest.NewServer(api.New(api.Deps{Pool: pool, Logger: log, Gateway: g, Open: true}))
	t.Cleanup(srv.Close)

	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	send := func(method, body string, headers map[string]string) (int, string, string) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		var out struct {
			Error struct{ Code, Message string } `json:"error"`
		}
		if resp.StatusCode >= 400 && (json.Unmarshal(raw, &out) != nil || out.Error.Message == "" ||
			!strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json")) {
			t.Errorf("%s /mcp %v: %d %s %q, want a JSON error", method, headers, resp.StatusCode, resp.Header.Get("Content-Type"), raw)
		}
		return resp.StatusCode, out.Error.Code, string(raw)
	}
	for _, tc := range []struct {
		name, method, body string
		headers            map[string]string
		status             int
		code               string
	}{
		{"unsupported protocol version", "POST", initialize, map[string]string{"Mcp-Protocol-Version": "1999-01-01"}, 400, "unsupported_protocol_version"},
		{"foreign Origin, valid Host", "POST", initialize, map[string]string{"Origin": "http://evil.example.com"}, 403, "cross_origin"},
		{"GET without a session", "GET", "", nil, 400, "missing_session_id"},
		{"unknown session", "POST", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, map[string]string{"Mcp-Session-Id": "nope"}, 404, "session_not_found"},
		{"malformed body", "POST", `not json`, nil, 400, "invalid_request"},
		{"another method", "PUT", initialize, nil, 405, "method_not_allowed"},
	} {
		if status, code, raw := send(tc.method, tc.body, tc.headers); status != tc.status || code != tc.code {
			t.Errorf("%s: %d %s %s, want %d %s", tc.name, status, code, raw, tc.status, tc.code)
		}
	}
	// A supported version, and the server's own origin, are served.
	if status, _, raw := send("POST", initialize, map[string]string{"Mcp-Protocol-Version": "2025-06-18", "Origin": srv.URL}); status != 200 {
		t.Errorf("initialize: %d %s", status, raw)
	}
}
