package api_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/labstack/echo/v4"

	"github.com/toolgate/toolgate/api"
	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/search"
	"github.com/toolgate/toolgate/internal/testfactory"
	"github.com/toolgate/toolgate/jobs"
)

// limitServer serves api.New in open mode with limits over a catalog source "acme". Every
// request body the API reads is counted in read.
type limitServer struct {
	*httptest.Server
	pool *pgxpool.Pool
	e    *echo.Echo
	read atomic.Int64
}

func newLimitServer(t *testing.T, limits api.Limits) *limitServer {
	t.Helper()
	pool := pgtest.NewPool(t)
	log := slog.New(slog.DiscardHandler)
	rc, err := jobs.NewClient(jobs.Deps{Pool: pool, Logger: log}, jobs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	testfactory.Catalog(context.Background(), t, pool, "acme", []catalog.Tool{testfactory.Tool("get_stock_price", "Latest stock price of a ticker")}, nil)
	ls := &limitServer{pool: pool}
	ls.e = api.New(api.Deps{Pool: pool, River: rc, Logger: log, Open: true, Limits: limits,
		Search: search.New(pool, nil, search.DefaultSettings(), log)})
	ls.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = countingBody{r.Body, &ls.read}
		ls.e.ServeHTTP(w, r)
	}))
	t.Cleanup(ls.Close)
	return ls
}

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

// unsized hides a reader's length, so the request goes chunked, without a Content-Length.
type unsized struct{ io.Reader }

// sendBody sends body (chunked when unsized) as JSON and returns the status and error.
func sendBody(t *testing.T, url, method, path string, body io.Reader) (int, map[string]string) {
	t.Helper()
	req, err := http.NewRequest(method, url+path, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	var out struct {
		Error map[string]string `json:"error"`
	}
	raw, _ := io.ReadAll(resp.Body)
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatalf("%s %s: non-JSON answer %q", method, path, raw)
		}
	}
	return resp.StatusCode, out.Error
}

// oversized is a JSON object of n bytes (a valid body, were it not too long).
func oversized(n int) string {
	const head, tail = `{"name":"x","pad":"`, `"}`
	return head + strings.Repeat("x", n-len(head)-len(tail)) + tail
}

