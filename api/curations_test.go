package api_test

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/toolgate/toolgate/api"
	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/embed"
	"github.com/toolgate/toolgate/internal/enrich"
	"github.com/toolgate/toolgate/internal/lexicon"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/testfactory"
	"github.com/toolgate/toolgate/jobs"
)

// TestTenantRulesStayInTenant: rules and synonyms of tenant acme pin, hide and widen acme's
// searches (both its keys), with explain naming the rule that acted and why-not the rule
// that hid; another tenant's answers, explanations included, stay the same byte for byte;
// a global rule acts on every tenant; a search key may not manage rules.
func TestTenantRulesStayInTenant(t *testing.T) {
	t.Parallel()
	te := newTenantEnv(t)
	const weather = "what is the weather in paris"
	victimBefore, _ := te.answer(t, te.victim, weather, true)
	_, before := te.answer(t, te.a2, weather, false)
	if len(before) == 0 || before[0] != "srca__get_weather" {
		t.Fatalf("before: %q, want get_weather first", before)
	}
	if r := do(t, te.e, http.MethodPost, "/admin/rules", te.a1,
		`{"tenant":"acme","match":"contains","pattern":"weather","action":"pin","tool":"srca__send_email","position":1}`); r.status != http.StatusForbidden {
		t.Fatalf("a search key creates a rule: %d %v", r.status, r.body)
	}
	pin := do(t, te.e, http.MethodPost, "/admin/rules", te.admin,
		`{"tenant":"acme","match":"contains","pattern":"Weather","action":"pin","tool":"srca__send_email","position":1}`)
	if pin.status != http.StatusCreated || pin.body["created_by"] != "ops" {
		t.Fatalf("create a pin: %d %v", pin.status, pin.body)
	}
	hide := do(t, te.e, http.MethodPost, "/admin/rules", te.admin,
		`{"tenant":"acme","match":"exact","pattern":"what is the weather in Paris","action":"hide","tool":"srca__get_weather"}`)
	if hide.status != http.StatusCreated {
		t.Fatalf("create a hide: %d %v", hide.status, hide.body)
	}
	syn := do(t, te.e, http.MethodPost, "/admin/synonyms", te.admin, `{"tenant":"acme","word":"Courriel","synonyms":["email"]}`)
	if syn.status != http.StatusOK || syn.body["word"] != "courriel" {
		t.Fatalf("put synonyms: %d %v", syn.status, syn.body)
	}

	// acme's searches, by either key: send_email pinned first, get_weather hidden
	r := do(t, te.e, http.MethodPost, "/search", te.a2,
		`{"query":"`+weather+`","k":3,"plan":"none","explain":true,"explain_tools":["srca__get_weather"]}`)
	results := r.body["results"].([]any)
	first := results[0].(map[string]any)
	if first["name"] != "srca__send_email" || strings.Contains(mustJSON(results), "srca__get_weather") {
		t.Fatalf("acme with its rules: %s", mustJSON(results))
	}
	pinID := strconv.FormatInt(int64(pin.body["id"].(float64)), 10)
	if got := mustJSON(first["explanation"].(map[string]any)["rules"]); got != `[{"action":"pin","id":`+pinID+`,"position":1}]` {
		t.Errorf("explain of the pinned tool: rules %s", got)
	}
	why := mustJSON(r.body["explained_tools"])
	if !strings.Contains(why, `"code":"hidden_by_rule"`) || !strings.Contains(why, "rule "+strconv.FormatInt(int64(hide.body["id"].(float64)), 10)) {
		t.Errorf("why not get_weather for acme: %s", why)
	}
	// the hide is for that query only; the pin for every query with the word
	if _, names := te.answer(t, te.a1, "weather forecast", false); len(names) < 2 || names[0] != "srca__send_email" || names[1] != "srca__get_weather" {
		t.Errorf("acme, another weather query: %q", names)
	}
	// acme's synonym: a word no tool has finds the email tool
	if r := do(t, te.e, http.MethodPost, "/search", te.a1, `{"query":"courriel","mode":"lexical","plan":"none"}`); len(r.body["results"].([]any)) == 0 ||
		r.body["results"].([]any)[0].(map[string]any)["name"] != "srca__send_email" {
		t.Errorf("acme's synonym: %d %v", r.status, r.body)
	}

	// globex: byte-identical answer and explanation, and no synonym
	if victimAfter, _ := te.answer(t, te.victim, weather, true); victimAfter != victimBefore {
		t.Fatalf("another tenant's answer changed:\nbefore %s\nafter  %s", victimBefore, victimAfter)
	}
	if r := do(t, te.e, http.MethodPost, "/search", te.victim, `{"query":"courriel","mode":"lexical","plan":"none"}`); len(r.body["results"].([]any)) != 0 {
		t.Errorf("another tenant used acme's synonym: %v", r.body)
	}

	// a global rule acts on every search: a boost for globex too
	boost := do(t, te.e, http.MethodPost, "/admin/rules", te.admin,
		`{"match":"contains","pattern":"paris weather","action":"boost","tool":"srca__get_stock_price","boost":100}`)
	if boost.status != http.StatusCreated || boost.body["tenant"] != nil {
		t.Fatalf("create a global boost: %d %v", boost.status, boost.body)
	}
	if _, names := te.answer(t, te.victim, weather, false); len(names) == 0 || names[0] != "srca__get_stock_price" {
		t.Errorf("globex with a global boost: %q", names)
	}

	list := do(t, te.e, http.MethodGet, "/admin/rules", te.admin, "")
	if n := len(list.body["rules"].([]any)); list.status != http.StatusOK || n != 3 {
		t.Fatalf("list rules: %d %v", list.status, list.body)
	}
	for _, id := range []string{pinID, strconv.FormatInt(int64(hide.body["id"].(float64)), 10), strconv.FormatInt(int64(boost.body["id"].(float64)), 10)} {
		if r := do(t, te.e, http.MethodDelete, "/admin/rules/"+id, te.admin, ""); r.status != http.StatusNoContent {
			t.Fatalf("delete rule %s: %d %v", id, r.status, r.body)
		}
	}
	if r := do(t, te.e, http.MethodDelete, "/admin/rules/"+pinID, te.admin, ""); r.status != http.StatusNotFound {
		t.Errorf("delete a deleted rule: %d", r.status)
	}
	if _, after := te.answer(t, te.a2, weather, false); mustJSON(after) != mustJSON(before) {
		t.Errorf("acme after the rules were deleted: %q, want %q", after, before)
	}

	for _, tc := range []struct{ body, code string }{
		{`{"match":"regex","pattern":"w.*","action":"hide","tool":"srca__send_email"}`, "invalid_request"},
		{`{"match":"exact","pattern":"!!!","action":"hide","tool":"srca__send_email"}`, "invalid_request"},
		{`{"match":"exact","pattern":"x","action":"pin","tool":"srca__send_email"}`, "invalid_request"},
		{`{"match":"exact","pattern":"x","action":"boost","tool":"srca__send_email","boost":0}`, "invalid_request"},
		{`{"tenant":"a:b","match":"exact","pattern":"x","action":"hide","tool":"srca__send_email"}`, "invalid_request"},
		{`{"match":"exact","pattern":"x","action":"hide","tool":"srca__nope"}`, "not_found"},
	} {
		if r := do(t, te.e, http.MethodPost, "/admin/rules", te.admin, tc.body); r.errorCode() != tc.code {
			t.Errorf("%s: %d %v, want %s", tc.body, r.status, r.body, tc.code)
		}
	}
}

