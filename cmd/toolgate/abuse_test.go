//go:build linux

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/mcptest"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/postgres"
	"github.com/toolgate/toolgate/internal/testfactory"
)

// abuseScaleEnv scales the abuse run: 1 (the default) is the short run of the test suite;
// docs/auth.md#abuse-run gives the longer one and its numbers.
const abuseScaleEnv = "TOOLGATE_ABUSE_SCALE"

// abuseRSSBound is the most resident memory `toolgate serve` may reach during an abuse run
// of the given scale (VmHWM, its peak): 256 MiB, and 32 MiB more per unit of scale (each
// brings 200 concurrent MCP sessions and their connections, about 40 KiB each, twenty
// trickling connections and eight refused 32 MiB bodies). Idle, serve holds about 50 MiB.
func abuseRSSBound(scale int) int64 { return (256 + 32*int64(scale)) << 20 }

// TestAbuseRun runs `toolgate serve` as a process, with keys, and attacks it the way a
// caller with a search key, an unauthenticated client or a malicious upstream would: slow
// headers, slow bodies, an oversized body on every JSON route and many in parallel, JSON-RPC
// batches, hundreds of concurrent MCP sessions, and stdio upstreams that list too many
// tools, names PostgreSQL cannot store, or hang. Throughout, no answer is a 5xx, the
// server's peak memory stays under abuseRSSBound, the catalog it held is unchanged, and it
// still serves.
func TestAbuseRun(t *testing.T) {
	if testing.Short() {
		t.Skip("the abuse run starts a server and takes about a minute")
	}
	scale := 1
	if v := os.Getenv(abuseScaleEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("%s=%q: want a positive integer", abuseScaleEnv, v)
		}
		scale = n
	}
	ctx := context.Background()
	dbURL := pgtest.NewDB(t)
	pool, err := postgres.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()

	// The catalog the run must leave as it found it.
	var tools []catalog.Tool
	for i := range 40 {
		tools = append(tools, testfactory.Tool(fmt.Sprintf("tool_%02d", i), fmt.Sprintf("Tool number %d of the finance catalog: stock price, revenue and weather %d.", i, i)))
	}
	testfactory.Catalog(ctx, t, pool, "fin", tools, nil)
	before := catalogState(t, pool)

	keys := auth.NewKeys(pool, time.Now)
	_, admin, err := keys.Create(ctx, auth.Spec{Name: "ops", Scope: auth.ScopeAdmin})
	if err != nil {
		t.Fatal(err)
	}
	_, limited, err := keys.Create(ctx, auth.Spec{Name: "limited", Scope: auth.ScopeSearch, RatePerMin: 5})
	if err != nil {
		t.Fatal(err)
	}
	// Tenants with unlimited search keys, each opening 200 MCP sessions at once.
	var agents []string
	for i := range scale {
		_, key, err := keys.Create(ctx, auth.Spec{Name: fmt.Sprintf("agents-%d", i), Scope: auth.ScopeSearch})
		if err != nil {
			t.Fatal(err)
		}
		agents = append(agents, key)
	}

	// Malicious stdio upstreams: more tools than a source may have, a name PostgreSQL
	// cannot store beside a good tool and a description of invalid UTF-8, a server that
	// never answers its tools/list.
	good := testfactory.Tool("good_tool", "A tool of a server that also serves bad ones.")
	bad := testfactory.Tool("bad_text", "Invalid UTF-8: \xff\xfe.")
	nul := testfactory.Tool("nul\x00name", "A name holding a NUL.")
	var huge []catalog.Tool
	for i := range 300 * scale {
		huge = append(huge, testfactory.Tool(fmt.Sprintf("t%05d", i), "One of very many tools."))
	}
	upstreams := map[string]*mcptest.Stdio{
		"huge": mcptest.NewStdio(t, huge, mcptest.Normal, 0),
		"nul":  mcptest.NewStdio(t, []catalog.Tool{nul, good, bad}, mcptest.Normal, 0),
		"hang": mcptest.NewStdio(t, []catalog.Tool{good}, mcptest.Hang, 0),
	}

	addr := freeAddr(t)
	base := "http://" + addr
	srv := startServe(t, []string{
		"DATABASE_URL=" + dbURL, "LISTEN_ADDR=" + addr, "TOOLGATE_LOG_FORMAT=text", "TOOLGATE_LOG_LEVEL=warn",
		"TOOLGATE_HTTP_READ_HEADER_TIMEOUT=2s", "TOOLGATE_HTTP_READ_TIMEOUT=4s",
		"TOOLGATE_MAX_TOOLS_PER_SOURCE=100", "TOOLGATE_SYNC_TIMEOUT=5s",
		"TOOLGATE_STDIO_COMMANDS=" + os.Args[0] + " env=" + strings.Join(mcptest.EnvNames, ":"),
	}, "abused")
	waitFor(t, "serve to be ready", 60*time.Second, func() bool { return ready(base) })

	c := &abuseClient{t: t, base: base}
	t.Run("slow headers", func(t *testing.T) { c.slowHeaders(t, 20*scale) })
	t.Run("slow bodies", func(t *testing.T) { c.slowBodies(t, 10*scale, limited) })
	t.Run("oversized bodies", func(t *testing.T) { c.oversized(t, admin, 8*scale) })
	t.Run("batches", func(t *testing.T) { c.batches(t, pool, limited, 300*scale) })
	t.Run("MCP sessions", func(t *testing.T) { c.sessions(t, agents, 200) })
	t.Run("malicious upstreams", func(t *testing.T) { c.upstreams(t, pool, admin, upstreams) })
	t.Run("huge and redirecting HTTP upstreams", func(t *testing.T) { c.httpUpstreams(t, pool, admin, agents[0]) })
	t.Run("heavy search flood", func(t *testing.T) { c.heavyFlood(t, keys, 8, 20*scale) })

	if n := c.server5xx.Load(); n > 0 {
		t.Errorf("%d answers were 5xx: %v", n, c.samples())
	}
	rss, bound := peakRSS(t, srv.Process.Pid), abuseRSSBound(scale)
	t.Logf("serve's peak resident memory: %d MiB (bound %d MiB), scale %d", rss>>20, bound>>20, scale)
	if rss > bound {
		t.Errorf("serve's peak resident memory %d MiB is over the bound of %d MiB", rss>>20, bound>>20)
	}
	if after := catalogState(t, pool); after != before {
		t.Errorf("the catalog changed:\nbefore %s\nafter  %s", before, after)
	}
	if !ready(base) {
		t.Error("serve is not ready after the run")
	}
}