// snapshot is the whole content of every table of the database, toolgate's and River's.
func snapshot(t *testing.T, pool *pgxpool.Pool) map[string]string {
	t.Helper()
	ctx := context.Background()
	rows, err := pool.Query(ctx, `SELECT quote_ident(table_name) FROM information_schema.tables
		WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, n := range names {
		var sum string
		if err := pool.QueryRow(ctx, `SELECT coalesce(md5(string_agg(t::text, '|' ORDER BY t::text)), '') FROM `+n+` t`).Scan(&sum); err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		out[n] = sum
	}
	return out
}

// bodyRoutes are the routes whose handler reads a JSON or catalog body; the test checks that
// every route taking a body is listed, so a new one cannot be forgotten.
var bodyRoutes = []string{
	"POST /search",
	"POST /search/:id/feedback",
	"POST /v1/sources",
	"PATCH /v1/sources/:name",
	"PUT /v1/sources/:name/tools",
	"POST /admin/keys",
	"PUT /admin/profiles/:name",
	"POST /admin/profiles/tune",
	"POST /admin/experiments",
}

// TestEveryRouteRefusesAnOversizedBody: every route answers a body over its limit with
// 413 body_too_large naming the limit, before anything is read or stored — announced by its
// Content-Length, or sent chunked to a route that reads it — and a body at the limit is
// not refused for its size.
func TestEveryRouteRefusesAnOversizedBody(t *testing.T) {
	t.Parallel()
	limits := api.Limits{MaxBodyBytes: 4 << 10, MaxCatalogBytes: 16 << 10}
	srv := newLimitServer(t, limits)
	if code, _ := sendBody(t, srv.URL, "POST", "/search", strings.NewReader(`{"query":"stock price"}`)); code != 200 {
		t.Fatalf("search: %d", code)
	}
	before := snapshot(t, srv.pool)
	path := func(route string) string {
		r := strings.NewReplacer(":name", "acme", ":id", "1", ":prefix", "abc")
		return r.Replace(route)
	}
	limitOf := func(route string) (int64, string) {
		if route == "PUT /v1/sources/:name/tools" || route == "POST /v1/sources" {
			return limits.MaxCatalogBytes, "16 KiB"
		}
		return limits.MaxBodyBytes, "4 KiB"
	}
	var seen []string
	for _, r := range srv.e.Routes() {
		if r.Method != http.MethodPost && r.Method != http.MethodPut && r.Method != http.MethodPatch {
			continue
		}
		route := r.Method + " " + r.Path
		seen = append(seen, route)
		limit, named := limitOf(route)
		bodies := map[string]func() io.Reader{"sized": func() io.Reader { return strings.NewReader(oversized(int(limit) + 1)) }}
		if slices.Contains(bodyRoutes, route) {
			bodies["chunked"] = func() io.Reader { return unsized{strings.NewReader(oversized(int(limit) + 1))} }
		}
		for how, body := range bodies {
			code, e := sendBody(t, srv.URL, r.Method, path(r.Path), body())
			if code != http.StatusRequestEntityTooLarge || e["code"] != "body_too_large" || !strings.Contains(e["message"], named) {
				t.Errorf("%s %s: %d %v, want 413 body_too_large naming %s", route, how, code, e, named)
			}
		}
	}
	for _, r := range bodyRoutes {
		if !slices.Contains(seen, r) {
			t.Errorf("route %s is not registered", r)
		}
	}
	after := snapshot(t, srv.pool)
	for table, sum := range before {
		if after[table] != sum {
			t.Errorf("table %s changed by refused requests", table)
		}
	}
	// At the limit, a body is refused, if at all, for what it says, not for its size.
	for _, route := range bodyRoutes {
		method, p, _ := strings.Cut(route, " ")
		limit, _ := limitOf(route)
		if code, e := sendBody(t, srv.URL, method, path(p), unsized{strings.NewReader(oversized(int(limit)))}); code == http.StatusRequestEntityTooLarge {
			t.Errorf("%s at the limit: %d %v", route, code, e)
		}
	}
}

// TestOversizedBodyIsNotReadWhole: a body over the limit is read no further than the limit
// (chunked) or not at all (announced by its Content-Length), so a caller cannot make the
// server hold more than a route's limit in memory, however long the body.
func TestOversizedBodyIsNotReadWhole(t *testing.T) {
	t.Parallel()
	const jsonLimit, catalogLimit = 64 << 10, 256 << 10
	srv := newLimitServer(t, api.Limits{MaxBodyBytes: jsonLimit, MaxCatalogBytes: catalogLimit})
	for _, tc := range []struct {
		method, path string
		limit, size  int64
	}{
		{"POST", "/search", jsonLimit, 2 << 20},
		{"POST", "/search/1/feedback", jsonLimit, 2 << 20},
		{"PUT", "/v1/sources/big/tools", catalogLimit, 2 << 20},
	} {
		for _, chunked := range []bool{false, true} {
			srv.read.Store(0)
			var body io.Reader = strings.NewReader(oversized(int(tc.size)))
			if chunked {
				body = unsized{body}
			}
			code, e := sendBody(t, srv.URL, tc.method, tc.path, body)
			if code != http.StatusRequestEntityTooLarge || e["code"] != "body_too_large" {
				t.Fatalf("%s %s (chunked %v): %d %v, want 413", tc.method, tc.path, chunked, code, e)
			}
			read, want := srv.read.Load(), int64(0)
			if chunked {
				want = tc.limit + 1 // MaxBytesReader reads one byte past the limit to see it is over
			}
			if read > want {
				t.Errorf("%s %s (chunked %v): the API read %d bytes of a %d-byte body, want at most %d", tc.method, tc.path, chunked, read, tc.size, want)
			}
		}
	}
}

// TestCatalogToolLimit: a catalog of more tools than one request may bring is 413
// too_many_tools and changes nothing; one at the limit is applied.
func TestCatalogToolLimit(t *testing.T) {
	t.Parallel()
	srv := newLimitServer(t, api.Limits{MaxCatalogTools: 3})
	catalogOf := func(n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, `{"name":"t%d","description":"tool %d"}`+"\n", i, i)
		}
		return b.String()
	}
	before := snapshot(t, srv.pool)
	code, e := sendBody(t, srv.URL, "PUT", "/v1/sources/acme/tools", strings.NewReader(catalogOf(4)))
	if code != http.StatusRequestEntityTooLarge || e["code"] != "too_many_tools" || !strings.Contains(e["message"], "at most 3") {
		t.Fatalf("PUT 4 tools: %d %v, want 413 too_many_tools", code, e)
	}
	inline := `{"name":"big","kind":"catalog","tools":[` + strings.Join(strings.Split(strings.TrimSpace(catalogOf(4)), "\n"), ",") + `]}`
	if code, e := sendBody(t, srv.URL, "POST", "/v1/sources", strings.NewReader(inline)); code != http.StatusRequestEntityTooLarge || e["code"] != "too_many_tools" {
		t.Fatalf("POST a source of 4 tools: %d %v, want 413 too_many_tools", code, e)
	}
	after := snapshot(t, srv.pool)
	for table, sum := range before {
		if after[table] != sum {
			t.Errorf("table %s changed by refused catalogs", table)
		}
	}
	if code, e := sendBody(t, srv.URL, "PUT", "/v1/sources/acme/tools", strings.NewReader(catalogOf(3))); code != 200 {
		t.Fatalf("PUT 3 tools: %d %v", code, e)
	}
}

// TestAnnouncedOversizedBodyIsRefusedAtOnce: a Content-Length over the limit, with no body
// behind it, is answered 413 from the header alone and the connection closed, under the
// served server's default read timeout (60 s): the server neither waits for the body it
// refused nor reads it to keep the connection. Sizes under net/http's own discard bound
// (256 KiB) are the ones it would otherwise wait for.
func TestAnnouncedOversizedBodyIsRefusedAtOnce(t *testing.T) {
	t.Parallel()
	srv := newLimitServer(t, api.Limits{})
	addr := serveLimitedWith(t, srv.e, api.ServerLimits{})
	for _, size := range []int{api.DefaultMaxBodyBytes + 1, 100_000, 256 << 10} {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(conn, "POST /search HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{", size)
		got := waitClosed(t, conn)
		conn.Close()
		resp, err := http.ReadResponse(bufio.NewReader(strings.NewReader(got)), nil)
		if err != nil {
			t.Fatalf("Content-Length %d: no answer before the close: %v (%q)", size, err, got)
		}
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(body), `"body_too_large"`) || !resp.Close {
			t.Errorf("Content-Length %d: %d %s (close %v), want 413 body_too_large and Connection: close", size, resp.StatusCode, body, resp.Close)
		}
	}
}
