package api_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/api"
	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/jobs"
)

// guardRequest sends a request with the given headers ("Host" sets the Host header) and
// returns the status and error code.
func guardRequest(t *testing.T, srv *httptest.Server, method, path, body string, headers map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range headers {
		if k == "Host" {
			req.Host = v
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
	var code string
	if i := strings.Index(string(raw), `"code":"`); i >= 0 {
		code, _, _ = strings.Cut(string(raw)[i+len(`"code":"`):], `"`)
	}
	return resp.StatusCode, code
}

// TestOpenModeRefusesWebPages: in open mode any page the user visits could drive the API
// through the user's browser. The attack of the issue — a cross-origin text/plain POST of
// an mcp_stdio source — and its variants are refused before anything is created: a foreign
// Origin or Sec-Fetch-Site (403 cross_origin), a foreign Host as a DNS-rebinding page sends
// it (403 forbidden_host).
func TestOpenModeRefusesWebPages(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t)
	host := strings.TrimPrefix(srv.URL, "http://")
	attack := `{"name":"x","kind":"mcp_stdio","command":"sh","args":["-c","id > /tmp/marker"]}`
	for _, tc := range []struct {
		name    string
		method  string
		path    string
		headers map[string]string
		code    string
	}{
		{"the issue's request", "POST", "/v1/sources", map[string]string{"Origin": "http://evil.example.com", "Content-Type": "text/plain;charset=UTF-8"}, "cross_origin"},
		{"JSON from another origin", "POST", "/v1/sources", map[string]string{"Origin": "http://evil.example.com", "Content-Type": "application/json"}, "cross_origin"},
		{"another port of localhost", "POST", "/v1/sources", map[string]string{"Origin": "http://127.0.0.1:3000", "Content-Type": "application/json"}, "cross_origin"},
		{"a sandboxed page", "POST", "/v1/sources", map[string]string{"Origin": "null", "Content-Type": "application/json"}, "cross_origin"},
		{"no Origin but Sec-Fetch-Site", "POST", "/v1/sources", map[string]string{"Sec-Fetch-Site": "cross-site", "Content-Type": "application/json"}, "cross_origin"},
		{"a bodiless POST from a page", "POST", "/v1/sources/x/sync", map[string]string{"Origin": "http://evil.example.com"}, "cross_origin"},
		{"a read from a page", "GET", "/admin/keys", map[string]string{"Sec-Fetch-Site": "same-site"}, "cross_origin"},
		{"DNS rebinding", "POST", "/v1/sources", map[string]string{"Host": "evil.example.com:" + strings.Split(host, ":")[1], "Content-Type": "application/json"}, "forbidden_host"},
		{"DNS rebinding, same origin", "GET", "/admin/keys", map[string]string{"Host": "rebind.example.com", "Origin": "http://rebind.example.com"}, "forbidden_host"},
	} {
		status, code := guardRequest(t, srv, tc.method, tc.path, attack, tc.headers)
		if status != http.StatusForbidden || code != tc.code {
			t.Errorf("%s: %d %s, want 403 %s", tc.name, status, code, tc.code)
		}
	}
	if status, _ := guardRequest(t, srv, "GET", "/v1/sources/x", "", nil); status != http.StatusNotFound {
		t.Fatalf("a refused request created the source: GET %d", status)
	}
	// Programs (no Origin) and the server's own origin, under localhost or an IP address, pass.
	for _, h := range []map[string]string{
		{"Content-Type": "application/json"},
		{"Content-Type": "application/json", "Origin": srv.URL, "Sec-Fetch-Site": "same-origin"},
		{"Content-Type": "application/json", "Host": "localhost:" + strings.Split(host, ":")[1]},
	} {
		if status, code := guardRequest(t, srv, "GET", "/v1/sources", "", h); status != http.StatusOK {
			t.Errorf("%v: %d %s, want 200", h, status, code)
		}
	}
}

// TestKeyedModeRefusesCrossOrigin: with API keys the Host header is not checked (a reverse
// proxy may carry any name), but a request from a page of another origin is still refused.
func TestKeyedModeRefusesCrossOrigin(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	log := slog.New(slog.DiscardHandler)
	rc, err := jobs.NewClient(jobs.Deps{Pool: pool, Logger: log}, jobs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, key, err := auth.NewKeys(pool, time.Now).Create(context.Background(), auth.Spec{Name: "ops", Scope: auth.ScopeAdmin})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api.New(api.Deps{Pool: pool, River: rc, Logger: log}))
	t.Cleanup(srv.Close)
	bearer := "Bearer " + key
	if status, code := guardRequest(t, srv, "GET", "/v1/sources", "", map[string]string{"Authorization": bearer, "Host": "toolgate.example.com"}); status != 200 {
		t.Errorf("a named Host with a key: %d %s, want 200", status, code)
	}
	if status, code := guardRequest(t, srv, "GET", "/v1/sources", "", map[string]string{"Authorization": bearer, "Origin": "http://evil.example.com"}); status != 403 || code != "cross_origin" {
		t.Errorf("another origin with a key: %d %s, want 403 cross_origin", status, code)
	}
}
