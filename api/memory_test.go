package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/riverqueue/river"

	"github.com/toolgate/toolgate/api"
	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/embed"
	"github.com/toolgate/toolgate/internal/enrich"
	"github.com/toolgate/toolgate/internal/gateway"
	"github.com/toolgate/toolgate/internal/search"
	"github.com/toolgate/toolgate/internal/testfactory"
	"github.com/toolgate/toolgate/jobs"
)

// tenantEnv is a catalog of three tools, the API with the memory branch at its defaults,
// a River client that runs the memory sweep, and keys of two tenants.
type tenantEnv struct {
	e                     http.Handler
	rc                    *river.Client[pgx.Tx]
	events                <-chan *river.Event
	admin, a1, a2, victim string
}

func newTenantEnv(t *testing.T) *tenantEnv {
	t.Helper()
	ctx := context.Background()
	pool := searchableCatalog(t, "srca",
		testfactory.Tool("get_weather", "Current weather forecast for a city."),
		testfactory.Tool("send_email", "Send an email message to a recipient."),
		testfactory.Tool("get_stock_price", "Return the latest trading price of a stock ticker."),
	)
	log := slog.New(slog.DiscardHandler)
	keys := auth.NewKeys(pool, time.Now)
	mk := func(spec auth.Spec) string {
		_, text, err := keys.Create(ctx, spec)
		if err != nil {
			t.Fatal(err)
		}
		return text
	}
	te := &tenantEnv{
		admin:  mk(auth.Spec{Name: "ops", Scope: auth.ScopeAdmin}),
		a1:     mk(auth.Spec{Name: "a1", Scope: auth.ScopeSearch, Tenant: "acme"}),
		a2:     mk(auth.Spec{Name: "a2", Scope: auth.ScopeSearch, Tenant: "acme"}),
		victim: mk(auth.Spec{Name: "victim", Scope: auth.ScopeSearch, Tenant: "globex"}),
	}
	emb := embed.NewLocal(384)
	deps := jobs.Deps{Pool: pool, Logger: log, Embedder: emb, Enricher: enrich.Heuristic{}, Questions: 3,
		Memory: true, Search: search.DefaultSettings()}
	rc, err := jobs.NewClient(deps, jobs.Options{Work: true, MaxWorkers: 2})
	if err != nil {
		t.Fatal(err)
	}
	svc := search.New(pool, emb, search.DefaultSettings(), log)
	g := gateway.New(pool, gateway.SearchFinder{Search: svc}, gateway.Options{BindLimit: 8})
	t.Cleanup(g.Close)
	te.e = api.New(api.Deps{Pool: pool, River: rc, Logger: log, Keys: keys, Search: svc, Gateway: g})
	te.rc = rc
	te.events = testfactory.JobEvents(t, rc)
	if err := rc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rc.Stop(context.Background()) })
	return te
}