// abuseClient sends the run's requests and counts the 5xx answers.
type abuseClient struct {
	t         *testing.T
	base      string
	server5xx atomic.Int64
	mu        sync.Mutex
	bad       []string
}

func (c *abuseClient) note(what string, status int) {
	if status >= 500 {
		c.server5xx.Add(1)
		c.mu.Lock()
		if len(c.bad) < 10 {
			c.bad = append(c.bad, fmt.Sprintf("%s: %d", what, status))
		}
		c.mu.Unlock()
	}
}

func (c *abuseClient) samples() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.bad)
}

// slowHeaders opens n connections that send a header line every 500 ms and never finish
// the headers: the server must close each (TOOLGATE_HTTP_READ_HEADER_TIMEOUT=2s).
func (c *abuseClient) slowHeaders(t *testing.T, n int) {
	c.trickle(t, n, "POST /search HTTP/1.1\r\nHost: x\r\n", func(i int) string { return fmt.Sprintf("X-Slow-%d: y\r\n", i) })
}

// slowBodies opens n connections with a keyed /search request whose body of 1,000 bytes
// comes one byte every 500 ms: the server must close each (TOOLGATE_HTTP_READ_TIMEOUT=4s).
func (c *abuseClient) slowBodies(t *testing.T, n int, key string) {
	head := "POST /search HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + key +
		"\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"query\":\""
	c.trickle(t, n, head, func(int) string { return "a" })
}

