package api_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/toolgate/toolgate/api"
	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/dataset"
	"github.com/toolgate/toolgate/internal/gateway"
	"github.com/toolgate/toolgate/internal/httpguard"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/search"
	"github.com/toolgate/toolgate/internal/sources"
	"github.com/toolgate/toolgate/jobs"
)

// corsStack is a keyed server with the MCP gateway over the demo catalog, taking browser
// requests from the pages of origins, and a search key.
func corsStack(t *testing.T, origins ...string) (srv *httptest.Server, key string, countSources func() int) {
	t.Helper()
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
	svc := search.New(pool, nil, search.DefaultSettings(), log)
	g := gateway.New(pool, gateway.SearchFinder{Search: svc}, gateway.Options{Backends: gateway.Backends{Lexical: true, Enricher: "none", Reranker: "none"}})
	t.Cleanup(g.Close)
	var allowed httpguard.Origins
	for _, o := range origins {
		norm, err := httpguard.ParseOrigin(o)
		if err != nil {
			t.Fatal(err)
		}
		allowed = append(allowed, norm)
	}
	srv = httptest.NewServer(api.New(api.Deps{Pool: pool, River: rc, Logger: log, Gateway: g, Search: svc, CORSOrigins: allowed}))
	t.Cleanup(srv.Close)
	if _, key, err = auth.NewKeys(pool, time.Now).Create(ctx, auth.Spec{Name: "page", Scope: auth.ScopeSearch}); err != nil {
		t.Fatal(err)
	}
	return srv, key, func() int {
		var n int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM sources`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
}

// TestCORSOriginsReachOnlySearchRoutes: a page of a listed origin may call the search routes
// (the preflight answers, the answer names the origin and exposes the MCP session header),
// but never an admin route, even with its simple, preflight-free requests; a page of any
// other origin is refused everywhere, as without the setting.
func TestCORSOriginsReachOnlySearchRoutes(t *testing.T) {
	t.Parallel()
	srv, key, countSources := corsStack(t, "https://app.example.com")
	do := func(method, path, origin string, headers map[string]string, body string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		req.Header.Set("Origin", origin)
		req.Header.Set("Sec-Fetch-Site", "cross-site")
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	const app = "https://app.example.com"
	for _, path := range []string{"/mcp", "/search"} {
		resp := do("OPTIONS", path, app, map[string]string{"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization, content-type"}, "")
		h := resp.Header
		if resp.StatusCode != 204 || h.Get("Access-Control-Allow-Origin") != app || !strings.Contains(h.Get("Access-Control-Allow-Headers"), "Authorization") ||
			!strings.Contains(h.Get("Access-Control-Allow-Methods"), "POST") || h.Get("Access-Control-Allow-Credentials") != "" {
			t.Errorf("preflight of %s: %d %v", path, resp.StatusCode, h)
		}
	}
	auth := map[string]string{"Authorization": "Bearer " + key, "Content-Type": "application/json"}
	resp := do("POST", "/search", app, auth, `{"query":"stock price"}`)
	if resp.StatusCode != 200 || resp.Header.Get("Access-Control-Allow-Origin") != app || !strings.Contains(resp.Header.Get("Access-Control-Expose-Headers"), "Mcp-Session-Id") {
		t.Errorf("search from a listed origin: %d %v", resp.StatusCode, resp.Header)
	}
	// without a credential the page learns where to get one: the challenge is readable
	resp = do("POST", "/search", app, map[string]string{"Content-Type": "application/json"}, `{"query":"stock price"}`)
	if resp.StatusCode != 401 || resp.Header.Get("Access-Control-Allow-Origin") != app || resp.Header.Get("WWW-Authenticate") == "" {
		t.Errorf("search without a key from a listed origin: %d %v", resp.StatusCode, resp.Header)
	}

	before := countSources()
	for _, tc := range []struct{ method, path, origin, body string }{
		{"OPTIONS", "/v1/sources", app, ""},
		{"POST", "/v1/sources", app, `{"name":"x","kind":"catalog"}`},
		{"GET", "/admin/keys", app, ""},
		{"OPTIONS", "/mcp", "https://evil.example.com", ""},
		{"POST", "/search", "https://evil.example.com", `{"query":"stock price"}`},
		{"POST", "/search", "https://app.example.com.evil.example.com", `{"query":"stock price"}`},
	} {
		headers := map[string]string{"Content-Type": "text/plain", "Authorization": "Bearer " + key}
		if tc.method == "OPTIONS" {
			headers = map[string]string{"Access-Control-Request-Method": "POST"}
		}
		resp := do(tc.method, tc.path, tc.origin, headers, tc.body)
		if resp.StatusCode != 403 || resp.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("%s %s from %s: %d, allow-origin %q; want 403 and no CORS header", tc.method, tc.path, tc.origin, resp.StatusCode, resp.Header.Get("Access-Control-Allow-Origin"))
		}
	}
	if n := countSources(); n != before {
		t.Fatalf("a refused request created a source: %d sources, were %d", n, before)
	}
}

// TestBrowserPageUsesMCP: in Chromium, a page of a listed origin runs the MCP exchange with
// toolgate (initialize, then find_tools in the session whose id it read from the answer)
// using its user's key; the same script on a page of another origin gets nothing, and the
// listed page's attempt at an admin route creates nothing.
func TestBrowserPageUsesMCP(t *testing.T) {
	t.Parallel()
	page := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "<!doctype html><title>agent page</title><p>agent page</p>")
	})
	listed := httptest.NewServer(page)
	t.Cleanup(listed.Close)
	other := httptest.NewServer(page)
	t.Cleanup(other.Close)
	srv, key, countSources := corsStack(t, listed.URL)

	ctx := newChromium(t)
	run := func(pageURL, script string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if _, err := chromedp.Run(ctx, chromedp.Navigate(pageURL)); err != nil {
			t.Fatal(err)
		}
		out, err := chromedp.Run(ctx, chromedp.Evaluate[string](script, chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatalf("%s: %v", pageURL, err)
		}
		return out
	}
	mcpScript := fmt.Sprintf(`(async () => {
  const base = %q, h = {"Authorization": "Bearer %s", "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream", "Mcp-Protocol-Version": "2025-06-18"};
  const post = (sid, msg) => fetch(base + "/mcp", {method: "POST", headers: sid ? {...h, "Mcp-Session-Id": sid} : h, body: JSON.stringify(msg)});
  try {
    const init = await post("", {jsonrpc: "2.0", id: 1, method: "initialize",
      params: {protocolVersion: "2025-06-18", capabilities: {}, clientInfo: {name: "page", version: "1"}}});
    const sid = init.headers.get("Mcp-Session-Id");
    await init.text();
    if (!sid) return "no session id readable: " + init.status + " " + [...init.headers.keys()].join(",");
    await (await post(sid, {jsonrpc: "2.0", method: "notifications/initialized"})).text();
    const call = await post(sid, {jsonrpc: "2.0", id: 2, method: "tools/call",
      params: {name: "find_tools", arguments: {query: "stock price", limit: 3}}});
    return call.status + " " + await call.text();
  } catch (e) { return "refused: " + e.name; }
})()`, srv.URL, key)
	if got := run(listed.URL, mcpScript); !strings.HasPrefix(got, "200 ") || !strings.Contains(got, "demo__") {
		t.Fatalf("the listed page's MCP exchange: %s", got)
	}
	if got := run(other.URL, mcpScript); got != "refused: TypeError" {
		t.Fatalf("another origin's page: %s, want the browser to refuse it", got)
	}
	before := countSources()
	admin := fmt.Sprintf(`fetch(%q + "/v1/sources", {method: "POST", headers: {"Content-Type": "text/plain"},
  body: JSON.stringify({name: "x", kind: "catalog"})}).then(r => "answered " + r.status, e => "refused: " + e.name)`, srv.URL)
	if got := run(listed.URL, admin); got != "refused: TypeError" {
		t.Fatalf("the listed page's admin request: %s", got)
	}
	if n := countSources(); n != before {
		t.Fatalf("the page's admin request created a source")
	}
}

// newChromium starts headless Chromium for the test: $TOOLGATE_CHROMIUM, or chromium on
// PATH (scripts/test.sh installs Debian's).
func newChromium(t *testing.T) context.Context {
	t.Helper()
	path := os.Getenv("TOOLGATE_CHROMIUM")
	if path == "" {
		var err error
		if path, err = exec.LookPath("chromium"); err != nil {
			t.Fatalf("browser tests need Chromium (apt-get install -y chromium, as scripts/test.sh does, or set TOOLGATE_CHROMIUM): %v", err)
		}
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.Flag("disable-extensions", true),
		chromedp.UserDataDir(t.TempDir()))
	ctx, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancelTab()
		cancelAlloc()
	})
	// the first action starts the browser on ctx itself, so that the per-step timeouts
	// derived from it end steps, not the browser
	if _, err := chromedp.Run(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}
