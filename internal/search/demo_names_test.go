package search_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/dataset"
	"github.com/toolgate/toolgate/internal/search"
)

// Names the text analysis could not see, over the demo's company tools. "AT&T" in a request
// and get_at_t_… in a name are one word ("att"): a request for AT&T's revenue ranks AT&T's
// other tools next, before other companies' revenue tools (before, "AT&T" gave no word and
// the request matched only "revenue"). A legal form is no word: "Okta Inc." ranks Okta's tool
// first, and "UDR Inc.", a company the catalog does not hold, does not rank HP Inc.'s first
// (before, "inc" was a rare word HP's tools alone shared with both requests). The
// explanation credits "att" to the name field, where the document holds it.
func TestDemoNamesOfInitialsAndLegalForms(t *testing.T) {
	t.Parallel()
	companies := []dataset.Company{
		{Name: "AT&T", Ticker: "T"}, {Name: "HP Inc.", Ticker: "HPQ"}, {Name: "Okta", Ticker: "OKTA"},
		{Name: "T. Rowe Price", Ticker: "TROW"}, {Name: "Apple", Ticker: "AAPL"}, {Name: "Microsoft", Ticker: "MSFT"},
	}
	svc := builtinSearch(t, dataset.Tools(companies))
	ctx := context.Background()
	search1 := func(query string, mode search.Mode) search.Response {
		return mustSearch(t, ctx, svc, search.Request{Query: query, Mode: mode, K: 5, Plan: "none"})
	}
	if resp := search1("AT&T revenue", search.ModeLexical); len(resp.Results) < 2 ||
		resp.Results[0].Name != "demo__get_at_t_revenue" || !strings.HasPrefix(resp.Results[1].Name, "demo__get_at_t_") {
		t.Errorf("AT&T revenue: %v, want get_at_t_revenue and another AT&T tool first", names(resp))
	}
	explained := mustSearch(t, ctx, svc, search.Request{Query: "AT&T revenue", Mode: search.ModeLexical, K: 1, Plan: "none", Explain: true})
	if len(explained.Results) == 0 || explained.Results[0].Explanation == nil || explained.Results[0].Explanation.Lexical == nil {
		t.Fatalf("AT&T revenue explained: %+v", explained.Results)
	}
	att := false
	for _, m := range explained.Results[0].Explanation.Lexical.Terms {
		att = att || m.Term == "att" && slices.Contains(m.Fields, "name")
	}
	if !att {
		t.Errorf("AT&T revenue: %s's explanation does not find att in its name: %+v", explained.Results[0].Name, explained.Results[0].Explanation.Lexical.Terms)
	}
	if resp := search1("Okta Inc. net income", search.ModeHybrid); len(resp.Results) == 0 || resp.Results[0].Name != "demo__get_okta_net_income" {
		t.Errorf("Okta Inc. net income: %v, want get_okta_net_income first", names(resp))
	}
	if resp := search1("What was UDR Inc.'s total revenue in 2023?", search.ModeLexical); len(resp.Results) == 0 ||
		strings.Contains(resp.Results[0].Name, "hp_inc") {
		t.Errorf("UDR Inc.'s revenue: %v, HP Inc.'s tool first", names(resp))
	}
}