// trickle opens n connections, writes head, then next(i) every 500 ms until the server
// closes the connection; each must be closed within 30 s (a bound on a hang: the limits
// are seconds).
func (c *abuseClient) trickle(t *testing.T, n int, head string, next func(int) string) {
	addr := strings.TrimPrefix(c.base, "http://")
	var wg sync.WaitGroup
	var open atomic.Int32
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Errorf("dial: %v", err)
				return
			}
			defer conn.Close()
			if _, err := io.WriteString(conn, head); err != nil {
				return
			}
			closed := make(chan struct{})
			go func() { // the server's answer (a 408, or nothing) and its close
				defer close(closed)
				if resp, err := http.ReadResponse(bufio.NewReader(conn), nil); err == nil {
					c.note("trickled request", resp.StatusCode)
					_, _ = io.Copy(io.Discard, resp.Body)
				}
			}()
			deadline := time.After(30 * time.Second)
			for i := 0; ; i++ {
				select {
				case <-closed:
					return
				case <-deadline:
					open.Add(1)
					return
				case <-time.After(500 * time.Millisecond):
					_, _ = io.WriteString(conn, next(i))
				}
			}
		}()
	}
	wg.Wait()
	if k := open.Load(); k > 0 {
		t.Errorf("%d of %d trickling connections were still open after 30 s", k, n)
	}
}

// oversized sends a body over its route's limit to every route of the OpenAPI document
// that takes one (413 body_too_large each, nothing stored), then parallel 32 MiB bodies to
// /search, which must not be read whole.
func (c *abuseClient) oversized(t *testing.T, admin string, parallel int) {
	routes := bodyRoutes(t)
	if len(routes) < 5 {
		t.Fatalf("only %d routes with a body in api/openapi.json", len(routes))
	}
	for _, r := range routes {
		size := int64(1 << 20) // over the JSON limit
		if r.catalog {
			size = 80 << 20 // over the catalog limit
		}
		status, code := c.send(r.method, r.path, admin, r.contentType, size)
		c.note(r.method+" "+r.path, status)
		if status != http.StatusRequestEntityTooLarge || code != "body_too_large" {
			t.Errorf("%s %s with %d MiB: %d %q, want 413 body_too_large", r.method, r.path, size>>20, status, code)
		}
	}
	var wg sync.WaitGroup
	for range parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			status, _ := c.send(http.MethodPost, "/search", admin, "application/json", 32<<20)
			c.note("POST /search 32 MiB", status)
			if status != http.StatusRequestEntityTooLarge && status != 0 {
				t.Errorf("POST /search with 32 MiB: %d, want 413", status)
			}
		}()
	}
	wg.Wait()
}

// send posts size bytes of a JSON-looking body without holding them in memory; status 0
// is a connection the server closed before answering (it refused to read on).
func (c *abuseClient) send(method, path, key, contentType string, size int64) (int, string) {
	body := io.MultiReader(strings.NewReader(`{"query":"`), io.LimitReader(repeatReader('a'), size))
	req, err := http.NewRequest(method, c.base+path, body)
	if err != nil {
		c.t.Fatal(err)
	}
	req.ContentLength = size + int64(len(`{"query":"`))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", contentType)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, ""
	}
	defer resp.Body.Close()
	var e struct {
		Error struct{ Code string } `json:"error"`
	}
	_ = json.NewDecoder(io.LimitReader(resp.Body, 1<<16)).Decode(&e)
	return resp.StatusCode, e.Error.Code
}

type repeatReader byte

func (r repeatReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r)
	}
	return len(p), nil
}

type bodyRoute struct {
	method, path, contentType string
	catalog                   bool
}

var pathParam = regexp.MustCompile(`\{[^}]+\}`)

