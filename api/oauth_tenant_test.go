package api_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/api"
	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/embed"
	"github.com/toolgate/toolgate/internal/mcptest"
	"github.com/toolgate/toolgate/internal/oauth"
	"github.com/toolgate/toolgate/internal/search"
	"github.com/toolgate/toolgate/internal/testfactory"
)

// TestTokenTenantClaimGetsItsTenantsCurations: a search token whose toolgate_tenant claim
// names acme searches as acme's keys do — acme's pin applies to it, and explain names the
// rule — while a search token without the claim, like a key of another tenant, gets the
// global ranking.
func TestTokenTenantClaimGetsItsTenantsCurations(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := searchableCatalog(t, "srca",
		testfactory.Tool("get_weather", "Current weather forecast for a city."),
		testfactory.Tool("send_email", "Send an email message to a recipient."))
	acme := mcptest.AuthClient{ID: "acme-agent", Secret: "s1", Claims: map[string]any{"toolgate_tenant": "acme"}}
	log := slog.New(slog.DiscardHandler)
	keys := auth.NewKeys(pool, time.Now)
	_, admin, err := keys.Create(ctx, auth.Spec{Name: "ops", Scope: auth.ScopeAdmin})
	if err != nil {
		t.Fatal(err)
	}
	srv, as, resource := serveWithOAuth(t, api.Deps{Pool: pool, Logger: log, Keys: keys,
		Search: search.New(pool, embed.NewLocal(384), search.DefaultSettings(), log)}, oauth.Settings{}, acme, oauthAgent)
	post := func(credential, path, body string) map[string]any {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+credential)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode >= 300 {
			t.Fatalf("POST %s: %d %v %v", path, resp.StatusCode, out, err)
		}
		return out
	}
	first := func(credential string) (string, string) {
		t.Helper()
		out := post(credential, "/search", `{"query":"weather forecast","k":2,"plan":"none","explain":true}`)
		r := out["results"].([]any)[0].(map[string]any)
		rules, _ := json.Marshal(r["explanation"].(map[string]any)["rules"])
		return r["name"].(string), string(rules)
	}
	acmeToken := as.ClientToken(t, acme, resource, "toolgate:search")
	plainToken := as.ClientToken(t, oauthAgent, resource, "toolgate:search")
	if name, _ := first(acmeToken); name != "srca__get_weather" {
		t.Fatalf("before the rule: %s first", name)
	}
	post(admin, "/admin/rules", `{"tenant":"acme","match":"contains","pattern":"weather","action":"pin","tool":"srca__send_email","position":1}`)
	if name, rules := first(acmeToken); name != "srca__send_email" || !strings.Contains(rules, `"action":"pin"`) {
		t.Errorf("acme's token: %s first, rules %s; want acme's pin", name, rules)
	}
	if name, _ := first(plainToken); name != "srca__get_weather" {
		t.Errorf("a token without the tenant claim: %s first, want the global ranking", name)
	}
}
