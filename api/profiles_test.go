package api_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/api"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/jobs"
)

// newProfileServer serves api.New in open mode and returns its database too.
func newProfileServer(t *testing.T) (*httptest.Server, *pgxpool.Pool) {
	t.Helper()
	pool := pgtest.NewPool(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	rc, err := jobs.NewClient(jobs.Deps{Pool: pool, Logger: log}, jobs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api.New(api.Deps{Pool: pool, River: rc, Logger: log, Open: true}))
	t.Cleanup(srv.Close)
	return srv, pool
}

func TestProfileValidation(t *testing.T) {
	t.Parallel()
	srv, _ := newProfileServer(t)
	for _, body := range []string{
		`{"strategy":"tdwa","weights":{"name":-1,"question":1}}`,
		`{"strategy":"tdwa","weights":{"colour":1}}`,
		`{"strategy":"tdwa","weights":{"name":0,"question":0}}`,
		`{"strategy":"tdwa"}`,
		`{"strategy":"median","weights":{"name":1}}`,
		`{"strategy":"concat","weights":{"name":1}}`,
	} {
		if code, resp := call(t, srv, "PUT", "/admin/profiles/p1", body); code != 400 || errorCode(resp) != "invalid_profile" {
			t.Errorf("PUT %s: %d %v, want 400 invalid_profile", body, code, resp)
		}
	}
	if code, resp := call(t, srv, "PUT", "/admin/profiles/Bad%20Name", `{"strategy":"mean"}`); code != 400 || errorCode(resp) != "invalid_profile" {
		t.Errorf("bad name: %d %v", code, resp)
	}
	if code, resp := call(t, srv, "PUT", "/admin/profiles/p1", `{"strategy":"tdwa","weights":{"name":1},"extra":1}`); code != 400 || errorCode(resp) != "invalid_request" {
		t.Errorf("unknown field: %d %v", code, resp)
	}
	if code, _ := call(t, srv, "GET", "/admin/profiles/p1", ""); code != 404 {
		t.Errorf("an invalid PUT stored the profile: GET %d", code)
	}
}

func TestProfileLifecycle(t *testing.T) {
	t.Parallel()
	srv, _ := newProfileServer(t)
	code, resp := call(t, srv, "GET", "/admin/profiles", "")
	ps, _ := resp["profiles"].([]any)
	if code != 200 || len(ps) != 5 {
		t.Fatalf("list: %d %v, want the 5 built-in profiles", code, resp)
	}

	code, resp = call(t, srv, "PUT", "/admin/profiles/qheavy", `{"strategy":"tdwa","weights":{"name":0.1,"question":0.9}}`)
	if code != 201 || resp["created"] != true || resp["note"] == "" {
		t.Fatalf("create: %d %v", code, resp)
	}
	code, resp = call(t, srv, "PUT", "/admin/profiles/qheavy", `{"strategy":"tdwa","weights":{"name":0.2,"question":0.8}}`)
	if code != 200 || resp["created"] != false {
		t.Fatalf("update: %d %v", code, resp)
	}
	code, resp = call(t, srv, "GET", "/admin/profiles/qheavy", "")
	w, _ := resp["weights"].(map[string]any)
	if code != 200 || w["question"] != 0.8 || resp["active"] != false || resp["current_set"] != nil {
		t.Fatalf("get: %d %v", code, resp)
	}

	// activate switches the one active profile (the catalog is empty: nothing to build)
	code, resp = call(t, srv, "POST", "/admin/profiles/qheavy/activate", "")
	if code != 200 || resp["active"] != true {
		t.Fatalf("activate: %d %v", code, resp)
	}
	if _, resp := call(t, srv, "GET", "/admin/profiles/default", ""); resp["active"] != false {
		t.Fatalf("default still active: %v", resp)
	}
	if code, resp := call(t, srv, "DELETE", "/admin/profiles/qheavy", ""); code != 409 || errorCode(resp) != "profile_active" {
		t.Fatalf("delete active: %d %v", code, resp)
	}
	if code, _ := call(t, srv, "POST", "/admin/profiles/default/activate", ""); code != 200 {
		t.Fatalf("re-activate default: %d", code)
	}
	if code, _ := call(t, srv, "DELETE", "/admin/profiles/qheavy", ""); code != 204 {
		t.Fatalf("delete: %d", code)
	}
	for _, r := range [][2]string{{"GET", "/admin/profiles/qheavy"}, {"DELETE", "/admin/profiles/qheavy"},
		{"POST", "/admin/profiles/qheavy/activate"}, {"POST", "/admin/profiles/qheavy/reweight"}} {
		if code, resp := call(t, srv, r[0], r[1], ""); code != 404 || errorCode(resp) != "not_found" {
			t.Errorf("%s %s after delete: %d %v", r[0], r[1], code, resp)
		}
	}
}

func TestReweightEndpoint(t *testing.T) {
	t.Parallel()
	srv, pool := newProfileServer(t)
	code, resp := call(t, srv, "POST", "/admin/profiles/var-1/reweight", "")
	if code != 202 || resp["job_id"] == nil || resp["set_id"] == nil || resp["duplicate"] != false {
		t.Fatalf("reweight: %d %v", code, resp)
	}
	code, again := call(t, srv, "POST", "/admin/profiles/var-1/reweight", "")
	if code != 202 || again["duplicate"] != true || again["job_id"] != resp["job_id"] || again["set_id"] != resp["set_id"] {
		t.Fatalf("second reweight: %d %v, first %v", code, again, resp)
	}
	_, job := call(t, srv, "GET", fmt.Sprintf("/admin/jobs/%v", resp["job_id"]), "")
	if prog, _ := job["progress"].(map[string]any); prog == nil || prog["set_id"] != resp["set_id"] || prog["state"] != "building" {
		t.Fatalf("job progress: %v", job)
	}
	_, p := call(t, srv, "GET", "/admin/profiles/var-1", "")
	b, _ := p["building"].(map[string]any)
	if b == nil || b["id"] != resp["set_id"] || b["state"] != "building" {
		t.Fatalf("profile while re-weighting: %v", p)
	}

	// a profile without vectors cannot become active once the catalog has embedded tools
	if code, _ := call(t, srv, "PUT", "/v1/sources/fin/tools", `{"name":"quote","description":"Stock quote","input_schema":{"type":"object"}}`); code != 200 {
		t.Fatalf("import: %d", code)
	}
	if _, err := pool.Exec(context.Background(), `INSERT INTO tool_components (tool_id, kind, text, text_hash, embedding, model)
		SELECT id, 'name', 'quote', 'h', '[1,0,0]', 'm' FROM tools`); err != nil {
		t.Fatal(err)
	}
	if code, resp := call(t, srv, "POST", "/admin/profiles/var-2/activate", ""); code != 409 || errorCode(resp) != "profile_not_built" {
		t.Fatalf("activate unbuilt: %d %v", code, resp)
	}
}

// TestProfileFusionWeights: PUT sets a profile's own fusion weights, GET shows them, a PUT
// without them clears them (its searches use the settings' again), and weights out of 0 to
// 100 are a 400.
func TestProfileFusionWeights(t *testing.T) {
	t.Parallel()
	srv, _ := newProfileServer(t)
	code, resp := call(t, srv, "PUT", "/admin/profiles/fz", `{"strategy":"tdwa","weights":{"name":1},"fusion":{"weight_lexical":0.75,"weight_vector":1}}`)
	if code != 201 {
		t.Fatalf("create: %d %v", code, resp)
	}
	if p, _ := resp["profile"].(map[string]any); fmt.Sprint(p["fusion"]) != "map[weight_lexical:0.75 weight_vector:1]" {
		t.Errorf("PUT answer fusion %v", p["fusion"])
	}
	if _, resp = call(t, srv, "GET", "/admin/profiles/fz", ""); fmt.Sprint(resp["fusion"]) != "map[weight_lexical:0.75 weight_vector:1]" {
		t.Errorf("GET fusion %v", resp["fusion"])
	}
	for _, body := range []string{
		`{"strategy":"tdwa","weights":{"name":1},"fusion":{"weight_lexical":-1,"weight_vector":1}}`,
		`{"strategy":"tdwa","weights":{"name":1},"fusion":{"weight_lexical":1,"weight_vector":101}}`,
	} {
		if code, resp := call(t, srv, "PUT", "/admin/profiles/fz", body); code != 400 || errorCode(resp) != "invalid_profile" {
			t.Errorf("PUT %s: %d %v, want 400 invalid_profile", body, code, resp)
		}
	}
	if code, resp = call(t, srv, "PUT", "/admin/profiles/fz", `{"strategy":"tdwa","weights":{"name":1}}`); code != 200 {
		t.Fatalf("update: %d %v", code, resp)
	}
	if _, resp = call(t, srv, "GET", "/admin/profiles/fz", ""); resp["fusion"] != nil {
		t.Errorf("a PUT without fusion weights kept %v", resp["fusion"])
	}
}
