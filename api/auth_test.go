package api_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/labstack/echo/v4"

	"github.com/toolgate/toolgate/api"
	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/postgres"
	"github.com/toolgate/toolgate/jobs"
)

// clock is a settable time source for rate-limit windows.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

type testAPI struct {
	pool  *pgxpool.Pool
	keys  *auth.Keys
	clock *clock
	e     *echo.Echo
}

func newTestAPI(t *testing.T, open bool) *testAPI {
	t.Helper()
	pool := pgtest.NewPool(t)
	clk := &clock{t: time.Date(2026, 11, 22, 12, 0, 10, 0, time.UTC)}
	keys := auth.NewKeys(pool, clk.Now)
	log := slog.New(slog.DiscardHandler)
	rc, err := jobs.NewClient(jobs.Deps{Pool: pool, Logger: log}, jobs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e := api.New(api.Deps{Pool: pool, River: rc, Logger: log, Keys: keys, Open: open})
	return &testAPI{pool: pool, keys: keys, clock: clk, e: e}
}

func (a *testAPI) key(t *testing.T, s auth.Spec) (auth.Key, string) {
	t.Helper()
	k, text, err := a.keys.Create(context.Background(), s)
	if err != nil {
		t.Fatalf("create key %q: %v", s.Name, err)
	}
	return k, text
}

// sources creates empty catalog sources, for keys to name.
func (a *testAPI) sources(t *testing.T, names ...string) {
	t.Helper()
	for _, name := range names {
		if _, err := db.New(a.pool).EnsureCatalogSource(context.Background(), name); err != nil {
			t.Fatal(err)
		}
	}
}

type response struct {
	status int
	header http.Header
	body   map[string]any
}

func (r response) errorCode() string {
	e, _ := r.body["error"].(map[string]any)
	code, _ := e["code"].(string)
	return code
}

func do(t *testing.T, h http.Handler, method, path, key, body string) response {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, "http://localhost"+path, rd) // open mode answers to localhost, not httptest's example.com
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	out := response{status: rec.Code, header: rec.Header()}
	if rec.Body.Len() > 0 && strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(rec.Body.Bytes(), &out.body); err != nil {
			t.Fatalf("%s %s: body is not JSON: %v\n%s", method, path, err, rec.Body.String())
		}
	}
	return out
}

func TestMissingOrInvalidKeyIs401(t *testing.T) {
	t.Parallel()
	a := newTestAPI(t, false)
	_, good := a.key(t, auth.Spec{Name: "ops", Scope: auth.ScopeAdmin})
	prefix := strings.Split(good, "_")[1]
	cases := map[string]string{
		"missing":        "",
		"not a key":      "hunter2",
		"unknown prefix": "tg_aaaaaaaaaa_" + strings.Repeat("b", 52),
		"wrong secret":   "tg_" + prefix + "_" + strings.Repeat("b", 52),
		"truncated":      good[:len(good)-1],
	}
	for name, key := range cases {
		r := do(t, a.e, http.MethodGet, "/v1/sources", key, "")
		if r.status != http.StatusUnauthorized || r.errorCode() != "unauthorized" {
			t.Errorf("%s: got %d %q, want 401 unauthorized", name, r.status, r.errorCode())
		}
		if !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("%s: WWW-Authenticate = %q", name, r.header.Get("WWW-Authenticate"))
		}
	}
	// A basic-auth header carrying a valid key is still not a Bearer key.
	req := httptest.NewRequest(http.MethodGet, "http://localhost/v1/sources", nil)
	req.Header.Set("Authorization", "Basic "+good)
	rec := httptest.NewRecorder()
	a.e.ServeHTTP(rec, req)
	if rec.Code != http.StatusUnauthorized {
		t.Errorf("Basic scheme: got %d, want 401", rec.Code)
	}
	if r := do(t, a.e, http.MethodGet, "/v1/sources", good, ""); r.status != http.StatusOK {
		t.Errorf("valid key: got %d, want 200", r.status)
	}
}

func TestPublicEndpointsNeedNoKey(t *testing.T) {
	t.Parallel()
	a := newTestAPI(t, false)
	for _, p := range []string{"/healthz", "/readyz", "/openapi.json"} {
		if r := do(t, a.e, http.MethodGet, p, "", ""); r.status != http.StatusOK {
			t.Errorf("GET %s without key: got %d, want 200", p, r.status)
		}
	}
}

