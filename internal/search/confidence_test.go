package search_test

import (
	"context"
	"math"
	"slices"
	"testing"

	tgcatalog "github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/search"
	"github.com/toolgate/toolgate/internal/testfactory"
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

// Each answer carries what its confidence models were given (Response.ConfidenceInputs,
// what `toolgate eval --per-query` writes for refitting them): the served models applied
// to them give the answer's and each result's confidence. The last two features are the
// share of the request's letters in Chinese, Japanese or Korean script, on which a right
// answer has weaker signals (the same signals are more confident for a Chinese request),
// and how far the result's title and description are from the request in that share (an
// English request answered by a Chinese tool, or a Chinese one by an English tool).
func TestConfidenceInputs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	testfactory.Catalog(ctx, t, pool, "rail", []tgcatalog.Tool{
		testfactory.Tool("get_station_by_telecode", "通过车站的 station_telecode 查询车站的详细信息。"),
		testfactory.Tool("get_tickets", "查询12306余票信息，返回车次、出发站和到达站。"),
		testfactory.Tool("get_train_schedule", "查询列车时刻表和经停车站。"),
		testfactory.Tool("get_weather", "Get the weather forecast for a city."),
		testfactory.Tool("get_weather_alerts", "Get the weather alerts for a region."),
	}, nil)
	svc := search.New(pool, nil, search.DefaultSettings(), discard())
	// each tool's share of letters and digits in CJK script (its description: no title)
	toolCJK := map[string]float64{
		"rail__get_station_by_telecode": 14.0 / 29, "rail__get_tickets": 17.0 / 22, "rail__get_train_schedule": 1,
		"rail__get_weather": 0, "rail__get_weather_alerts": 0,
	}
	for _, tc := range []struct {
		query string
		cjk   float64
	}{
		{"查询车站的信息", 1},
		{"车站 station", 2.0 / 9},
		{"weather forecast", 0},
		{"train schedule", 0}, // found by its name, in Chinese: a gap of 1
	} {
		resp := mustSearch(t, ctx, svc, search.Request{Query: tc.query, Mode: search.ModeLexical, K: 3})
		in := resp.ConfidenceInputs
		if len(resp.Results) == 0 || in.Branches != "lexical" || len(in.Results) != len(resp.Results) {
			t.Fatalf("%q: %d results, inputs %+v", tc.query, len(resp.Results), in)
		}
		answer, results := search.ConfidenceOf(in)
		if math.Round(answer*1000)/1000 != resp.Confidence {
			t.Errorf("%q: answer confidence %v, the models make %v of its inputs", tc.query, resp.Confidence, answer)
		}
		for i, r := range in.Results {
			if math.Round(results[i]*1000)/1000 != resp.Results[i].Confidence {
				t.Errorf("%q: result %d: confidence %v, the models make %v of its inputs", tc.query, i+1, resp.Results[i].Confidence, results[i])
			}
			if got := r.Features[len(r.Features)-2]; math.Abs(got-tc.cjk) > 1e-12 {
				t.Errorf("%q: result %d: CJK share %v, want %v", tc.query, i+1, got, tc.cjk)
			}
		}
		if got := in.Answer[len(in.Answer)-3]; math.Abs(got-tc.cjk) > 1e-12 {
			t.Errorf("%q: the answer's CJK share %v, want %v", tc.query, got, tc.cjk)
		}
		for i, r := range in.Results {
			want := math.Abs(tc.cjk - toolCJK[resp.Results[i].Name])
			if got := r.Features[len(r.Features)-1]; math.Abs(got-want) > 1e-12 {
				t.Errorf("%q: result %d (%s): script gap %v, want %v", tc.query, i+1, resp.Results[i].Name, got, want)
			}
		}
		if got, want := in.Answer[len(in.Answer)-2], in.Results[0].Features[len(in.Results[0].Features)-1]; got != want {
			t.Errorf("%q: the answer's script gap %v, its first result's %v", tc.query, got, want)
		}
		if tc.cjk == 1 {
			english := in
			english.Answer = slices.Clone(in.Answer)
			english.Answer[len(english.Answer)-3] = 0
			if en, _ := search.ConfidenceOf(english); en >= answer {
				t.Errorf("%q: confidence %v, %v with the same signals for an English request", tc.query, answer, en)
			}
		}
	}
}