// TestRuleTenantByKeyName: a rule's tenant may be given as analytics and the console show a
// key's tenant, key:<name>. It is stored as the tenant of that active key (key:<id> for a key
// of its own, the tenant's name for a key of a named tenant) and acts on that key's searches
// only; an unknown or revoked key's name, or an admin key's, is refused and stores nothing.
func TestRuleTenantByKeyName(t *testing.T) {
	t.Parallel()
	te := newTenantEnv(t)
	created := do(t, te.e, http.MethodPost, "/admin/keys", te.admin, `{"name":"solo","scope":"search"}`)
	if created.status != http.StatusCreated {
		t.Fatalf("create a key of its own tenant: %d %v", created.status, created.body)
	}
	solo := created.body["key"].(string)
	const weather = "what is the weather in paris"
	if _, names := te.answer(t, solo, weather, false); len(names) == 0 || names[0] != "srca__get_weather" {
		t.Fatalf("solo before: %q", names)
	}

	for _, tc := range []struct{ tenant, shown string }{{"key:solo", "key:solo"}, {"key:a1", "acme"}} {
		r := do(t, te.e, http.MethodPost, "/admin/rules", te.admin,
			`{"tenant":"`+tc.tenant+`","match":"contains","pattern":"weather","action":"pin","tool":"srca__send_email","position":1}`)
		if r.status != http.StatusCreated || r.body["tenant"] != tc.shown {
			t.Fatalf("a rule of %s: %d %v, want its tenant %s", tc.tenant, r.status, r.body, tc.shown)
		}
	}
	// stored as the key's tenant: key:<id> for solo, shown by its name while it is active
	var stored []string
	list := do(t, te.e, http.MethodGet, "/admin/rules", te.admin, "")
	for _, r := range list.body["rules"].([]any) {
		stored = append(stored, r.(map[string]any)["tenant"].(string))
	}
	if mustJSON(stored) != `["key:solo","acme"]` {
		t.Errorf("the rules' tenants: %q", stored)
	}
	for _, key := range []string{solo, te.a2} {
		if _, names := te.answer(t, key, weather, false); len(names) == 0 || names[0] != "srca__send_email" {
			t.Errorf("a key whose tenant's rule pins send_email: %q", names)
		}
	}
	if _, names := te.answer(t, te.victim, weather, false); len(names) == 0 || names[0] != "srca__get_weather" {
		t.Errorf("another tenant: %q", names)
	}

	if r := do(t, te.e, http.MethodDelete, "/admin/keys/"+created.body["api_key"].(map[string]any)["prefix"].(string), te.admin, ""); r.status != http.StatusOK {
		t.Fatalf("revoke solo: %d %v", r.status, r.body)
	}
	// a revoked key's rule is shown by its key's id (its name may be reused)
	list = do(t, te.e, http.MethodGet, "/admin/rules", te.admin, "")
	revoked := list.body["rules"].([]any)[0].(map[string]any)["tenant"].(string)
	if !strings.HasPrefix(revoked, "key:") || revoked == "key:solo" {
		t.Errorf("the rule of a revoked key: tenant %q, want key:<id>", revoked)
	}
	// key:<digits> is an id, taken as it is, whether or not its key is active
	if r := do(t, te.e, http.MethodPost, "/admin/rules", te.admin,
		`{"tenant":"`+revoked+`","match":"exact","pattern":"x","action":"hide","tool":"srca__send_email"}`); r.status != http.StatusCreated || r.body["tenant"] != revoked {
		t.Errorf("a rule of %s: %d %v", revoked, r.status, r.body)
	}
	for _, tenant := range []string{"key:solo", "key:nobody", "key:ops"} {
		r := do(t, te.e, http.MethodPost, "/admin/synonyms", te.admin, `{"tenant":"`+tenant+`","word":"courriel","synonyms":["email"]}`)
		if r.errorCode() != "invalid_request" {
			t.Errorf("synonyms of %s: %d %v, want invalid_request", tenant, r.status, r.body)
		}
	}
	if r := do(t, te.e, http.MethodGet, "/admin/synonyms", te.admin, ""); len(r.body["synonyms"].([]any)) != 0 {
		t.Errorf("refused synonyms were stored: %v", r.body)
	}
}

