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

// A request that writes an operation out finds the tool that performs it: an equation
// finds a calculator that executes a formula, a quantity with a unit a converter, though
// neither request names the tool's words.
func TestOperationsFindTheirTools(t *testing.T) {
	t.Parallel()
	svc := demoSearch(t,
		testfactory.Tool("calculator", "A calculator app that executes a given formula."),
		testfactory.Tool("unit_converter", "Converts a value between units of length, mass and temperature."),
		testfactory.Tool("solve_captcha", "Solve the captcha challenge shown on a web page."),
		testfactory.Tool("send_email", "Send an email message to a recipient."),
	)
	for _, tc := range []struct{ query, want string }{
		{"Can you solve this equation - 5x + 3 = 20?", "demo__calculator"},
		{"how much is 12 km in miles", "demo__unit_converter"},
	} {
		resp := mustSearch(t, context.Background(), svc, search.Request{Query: tc.query, Mode: search.ModeHybrid, K: 3, Plan: "none"})
		if len(resp.Results) == 0 || resp.Results[0].Name != tc.want {
			t.Errorf("%q: %v, want %s first", tc.query, names(resp), tc.want)
		}
	}
}

// A search says how sure it is: gibberish is no good match, a request in the tool's own
// words a confident one.
func TestConfidence(t *testing.T) {
	t.Parallel()
	svc := demoSearch(t)
	ctx := context.Background()
	for _, q := range []string{"zzqx qqwv", "blorf wuzzle klandt"} {
		resp := mustSearch(t, ctx, svc, search.Request{Query: q, Mode: search.ModeHybrid, K: 5})
		if !resp.NoGoodMatch || resp.Confidence >= search.ConfidenceThreshold {
			t.Errorf("%q: confidence %v, no good match %v", q, resp.Confidence, resp.NoGoodMatch)
		}
	}
	resp := mustSearch(t, ctx, svc, search.Request{Query: "What is Apple's total revenue by year?", Mode: search.ModeHybrid, K: 5})
	if resp.NoGoodMatch || resp.Confidence < search.ConfidenceThreshold || resp.Results[0].Name != "demo__get_apple_revenue" {
		t.Fatalf("a clear match: confidence %v, no good match %v, %v", resp.Confidence, resp.NoGoodMatch, names(resp))
	}
	for i, r := range resp.Results {
		if r.Confidence <= 0 || r.Confidence > 1 || i > 0 && r.Confidence > resp.Results[0].Confidence {
			t.Errorf("result %d %s: confidence %v", i, r.Name, r.Confidence)
		}
	}
}