// sweep runs a memory_sweep job that starts after every label written so far, as River
// runs it. The client's periodic sweep (run on start, which can come late on a loaded
// machine) may be running and have read only some of the labels; the job is unique while
// unfinished, so the insert then returns that one: it is waited for, and a new one inserted.
func (te *tenantEnv) sweep(t *testing.T) {
	t.Helper()
	for {
		ins, err := te.rc.Insert(context.Background(), jobs.MemorySweepArgs{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		ev := testfactory.WaitJob(t, te.events, time.Minute, "the memory_sweep job", func(ev *river.Event) bool { return ev.Job.ID == ins.Job.ID })
		if ev.Kind != river.EventKindJobCompleted {
			t.Fatalf("memory_sweep: %s %v", ev.Kind, ev.Job.Errors)
		}
		if !ins.UniqueSkippedAsDuplicate {
			return
		}
	}
}

// answer is the results of a search, and its explanations, as JSON text: two equal texts
// are the same answer to the last digit.
func (te *tenantEnv) answer(t *testing.T, key, query string, explain bool) (string, []string) {
	t.Helper()
	body := `{"query":"` + query + `","k":3,"plan":"none","explain":` + strconv.FormatBool(explain) + `}`
	r := do(t, te.e, http.MethodPost, "/search", key, body)
	if r.status != http.StatusOK {
		t.Fatalf("search %q: %d %v", query, r.status, r.body)
	}
	results, _ := r.body["results"].([]any)
	var names []string
	for _, x := range results {
		m := x.(map[string]any)
		names = append(names, m["name"].(string))
	}
	text, err := json.Marshal(results)
	if err != nil {
		t.Fatal(err)
	}
	return string(text), names
}

// TestTenantPoisoningStaysInTenant: the per-tenant mirror of TestOneKeyCannotSteerRanking.
// Tenant acme's key labels srca__send_email for weather searches, many times: acme's own
// ranking changes (its other key too: they share a tenant), while another tenant's answers,
// explanations included, stay the same byte for byte, over REST, and MCP find_tools still
// ranks get_weather first for it.
func TestTenantPoisoningStaysInTenant(t *testing.T) {
	t.Parallel()
	te := newTenantEnv(t)
	const weather = "what is the weather in paris"
	victimBefore, _ := te.answer(t, te.victim, weather, true)
	acmeBefore, before := te.answer(t, te.a2, weather, false)
	if len(before) == 0 || before[0] != "srca__get_weather" {
		t.Fatalf("before: %q, want get_weather first", before)
	}

	phrases := []string{weather, "weather in paris today", "paris weather forecast", "will it rain in paris"}
	for range 5 {
		for _, p := range phrases {
			r := do(t, te.e, http.MethodPost, "/search", te.a1, `{"query":"`+p+`","k":10,"plan":"none"}`)
			if r.status != http.StatusOK {
				t.Fatalf("search %q: %d %v", p, r.status, r.body)
			}
			path := "/search/" + strconv.FormatInt(int64(r.body["search_id"].(float64)), 10) + "/feedback"
			if r := do(t, te.e, http.MethodPost, path, te.a1, `{"tools":[{"name":"srca__send_email","success":true}]}`); r.status != http.StatusCreated {
				t.Fatalf("feedback on %q: %d %v", p, r.status, r.body)
			}
		}
	}
	te.sweep(t)

	// acme learned (what it taught is its own business)
	_, after := te.answer(t, te.a2, weather, false)
	if position(after, "srca__send_email") >= position(before, "srca__send_email") {
		t.Fatalf("acme after its own labels: %q (before %q), want send_email higher", after, before)
	}
	// and explain shows acme its own memories
	r := do(t, te.e, http.MethodPost, "/search", te.a2, `{"query":"`+weather+`","k":3,"plan":"none","explain":true}`)
	if !strings.Contains(mustJSON(r.body), `"memories":[{"query":"`) {
		t.Fatalf("acme's explain shows no memory: %v", r.body)
	}
	// globex: byte-identical answer and explanation
	victimAfter, _ := te.answer(t, te.victim, weather, true)
	if victimAfter != victimBefore {
		t.Fatalf("another tenant's answer changed:\nbefore %s\nafter  %s", victimBefore, victimAfter)
	}
	if strings.Contains(victimAfter, "paris today") || strings.Contains(victimAfter, "rain in paris") {
		t.Fatalf("another tenant's explain shows acme's words: %s", victimAfter)
	}
	// MCP find_tools for globex: get_weather first
	srv := httptest.NewServer(te.e)
	t.Cleanup(srv.Close)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).
		Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", MaxRetries: -1,
			HTTPClient: &http.Client{Transport: bearerTransport{key: te.victim}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	found, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "find_tools", Arguments: map[string]any{"query": weather, "limit": 3}})
	if err != nil || found.IsError {
		t.Fatalf("find_tools: %v %+v", err, found)
	}
	text := found.Content[0].(*mcp.TextContent).Text
	if w, s := strings.Index(text, "srca__get_weather"), strings.Index(text, "srca__send_email"); w < 0 || (s >= 0 && s < w) {
		t.Fatalf("find_tools for globex: get_weather at %d, send_email at %d:\n%s", w, s, text)
	}

	// the operator sees what the tool learned, and whose it is
	r = do(t, te.e, http.MethodGet, "/admin/tools/srca__send_email/memories", te.admin, "")
	list, _ := r.body["memories"].([]any)
	if r.status != http.StatusOK || len(list) != len(phrases) {
		t.Fatalf("list memories: %d %v, want %d", r.status, r.body, len(phrases))
	}
	for _, x := range list {
		if m := x.(map[string]any); m["tenant"] != "acme" || m["key"] != "a1" {
			t.Fatalf("memory %v, want tenant acme, key a1", m)
		}
	}
	if r := do(t, te.e, http.MethodGet, "/admin/tools/srca__send_email/memories", te.a1, ""); r.status != http.StatusForbidden {
		t.Fatalf("a search key lists memories: %d", r.status)
	}
	if r := do(t, te.e, http.MethodGet, "/admin/tools/srca__nope/memories", te.admin, ""); r.status != http.StatusNotFound {
		t.Fatalf("memories of a missing tool: %d %v", r.status, r.body)
	}
	// one memory removed by its id: the others stay
	one := list[0].(map[string]any)
	path := fmt.Sprintf("/admin/tools/srca__send_email/memories/%d", int64(one["id"].(float64)))
	if r := do(t, te.e, http.MethodDelete, path, te.a1, ""); r.status != http.StatusForbidden {
		t.Fatalf("a search key removes a memory: %d", r.status)
	}
	if r := do(t, te.e, http.MethodDelete, path, te.admin, ""); r.status != http.StatusOK || r.body["removed"] != 1.0 {
		t.Fatalf("forget memory %v: %d %v", one, r.status, r.body)
	}
	for _, bad := range []string{path, "/admin/tools/srca__send_email/memories/x", "/admin/tools/srca__nope/memories/1"} {
		if r := do(t, te.e, http.MethodDelete, bad, te.admin, ""); r.status != http.StatusNotFound || r.body["error"] == nil {
			t.Errorf("DELETE %s: %d %v, want 404", bad, r.status, r.body)
		}
	}
	te.sweep(t)
	r = do(t, te.e, http.MethodGet, "/admin/tools/srca__send_email/memories", te.admin, "")
	if left, _ := r.body["memories"].([]any); len(left) != len(phrases)-1 || strings.Contains(mustJSON(left), fmt.Sprint(one["query"])) {
		t.Fatalf("after removing %v and a sweep: %v", one["query"], left)
	}
	// removing them restores acme's ranking, and the next sweep does not bring them back
	r = do(t, te.e, http.MethodDelete, "/admin/tools/srca__send_email/memories", te.admin, "")
	if r.status != http.StatusOK || r.body["removed"] != float64(len(phrases)-1) {
		t.Fatalf("forget memories: %d %v", r.status, r.body)
	}
	te.sweep(t)
	if restored, _ := te.answer(t, te.a2, weather, false); restored != acmeBefore {
		t.Fatalf("acme after the memories were removed:\n%s\nwant its first answer\n%s", restored, acmeBefore)
	}
}