// bodyRoutes lists the routes of api/openapi.json that take a request body, path
// parameters filled in.
func bodyRoutes(t *testing.T) []bodyRoute {
	raw, err := os.ReadFile("../../api/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]map[string]struct {
			RequestBody *struct {
				Content map[string]json.RawMessage `json:"content"`
			} `json:"requestBody"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	var out []bodyRoute
	for path, ops := range doc.Paths {
		for method, op := range ops {
			if op.RequestBody == nil || path == "/mcp" {
				continue // /mcp has its own bound, checked by the batches and sessions
			}
			ct := "application/json"
			if _, ok := op.RequestBody.Content["application/json"]; !ok {
				for k := range op.RequestBody.Content {
					ct = k
				}
			}
			out = append(out, bodyRoute{
				method: strings.ToUpper(method), path: pathParam.ReplaceAllString(path, "fin"), contentType: ct,
				// the routes that take a catalog (inline tools) have the catalog's limit
				catalog: strings.HasSuffix(path, "/tools") && strings.ToUpper(method) == http.MethodPut ||
					path == "/v1/sources" && strings.ToUpper(method) == http.MethodPost,
			})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].path+out[i].method < out[j].path+out[j].method })
	return out
}

// batches posts one JSON-RPC batch of n find_tools calls with a key limited to 5 requests
// a minute: refused, and no search runs.
func (c *abuseClient) batches(t *testing.T, pool *pgxpool.Pool, key string, n int) {
	var batch bytes.Buffer
	batch.WriteString(`[{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`)
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&batch, `,{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"find_tools","arguments":{"query":"stock price %d"}}}`, i, i)
	}
	batch.WriteString("]")
	req, _ := http.NewRequest(http.MethodPost, c.base+"/mcp", &batch)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	c.note("batch", resp.StatusCode)
	if resp.StatusCode != http.StatusBadRequest && resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("a batch of %d calls: %d, want 400 (or 429)", n, resp.StatusCode)
	}
	if got := count(t, pool, `SELECT count(*) FROM search_log WHERE caller = 'limited'`); got > 5 {
		t.Errorf("a key limited to 5 a minute ran %d searches", got)
	}
}

// sessions runs n MCP sessions per key at once, each initializing and calling find_tools.
func (c *abuseClient) sessions(t *testing.T, keys []string, n int) {
	var wg sync.WaitGroup
	var failed atomic.Int32
	var firstErr atomic.Value
	for i := range n * len(keys) {
		hc := &http.Client{Transport: bearer{key: keys[i%len(keys)]}}
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			err := func() error {
				cs, err := mcp.NewClient(&mcp.Implementation{Name: "abuse", Version: "1"}, nil).Connect(ctx,
					&mcp.StreamableClientTransport{Endpoint: c.base + "/mcp", HTTPClient: hc, MaxRetries: -1}, nil)
				if err != nil {
					return err
				}
				defer cs.Close()
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "find_tools", Arguments: map[string]any{"query": "stock price and revenue"}})
				if err != nil {
					return err
				}
				if res.IsError {
					return errors.New("find_tools answered an error")
				}
				return nil
			}()
			if err != nil {
				failed.Add(1)
				firstErr.CompareAndSwap(nil, err.Error())
			}
		}()
	}
	wg.Wait()
	if k := failed.Load(); k > 0 {
		t.Errorf("%d of %d concurrent MCP sessions failed; first: %v", k, n*len(keys), firstErr.Load())
	}
}

// createSource creates the source spec with the admin key, and fails the test unless it is
// created.
func (c *abuseClient) createSource(t *testing.T, admin string, spec map[string]any) {
	t.Helper()
	body, _ := json.Marshal(spec)
	req, _ := http.NewRequest(http.MethodPost, c.base+"/v1/sources", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+admin)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	c.note("POST /v1/sources", resp.StatusCode)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create source %s: %d %s", spec["name"], resp.StatusCode, msg)
	}
}

// upstreams adds each malicious server as a stdio source (its first sync is queued with
// it) and waits for the syncs: the good tool beside the unstorable name is imported and the
// name reported as skipped, the oversized listing and the hanging server fail and are
// recorded as failed.
func (c *abuseClient) upstreams(t *testing.T, pool *pgxpool.Pool, admin string, servers map[string]*mcptest.Stdio) {
	for name, srv := range servers {
		cfg := srv.Config()
		c.createSource(t, admin, map[string]any{"name": name, "kind": "mcp_stdio", "command": cfg.Command, "env": cfg.Env})
	}
	state := func(name string) (string, string) {
		var st, skipped string
		err := pool.QueryRow(context.Background(), `SELECT r.state::text, coalesce(r.skipped::text, '')
			FROM sync_runs r JOIN sources s ON s.id = r.source_id WHERE s.name = $1 ORDER BY r.id DESC LIMIT 1`, name).Scan(&st, &skipped)
		if err != nil {
			return "", ""
		}
		return st, skipped
	}
	waitFor(t, "the upstreams' syncs to end", 2*time.Minute, func() bool {
		for name := range servers {
			if st, _ := state(name); st != "succeeded" && st != "failed" {
				return false
			}
		}
		return true
	})
	for name, want := range map[string]string{"huge": "failed", "nul": "succeeded", "hang": "failed"} {
		if st, _ := state(name); st != want {
			t.Errorf("sync of %s: %s, want %s", name, st, want)
		}
	}
	if _, skipped := state("nul"); !strings.Contains(skipped, `nul\\x00name`) {
		t.Errorf("the sync of nul reports skipped %s, want the NUL name escaped", skipped)
	}
	if n := count(t, pool, `SELECT count(*) FROM tools WHERE name = 'nul__good_tool'`); n != 1 {
		t.Errorf("good_tool of the server with a NUL name: %d stored, want 1", n)
	}
	if n := count(t, pool, `SELECT count(*) FROM tools t JOIN sources s ON s.id = t.source_id WHERE s.name IN ('huge', 'hang')`); n != 0 {
		t.Errorf("%d tools stored from the failed syncs", n)
	}
}

type bearer struct{ key string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return http.DefaultTransport.RoundTrip(r)
}

// catalogState is every tool with its content hash and enabled state, one line.
func catalogState(t *testing.T, pool *pgxpool.Pool) string {
	var s string
	err := pool.QueryRow(context.Background(), `SELECT count(*) || ' tools: ' || coalesce(string_agg(name || '=' || content_hash || ':' || enabled, ' ' ORDER BY name), '')
		FROM tools WHERE source_id = (SELECT id FROM sources WHERE name = 'fin')`).Scan(&s)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// peakRSS is the process's peak resident set size (VmHWM).
func peakRSS(t *testing.T, pid int) int64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc status")
	return 0
}

// hugeAnswerBytes is the answer of the huge HTTP upstream to a call: 400 MiB, streamed.
const hugeAnswerBytes = 400 << 20

// httpUpstreams adds two mcp_http sources whose tools sync normally: one answers a call
// with 400 MiB (a "read a file" tool on a large file), the other redirects a call to an
// internal address, with the source's token configured. An agent calls each tool four
// times at once: the huge answers are refused (upstream_response_too_large) within serve's
// memory bound, the redirects are refused without the location getting any request.
func (c *abuseClient) httpUpstreams(t *testing.T, pool *pgxpool.Pool, admin, agent string) {
	listing := json.RawMessage(`{"tools":[{"name":"read_file","description":"Read a whole file","inputSchema":{"type":"object"}}]}`)
	huge := mcptest.NewRawHTTP(t, func(w http.ResponseWriter, r *http.Request, req mcptest.RawRequest) {
		if req.Method == "tools/list" {
			mcptest.WriteResult(w, req.ID, listing)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"`, req.ID)
		chunk := bytes.Repeat([]byte("a"), 1<<20)
		for range hugeAnswerBytes >> 20 {
			if _, err := w.Write(chunk); err != nil {
				return // toolgate stopped reading
			}
		}
		fmt.Fprint(w, `"}]}}`)
	})
	var reached atomic.Int32
	internal := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { reached.Add(1) }))
	defer internal.Close()
	redirect := mcptest.NewRawHTTP(t, func(w http.ResponseWriter, r *http.Request, req mcptest.RawRequest) {
		if req.Method == "tools/list" {
			mcptest.WriteResult(w, req.ID, listing)
			return
		}
		http.Redirect(w, r, internal.URL+"/internal-admin/delete", http.StatusTemporaryRedirect)
	})
	for name, src := range map[string]map[string]any{
		"bigfiles": {"url": huge.URL},
		"redirect": {"url": redirect.URL + "?api_key=k-secret", "headers": map[string]string{"Authorization": "Bearer s3cret"}},
	} {
		c.createSource(t, admin, map[string]any{"name": name, "kind": "mcp_http", "url": src["url"], "headers": src["headers"]})
	}
	waitFor(t, "the HTTP upstreams' tools to sync", 2*time.Minute, func() bool {
		return count(t, pool, `SELECT count(*) FROM tools WHERE name IN ('bigfiles__read_file', 'redirect__read_file')`) == 2
	})

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "abuse", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: c.base + "/mcp", HTTPClient: &http.Client{Transport: bearer{key: agent}}, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	var wg sync.WaitGroup
	for _, tc := range []struct{ tool, code string }{{"bigfiles__read_file", "upstream_response_too_large"}, {"redirect__read_file", "upstream_unavailable"}} {
		for range 4 {
			wg.Go(func() {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "call_tool", Arguments: map[string]any{"name": tc.tool, "arguments": map[string]any{"path": "/var/log/big"}}})
				if err != nil {
					t.Errorf("call %s: %v", tc.tool, err)
					return
				}
				var e struct{ Code string }
				if sc, _ := json.Marshal(res.StructuredContent); !res.IsError || json.Unmarshal(sc, &e) != nil || e.Code != tc.code {
					t.Errorf("call %s: answered %s, want the tool error %s", tc.tool, sc, tc.code)
				}
			})
		}
	}
	wg.Wait()
	if n := reached.Load(); n != 0 {
		t.Errorf("the redirect's internal location got %d requests", n)
	}
}

