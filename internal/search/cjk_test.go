package search_test

import (
	"context"
	"testing"

	tgcatalog "github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/search"
	"github.com/toolgate/toolgate/internal/testfactory"
)

// Chinese and Japanese descriptions are indexed as character pairs (toolgate_cjk_bigrams):
// a word of a description is found by a query for that word, alone or in a sentence, with
// the BM25 of the Go reference; English tools beside them score as before.
func TestCJKWordsAreFound(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	testfactory.Catalog(ctx, t, pool, "rail", []tgcatalog.Tool{
		testfactory.Tool("get_station_by_telecode", "通过车站的 station_telecode 查询车站的详细信息。"),
		testfactory.Tool("get_tickets", "查询12306余票信息，返回车次、出发站和到达站。"),
		testfactory.Tool("get_current_date", "获取当前日期，以上海时区为准。"),
		testfactory.Tool("jikokuhyo", "東京駅の時刻表を調べます。"),
		testfactory.Tool("get_weather", "Get the weather forecast for a city."),
	}, nil)
	svc := search.New(pool, nil, search.DefaultSettings(), discard())
	for _, tc := range []struct{ query, want string }{
		{"车站", "rail__get_station_by_telecode"},      // a two-character word inside a clause
		{"查询车站的信息", "rail__get_station_by_telecode"}, // a sentence: its pairs
		{"余票", "rail__get_tickets"},                  // after digits, inside a longer run
		{"当前日期", "rail__get_current_date"},           // a four-character word
		{"時刻表", "rail__jikokuhyo"},                   // Japanese
		{"weather forecast", "rail__get_weather"},    // English as before
	} {
		resp := mustSearch(t, ctx, svc, search.Request{Query: tc.query, Mode: search.ModeLexical, K: 3})
		if len(resp.Results) == 0 || resp.Results[0].Name != tc.want {
			t.Errorf("%q: %+v, want %s first", tc.query, resp.Results, tc.want)
		}
	}
	checkBM25(t, pool, search.DefaultSettings(), []string{"车站", "查询车站的信息", "余票 车次", "時刻表", "weather forecast", "station"})
}
