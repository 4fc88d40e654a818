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
	if _, _, err := jobs.ImportCatalog(ctx, pool, rc, "demo", dataset.Tools(dataset.DemoCompanies[:2])); err != nil {
		t.Fatal(err)
	}
	g := gateway.New(pool, gateway.NewKeywordFinder(pool), gateway.Options{
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
