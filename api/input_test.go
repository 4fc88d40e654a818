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

	"github.com/toolgate/toolgate/api"
	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/search"
	"github.com/toolgate/toolgate/internal/testfactory"
	"github.com/toolgate/toolgate/jobs"
)

// newInputServer serves api.New in open mode with a search service over one catalog tool.
func newInputServer(t *testing.T) *httptest.Server {
	t.Helper()
	pool := pgtest.NewPool(t)
	log := slog.New(slog.DiscardHandler)
	rc, err := jobs.NewClient(jobs.Deps{Pool: pool, Logger: log}, jobs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	testfactory.Catalog(context.Background(), t, pool, "acme", []catalog.Tool{testfactory.Tool("get_stock_price", "Latest stock price of a ticker")}, nil)
	srv := httptest.NewServer(api.New(api.Deps{Pool: pool, River: rc, Logger: log, Open: true,
		Search: search.New(pool, nil, search.DefaultSettings(), log)}))
	t.Cleanup(srv.Close)
	return srv
}

// send sends body with contentType ("" sends none) and returns the status and error code.
func send(t *testing.T, srv *httptest.Server, method, path, contentType, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil && len(raw) > 0 {
		t.Fatalf("%s %s: non-JSON answer %q", method, path, raw)
	}
	return resp.StatusCode, errorCode(out)
}

// TestJSONEndpointsTakeOnlyJSON: a body a browser page may send to any origin without a
// preflight (text/plain, a form, multipart) or with no Content-Type is refused with 415
// before anything happens; the catalog upload takes JSON lines types too.
func TestJSONEndpointsTakeOnlyJSON(t *testing.T) {
	t.Parallel()
	srv := newInputServer(t)
	source := `{"name":"x","kind":"catalog","tools":[{"name":"t","description":"d"}]}`
	for _, ct := range []string{"text/plain;charset=UTF-8", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", ""} {
		for _, tc := range []struct{ method, path, body string }{
			{"POST", "/v1/sources", source},
			{"POST", "/search", `{"query":"stock price"}`},
			{"POST", "/admin/keys", `{"name":"k","scope":"admin"}`},
			{"PUT", "/v1/sources/y/tools", `{"name":"t","description":"d"}`},
		} {
			if status, code := send(t, srv, tc.method, tc.path, ct, tc.body); status != http.StatusUnsupportedMediaType || code != "unsupported_media_type" {
				t.Errorf("%s %s as %q: %d %s, want 415 unsupported_media_type", tc.method, tc.path, ct, status, code)
			}
		}
	}
	if status, _ := send(t, srv, "GET", "/v1/sources/x", "", ""); status != http.StatusNotFound {
		t.Errorf("a refused body created the source: GET %d", status)
	}
	if status, code := send(t, srv, "POST", "/search", "application/json; charset=utf-8", `{"query":"stock price"}`); status != 200 {
		t.Errorf("JSON with a charset: %d %s", status, code)
	}
	for i, ct := range []string{"application/x-ndjson", "application/jsonl", "application/x-jsonlines", "application/json"} {
		if status, code := send(t, srv, "PUT", "/v1/sources/c"+strconv.Itoa(i)+"/tools", ct, "{\"name\":\"t\",\"description\":\"d\"}\n"); status != 200 {
			t.Errorf("catalog as %s: %d %s", ct, status, code)
		}
	}
}

// TestTextInputs: a NUL character or invalid UTF-8 in any string input — a field of a
// JSON body, a path or query parameter — is a 400 invalid_text, never a 500 from
// PostgreSQL ("invalid byte sequence for encoding").
func TestTextInputs(t *testing.T) {
	t.Parallel()
	srv := newInputServer(t)
	status, _ := send(t, srv, "POST", "/search", "application/json", `{"query":"stock price"}`)
	if status != 200 {
		t.Fatalf("search: %d", status)
	}
	for _, body := range []string{
		`{"query":"stock\u0000price"}`,
		`{"query":"x","queries":["ok","\u0000"]}`,
		`{"query":"x","sources":["acme\u0000"]}`,
		`{"query":"x","tags":["\u0000"]}`,
		`{"query":"x","profile":"default\u0000"}`,
		`{"query":"x","session_id":"s\u0000"}`,
		`{"query":"x","mode":"lexical\u0000"}`,
		`{"query":"x","format":"\u0000"}`,
		`{"query":"x","plan":"full\u0000"}`,
		"{\"query\":\"caf\xc3\"}",
		"{\"query\":\"x\",\"tags\":[\"\xff\"]}",
	} {
		if status, code := send(t, srv, "POST", "/search", "application/json", body); status != 400 || code != "invalid_text" {
			t.Errorf("POST /search %q: %d %s, want 400 invalid_text", body, status, code)
		}
	}
	for _, tc := range []struct{ method, path, body string }{
		{"POST", "/search/1/feedback", `{"tools":[{"name":"acme__get_stock_price\u0000","success":true}]}`},
		{"POST", "/v1/sources", `{"name":"s","kind":"mcp_http","url":"http://127.0.0.1:1/mcp","headers":{"X-\u0000":"v"}}`},
		{"POST", "/v1/sources", `{"name":"s","kind":"mcp_stdio","command":"x","env":{"TOKEN":"a\u0000"}}`},
		{"POST", "/admin/keys", `{"name":"k","scope":"search","sources":["a\u0000"]}`},
		{"PUT", "/admin/profiles/p", `{"strategy":"tdwa","weights":{"name\u0000":1}}`},
		// path and query parameters: %00 is a NUL, %FF a byte that is not UTF-8
		{"GET", "/v1/tools/acme__get%00stock", ""},
		{"GET", "/v1/tools/acme__get%FFstock", ""},
		// lower-case hex makes the request keep its raw path, which the router matches
		{"GET", "/v1/tools/acme__get%ffstock", ""},
		{"GET", "/v1/tools/acme__get%00stock%5f", ""},
		{"GET", "/v1/tools/acme__get_stock_price/history?limit=%00", ""},
		{"GET", "/v1/sources/acme%00", ""},
		{"DELETE", "/v1/sources/acme%00", ""},
		{"POST", "/v1/sources/acme%00/sync", ""},
		{"POST", "/admin/tools/x%00/disable", ""},
		{"DELETE", "/admin/keys/%00", ""},
		{"GET", "/admin/profiles/%00", ""},
		{"POST", "/search/%00/feedback", `{"tools":[{"name":"x","success":true}]}`},
		{"GET", "/admin/jobs?kind=%00", ""},
	} {
		if status, code := send(t, srv, tc.method, tc.path, "application/json", tc.body); status != 400 || code != "invalid_text" {
			t.Errorf("%s %s %s: %d %s, want 400 invalid_text", tc.method, tc.path, tc.body, status, code)
		}
	}
	// A path parameter is its unescaped text however it was escaped.
	for _, path := range []string{"/v1/sources/acme", "/v1/sources/%61cme", "/v1/sources/%61%63me"} {
		if status, code := send(t, srv, "GET", path, "", ""); status != 200 {
			t.Errorf("GET %s: %d %s, want 200", path, status, code)
		}
	}
}
