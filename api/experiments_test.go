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

	"github.com/toolgate/toolgate/api"
	"github.com/toolgate/toolgate/internal/auth"
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

// TestOneKeyCannotDecideAnExperiment: a search key sends REST searches with a fresh
// session_id each and gives feedback only when the answer came from the candidate arm. Its
// searches land in both arms, all labelled in the candidate and none in the control. The
// report counts the key as one observation: no interval, so no winner, and it names the key
// that made all the searches. Among honest keys, the cap bounds what the key's volume adds.
func TestOneKeyCannotDecideAnExperiment(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	ids := testfactory.DemoCatalog(ctx, t, pool, 1, nil)
	testfactory.Enrich(ctx, t, testfactory.LocalEnricher(pool, 1), ids...)
	log := slog.New(slog.DiscardHandler)
	keys := auth.NewKeys(pool, time.Now)
	_, admin, err := keys.Create(ctx, auth.Spec{Name: "operator", Scope: auth.ScopeAdmin})
	if err != nil {
		t.Fatal(err)
	}
	attackerKey, attacker, err := keys.Create(ctx, auth.Spec{Name: "attacker", Scope: auth.ScopeSearch})
	if err != nil {
		t.Fatal(err)
	}
	e := api.New(api.Deps{Pool: pool, Logger: log, Keys: keys, Search: search.New(pool, embed.NewLocal(384), search.DefaultSettings(), log)})
	if r := do(t, e, "POST", "/admin/experiments", admin, `{"name":"steered","candidate":"mean","share":0.5}`); r.status != 201 {
		t.Fatalf("start: %d %v", r.status, r.body)
	}
	// searches makes n searches of one key, each in a session of its own, and gives feedback
	// on the first result of those label says; it returns the searches per arm.
	searches := func(key, who string, n int, label func(i int, arm string) bool) map[string]int {
		arms := map[string]int{}
		for i := range n {
			r := do(t, e, "POST", "/search", key, fmt.Sprintf(`{"query":"stock price","k":5,"plan":"none","session_id":"%s-%d"}`, who, i))
			x, _ := r.body["experiment"].(map[string]any)
			results, _ := r.body["results"].([]any)
			if r.status != 200 || x == nil || len(results) == 0 {
				t.Fatalf("%s search %d: %d %v", who, i, r.status, r.body)
			}
			arm := x["arm"].(string)
			arms[arm]++
			if !label(i, arm) {
				continue
			}
			path := "/search/" + strconv.FormatInt(int64(r.body["search_id"].(float64)), 10) + "/feedback"
			name := results[0].(map[string]any)["name"].(string)
			if r := do(t, e, "POST", path, key, `{"tools":[{"name":"`+name+`","success":true}]}`); r.status != 201 {
				t.Fatalf("%s feedback %d: %d %v", who, i, r.status, r.body)
			}
		}
		return arms
	}
	steered := searches(attacker, "a", 64, func(_ int, arm string) bool { return arm == "candidate" })
	if steered["candidate"] == 0 || steered["control"] == 0 {
		t.Fatalf("64 sessions all in one arm: %v", steered)
	}
	report := func(query string) experiments.Report {
		t.Helper()
		r := httptest.NewRecorder()
		e.ServeHTTP(r, authorized(httptest.NewRequest("GET", "http://localhost/admin/experiments/steered"+query, nil), admin))
		var rep experiments.Report
		if r.Code != 200 {
			t.Fatalf("report%s: %d %s", query, r.Code, r.Body)
		}
		if err := json.Unmarshal(r.Body.Bytes(), &rep); err != nil {
			t.Fatal(err)
		}
		return rep
	}
	noWinner := func(what string, d experiments.Difference) {
		t.Helper()
		for metric, est := range map[string]experiments.Estimate{"label_rate": d.LabelRate, "mrr_all": d.MRRAll, "mrr_labelled": d.MRRLabelled, "mean_rank": d.MeanRank} {
			if est.CI95 != nil && (est.CI95[0] > 0 || est.CI95[1] < 0) {
				t.Errorf("%s: difference in %s %v %v, an interval that excludes 0", what, metric, *est.Value, *est.CI95)
			}
		}
	}

	rep := report("")
	noWinner("one key", rep.Difference)
	if rep.MaxPerKey != experiments.DefaultMaxPerKey || len(rep.Arms) != 2 {
		t.Fatalf("report: %+v", rep)
	}
	for _, a := range rep.Arms {
		if a.Searches != int64(steered[string(a.Arm)]) || a.Keys != 1 || a.Clusters != 1 || a.Units != a.Searches ||
			a.TopKey == nil || a.TopKey.ID != attackerKey.ID || a.TopKey.Name != "attacker" || a.TopKey.Share != 1 {
			t.Errorf("arm %s: %+v top key %+v, want %d searches, all of the attacker's, one cluster", a.Arm, a, a.TopKey, steered[string(a.Arm)])
		}
	}
	named := 0
	for _, w := range rep.Warnings {
		if strings.Contains(w, `"attacker"`) && strings.Contains(w, "100%") {
			named++
		}
	}
	if named != 2 {
		t.Errorf("warnings %q: want the attacker named in both arms, with its 100%% share", rep.Warnings)
	}

	// Among five honest keys, which label every other search whatever its arm, the cap
	// counts the attacker's most recent 4 per arm.
	counted := map[string]int{} // per arm, what a cap of 4 per key counts
	for arm, n := range steered {
		counted[arm] += min(4, n)
	}
	for k := range 5 {
		_, key, err := keys.Create(ctx, auth.Spec{Name: fmt.Sprintf("honest-%d", k), Scope: auth.ScopeSearch})
		if err != nil {
			t.Fatal(err)
		}
		for arm, n := range searches(key, fmt.Sprintf("h%d", k), 8, func(i int, _ string) bool { return i%2 == 0 }) {
			counted[arm] += min(4, n)
		}
	}
	capped := report("?max_per_key=4")
	noWinner("capped at 4", capped.Difference)
	for _, a := range capped.Arms {
		if want := int64(counted[string(a.Arm)]); a.Counted != want || a.Keys != 6 || a.Clusters != 6 {
			t.Errorf("arm %s capped at 4: %d counted, %d keys, %d clusters, want %d, 6, 6", a.Arm, a.Counted, a.Keys, a.Clusters, want)
		}
	}
	uncapped := report("?max_per_key=1000")
	t.Logf("label rate difference: uncapped %v %v, capped at 4 %v %v", *uncapped.Difference.LabelRate.Value, uncapped.Difference.LabelRate.CI95,
		*capped.Difference.LabelRate.Value, capped.Difference.LabelRate.CI95)
	if *capped.Difference.LabelRate.Value >= *uncapped.Difference.LabelRate.Value {
		t.Errorf("label rate difference capped %v, uncapped %v: the cap did not bound the attacker's weight",
			*capped.Difference.LabelRate.Value, *uncapped.Difference.LabelRate.Value)
	}
	if r := do(t, e, "GET", "/admin/experiments/steered?max_per_key=0", admin, ""); r.status != 400 || errorCode(r.body) != "invalid_request" {
		t.Errorf("max_per_key=0: %d %v", r.status, r.body)
	}
}

func authorized(r *http.Request, key string) *http.Request {
	r.Header.Set("Authorization", "Bearer "+key)
	return r
}
