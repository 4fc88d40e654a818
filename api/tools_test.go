package api

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/toolgate/toolgate/internal/dataset"
	"github.com/toolgate/toolgate/internal/embed"
	"github.com/toolgate/toolgate/internal/enrich"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/sources"
	"github.com/toolgate/toolgate/jobs"
)

func TestGetTool(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	ctx := context.Background()
	log := slog.New(slog.DiscardHandler)
	rc, err := jobs.NewClient(jobs.Deps{Pool: pool, Logger: log}, jobs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, res, err := sources.Import(ctx, pool, jobs.NewQueue(rc), "fin", dataset.Tools(dataset.DemoCompanies[:1]))
	if err != nil {
		t.Fatal(err)
	}
	e := New(Deps{Pool: pool, River: rc, Logger: log, Open: true})
	get := func(name string) (int, toolView) {
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://localhost/v1/tools/"+name, nil))
		var v toolView
		_ = json.Unmarshal(rec.Body.Bytes(), &v)
		return rec.Code, v
	}
	code, v := get("fin__get_apple_revenue")
	if code != http.StatusOK || v.Enrichment.Status != "pending" || len(v.Components) != 0 || v.Source != "fin" {
		t.Fatalf("before enrichment: %d %+v", code, v)
	}

	svc := &enrich.Service{Pool: pool, Logger: log, Embedder: embed.NewLocal(384), Enricher: enrich.Heuristic{}, Questions: 4}
	for _, id := range res.Changed {
		var hash string
		if err := pool.QueryRow(ctx, `SELECT content_hash FROM tools WHERE id = $1`, id).Scan(&hash); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.EnrichTool(ctx, id, hash); err != nil {
			t.Fatal(err)
		}
	}
	code, v = get("fin__get_apple_revenue")
	if code != http.StatusOK {
		t.Fatalf("status %d", code)
	}
	if v.Enrichment.Status != "enriched" || !v.Enrichment.HasVector || len(v.Enrichment.Steps) != 3 {
		t.Fatalf("enrichment %+v", v.Enrichment)
	}
	if v.Profile == nil || len(v.Profile.Tags) < 3 || len(v.Questions) != 4 || len(v.Topics) == 0 {
		t.Fatalf("profile %+v questions %v topics %v", v.Profile, v.Questions, v.Topics)
	}
	kinds := map[string]int{}
	for _, c := range v.Components {
		kinds[c.Kind]++
		if !c.HasEmbedding || c.Model == nil || *c.Model != "local-hash-v2-384" {
			t.Fatalf("component %+v not embedded", c)
		}
	}
	if kinds["question"] != 4 || kinds["name"] != 1 || kinds["parameters"] != 1 || kinds["concat"] != 1 || v.Components[0].Text != "get apple revenue" {
		t.Fatalf("components %v, first %+v", kinds, v.Components[0])
	}

	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://localhost/v1/tools/fin__nope", nil))
	var body struct {
		Error Error `json:"error"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || rec.Code != http.StatusNotFound || body.Error.Code != "not_found" {
		t.Fatalf("unknown tool: %d %s", rec.Code, rec.Body)
	}
}
