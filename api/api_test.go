package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/api"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/postgres"
	"github.com/toolgate/toolgate/jobs"
)

// newTestServer serves api.New on a fresh database.
func newTestServer(t *testing.T) *httptest.Server {
	t.Helper()
	pool := pgtest.NewPool(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	rc, err := jobs.NewClient(jobs.Deps{Pool: pool, Logger: log}, jobs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Open mode: these tests are about the endpoints; access control is tested in auth_test.go.
	srv := httptest.NewServer(api.New(api.Deps{Pool: pool, River: rc, Logger: log, Open: true}))
	t.Cleanup(srv.Close)
	return srv
}

// call sends a request and decodes the JSON answer.
func call(t *testing.T, srv *httptest.Server, method, path, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if len(bytes.TrimSpace(raw)) > 0 {
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatalf("%s %s: non-JSON answer %q", method, path, raw)
		}
	}
	return resp.StatusCode, out
}

func errorCode(body map[string]any) string {
	e, _ := body["error"].(map[string]any)
	code, _ := e["code"].(string)
	return code
}

func TestHealthAndReadiness(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t)
	if code, body := call(t, srv, "GET", "/healthz", ""); code != 200 || body["status"] != "ok" {
		t.Fatalf("healthz: %d %v", code, body)
	}
	if code, body := call(t, srv, "GET", "/readyz", ""); code != 200 || body["status"] != "ready" {
		t.Fatalf("readyz: %d %v", code, body)
	}
	if code, body := call(t, srv, "GET", "/no/such/route", ""); code != 404 || errorCode(body) != "not_found" {
		t.Fatalf("unknown route: %d %v", code, body)
	}
}

func TestCatalogSourceLifecycle(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t)

	code, body := call(t, srv, "POST", "/v1/sources", `{"name":"fin","kind":"catalog","tools":[
		{"name":"get_price","description":"Current price","input_schema":{"type":"object"}},
		{"type":"function","function":{"name":"get_revenue","description":"Revenue","parameters":{"type":"object"}}}]}`)
	if code != 201 {
		t.Fatalf("create: %d %v", code, body)
	}
	if res := body["result"].(map[string]any); res["created"] != 2.0 {
		t.Fatalf("create result: %v", res)
	}
	if code, body := call(t, srv, "POST", "/v1/sources", `{"name":"fin","kind":"catalog","tools":[{"name":"x"}]}`); code != 409 {
		t.Fatalf("duplicate source: %d %v", code, body)
	}

	// Replacing the catalog with a bad file changes nothing.
	code, body = call(t, srv, "PUT", "/v1/sources/fin/tools", "{\"name\":\"get_price\"}\n{\"name\":\"bad\",\"input_schema\":\"x\"}\n{\"name\":\"get_price\"}\n")
	if code != 400 || errorCode(body) != "invalid_catalog" {
		t.Fatalf("bad catalog: %d %v", code, body)
	}
	problems := body["error"].(map[string]any)["details"].([]any)
	if len(problems) != 2 || problems[0].(map[string]any)["line"] != 2.0 || problems[1].(map[string]any)["line"] != 3.0 {
		t.Fatalf("problems: %v", problems)
	}
	if _, src := call(t, srv, "GET", "/v1/sources/fin", ""); src["tools"] != 2.0 {
		t.Fatalf("catalog changed by a rejected import: %v", src)
	}

	code, body = call(t, srv, "PUT", "/v1/sources/fin/tools", `{"name":"get_price","description":"Current price","input_schema":{"type":"object"}}`)
	if code != 200 {
		t.Fatalf("replace: %d %v", code, body)
	}
	res := body["result"].(map[string]any)
	if res["unchanged"] != 1.0 || res["deleted"] != 1.0 {
		t.Fatalf("replace result: %v", res)
	}
	code, body = call(t, srv, "GET", "/v1/sources/fin", "")
	last := body["last_sync"].(map[string]any)
	if code != 200 || body["tools"] != 1.0 || last["state"] != "succeeded" || last["deleted"] != 1.0 {
		t.Fatalf("get: %d %v", code, body)
	}
	if code, body := call(t, srv, "GET", "/v1/sources", ""); code != 200 || len(body["sources"].([]any)) != 1 {
		t.Fatalf("list: %d %v", code, body)
	}
	if code, _ := call(t, srv, "DELETE", "/v1/sources/fin", ""); code != 204 {
		t.Fatalf("delete: %d", code)
	}
	if code, body := call(t, srv, "GET", "/v1/sources/fin", ""); code != 404 || errorCode(body) != "not_found" {
		t.Fatalf("get deleted: %d %v", code, body)
	}
}