func TestRevokedKeyIs401(t *testing.T) {
	t.Parallel()
	a := newTestAPI(t, false)
	_, admin := a.key(t, auth.Spec{Name: "ops", Scope: auth.ScopeAdmin})
	victim, victimText := a.key(t, auth.Spec{Name: "agent", Scope: auth.ScopeSearch})
	if r := do(t, a.e, http.MethodGet, "/openapi.json", victimText, ""); r.status != http.StatusOK {
		t.Fatalf("before revocation: %d", r.status)
	}
	r := do(t, a.e, http.MethodDelete, "/admin/keys/"+victim.Prefix, admin, "")
	if r.status != http.StatusOK {
		t.Fatalf("revoke: got %d %v", r.status, r.body)
	}
	if k := r.body["api_key"].(map[string]any); k["revoked_at"] == nil {
		t.Errorf("revoke response has no revoked_at: %v", k)
	}
	a.e.POST("/search", func(c echo.Context) error { return c.NoContent(http.StatusNoContent) })
	r = do(t, a.e, http.MethodPost, "/search", victimText, "")
	if r.status != http.StatusUnauthorized || r.errorCode() != "key_revoked" {
		t.Errorf("revoked key: got %d %q, want 401 key_revoked", r.status, r.errorCode())
	}
	if r := do(t, a.e, http.MethodDelete, "/admin/keys/nosuchkey0", admin, ""); r.status != http.StatusNotFound {
		t.Errorf("revoke unknown prefix: got %d, want 404", r.status)
	}
}

func TestScopes(t *testing.T) {
	t.Parallel()
	a := newTestAPI(t, false)
	_, admin := a.key(t, auth.Spec{Name: "ops", Scope: auth.ScopeAdmin})
	a.sources(t, "fin", "news")
	_, search := a.key(t, auth.Spec{Name: "agent", Scope: auth.ScopeSearch, Sources: []string{"fin", "news"}})

	// Stand-ins for the search endpoints, which other packages register: they report the
	// caller the middleware put in the context.
	var seen *auth.Caller
	report := func(c echo.Context) error {
		seen = auth.FromContext(c.Request().Context())
		return c.NoContent(http.StatusNoContent)
	}
	a.e.POST("/search", report)
	a.e.GET("/v1/capabilities", report)

	for _, tc := range []struct {
		method, path, key string
		want              int
	}{
		{http.MethodGet, "/v1/sources", search, http.StatusForbidden},
		{http.MethodGet, "/admin/keys", search, http.StatusForbidden},
		{http.MethodPost, "/admin/tools/x/disable", search, http.StatusForbidden},
		{http.MethodDelete, "/v1/sources/x", search, http.StatusForbidden},
		{http.MethodPost, "/search", search, http.StatusNoContent},
		{http.MethodGet, "/v1/capabilities", search, http.StatusNoContent},
		{http.MethodGet, "/v1/sources", admin, http.StatusOK},
		{http.MethodGet, "/admin/keys", admin, http.StatusOK},
		{http.MethodPost, "/search", admin, http.StatusNoContent},
	} {
		r := do(t, a.e, tc.method, tc.path, tc.key, "")
		if r.status != tc.want {
			t.Errorf("%s %s with %s key: got %d %v, want %d", tc.method, tc.path,
				map[string]string{admin: "admin", search: "search"}[tc.key], r.status, r.body, tc.want)
		}
		if r.status == http.StatusForbidden && r.errorCode() != "forbidden" {
			t.Errorf("%s %s: code %q, want forbidden", tc.method, tc.path, r.errorCode())
		}
	}
	do(t, a.e, http.MethodPost, "/search", search, "")
	if seen == nil || seen.Name != "agent" || seen.Scope != auth.ScopeSearch || strings.Join(seen.Sources, ",") != "fin,news" {
		t.Errorf("caller in context = %+v, want agent/search/[fin news]", seen)
	}
}

