package search_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	tgcatalog "github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/dataset"
	"github.com/toolgate/toolgate/internal/embed"
	"github.com/toolgate/toolgate/internal/enrich"
	"github.com/toolgate/toolgate/internal/lexicon"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/search"
	"github.com/toolgate/toolgate/internal/testfactory"
)

// demoSearch is a search service over the demo catalog's tools of a few companies, Cullen/
// Frost Bankers and Allison Transmission among them (and extra tools), as `toolgate demo`
// serves them: see builtinSearch.
func demoSearch(t *testing.T, extra ...tgcatalog.Tool) *search.Service {
	t.Helper()
	all, err := dataset.Companies(dataset.MaxCompanies())
	if err != nil {
		t.Fatal(err)
	}
	companies := slices.Clone(dataset.DemoCompanies[:4])
	for _, c := range all {
		if c.Name == "Cullen/Frost Bankers" || c.Name == "Allison Transmission" {
			companies = append(companies, c)
		}
	}
	return builtinSearch(t, append(dataset.Tools(companies), extra...))
}

// builtinSearch is a search service over tools enriched and embedded by the built-in
// providers (the heuristic enricher with its lexicon, the local embedder), with the
// settings of the built-in embedder.
func builtinSearch(t *testing.T, tools []tgcatalog.Tool) *search.Service {
	t.Helper()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	_, res := testfactory.Catalog(ctx, t, pool, "demo", tools, nil)
	svc := testfactory.LocalEnricher(pool, 3)
	svc.Enricher = enrich.Heuristic{Lexicon: lexicon.Builtin}
	testfactory.Enrich(ctx, t, svc, res.Changed...)
	flush(t, pool)
	st := search.DefaultSettings()
	st.VectorConfidence, st.WeightMeaning = search.DefaultVectorConfidence, search.DefaultWeightMeaning
	return search.New(pool, embed.NewLocal(384), st, discard())
}

// A company's name is not what its tools do: over the demo catalog, a weather forecast
// does not rank Cullen/Frost Bankers first (frost is weather), nor an email Allison
// Transmission (a transmission is a sending).
func TestDemoNamesAreNotMeanings(t *testing.T) {
	t.Parallel()
	svc := demoSearch(t)
	for _, tc := range []struct{ query, company string }{
		{"weather forecast", "cullen_frost"},
		{"send an email to my boss", "allison_transmission"},
	} {
		resp := mustSearch(t, context.Background(), svc, search.Request{Query: tc.query, Mode: search.ModeHybrid, K: 5, Plan: "none"})
		if len(resp.Results) > 0 && strings.Contains(resp.Results[0].Name, tc.company) {
			t.Errorf("%q ranks %s first: %v", tc.query, resp.Results[0].Name, names(resp))
		}
	}
}