// TestExpansionSwitchDropsTheComponent: switching a tool's knowledge expansion off queues
// its enrichment, which drops its expansion component; switching it on brings it back.
func TestExpansionSwitchDropsTheComponent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	log := slog.New(slog.DiscardHandler)
	_, res := testfactory.Catalog(ctx, t, pool, "srca", []catalog.Tool{
		testfactory.Tool("get_weather", "Current weather forecast for a city.")}, nil)
	enricher := enrich.Heuristic{Lexicon: lexicon.Builtin} // the built-in enricher, which expands
	svc := testfactory.LocalEnricher(pool, 2)
	svc.Enricher = enricher
	testfactory.Enrich(ctx, t, svc, res.Changed...)
	rc, err := jobs.NewClient(jobs.Deps{Pool: pool, Logger: log, Embedder: embed.NewLocal(384), Enricher: enricher, Questions: 2},
		jobs.Options{Work: true, MaxWorkers: 1})
	if err != nil {
		t.Fatal(err)
	}
	events := testfactory.JobEvents(t, rc)
	if err := rc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rc.Stop(context.Background()) })
	keys := auth.NewKeys(pool, time.Now)
	_, admin, err := keys.Create(ctx, auth.Spec{Name: "ops", Scope: auth.ScopeAdmin})
	if err != nil {
		t.Fatal(err)
	}
	_, searcher, err := keys.Create(ctx, auth.Spec{Name: "s", Scope: auth.ScopeSearch})
	if err != nil {
		t.Fatal(err)
	}
	e := api.New(api.Deps{Pool: pool, River: rc, Logger: log, Keys: keys})

	expansion := func() int {
		t.Helper()
		var n int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM tool_components c JOIN tools t ON t.id = c.tool_id
			WHERE t.name = 'srca__get_weather' AND c.kind = 'expansion'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := expansion(); n != 1 {
		t.Fatalf("the weather tool has %d expansion components before, want 1", n)
	}
	for _, tc := range []struct {
		path string
		want int
	}{{"off", 0}, {"on", 1}} {
		if r := do(t, e, http.MethodPost, "/admin/tools/srca__get_weather/expansion/"+tc.path, admin, ""); r.status != http.StatusOK {
			t.Fatalf("expansion %s: %d %v", tc.path, r.status, r.body)
		}
		ev := testfactory.WaitJob(t, events, time.Minute, "the enrichment", func(ev *river.Event) bool {
			return ev.Job.Kind == (jobs.EnrichToolArgs{}).Kind() && ev.Kind != river.EventKindJobSnoozed
		})
		if ev.Kind != river.EventKindJobCompleted {
			t.Fatalf("enrichment: %s %v", ev.Kind, ev.Job.Errors)
		}
		if got := expansion(); got != tc.want {
			t.Errorf("expansion %s: %d expansion components, want %d", tc.path, got, tc.want)
		}
	}
	if r := do(t, e, http.MethodPost, "/admin/tools/srca__nope/expansion/off", admin, ""); r.status != http.StatusNotFound {
		t.Errorf("a missing tool: %d", r.status)
	}
	if r := do(t, e, http.MethodPost, "/admin/tools/srca__get_weather/expansion/off", searcher, ""); r.status != http.StatusForbidden {
		t.Errorf("a search key: %d", r.status)
	}
}