func TestRateLimitFixedWindow(t *testing.T) {
	t.Parallel()
	a := newTestAPI(t, false)
	_, key := a.key(t, auth.Spec{Name: "agent", Scope: auth.ScopeAdmin, RatePerMin: 2})
	// A second API instance on the same database: the limit is shared, not per process.
	other := api.New(api.Deps{Pool: a.pool, Logger: slog.New(slog.DiscardHandler), Keys: a.keys})

	if r := do(t, a.e, http.MethodGet, "/v1/sources", key, ""); r.status != http.StatusOK || r.header.Get("RateLimit-Remaining") != "1" {
		t.Fatalf("1st: %d remaining %q", r.status, r.header.Get("RateLimit-Remaining"))
	}
	if r := do(t, other, http.MethodGet, "/v1/sources", key, ""); r.status != http.StatusOK {
		t.Fatalf("2nd (other instance): %d", r.status)
	}
	r := do(t, a.e, http.MethodGet, "/v1/sources", key, "")
	if r.status != http.StatusTooManyRequests || r.errorCode() != "rate_limited" {
		t.Fatalf("3rd: got %d %q, want 429 rate_limited", r.status, r.errorCode())
	}
	// The clock is 12:00:10, so the next window opens in 50 s.
	if got := r.header.Get("Retry-After"); got != "50" {
		t.Errorf("Retry-After = %q, want 50", got)
	}
	details := r.body["error"].(map[string]any)["details"].(map[string]any)
	if details["retry_after_s"] != float64(50) || details["limit_per_min"] != float64(2) {
		t.Errorf("details = %v", details)
	}
	a.clock.Advance(49 * time.Second)
	if r := do(t, other, http.MethodGet, "/v1/sources", key, ""); r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") != "1" {
		t.Errorf("same window on the other instance: got %d Retry-After %q, want 429 and 1", r.status, r.header.Get("Retry-After"))
	}
	a.clock.Advance(time.Second)
	if r := do(t, a.e, http.MethodGet, "/v1/sources", key, ""); r.status != http.StatusOK {
		t.Errorf("next window: got %d, want 200", r.status)
	}

	// last_used_at was recorded with the request clock.
	list, err := a.keys.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if list[0].LastUsedAt == nil || !list[0].LastUsedAt.Equal(time.Date(2026, 11, 22, 12, 0, 10, 0, time.UTC)) {
		t.Errorf("last_used_at = %v, want the first request's time (refreshed at most once a minute)", list[0].LastUsedAt)
	}
}

func TestOpenModeLetsEverythingThrough(t *testing.T) {
	t.Parallel()
	a := newTestAPI(t, true)
	var seen *auth.Caller
	a.e.POST("/search", func(c echo.Context) error {
		seen = auth.FromContext(c.Request().Context())
		return c.NoContent(http.StatusNoContent)
	})
	for _, tc := range []struct{ method, path, body string }{
		{http.MethodGet, "/v1/sources", ""},
		{http.MethodGet, "/admin/keys", ""},
		{http.MethodPost, "/admin/keys", `{"name":"k","scope":"search"}`},
		{http.MethodPost, "/search", ""},
	} {
		if r := do(t, a.e, tc.method, tc.path, "", tc.body); r.status >= 400 {
			t.Errorf("open mode %s %s: got %d %v", tc.method, tc.path, r.status, r.body)
		}
	}
	if seen == nil || seen.Name != "open" || seen.Scope != auth.ScopeAdmin || seen.Sources != nil {
		t.Errorf("open caller = %+v", seen)
	}
}

