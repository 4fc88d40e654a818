package search_test

import (
	"context"
	"testing"

	"github.com/toolgate/toolgate/internal/search"
)

// The confidence has a model per set of branches that ran: a lexical-only or vector-only
// search is not judged by the hybrid model, whose features a single branch cannot fill
// (with it, every vector-only answer was below 0.1 although half of them were right). A
// clear match is confident in the hybrid and the vector mode (lexically it has close
// siblings: a first result barely ahead of the second is often wrong), gibberish in no mode.
func TestConfidenceByMode(t *testing.T) {
	t.Parallel()
	svc := demoSearch(t)
	ctx := context.Background()
	for _, mode := range []search.Mode{search.ModeHybrid, search.ModeLexical, search.ModeVector} {
		resp := mustSearch(t, ctx, svc, search.Request{Query: "What is Apple's total revenue by year?", Mode: mode, K: 5})
		if resp.Results[0].Name != "demo__get_apple_revenue" || mode != search.ModeLexical && (resp.NoGoodMatch || resp.Confidence < search.ConfidenceThreshold) {
			t.Errorf("%s: a clear match: confidence %v, no good match %v, %v", mode, resp.Confidence, resp.NoGoodMatch, names(resp))
		}
		for _, q := range []string{"zzqx qqwv", "blorf wuzzle klandt"} {
			resp := mustSearch(t, ctx, svc, search.Request{Query: q, Mode: mode, K: 5})
			if !resp.NoGoodMatch || resp.Confidence >= search.ConfidenceThreshold {
				t.Errorf("%s: %q: confidence %v, no good match %v", mode, q, resp.Confidence, resp.NoGoodMatch)
			}
		}
	}
}