// position is name's index in names, len(names) when absent.
func position(names []string, name string) int {
	for i, n := range names {
		if n == name {
			return i
		}
	}
	return len(names)
}

// TestKeyTenantInListingsAndWhoami: a key's tenant is set at creation, shown in listings
// and whoami; an admin key takes none, a malformed name is refused.
func TestKeyTenantInListingsAndWhoami(t *testing.T) {
	t.Parallel()
	a := newTestAPI(t, false)
	_, admin := a.key(t, auth.Spec{Name: "ops", Scope: auth.ScopeAdmin})
	r := do(t, a.e, http.MethodPost, "/admin/keys", admin, `{"name":"k1","scope":"search","tenant":"acme"}`)
	if r.status != http.StatusCreated || r.body["api_key"].(map[string]any)["tenant"] != "acme" {
		t.Fatalf("create with tenant: %d %v", r.status, r.body)
	}
	k1 := r.body["key"].(string)
	if r := do(t, a.e, http.MethodGet, "/v1/whoami", k1, ""); r.body["tenant"] != "acme" {
		t.Fatalf("whoami: %v", r.body)
	}
	r = do(t, a.e, http.MethodPost, "/admin/keys", admin, `{"name":"k2","scope":"search"}`)
	k2 := r.body["key"].(string)
	if r.body["api_key"].(map[string]any)["tenant"] != nil {
		t.Fatalf("a key without tenant lists %v, want null", r.body["api_key"])
	}
	if r := do(t, a.e, http.MethodGet, "/v1/whoami", k2, ""); r.body["tenant"] != "key:k2" {
		t.Fatalf("whoami of a key of its own: %v", r.body)
	}
	if r := do(t, a.e, http.MethodGet, "/v1/whoami", admin, ""); r.body["tenant"] != "" {
		t.Fatalf("whoami of an admin key: %v", r.body)
	}
	for _, body := range []string{`{"name":"k3","scope":"admin","tenant":"acme"}`, `{"name":"k4","scope":"search","tenant":"key:1"}`} {
		if r := do(t, a.e, http.MethodPost, "/admin/keys", admin, body); r.status != http.StatusBadRequest {
			t.Fatalf("%s: %d %v, want 400", body, r.status, r.body)
		}
	}
	r = do(t, a.e, http.MethodGet, "/admin/keys", admin, "")
	if !strings.Contains(mustJSON(r.body), `"tenant":"acme"`) {
		t.Fatalf("listing shows no tenant: %v", r.body)
	}
}