func TestAdminKeysEndpoints(t *testing.T) {
	t.Parallel()
	a := newTestAPI(t, false)
	_, admin := a.key(t, auth.Spec{Name: "ops", Scope: auth.ScopeAdmin})
	a.sources(t, "fin")

	r := do(t, a.e, http.MethodPost, "/admin/keys", admin, `{"name":"agent-1","scope":"search","sources":["fin"],"rate_per_min":60}`)
	if r.status != http.StatusCreated {
		t.Fatalf("create: %d %v", r.status, r.body)
	}
	text := r.body["key"].(string)
	k, err := a.keys.Verify(context.Background(), text)
	if err != nil || k.Name != "agent-1" || k.Scope != auth.ScopeSearch || k.RatePerMin != 60 || strings.Join(k.Sources, ",") != "fin" {
		t.Fatalf("created key verifies as %+v, %v", k, err)
	}
	for _, tc := range []struct {
		body string
		want int
	}{
		{`{"name":"agent-1","scope":"search"}`, http.StatusConflict},
		{`{"name":"x","scope":"root"}`, http.StatusBadRequest},
		{`{"name":"","scope":"admin"}`, http.StatusBadRequest},
		{`{"name":"x","scope":"admin","rate_per_min":-1}`, http.StatusBadRequest},
		{`{"name":"x","scope":"admin","sources":[]}`, http.StatusBadRequest},
		{`{"name":"x","scope":"search","sources":["fin","typo"]}`, http.StatusBadRequest},
		{`{"name":"x","scope":"admin","colour":"red"}`, http.StatusBadRequest},
		{`{"name":"x","scope":"search","plan":"everything"}`, http.StatusBadRequest},
	} {
		if r := do(t, a.e, http.MethodPost, "/admin/keys", admin, tc.body); r.status != tc.want {
			t.Errorf("create %s: got %d %v, want %d", tc.body, r.status, r.body, tc.want)
		}
	}

	r = do(t, a.e, http.MethodGet, "/admin/keys", admin, "")
	if r.status != http.StatusOK {
		t.Fatalf("list: %d", r.status)
	}
	raw, _ := json.Marshal(r.body)
	if strings.Contains(string(raw), strings.Split(text, "_")[2]) || strings.Contains(string(raw), "secret") {
		t.Errorf("key list leaks a secret: %s", raw)
	}
	if n := len(r.body["keys"].([]any)); n != 2 {
		t.Errorf("list has %d keys, want 2", n)
	}

	// A revoked key's name may be reused.
	if _, err := a.keys.Revoke(context.Background(), "agent-1"); err != nil {
		t.Fatal(err)
	}
	r = do(t, a.e, http.MethodPost, "/admin/keys", admin, `{"name":"agent-1","scope":"search"}`)
	if r.status != http.StatusCreated {
		t.Fatalf("reuse revoked name: %d %v", r.status, r.body)
	}
	if rate := r.body["api_key"].(map[string]any)["rate_per_min"]; rate != float64(auth.DefaultRatePerMin) {
		t.Errorf("rate_per_min without one given = %v, want the default %d", rate, auth.DefaultRatePerMin)
	}
	r = do(t, a.e, http.MethodPost, "/admin/keys", admin, `{"name":"planner","scope":"search","plan":"decompose"}`)
	if p := r.body["api_key"].(map[string]any)["plan"]; r.status != http.StatusCreated || p != "decompose" {
		t.Errorf("key with a default plan: %d %v", r.status, r.body)
	}
	r = do(t, a.e, http.MethodPost, "/admin/keys", admin, `{"name":"unlimited","scope":"search","rate_per_min":0}`)
	if _, has := r.body["api_key"].(map[string]any)["rate_per_min"]; r.status != http.StatusCreated || has {
		t.Errorf("rate_per_min 0: %d %v, want an unlimited key", r.status, r.body)
	}
}

func TestToolEnableDisable(t *testing.T) {
	t.Parallel()
	a := newTestAPI(t, false)
	_, admin := a.key(t, auth.Spec{Name: "ops", Scope: auth.ScopeAdmin})
	tool := `{"name":"quote","description":"Stock quote","input_schema":{"type":"object"}}`
	if r := do(t, a.e, http.MethodPut, "/v1/sources/fin/tools", admin, tool); r.status != http.StatusOK {
		t.Fatalf("import: %d %v", r.status, r.body)
	}
	q := db.New(a.pool)
	enabled := func() bool {
		tl, err := q.GetToolByName(context.Background(), "fin__quote")
		if err != nil {
			t.Fatal(err)
		}
		return tl.Enabled
	}
	r := do(t, a.e, http.MethodPost, "/admin/tools/fin__quote/disable", admin, "")
	if r.status != http.StatusOK || r.body["enabled"] != false || enabled() {
		t.Fatalf("disable: %d %v, stored enabled=%v", r.status, r.body, enabled())
	}
	r = do(t, a.e, http.MethodPost, "/admin/tools/fin__quote/enable", admin, "")
	if r.status != http.StatusOK || r.body["enabled"] != true || !enabled() {
		t.Fatalf("enable: %d %v, stored enabled=%v", r.status, r.body, enabled())
	}
	if r := do(t, a.e, http.MethodPost, "/admin/tools/fin__nope/disable", admin, ""); r.status != http.StatusNotFound || r.errorCode() != "not_found" {
		t.Errorf("unknown tool: %d %q, want 404 not_found", r.status, r.errorCode())
	}
}

