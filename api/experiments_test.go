package api_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/toolgate/toolgate/api"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/embed"
	"github.com/toolgate/toolgate/internal/experiments"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/search"
	"github.com/toolgate/toolgate/internal/testfactory"
)

// TestExperimentEndpoints: start, list, show, stop; the validation errors and their codes;
// one running experiment at a time; the arm in the search response, as Bucket predicts; a
// profile of the running experiment cannot be deleted.
func TestExperimentEndpoints(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	ids := testfactory.DemoCatalog(ctx, t, pool, 1, nil)
	testfactory.Enrich(ctx, t, testfactory.LocalEnricher(pool, 1), ids...)
	testfactory.Weights(ctx, t, pool, "unbuilt", map[string]float64{"name": 1})
	log := slog.New(slog.DiscardHandler)
	srv := httptest.NewServer(api.New(api.Deps{Pool: pool, Logger: log, Open: true,
		Search: search.New(pool, embed.NewLocal(384), search.DefaultSettings(), log)}))
	t.Cleanup(srv.Close)

	for _, c := range []struct {
		body string
		code int
		err  string
	}{
		{`{"name":"Bad","candidate":"var-1","share":0.5}`, 400, "invalid_experiment"},
		{`{"name":"x","share":0.5}`, 400, "invalid_experiment"},
		{`{"name":"x","candidate":"var-1"}`, 400, "invalid_experiment"},
		{`{"name":"x","candidate":"var-1","share":1.5}`, 400, "invalid_experiment"},
		{`{"name":"x","candidate":"var-1","share":0.5,"unit":"day"}`, 400, "invalid_experiment"},
		{`{"name":"x","candidate":"default","share":0.5}`, 400, "invalid_experiment"},
		{`{"name":"x","candidate":"var-1","share":0.5,"extra":1}`, 400, "invalid_request"},
		{`{"name":"x","candidate":"nope","share":0.5}`, 404, "not_found"},
		{`{"name":"x","candidate":"var-1","control":"nope","share":0.5}`, 404, "not_found"},
		{`{"name":"x","candidate":"unbuilt","share":0.5}`, 409, "profile_not_built"},
	} {
		if code, resp := call(t, srv, "POST", "/admin/experiments", c.body); code != c.code || errorCode(resp) != c.err {
			t.Errorf("POST %s: %d %v, want %d %s", c.body, code, resp, c.code, c.err)
		}
	}

	code, resp := call(t, srv, "POST", "/admin/experiments", `{"name":"mean-vs-default","candidate":"mean","share":0.5}`)
	if code != 201 || resp["control"] != "default" || resp["candidate"] != "mean" || resp["unit"] != "session" || resp["running"] != true {
		t.Fatalf("start: %d %v", code, resp)
	}
	e := experiments.Experiment{ID: int64(resp["id"].(float64)), Share: 0.5, Unit: experiments.UnitSession}
	if code, resp := call(t, srv, "POST", "/admin/experiments", `{"name":"other","candidate":"var-1","share":0.1}`); code != 409 || errorCode(resp) != "experiment_running" {
		t.Errorf("second running experiment: %d %v", code, resp)
	}
	if code, resp := call(t, srv, "DELETE", "/admin/profiles/mean", ""); code != 409 || errorCode(resp) != "profile_in_experiment" {
		t.Errorf("delete the candidate: %d %v", code, resp)
	}

	// The search response names the arm; open mode has no key.
	searches := map[db.ExperimentArm]int{}
	for i := range 12 {
		session := fmt.Sprintf("rest-%d", i)
		code, resp := call(t, srv, "POST", "/search", fmt.Sprintf(`{"query":"stock price","session_id":%q}`, session))
		x, _ := resp["experiment"].(map[string]any)
		want := experiments.ArmOf(e, experiments.UnitValue(e.Unit, session, 0, "open"))
		if code != 200 || x == nil || x["arm"] != string(want) || x["id"] != float64(e.ID) {
			t.Fatalf("search %s: %d %v, want arm %s", session, code, resp["experiment"], want)
		}
		searches[want]++
	}
	if code, resp := call(t, srv, "POST", "/search", `{"query":"stock price","profile":"var-2"}`); code != 200 || resp["experiment"] != nil {
		t.Errorf("a search naming its profile: %d %v", code, resp["experiment"])
	}

	code, resp = call(t, srv, "GET", "/admin/experiments/mean-vs-default", "")
	arms, _ := resp["arms"].([]any)
	if code != 200 || len(arms) != 2 || resp["difference"] == nil {
		t.Fatalf("show: %d %v", code, resp)
	}
	for i, name := range []db.ExperimentArm{db.ArmControl, db.ArmCandidate} {
		a := arms[i].(map[string]any)
		if a["arm"] != string(name) || a["searches"] != float64(searches[name]) || a["labelled"] != 0.0 {
			t.Errorf("arm %d: %v, want %s with %d searches", i, a, name, searches[name])
		}
	}
	code, resp = call(t, srv, "GET", "/admin/experiments", "")
	if list, _ := resp["experiments"].([]any); code != 200 || len(list) != 1 {
		t.Errorf("list: %d %v", code, resp)
	}
	if code, resp := call(t, srv, "POST", "/admin/experiments/mean-vs-default/stop", ""); code != 200 || resp["running"] != false || resp["stopped_at"] == nil {
		t.Errorf("stop: %d %v", code, resp)
	}
	if code, resp := call(t, srv, "POST", "/search", `{"query":"stock price","session_id":"rest-1"}`); code != 200 || resp["experiment"] != nil {
		t.Errorf("a search after the stop: %d %v", code, resp["experiment"])
	}
	for _, path := range []string{"/admin/experiments/nope", "/admin/experiments/nope/stop"} {
		method := "GET"
		if path != "/admin/experiments/nope" {
			method = "POST"
		}
		if code, resp := call(t, srv, method, path, ""); code != 404 || errorCode(resp) != "not_found" {
			t.Errorf("%s %s: %d %v", method, path, code, resp)
		}
	}
	if code, _ := call(t, srv, "POST", "/admin/experiments", `{"name":"other","candidate":"var-1","share":0.1}`); code != 201 {
		t.Errorf("start after the stop: %d", code)
	}
}
