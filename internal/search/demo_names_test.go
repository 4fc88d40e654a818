package search_test

import (
	"context"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/dataset"
	"github.com/toolgate/toolgate/internal/search"
)

// Names the text analysis could not see: over the demo's company tools, a request naming
// AT&T finds AT&T's tool first ("AT&T" and get_at_t_… are one word, "att"; before, the
// request's only words were "current stock price"), and the lexical top 5 of a request
// naming another "… Inc." holds no tool of HP Inc. but its revenue tool (a legal form is no
// word; before, "inc" was a rare word HP's five tools alone shared with the request).
func TestDemoNamesOfInitialsAndLegalForms(t *testing.T) {
	t.Parallel()
	companies := []dataset.Company{
		{Name: "AT&T", Ticker: "T"}, {Name: "HP Inc.", Ticker: "HPQ"}, {Name: "Okta", Ticker: "OKTA"},
		{Name: "T. Rowe Price", Ticker: "TROW"}, {Name: "Apple", Ticker: "AAPL"}, {Name: "Microsoft", Ticker: "MSFT"},
	}
	svc := builtinSearch(t, dataset.Tools(companies))
	ctx := context.Background()
	resp := mustSearch(t, ctx, svc, search.Request{Query: "What is AT&T's current stock price?", Mode: search.ModeHybrid, K: 5, Plan: "none"})
	if len(resp.Results) == 0 || resp.Results[0].Name != "demo__get_at_t_current_stock_price" {
		t.Errorf("AT&T's stock price: %v, want get_at_t_current_stock_price first", names(resp))
	}
	// a company the catalog does not hold: its revenue tools alike, HP's others not at all
	resp = mustSearch(t, ctx, svc, search.Request{Query: "What was UDR Inc.'s total revenue in 2023?", Mode: search.ModeLexical, K: 5, Plan: "none"})
	var hp []string
	for _, r := range resp.Results {
		if strings.Contains(r.Name, "hp_inc") && !strings.HasSuffix(r.Name, "_revenue") {
			hp = append(hp, r.Name)
		}
	}
	if len(hp) > 0 {
		t.Errorf("UDR Inc.'s revenue: %v, HP Inc.'s tools %v in the top 5", names(resp), hp)
	}
}