func TestUnknownRoutesNeedAKeyFirst(t *testing.T) {
	t.Parallel()
	a := newTestAPI(t, false)
	_, admin := a.key(t, auth.Spec{Name: "ops", Scope: auth.ScopeAdmin})
	if r := do(t, a.e, http.MethodGet, "/v1/nothing-here", "", ""); r.status != http.StatusUnauthorized {
		t.Errorf("unknown route without a key: got %d, want 401 (route existence is not revealed)", r.status)
	}
	if r := do(t, a.e, http.MethodGet, "/v1/nothing-here", admin, ""); r.status != http.StatusNotFound || r.errorCode() != "not_found" {
		t.Errorf("unknown route with an admin key: got %d %q, want 404", r.status, r.errorCode())
	}
}

// An admin key limited to sources, as toolgate created them before the combination was
// refused, is found in the database by the migration that refuses it: it becomes a search
// key of its sources, so it can neither read or change other sources' tools nor mint an
// unrestricted key.
func TestExistingLimitedAdminKeyCannotEscalate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	// Back to the schema before the refusal (version 11), where such a key could be stored,
	// and forward.
	if err := postgres.MigrateDownTo(ctx, pool, 11); err != nil {
		t.Fatal(err)
	}
	const prefix, secret = "limitedadm", "limited-admin-secret"
	hash := sha256.Sum256([]byte(secret))
	if _, err := pool.Exec(ctx, `INSERT INTO api_keys (name, prefix, secret_hash, scope, sources) VALUES ('fin-admin', $1, $2, 'admin', '{fin}')`,
		prefix, hash[:]); err != nil {
		t.Fatal(err)
	}
	if err := postgres.MigrateUp(ctx, pool); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	rc, err := jobs.NewClient(jobs.Deps{Pool: pool, Logger: log}, jobs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	keys := auth.NewKeys(pool, time.Now)
	e := api.New(api.Deps{Pool: pool, River: rc, Logger: log, Keys: keys})
	_, admin, err := keys.Create(ctx, auth.Spec{Name: "ops", Scope: auth.ScopeAdmin})
	if err != nil {
		t.Fatal(err)
	}
	for _, src := range []string{"fin", "news"} {
		if r := do(t, e, http.MethodPut, "/v1/sources/"+src+"/tools", admin, `{"name":"quote","description":"Quote."}`); r.status != http.StatusOK {
			t.Fatalf("import %s: %d %v", src, r.status, r.body)
		}
	}

	limited := "tg_" + prefix + "_" + secret
	for _, tc := range []struct{ method, path, body string }{
		{http.MethodPost, "/admin/keys", `{"name":"root","scope":"admin"}`},
		{http.MethodGet, "/v1/sources", ""},
		{http.MethodGet, "/v1/tools/news__quote", ""},
		{http.MethodPost, "/admin/tools/news__quote/disable", ""},
		{http.MethodPost, "/admin/tools/fin__quote/disable", ""},
	} {
		if r := do(t, e, tc.method, tc.path, limited, tc.body); r.status != http.StatusForbidden {
			t.Errorf("%s %s with the limited admin key: got %d %v, want 403", tc.method, tc.path, r.status, r.body)
		}
	}
	k, err := keys.Verify(ctx, limited)
	if err != nil || k.Scope != auth.ScopeSearch || strings.Join(k.Sources, ",") != "fin" {
		t.Errorf("the limited admin key is now %+v, %v; want a search key of fin", k, err)
	}
	list, err := keys.List(ctx)
	if err != nil || len(list) != 2 {
		t.Fatalf("keys: %v, %v", list, err)
	}
	for _, k := range list {
		if k.Scope == auth.ScopeAdmin && k.Name != "ops" {
			t.Errorf("an admin key was minted: %+v", k)
		}
	}
}