func TestCreateSourceValidation(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t)
	cases := map[string]string{
		"bad json":       `{"name":`,
		"unknown field":  `{"name":"a","kind":"catalog","tools":[{"name":"x"}],"extra":1}`,
		"bad name":       `{"name":"Has_Upper","kind":"catalog","tools":[{"name":"x"}]}`,
		"bad kind":       `{"name":"a","kind":"ftp","tools":[{"name":"x"}]}`,
		"no tools":       `{"name":"a","kind":"catalog","tools":[]}`,
		"missing name":   `{"name":"a","kind":"catalog","tools":[{"description":"x"}]}`,
		"huge desc":      `{"name":"a","kind":"catalog","tools":[{"name":"x","description":"` + strings.Repeat("d", 10<<20) + `"}]}`,
		"schema not obj": `{"name":"a","kind":"catalog","tools":[{"name":"x","input_schema":[]}]}`,
		"duplicate tool": `{"name":"a","kind":"catalog","tools":[{"name":"x"},{"name":"x"}]}`,
	}
	for name, body := range cases {
		code, out := call(t, srv, "POST", "/v1/sources", body)
		if code != 400 || errorCode(out) == "" {
			t.Errorf("%s: %d %v, want 400 with an error code", name, code, out)
		}
	}
	if code, out := call(t, srv, "GET", "/v1/sources", ""); code != 200 || len(out["sources"].([]any)) != 0 {
		t.Fatalf("rejected requests left sources behind: %v", out)
	}
}

// TestReadinessChecksTheReplica: with a read replica, /readyz also needs the replica to be
// migrated; a replica that is not (here: the server's maintenance database) makes it 503.
func TestReadinessChecksTheReplica(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	behind, err := postgres.Connect(ctx, pgtest.URLFor("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer behind.Close()
	log := slog.New(slog.DiscardHandler)
	for _, tc := range []struct {
		read *pgxpool.Pool
		want int
	}{{pool, http.StatusOK}, {behind, http.StatusServiceUnavailable}} {
		srv := httptest.NewServer(api.New(api.Deps{Pool: pool, ReadPool: tc.read, Logger: log, Open: true}))
		code, body := call(t, srv, "GET", "/readyz", "")
		srv.Close()
		if code != tc.want {
			t.Errorf("readyz with replica: %d %v, want %d", code, body, tc.want)
		}
		if e, _ := body["error"].(map[string]any); tc.want != http.StatusOK && (e == nil || !strings.Contains(e["message"].(string), "read replica")) {
			t.Errorf("readyz error does not name the replica: %v", body)
		}
	}
}

// A catalog tool whose text PostgreSQL cannot store (a NUL in the description, a \u0000 in
// a schema key, invalid UTF-8) is refused with 400 invalid_catalog naming the tool, through
// PUT and through POST /v1/sources, and the stored catalog is left as it was.
func TestCatalogWithUnstorableTextIsRefusedByName(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t)
	if code, out := call(t, srv, "PUT", "/v1/sources/docs/tools", `{"name":"kept","description":"Kept."}`); code != 200 {
		t.Fatalf("first import: %d %v", code, out)
	}
	for name, tc := range map[string]struct{ method, path, body, tool, reason string }{
		"NUL description": {"PUT", "/v1/sources/docs/tools", `{"name":"ok","description":"Fine."}` + "\n" + `{"name":"pdf_tool","description":"Reads PDFs.\u0000"}`,
			"pdf_tool", "description contains a NUL character"},
		"NUL schema key": {"PUT", "/v1/sources/docs/tools", `{"name":"keyed","input_schema":{"type":"object","properties":{"pa\u0000th":{"type":"string"}}}}`,
			"keyed", `input_schema contains a NUL character (\u0000)`},
		"invalid UTF-8": {"PUT", "/v1/sources/docs/tools", "{\"name\":\"latin1\",\"input_schema\":{\"properties\":{\"caf\xe9\":{}}}}",
			"latin1", "definition is not valid UTF-8"},
		"inline NUL": {"POST", "/v1/sources", `{"name":"inline","kind":"catalog","tools":[{"name":"nul","description":"a\u0000b"}]}`,
			"nul", "description contains a NUL character"},
	} {
		code, out := call(t, srv, tc.method, tc.path, tc.body)
		var first map[string]any
		if e, ok := out["error"].(map[string]any); ok {
			if d, ok := e["details"].([]any); ok && len(d) > 0 {
				first, _ = d[0].(map[string]any)
			}
		}
		if code != 400 || errorCode(out) != "invalid_catalog" || first["name"] != tc.tool || first["reason"] != tc.reason {
			t.Errorf("%s: %d %v, want 400 invalid_catalog naming %s: %s", name, code, out, tc.tool, tc.reason)
		}
	}
	code, out := call(t, srv, "GET", "/v1/sources/docs", "")
	if code != 200 || out["tools"] != float64(1) {
		t.Errorf("refused imports changed the catalog: %d %v", code, out)
	}
}