// heavyFlood runs loops parallel loops of the heaviest legal search (eight variants of
// 2,000 characters, k = 100, explain), rounds each, on one unlimited key, beside a light
// caller on another key that asks GET /v1/whoami, a plain search and /readyz in turn: every
// light request succeeds, the heavy key is refused with 429 concurrency_limited (its
// share, docs/auth.md#fair-share), never a 5xx. The light caller's latencies are logged,
// not asserted (docs/auth.md#abuse-run has the measured bound).
func (c *abuseClient) heavyFlood(t *testing.T, keys *auth.Keys, loops, rounds int) {
	ctx := context.Background()
	_, heavy, err := keys.Create(ctx, auth.Spec{Name: "heavy-flood", Scope: auth.ScopeSearch})
	if err != nil {
		t.Fatal(err)
	}
	_, light, err := keys.Create(ctx, auth.Spec{Name: "light-caller", Scope: auth.ScopeSearch})
	if err != nil {
		t.Fatal(err)
	}
	variant := func(i int) string {
		return strconv.Quote(strings.Repeat(fmt.Sprintf("stock price revenue weather %d ", i), 100)[:2000])
	}
	qs := make([]string, 7)
	for i := range qs {
		qs[i] = variant(i + 1)
	}
	heavyBody := `{"query":` + variant(0) + `,"queries":[` + strings.Join(qs, ",") + `],"k":100,"explain":true}`
	do := func(method, path, key, body string) (int, string, time.Duration) {
		req, err := http.NewRequest(method, c.base+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		start := time.Now()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Errorf("%s %s: %v", method, path, err)
			return 0, "", 0
		}
		defer resp.Body.Close()
		var e struct {
			Error struct{ Code string } `json:"error"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&e)
		took := time.Since(start)
		c.note(method+" "+path, resp.StatusCode)
		return resp.StatusCode, e.Error.Code, took
	}

	var heavyOK, heavyRefused, heavyOther atomic.Int64
	var wg sync.WaitGroup
	done := make(chan struct{})
	for range loops {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				switch status, code, _ := do(http.MethodPost, "/search", heavy, heavyBody); {
				case status == http.StatusOK:
					heavyOK.Add(1)
				case status == http.StatusTooManyRequests && code == "concurrency_limited":
					heavyRefused.Add(1)
				default:
					heavyOther.Add(1)
					t.Errorf("heavy search: %d %q, want 200 or 429 concurrency_limited", status, code)
				}
			}
		}()
	}
	go func() { wg.Wait(); close(done) }()

	light3 := []struct{ method, path, key, body string }{
		{http.MethodGet, "/v1/whoami", light, ""},
		{http.MethodPost, "/search", light, `{"query":"stock price","k":5}`},
		{http.MethodGet, "/readyz", "", ""},
	}
	took := map[string][]time.Duration{}
	for i := 0; ; i++ {
		select {
		case <-done:
		default:
			r := light3[i%len(light3)]
			status, code, d := do(r.method, r.path, r.key, r.body)
			if status != http.StatusOK {
				t.Errorf("light caller's %s %s during the flood: %d %q, want 200", r.method, r.path, status, code)
			}
			took[r.path] = append(took[r.path], d)
			continue
		}
		break
	}
	if heavyRefused.Load() == 0 {
		t.Errorf("the heavy key was never refused: %d searches answered, %d other", heavyOK.Load(), heavyOther.Load())
	}
	t.Logf("heavy key: %d answered, %d refused (429 concurrency_limited)", heavyOK.Load(), heavyRefused.Load())
	for _, r := range light3 {
		d := took[r.path]
		slices.Sort(d)
		if len(d) == 0 {
			continue
		}
		t.Logf("light caller %s %s: %d requests, p50 %v, p99 %v, max %v", r.method, r.path, len(d),
			d[len(d)/2].Round(time.Millisecond), d[len(d)*99/100].Round(time.Millisecond), d[len(d)-1].Round(time.Millisecond))
	}
}
