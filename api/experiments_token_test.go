package api_test

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"testing"

	"github.com/toolgate/toolgate/api"
	"github.com/toolgate/toolgate/internal/embed"
	"github.com/toolgate/toolgate/internal/oauth"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/search"
	"github.com/toolgate/toolgate/internal/testfactory"
)

// TestTokenSubjectIsCappedInExperiments: an OAuth subject that steers an A/B experiment
// (many sessions, feedback in one arm only) counts at most max_per_key searches per arm,
// as a search key does, and is one cluster however many sessions it opened.
func TestTokenSubjectIsCappedInExperiments(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	ids := testfactory.DemoCatalog(ctx, t, pool, 1, nil)
	testfactory.Enrich(ctx, t, testfactory.LocalEnricher(pool, 1), ids...)
	log := slog.New(slog.DiscardHandler)
	srv, as, resource := serveWithOAuth(t, api.Deps{Pool: pool, Logger: log,
		Search: search.New(pool, embed.NewLocal(384), search.DefaultSettings(), log)}, oauth.Settings{}, oauthAgent, oauthOps)
	o := &oauthAPI{srv: srv, as: as, resource: resource}
	admin := as.ClientToken(t, oauthOps, resource, "toolgate:admin")
	if status, _, body := o.do(t, "POST", "/admin/experiments", admin, `{"name":"steered","candidate":"mean","share":0.5}`); status != 201 {
		t.Fatalf("start: %d %v", status, body)
	}
	agent := as.ClientToken(t, oauthAgent, resource, "toolgate:search")
	steered := map[string]int{}
	for i := range 32 {
		status, _, body := o.do(t, "POST", "/search", agent, fmt.Sprintf(`{"query":"stock price","k":5,"plan":"none","session_id":"s-%d"}`, i))
		x, _ := body["experiment"].(map[string]any)
		results, _ := body["results"].([]any)
		if status != 200 || x == nil || len(results) == 0 {
			t.Fatalf("search %d: %d %v", i, status, body)
		}
		arm := x["arm"].(string)
		steered[arm]++
		if arm != "candidate" {
			continue
		}
		path := "/search/" + strconv.FormatInt(int64(body["search_id"].(float64)), 10) + "/feedback"
		name := results[0].(map[string]any)["name"].(string)
		if status, _, body := o.do(t, "POST", path, agent, `{"tools":[{"name":"`+name+`","success":true}]}`); status != 201 {
			t.Fatalf("feedback %d: %d %v", i, status, body)
		}
	}
	if steered["candidate"] <= 4 || steered["control"] <= 4 {
		t.Fatalf("32 sessions split %v: want more than 4 in each arm for the cap to show", steered)
	}
	status, _, rep := o.do(t, "GET", "/admin/experiments/steered?max_per_key=4", admin, "")
	arms, _ := rep["arms"].([]any)
	if status != 200 || len(arms) != 2 {
		t.Fatalf("report: %d %v", status, rep)
	}
	for _, a := range arms {
		arm := a.(map[string]any)
		if arm["searches"] != float64(steered[arm["arm"].(string)]) || arm["counted"] != float64(4) || arm["clusters"] != float64(1) {
			t.Errorf("arm %v: %v searches, %v counted, %v clusters; want %d, 4 (the cap), 1 (the subject)",
				arm["arm"], arm["searches"], arm["counted"], arm["clusters"], steered[arm["arm"].(string)])
		}
	}
}
