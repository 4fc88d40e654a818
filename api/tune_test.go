package api_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/toolgate/toolgate/api"
	"github.com/toolgate/toolgate/internal/embed"
	"github.com/toolgate/toolgate/internal/enrich"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/search"
	"github.com/toolgate/toolgate/internal/testfactory"
	"github.com/toolgate/toolgate/jobs"
)

// TestTuneEndpoints: POST /admin/profiles/tune refuses without enough labels; with labels
// left through POST /search and its feedback, it queues a profile_tune job that a River
// worker runs, which creates the profile and queues its re-weight; GET /admin/tunes/{id}
// shows the result and GET /admin/profiles/{name} the evidence. Bad requests are 4xx with
// their codes, and a profile named "tune" is still an ordinary profile.
func TestTuneEndpoints(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	log := slog.New(slog.DiscardHandler)
	emb := embed.NewLocal(384)
	rc, err := jobs.NewClient(jobs.Deps{Pool: pool, Logger: log, Embedder: emb, Enricher: enrich.Heuristic{}, Questions: 3},
		jobs.Options{Work: true, MaxWorkers: 2})
	if err != nil {
		t.Fatal(err)
	}
	events := testfactory.JobEvents(t, rc)
	if err := rc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = rc.Stop(sctx)
	})
	srv := httptest.NewServer(api.New(api.Deps{Pool: pool, River: rc, Logger: log, Open: true,
		Search: search.New(pool, emb, search.DefaultSettings(), log)}))
	t.Cleanup(srv.Close)

	tools, uses := testfactory.MisleadingCatalog()
	_, res := testfactory.Catalog(ctx, t, pool, "ws", tools, nil)
	testfactory.Enrich(ctx, t, testfactory.LocalEnricher(pool, 3), res.Changed...)

	if code, resp := call(t, srv, "POST", "/admin/profiles/tune", `{}`); code != 409 || errorCode(resp) != "too_few_labels" {
		t.Fatalf("tune without labels: %d %v, want 409 too_few_labels", code, resp)
	}

	// An agent's traffic: a search, then feedback on the tool it used.
	labelled := 0
	for _, u := range uses {
		code, resp := call(t, srv, "POST", "/search", fmt.Sprintf(`{"query":%q,"k":10}`, u.Query))
		if code != 200 {
			t.Fatalf("search: %d %v", code, resp)
		}
		for _, r := range resp["results"].([]any) {
			if name := "ws__" + u.Tools[0]; r.(map[string]any)["name"] == name {
				path := fmt.Sprintf("/search/%d/feedback", int64(resp["search_id"].(float64)))
				if code, resp := call(t, srv, "POST", path, fmt.Sprintf(`{"tools":[{"name":%q,"success":true}]}`, name)); code >= 300 {
					t.Fatalf("feedback: %d %v", code, resp)
				}
				labelled++
			}
		}
	}
	if labelled < 50 {
		t.Fatalf("only %d searches found their tool", labelled)
	}

	for _, c := range []struct{ body, code string }{
		{`{"holdout":2}`, "invalid_tune"},
		{`{"min_searches":3}`, "invalid_tune"},
		{`{"profile":"Not A Name"}`, "invalid_tune"},
		{`{"colour":"red"}`, "invalid_request"},
		{`{"profile":"default"}`, "profile_exists"},
		{`{"baseline":"nope"}`, "not_found"},
	} {
		if code, resp := call(t, srv, "POST", "/admin/profiles/tune", c.body); code < 400 || code >= 500 || errorCode(resp) != c.code {
			t.Errorf("tune %s: %d %v, want %s", c.body, code, resp, c.code)
		}
	}

	// The baseline leans on what misleads: the descriptions, and the vector branch over the
	// lexical one, whose field-weighted names would otherwise rank the right tools first.
	if code, resp := call(t, srv, "PUT", "/admin/profiles/misled",
		`{"strategy":"tdwa","weights":{"description":1},"fusion":{"weight_lexical":0.1,"weight_vector":1}}`); code != 201 {
		t.Fatalf("baseline profile: %d %v", code, resp)
	}
	code, resp := call(t, srv, "POST", "/admin/profiles/tune", `{"profile":"learned","baseline":"misled"}`)
	if code != 202 || resp["job_id"] == nil {
		t.Fatalf("tune: %d %v", code, resp)
	}
	id := resp["tune"].(map[string]any)["id"]
	testfactory.WaitJob(t, events, 2*time.Minute, "the profile_tune job", func(ev *river.Event) bool {
		if ev.Job.Kind == "profile_tune" && ev.Kind != river.EventKindJobCompleted {
			t.Fatalf("profile_tune: %s %v", ev.Kind, ev.Job.Errors)
		}
		return ev.Job.Kind == "profile_tune"
	})
	testfactory.WaitJob(t, events, 2*time.Minute, "the re-weight of the tuned profile", func(ev *river.Event) bool {
		return ev.Job.Kind == "reweight" && ev.Kind == river.EventKindJobCompleted
	})

	code, tuneView := call(t, srv, "GET", fmt.Sprintf("/admin/tunes/%v", id), "")
	result, _ := tuneView["result"].(map[string]any)
	if code != 200 || tuneView["state"] != "succeeded" || result == nil || tuneView["baseline"] != "misled" || result["created"] != true {
		t.Fatalf("tune: %d %v", code, tuneView)
	}
	labels := result["labels"].(map[string]any)
	if labels["searches"].(float64) != float64(labelled) {
		t.Errorf("tune used %v labelled searches, %d were left", labels["searches"], labelled)
	}
	code, list := call(t, srv, "GET", "/admin/tunes", "")
	if ts, _ := list["tunes"].([]any); code != 200 || len(ts) != 1 {
		t.Errorf("list: %d %v", code, list)
	}
	code, prof := call(t, srv, "GET", "/admin/profiles/learned", "")
	evidence, _ := prof["tune"].(map[string]any)
	set, _ := prof["current_set"].(map[string]any)
	if code != 200 || prof["active"] != false || evidence == nil || evidence["tune_id"] != id || set == nil || set["state"] != "ready" {
		t.Errorf("tuned profile: %d %v", code, prof)
	}
	if code, resp := call(t, srv, "POST", "/admin/profiles/learned/activate", ""); code != 200 {
		t.Errorf("activate the tuned profile: %d %v", code, resp)
	}

	for _, c := range []struct {
		path string
		code int
	}{{"/admin/tunes/abc", 400}, {"/admin/tunes/0", 400}, {"/admin/tunes/999", 404}} {
		if code, resp := call(t, srv, "GET", c.path, ""); code != c.code || resp["error"] == nil {
			t.Errorf("GET %s: %d %v, want %d", c.path, code, resp, c.code)
		}
	}
	// "tune" is an ordinary profile name: only POST /admin/profiles/tune is the tune.
	if code, resp := call(t, srv, "PUT", "/admin/profiles/tune", `{"strategy":"mean"}`); code != 201 {
		t.Errorf("PUT /admin/profiles/tune: %d %v", code, resp)
	}
	if code, resp := call(t, srv, "GET", "/admin/profiles/tune", ""); code != 200 || resp["name"] != "tune" {
		t.Errorf("GET /admin/profiles/tune: %d %v", code, resp)
	}
	if code, _ := call(t, srv, "DELETE", "/admin/profiles/tune", ""); code != 204 {
		t.Errorf("DELETE /admin/profiles/tune: %d", code)
	}
}
