package lexical_test

import (
	"context"
	"testing"

	"github.com/toolgate/toolgate/internal/pgtest"
)

// TestCJKBigrams: toolgate_cjk_bigrams (sql/functions/lexical.sql) gives the overlapping
// character pairs of each run of three or more CJK characters, in order, and nothing for
// text without one (NULL included), which skips its query.
func TestCJKBigrams(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	for _, c := range []struct {
		in   *string
		want string
	}{
		{nil, ""},
		{ptr(""), ""},
		{ptr("get the stock price"), ""},
		{ptr("车站"), ""}, // two characters: the english configuration's own lexeme
		{ptr("查询车站的详细信息"), "查询 询车 车站 站的 的详 详细 细信 信息"},
		{ptr("余票 of 12306余票信息，返回"), "余票 票信 信息"},
		{ptr("東京駅の時刻表を調べます。"), "東京 京駅 駅の の時 時刻 刻表 表を を調 調べ べま ます"},
		{ptr("한국어 text"), "한국 국어"},
	} {
		var got string
		if err := pool.QueryRow(context.Background(), `SELECT toolgate_cjk_bigrams($1)`, c.in).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("toolgate_cjk_bigrams(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}

func ptr(s string) *string { return &s }
