package api_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/toolgate/toolgate/api"
	"github.com/toolgate/toolgate/internal/gateway"
	"github.com/toolgate/toolgate/internal/oauth"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/search"
)

// openAPIDoc is the part of the document the checks read.
type openAPIDoc struct {
	OpenAPI string                                 `json:"openapi"`
	Paths   map[string]map[string]openAPIOperation `json:"paths"`
}

type openAPIOperation struct {
	OperationID string           `json:"operationId"`
	Parameters  []map[string]any `json:"parameters"`
	Responses   map[string]any   `json:"responses"`
	RequestBody map[string]any   `json:"requestBody"`
}

var echoParam = regexp.MustCompile(`:([A-Za-z0-9_]+)`)

// TestOpenAPICoversEveryRoute fails when a registered route is missing from /openapi.json
// or the document describes a route that is not registered. The server has every optional
// part (the MCP gateway's /mcp and /v1/capabilities, OAuth's metadata), as `toolgate serve` has.
func TestOpenAPICoversEveryRoute(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	log := slog.New(slog.DiscardHandler)
	g := gateway.New(pool, gateway.SearchFinder{Search: search.New(pool, nil, search.DefaultSettings(), log)}, gateway.Options{})
	t.Cleanup(g.Close)
	verifier := oauth.NewVerifier(oauth.Settings{Issuers: []string{"https://auth.example.com"}, Resource: "https://toolgate.example.com"}, log)
	e := api.New(api.Deps{Pool: pool, Logger: log, Gateway: g, OAuth: verifier})

	registered := map[string]bool{}
	for _, r := range e.Routes() {
		if r.Method == echo.RouteNotFound {
			continue // catch-alls Echo adds for group middleware
		}
		if r.Path == "/ui" || strings.HasPrefix(r.Path, "/ui/") {
			continue // the console's pages and files (internal/console): HTML for browsers, not API
		}
		registered[r.Method+" "+echoParam.ReplaceAllString(r.Path, "{$1}")] = true
	}

	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/openapi.json", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /openapi.json: %d", rec.Code)
	}
	var doc openAPIDoc
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.") {
		t.Errorf("openapi version %q, want 3.x", doc.OpenAPI)
	}
	documented := map[string]bool{}
	for path, ops := range doc.Paths {
		for method, op := range ops {
			documented[strings.ToUpper(method)+" "+path] = true
			if op.OperationID == "" || len(op.Responses) == 0 {
				t.Errorf("%s %s: needs an operationId and responses", method, path)
			}
			// Every body has a limit (/mcp's is the gateway's own).
			if op.RequestBody != nil && path != "/mcp" && op.Responses["413"] == nil {
				t.Errorf("%s %s: takes a body but documents no 413", method, path)
			}
			// Every {param} of the path is declared as a path parameter.
			for _, m := range regexp.MustCompile(`\{([^}]+)\}`).FindAllStringSubmatch(path, -1) {
				if !slices.ContainsFunc(op.Parameters, func(p map[string]any) bool { return p["name"] == m[1] && p["in"] == "path" }) {
					t.Errorf("%s %s: path parameter %q not declared", method, path, m[1])
				}
			}
		}
	}
	for r := range registered {
		if !documented[r] {
			t.Errorf("route %s is registered but missing from api/openapi.json", r)
		}
	}
	for d := range documented {
		if !registered[d] {
			t.Errorf("api/openapi.json documents %s, which is not registered", d)
		}
	}
}

// TestOpenAPIRefsResolve fails on a $ref to a component that does not exist.
func TestOpenAPIRefsResolve(t *testing.T) {
	t.Parallel()
	e := api.New(api.Deps{Pool: pgtest.NewPool(t), Logger: slog.New(slog.DiscardHandler)})
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/openapi.json", nil))
	var doc map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if ref, ok := v["$ref"].(string); ok {
				var cur any = doc
				for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
					m, _ := cur.(map[string]any)
					cur = m[part]
				}
				if cur == nil {
					t.Errorf("$ref %s does not resolve", ref)
				}
			}
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(doc)
}
