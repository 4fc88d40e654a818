package analytics_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/analytics"
	"github.com/toolgate/toolgate/internal/analytics/analyticsbench"
	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/derrors"
	"github.com/toolgate/toolgate/internal/embed"
	"github.com/toolgate/toolgate/internal/memory"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/plan"
	"github.com/toolgate/toolgate/internal/profiles"
	"github.com/toolgate/toolgate/internal/search"
	"github.com/toolgate/toolgate/internal/testfactory"
)

// snapshot is every answer of the package over several windows.
type snapshot struct {
	Searches    map[string][]analytics.SearchBucket
	Latency     map[string][]analytics.LatencyBucket
	ZeroResults map[int][]analytics.ZeroResultQuery
	LowScore    map[int][]analytics.LowScoreQuery
	Profiles    map[int][]analytics.ProfileDay
	Slowest     map[int][]analytics.SlowSearch
	TopQueries  map[int][]analytics.TopQuery
	Tools       analytics.ToolLists
	Learning    map[string]analytics.LearningAnswer
}

func answers(t *testing.T, pool *pgxpool.Pool) snapshot {
	t.Helper()
	ctx := context.Background()
	s := snapshot{Searches: map[string][]analytics.SearchBucket{}, Latency: map[string][]analytics.LatencyBucket{}, ZeroResults: map[int][]analytics.ZeroResultQuery{},
		LowScore: map[int][]analytics.LowScoreQuery{}, Profiles: map[int][]analytics.ProfileDay{},
		Slowest: map[int][]analytics.SlowSearch{}, TopQueries: map[int][]analytics.TopQuery{}, Learning: map[string]analytics.LearningAnswer{}}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, days := range []int{1, 3, 90} {
		p := analytics.Params{Days: days, Limit: analytics.MaxLimit}
		var err error
		for _, b := range []analytics.Bucket{analytics.BucketHour, analytics.BucketDay} {
			p.Bucket = b
			s.Searches[fmt.Sprint(days, b)], err = analytics.Searches(ctx, pool, p)
			must(err)
			for _, e := range []string{"", "rest"} {
				p.Endpoint = e
				s.Latency[fmt.Sprint(days, b, e)], err = analytics.Latency(ctx, pool, p)
				must(err)
			}
			p.Endpoint = ""
		}
		s.ZeroResults[days], err = analytics.ZeroResults(ctx, pool, p)
		must(err)
		s.LowScore[days], err = analytics.LowScore(ctx, pool, p)
		must(err)
		s.Profiles[days], err = analytics.Profiles(ctx, pool, p)
		must(err)
		s.Slowest[days], err = analytics.Slowest(ctx, pool, p)
		must(err)
		s.TopQueries[days], err = analytics.TopQueries(ctx, pool, p)
		must(err)
		for _, tenant := range []*string{nil, new(""), new("acme"), new("key:4"), new("nobody")} {
			p.Tenant = tenant
			key := fmt.Sprint(days)
			if tenant != nil {
				key += " " + *tenant
			}
			s.Learning[key], err = analytics.Learning(ctx, pool, p)
			must(err)
		}
	}
	var err error
	s.Tools, err = analytics.Tools(ctx, pool, analytics.Params{Limit: analytics.MaxLimit})
	must(err)
	return s
}

// sameAnswers fails unless got and want agree, naming the first answer that differs.
func sameAnswers(t *testing.T, what string, got, want snapshot) {
	t.Helper()
	g, w := reflect.ValueOf(got), reflect.ValueOf(want)
	for i := range g.NumField() {
		if !reflect.DeepEqual(g.Field(i).Interface(), w.Field(i).Interface()) {
			gj, _ := json.Marshal(g.Field(i).Interface())
			wj, _ := json.Marshal(w.Field(i).Interface())
			t.Fatalf("%s: %s differ:\n got  %.2000s\n want %.2000s", what, g.Type().Field(i).Name, gj, wj)
		}
	}
}

// fromTheLog returns the answers read from the log alone: the rollups set aside, as before
// the first rollup.
func fromTheLog(t *testing.T, pool *pgxpool.Pool) snapshot {
	t.Helper()
	exec(t, pool, `UPDATE search_rollup_state SET through = NULL`)
	return answers(t, pool)
}

func exec(t *testing.T, pool *pgxpool.Pool, sql string, args ...any) {
	t.Helper()
	// Raw SQL: the test sets the stage the rollups must cope with.
	if _, err := pool.Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func rollup(t *testing.T, pool *pgxpool.Pool, opts analytics.RollupOptions) analytics.RollupReport {
	t.Helper()
	rep, err := analytics.Rollup(context.Background(), pool, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.CaughtUp {
		t.Fatalf("rollup %+v: not caught up", rep)
	}
	return rep
}

func searchesOf(a analytics.LearningAnswer) (n int64) {
	for _, d := range a.Days {
		n += d.Searches
	}
	return n
}

func labelledOf(a analytics.LearningAnswer) (n int64) {
	for _, d := range a.Days {
		n += d.Labelled
	}
	return n
}

func count(t *testing.T, pool *pgxpool.Pool, sql string) int64 {
	t.Helper()
	var n int64
	if err := pool.QueryRow(context.Background(), sql).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// TestRollupAnswersAsTheLog: every answer is the same read from the rollups (and the
// hour the job has not rolled up yet) as read from the log alone: after the first rollup,
// after labels arrive for searches already rolled up and new searches are logged, after a
// rebuild, and after a change of the definitions.
func TestRollupAnswersAsTheLog(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	if err := analyticsbench.Seed(ctx, pool, 400, 3000, 10, t.Logf); err != nil {
		t.Fatal(err)
	}
	// a search of a minute ago: the hour the rollups leave to the log
	exec(t, pool, `INSERT INTO search_log (created_at, query, mode, k, endpoint, results, result_count, top_score, latency_ms)
		VALUES (now() - interval '1 minute', 'find weather 1', 'hybrid', 5, 'find_tools',
		        '[{"name": "src001__tool_1", "score": 2.5, "lexical_rank": 1, "vector_rank": null, "bm25": 3}]', 1, 2.5, 9000)`)
	// one query every hour of a day, found nothing or weakly by turns: a day that several
	// steps roll up in parts, added together
	exec(t, pool, `INSERT INTO search_log (created_at, query, mode, k, endpoint, filters, results, result_count, top_score, latency_ms)
		SELECT date_trunc('day', now(), 'UTC') - interval '3 days' + h * interval '1 hour' + interval '5 minutes',
		       'the same every hour', 'hybrid', 5, 'rest', '{"tags": ["x"]}',
		       CASE WHEN h % 2 = 0 THEN '[]'::jsonb
		            ELSE '[{"name": "src001__tool_1", "score": 1.5, "lexical_rank": 2, "vector_rank": 3, "bm25": 2}]' END,
		       h % 2, CASE WHEN h % 2 = 1 THEN 1.5 + h * 0.01 END, h
		FROM generate_series(0, 23) h`)
	live := answers(t, pool)
	if len(live.ZeroResults[90]) == 0 || len(live.LowScore[90]) == 0 || len(live.Tools.Popular) == 0 || len(live.Profiles[90]) < 2 {
		t.Fatalf("the seeded log gives too little to compare: %+v", live.Profiles[90])
	}
	all, acme := live.Learning["90"], live.Learning["90 acme"]
	if n := searchesOf(acme); n == 0 || n >= searchesOf(all) || labelledOf(acme) == 0 ||
		!slices.Equal(all.Tenants[:3], []string{analytics.OperatorTenant, "acme", "globex"}) {
		t.Fatalf("the seeded tenants: acme %d of %d searches, %d labelled; tenants %v", n, searchesOf(all), labelledOf(acme), all.Tenants)
	}

	// Seven hours per step: the steps' bounds fall anywhere in the days.
	rep := rollup(t, pool, analytics.RollupOptions{MaxHours: 7})
	if rep.HoursRolled < 9*24 || rep.Steps < 30 {
		t.Fatalf("first rollup %+v, want the ten days in steps of seven hours", rep)
	}
	if n := count(t, pool, `SELECT count(*) FROM search_rollup_low`); n == 0 {
		t.Fatal("nothing rolled up")
	}
	sameAnswers(t, "after the first rollup", answers(t, pool), live)

	// Labels for searches of hours already rolled up (an agent's feedback days later, through
	// the trigger; and a call), and a new search.
	exec(t, pool, `INSERT INTO search_feedback (search_id, tool_name, success)
		SELECT l.id, l.results -> 1 ->> 'name', true FROM search_log l
		WHERE l.result_count > 1 AND l.created_at < now() - interval '2 days'
		  AND NOT EXISTS (SELECT 1 FROM search_labels x WHERE x.search_id = l.id)
		ORDER BY l.id LIMIT 40`)
	exec(t, pool, `INSERT INTO search_labels (search_id, search_created_at, tool_name, label_source, rank, delay_ms, success)
		SELECT l.id, l.created_at, l.results -> 0 ->> 'name', 'call', 1, 10, false FROM search_log l
		WHERE l.result_count > 0 AND l.created_at < now() - interval '5 days'
		  AND NOT EXISTS (SELECT 1 FROM search_labels x WHERE x.search_id = l.id)
		ORDER BY l.id DESC LIMIT 30`)
	exec(t, pool, `INSERT INTO search_log (query, mode, k, endpoint, result_count, latency_ms) VALUES ('zzz nothing', 'lexical', 5, 'rest', 0, 3)`)
	// The tools' labels count at once, rollups or not (the hourly answers' wait for the job).
	var tool string
	var chosen, called int64
	if err := pool.QueryRow(ctx, `SELECT x.tool_name, (SELECT count(DISTINCT y.search_id) FROM search_labels y WHERE y.tool_name = x.tool_name)
		FROM search_labels x WHERE x.created_at > now() - interval '1 minute' ORDER BY 2 DESC, 1 LIMIT 1`).Scan(&tool, &chosen); err != nil {
		t.Fatal(err)
	}
	if err := pool.QueryRow(ctx, `SELECT called FROM search_tool_popularity WHERE tool_name = $1`, tool).Scan(&called); err != nil || called != chosen {
		t.Fatalf("%s: called %d (%v) before the next rollup, want %d", tool, called, err, chosen)
	}
	// labels written a moment ago count at once: a lag of a millisecond
	rep = rollup(t, pool, analytics.RollupOptions{Lag: time.Millisecond})
	if rep.HoursRelabelled < 10 {
		t.Fatalf("rollup after the labels %+v, want their hours recomputed", rep)
	}
	rolled := answers(t, pool)
	live = fromTheLog(t, pool)
	sameAnswers(t, "after labels and a new search", rolled, live)

	// fromTheLog cleared `through`: the next run rebuilds everything.
	rep = rollup(t, pool, analytics.RollupOptions{})
	if rep.HoursRolled < 9*24 {
		t.Fatalf("rebuild %+v, want every hour", rep)
	}
	sameAnswers(t, "after a rebuild", answers(t, pool), live)

	// Rollups made with other definitions are rebuilt, not added to.
	exec(t, pool, `UPDATE search_rollup_state SET rules = 'stale'`)
	rep = rollup(t, pool, analytics.RollupOptions{})
	if rep.HoursRolled < 9*24 {
		t.Fatalf("after a change of the definitions %+v, want a rebuild", rep)
	}
	sameAnswers(t, "after a change of the definitions", answers(t, pool), live)
}

// TestRetentionDropsRollups: dropping the oldest months of the log drops their rollups and
// takes them out of the tools' totals: the answers stay those of the log that is left.
func TestRetentionDropsRollups(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	if err := analyticsbench.Seed(ctx, pool, 300, 3000, 85, t.Logf); err != nil {
		t.Fatal(err)
	}
	rollup(t, pool, analytics.RollupOptions{MaxHours: 24 * 30})
	before := count(t, pool, `SELECT count(*) FROM search_log`)
	dropped, err := db.New(pool).DropSearchLogPartitions(ctx, pgtype.Interval{Days: 40, Valid: true})
	if err != nil || dropped == 0 {
		t.Fatalf("dropped %d partitions: %v", dropped, err)
	}
	if after := count(t, pool, `SELECT count(*) FROM search_log`); after >= before || after == 0 {
		t.Fatalf("%d searches before the drop, %d after", before, after)
	}
	rolled := answers(t, pool)
	sameAnswers(t, "after the drop", rolled, fromTheLog(t, pool))
}

// TestLatencyPercentiles: the percentiles read from the histogram are within its 19% of
// the exact ones, per endpoint and over all, from the log and from the rollups.
func TestLatencyPercentiles(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	if err := analyticsbench.Partitions(context.Background(), pool, 2); err != nil {
		t.Fatal(err)
	}
	// Yesterday at noon (UTC): 200 REST searches of 1 to 200 ms, 50 find_tools searches of
	// 1000 ms.
	exec(t, pool, `INSERT INTO search_log (created_at, query, mode, k, endpoint, result_count, latency_ms)
		SELECT date_trunc('day', now(), 'UTC') - interval '12 hours', 'q', 'hybrid', 5, 'rest', 1, i
		FROM generate_series(1, 200) i`)
	exec(t, pool, `INSERT INTO search_log (created_at, query, mode, k, endpoint, result_count, latency_ms)
		SELECT date_trunc('day', now(), 'UTC') - interval '12 hours', 'q', 'hybrid', 5, 'find_tools', 1, 1000
		FROM generate_series(1, 50) i`)
	exact := func(endpoint string, q float64) float64 {
		var v float64
		if err := pool.QueryRow(context.Background(), `SELECT percentile_cont($2) WITHIN GROUP (ORDER BY latency_ms)
			FROM search_log WHERE $1 = '' OR endpoint = $1`, endpoint, q).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	check := func(what string) {
		t.Helper()
		for _, e := range []string{"", "rest", "find_tools"} {
			got, err := analytics.Latency(context.Background(), pool, analytics.Params{Days: 2, Bucket: analytics.BucketDay, Endpoint: e})
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]int64{"": 250, "rest": 200, "find_tools": 50}[e]
			if len(got) != 1 || got[0].Searches != want {
				t.Fatalf("%s, endpoint %q: %+v, want one day of %d searches", what, e, got, want)
			}
			for q, v := range map[float64]float64{0.5: got[0].P50, 0.95: got[0].P95, 0.99: got[0].P99} {
				if x := exact(e, q); v < x/1.19 || v > x*1.19 {
					t.Errorf("%s, endpoint %q: p%v %.2f ms, exact %.2f ms", what, e, q*100, v, x)
				}
			}
		}
	}
	check("from the log")
	rollup(t, pool, analytics.RollupOptions{})
	if n := count(t, pool, `SELECT count(*) FROM search_rollup_latency`); n == 0 {
		t.Fatal("no latency rolled up")
	}
	check("from the rollups")
}

// TestParseParams: the defaults, the bounds and the refusals of the query parameters.
func TestParseParams(t *testing.T) {
	for _, c := range []struct {
		query map[string]string
		want  analytics.Params
		bad   string // the parameter refused
	}{
		{query: nil, want: analytics.Params{Days: 7, Limit: 50, Bucket: analytics.BucketDay}},
		{query: map[string]string{"days": "90", "limit": "500", "bucket": "hour"}, want: analytics.Params{Days: 90, Limit: 500, Bucket: analytics.BucketHour}},
		{query: map[string]string{"days": "1", "limit": "1"}, want: analytics.Params{Days: 1, Limit: 1, Bucket: analytics.BucketDay}},
		{query: map[string]string{"days": "0"}, bad: "days"},
		{query: map[string]string{"days": "91"}, bad: "days"},
		{query: map[string]string{"days": "7d"}, bad: "days"},
		{query: map[string]string{"limit": "501"}, bad: "limit"},
		{query: map[string]string{"limit": "-1"}, bad: "limit"},
		{query: map[string]string{"bucket": "week"}, bad: "bucket"},
		{query: map[string]string{"endpoint": "find_tools"}, want: analytics.Params{Days: 7, Limit: 50, Bucket: analytics.BucketDay, Endpoint: "find_tools"}},
		{query: map[string]string{"endpoint": "mcp"}, bad: "endpoint"},
		{query: map[string]string{"tenant": "(operator)"}, want: analytics.Params{Days: 7, Limit: 50, Bucket: analytics.BucketDay, Tenant: new("")}},
		{query: map[string]string{"tenant": "acme"}, want: analytics.Params{Days: 7, Limit: 50, Bucket: analytics.BucketDay, Tenant: new("acme")}},
		{query: map[string]string{"tenant": "key:12"}, want: analytics.Params{Days: 7, Limit: 50, Bucket: analytics.BucketDay, Tenant: new("key:12")}},
		{query: map[string]string{"tenant": "key:ci-bot"}, want: analytics.Params{Days: 7, Limit: 50, Bucket: analytics.BucketDay, Tenant: new("key:ci-bot")}},
		{query: map[string]string{"tenant": "key:"}, bad: "tenant"},
		{query: map[string]string{"tenant": "two words"}, bad: "tenant"},
	} {
		got, err := analytics.ParseParams(func(k string) string { return c.query[k] })
		var pe *analytics.ParamError
		switch {
		case c.bad != "":
			if !errors.As(err, &pe) || pe.Param != c.bad || !errors.Is(err, derrors.Invalid) || pe.Code() != "invalid_param" {
				t.Errorf("%v: %v, want an invalid_param error about %s", c.query, err, c.bad)
			}
		case err != nil || !reflect.DeepEqual(got, c.want):
			t.Errorf("%v: %+v %v, want %+v", c.query, got, err, c.want)
		}
	}
}

// TestLowScoreRule: toolgate_search_low_score on the results a search logs and its answer's
// no_good_match (NULL: logged before the answers' confidence was).
func TestLowScoreRule(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	const other = `{"name": "b", "lexical_rank": 2, "vector_rank": 2, "bm25": 4}`
	yes, no := new(bool), new(bool)
	*yes = true
	for _, c := range []struct {
		name        string
		mode        string
		results     string
		noGoodMatch *bool
		want        bool
	}{
		{"hybrid, both branches rank the top first", "hybrid", `[{"name": "a", "lexical_rank": 1, "vector_rank": 1, "bm25": 9}, ` + other + `]`, nil, false},
		{"hybrid, one branch ranks it first", "hybrid", `[{"name": "a", "lexical_rank": 1, "vector_rank": 4, "bm25": 9}, ` + other + `]`, nil, false},
		{"hybrid, neither ranks it first", "hybrid", `[{"name": "a", "lexical_rank": 2, "vector_rank": 3, "bm25": 9}, ` + other + `]`, nil, true},
		{"hybrid, first lexically, not ranked by vectors", "hybrid", `[{"name": "a", "lexical_rank": 1, "vector_rank": null, "bm25": 30}, ` + other + `]`, nil, false},
		{"hybrid, first by vectors, no query word in it", "hybrid", `[{"name": "a", "lexical_rank": null, "vector_rank": 1, "bm25": 0}, ` + other + `]`, nil, false},
		{"hybrid, second by vectors only", "hybrid", `[{"name": "a", "lexical_rank": null, "vector_rank": 2, "bm25": 0}, ` + other + `]`, nil, true},
		{"hybrid, no tool has a query word", "hybrid", `[{"name": "a", "lexical_rank": null, "vector_rank": 1, "bm25": 0}, {"name": "b", "vector_rank": 2}]`, nil, true},
		{"hybrid, an exact name match", "hybrid", `[{"name": "a", "lexical_rank": null, "vector_rank": null, "bm25": 0, "name_match": true}]`, nil, false},
		{"hybrid without vectors, strong keywords", "hybrid", `[{"name": "a", "lexical_rank": 1, "vector_rank": null, "bm25": 5}]`, nil, false},
		{"hybrid without vectors, weak keywords", "hybrid", `[{"name": "a", "lexical_rank": 1, "vector_rank": null, "bm25": 0.4}]`, nil, true},
		{"lexical, weak keywords", "lexical", `[{"name": "a", "lexical_rank": 1, "bm25": 0.9}]`, nil, true},
		{"lexical, strong keywords", "lexical", `[{"name": "a", "lexical_rank": 1, "bm25": 1.1}]`, nil, false},
		{"vector", "vector", `[{"name": "a", "vector_rank": 1, "bm25": 0}]`, nil, false},
		{"nothing found", "hybrid", `[]`, nil, false},
		{"hybrid, first lexically, no good match", "hybrid", `[{"name": "a", "lexical_rank": 1, "vector_rank": 3, "bm25": 2}, ` + other + `]`, yes, true},
		{"hybrid, first lexically, a good match", "hybrid", `[{"name": "a", "lexical_rank": 1, "vector_rank": 3, "bm25": 2}, ` + other + `]`, no, false},
		{"hybrid, both first, no good match", "hybrid", `[{"name": "a", "lexical_rank": 1, "vector_rank": 1, "bm25": 2}, ` + other + `]`, yes, true},
		{"hybrid, neither first, a good match", "hybrid", `[{"name": "a", "lexical_rank": 2, "vector_rank": 3, "bm25": 9}, ` + other + `]`, no, true},
		{"vector, no good match", "vector", `[{"name": "a", "vector_rank": 1, "bm25": 0}]`, yes, true},
		{"an exact name match, no good match", "hybrid", `[{"name": "a", "name_match": true}]`, yes, false},
		{"nothing found, no good match", "hybrid", `[]`, yes, false},
	} {
		var got bool
		err := pool.QueryRow(context.Background(), `SELECT toolgate_search_low_score($1, jsonb_array_length($2::jsonb), $2::jsonb, $3)`,
			c.mode, c.results, c.noGoodMatch).Scan(&got)
		if err != nil || got != c.want {
			t.Errorf("%s: %v %v, want %v", c.name, got, err, c.want)
		}
	}
}

// TestLowScoreOnMinMaxSearches: real hybrid searches fused by min-max (the default) on an
// enriched catalog. The old rule (fused score at most 1/61, meant for reciprocal rank
// fusion) flags none of them; the rule flags exactly the searches whose top result neither
// branch ranked first, whose words no tool has, or whose answer had no good match, and
// search_low_score_queries lists them.
func TestLowScoreOnMinMaxSearches(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	ids := testfactory.DemoCatalog(ctx, t, pool, 3, nil)
	testfactory.Enrich(ctx, t, testfactory.LocalEnricher(pool, 2), ids...)
	st := search.DefaultSettings()
	st.DefaultPlan = plan.ModeNone
	if st.Fusion != search.FusionMinMax {
		t.Fatalf("the default fusion is %q", st.Fusion)
	}
	svc := search.New(pool, embed.NewLocal(384), st, slog.New(slog.DiscardHandler))
	want := map[string]bool{} // query → flagged
	for _, q := range []string{
		"apple stock price", "current stock price of microsoft", "analyst price targets for nvidia",
		"revenue", "weekly history", "get_apple_current_stock_price", "how is the weather in paris",
		"stokc prise histroy", "quarterly earnings report", "balance sheet of a company",
		"buy tickets for a concert", "translate this sentence to french",
	} {
		resp, err := svc.Search(ctx, search.Internal(), search.Request{Query: q, K: 5})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Results) == 0 {
			continue
		}
		top := resp.Results[0]
		if top.Score <= 1.0/61 {
			t.Errorf("%q: fused top score %v: min-max fusion gave the old rule a hit", q, top.Score)
		}
		first := func(r *int) bool { return r != nil && *r == 1 }
		lexical := slices.ContainsFunc(resp.Results, func(r search.Result) bool { return r.LexicalRank != nil })
		want[q] = !top.NameMatch && (!first(top.LexicalRank) && !first(top.VectorRank) || !lexical || resp.NoGoodMatch)
	}
	flagged := 0
	for _, f := range want {
		if f {
			flagged++
		}
	}
	if flagged == 0 || flagged == len(want) {
		t.Fatalf("%d of %d searches with a weak top result: the test needs both kinds (%v)", flagged, len(want), want)
	}
	rows, err := pool.Query(ctx, `SELECT query, endpoint, searches FROM search_low_score_queries`)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for rows.Next() {
		var q, endpoint string
		var n int64
		if err := rows.Scan(&q, &endpoint, &n); err != nil {
			t.Fatal(err)
		}
		if endpoint != "internal" || n != 1 {
			t.Errorf("%q: endpoint %s, %d searches", q, endpoint, n)
		}
		got[q] = true
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for q, f := range want {
		if got[q] != f {
			t.Errorf("%q: listed %v, want %v", q, got[q], f)
		}
	}
}

// TestServingProfileIsLogged: a search logs the profile that served it, the active one
// when it names none; after another profile is activated, the next searches log that
// one, and the profiles answer tells the two apart.
func TestServingProfileIsLogged(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	ids := testfactory.DemoCatalog(ctx, t, pool, 2, nil)
	testfactory.Enrich(ctx, t, testfactory.LocalEnricher(pool, 2), ids...)
	st := search.DefaultSettings()
	st.DefaultPlan = plan.ModeNone
	svc := search.New(pool, embed.NewLocal(384), st, slog.New(slog.DiscardHandler))
	agent := auth.Caller{Name: "agent"}
	logged := func(r search.Request) string {
		t.Helper()
		resp, err := svc.Search(ctx, agent, r)
		if err != nil {
			t.Fatal(err)
		}
		var p *string
		if err := pool.QueryRow(ctx, `SELECT profile FROM search_log WHERE id = $1`, resp.SearchID).Scan(&p); err != nil {
			t.Fatal(err)
		}
		if p == nil {
			return "<nil>"
		}
		return *p
	}
	for _, c := range []struct {
		req  search.Request
		want string
	}{
		{search.Request{Query: "apple stock price"}, "default"},
		{search.Request{Query: "apple stock price", Mode: search.ModeLexical}, "default"},
		{search.Request{Query: "apple stock price", Profile: "concat"}, "concat"},
	} {
		if got := logged(c.req); got != c.want {
			t.Errorf("%+v: logged %s, want %s", c.req, got, c.want)
		}
	}
	if _, err := profiles.Activate(ctx, pool, "mean"); err != nil {
		t.Fatal(err)
	}
	if got := logged(search.Request{Query: "apple stock price"}); got != "mean" {
		t.Errorf("after activating mean: logged %s", got)
	}
	days, err := analytics.Profiles(ctx, pool, analytics.Params{Days: 1})
	if err != nil {
		t.Fatal(err)
	}
	perProfile := map[string]int64{}
	for _, d := range days {
		perProfile[d.Profile] = d.Searches
	}
	if perProfile["default"] != 2 || perProfile["concat"] != 1 || perProfile["mean"] != 1 || len(perProfile) != 3 {
		t.Errorf("profiles answer %+v, want default 2, concat 1, mean 1", days)
	}
}

// TestConcurrentRollupsTakeTurns: several instances rolling up at once (each adds what it
// rolls up to the days' rows) still roll each hour up once.
func TestConcurrentRollupsTakeTurns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	if err := analyticsbench.Seed(ctx, pool, 200, 2000, 4, t.Logf); err != nil {
		t.Fatal(err)
	}
	live := answers(t, pool)
	errs := make(chan error, 3)
	for range 3 {
		go func() {
			_, err := analytics.Rollup(ctx, pool, analytics.RollupOptions{MaxHours: 5})
			errs <- err
		}()
	}
	for range 3 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if n := count(t, pool, `SELECT sum(searches)::bigint FROM search_rollup_hourly`); n == 0 || n > 2000 {
		t.Fatalf("%d searches rolled up, want at most the 2000 logged", n)
	}
	sameAnswers(t, "after concurrent rollups", answers(t, pool), live)
}

// TestLowConfidenceCounted: real searches whose answer had no good match are counted as of
// low confidence in the searches answer and search_traffic, and listed among the low-score
// queries, including those whose first result a branch ranked first, which the rule by
// ranks alone let pass.
func TestLowConfidenceCounted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	ids := testfactory.DemoCatalog(ctx, t, pool, 3, nil)
	testfactory.Enrich(ctx, t, testfactory.LocalEnricher(pool, 2), ids...)
	st := search.DefaultSettings()
	st.DefaultPlan = plan.ModeNone
	// the settings serve runs with, which the confidence model was fitted on
	st.WeightMeaning, st.VectorConfidence = search.DefaultWeightMeaning, search.DefaultVectorConfidence
	svc := search.New(pool, embed.NewLocal(384), st, slog.New(slog.DiscardHandler))
	var low int64
	// no good match, yet a branch ranked the first result first and the lexical branch matched
	// something: the rule by ranks alone does not flag it
	missedByRanks := []string{}
	for _, q := range []string{
		"apple stock price", "current stock price of microsoft", "send an email to my boss",
		"translate this sentence to french", "create a github issue", "book a table for two",
		"price", "weather", "quarterly earnings report",
	} {
		resp, err := svc.Search(ctx, search.Internal(), search.Request{Query: q, K: 5})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Results) == 0 || !resp.NoGoodMatch {
			continue
		}
		low++
		top := resp.Results[0]
		first := (top.LexicalRank != nil && *top.LexicalRank == 1) || (top.VectorRank != nil && *top.VectorRank == 1)
		lexical := slices.ContainsFunc(resp.Results, func(r search.Result) bool { return r.LexicalRank != nil })
		if first && lexical && !top.NameMatch {
			missedByRanks = append(missedByRanks, q)
		}
	}
	t.Logf("%d searches of low confidence; ranked first by a branch: %q", low, missedByRanks)
	if low == 0 || len(missedByRanks) == 0 {
		t.Fatalf("%d searches of low confidence, %v ranked first by a branch: the test needs both", low, missedByRanks)
	}

	buckets, err := analytics.Searches(ctx, pool, analytics.Params{Days: 1, Bucket: analytics.BucketDay})
	if err != nil {
		t.Fatal(err)
	}
	var counted, lowScore int64
	for _, b := range buckets {
		counted += b.LowConfidence
		lowScore += b.LowScore
	}
	if counted != low || lowScore < low {
		t.Errorf("searches answer: %d of low confidence, %d of low score; want %d and at least as many", counted, lowScore, low)
	}
	if n := count(t, pool, `SELECT coalesce(sum(low_confidence), 0)::bigint FROM search_traffic`); n != low {
		t.Errorf("search_traffic: %d of low confidence, want %d", n, low)
	}
	listed, err := analytics.LowScore(ctx, pool, analytics.Params{Days: 1, Limit: analytics.MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range missedByRanks {
		if !slices.ContainsFunc(listed, func(l analytics.LowScoreQuery) bool { return l.Query == q }) {
			t.Errorf("%q: no good match, not among the low-score queries %+v", q, listed)
		}
	}
}

// learningCatalog is a database with three companies' enriched tools and the search
// service over it (the local embedder, no plan), for the learning answer's tests.
func learningCatalog(t *testing.T) (*pgxpool.Pool, embed.Embedder, *search.Service) {
	t.Helper()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	ids := testfactory.DemoCatalog(ctx, t, pool, 3, nil)
	testfactory.Enrich(ctx, t, testfactory.LocalEnricher(pool, 2), ids...)
	emb := embed.NewLocal(384)
	st := search.DefaultSettings()
	st.DefaultPlan = plan.ModeNone
	return pool, emb, search.New(pool, emb, st, slog.New(slog.DiscardHandler))
}

// TestLearningDays: the learning answer counts, per day, the searches and those a memory
// helped, the labelled ones with their best label ranked first and in the top 5, and the
// memories stored; a day without searches is listed with zeros.
func TestLearningDays(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, emb, svc := learningCatalog(t)
	uses := []testfactory.Use{
		{Query: "what does apple trade at right now", Tools: []string{"get_apple_current_stock_price"}},
		{Query: "how much money did microsoft make", Tools: []string{"get_microsoft_revenue"}},
		{Query: "nvidia share price targets from analysts", Tools: []string{"get_nvidia_analyst_price_targets"}},
	}
	labelled := testfactory.Labels(ctx, t, svc, "fin", uses)
	if labelled == 0 {
		t.Fatal("no search labelled")
	}
	mem := &memory.Service{Pool: pool, Embedder: emb, Logger: slog.New(slog.DiscardHandler)}
	if stats, err := mem.Sweep(ctx); err != nil || stats.Added == 0 {
		t.Fatalf("sweep %+v %v: no memory", stats, err)
	}
	for _, u := range uses { // the same requests again: their memories score their tools
		if _, err := svc.Search(ctx, search.Internal(), search.Request{Query: u.Query, K: 5}); err != nil {
			t.Fatal(err)
		}
	}
	var hit1, hit5, memories int64
	if err := pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE r = 1), count(*) FILTER (WHERE r <= 5), (SELECT count(*) FROM tool_memories)
		FROM (SELECT min(rank) AS r FROM search_labels GROUP BY search_id) b`).Scan(&hit1, &hit5, &memories); err != nil {
		t.Fatal(err)
	}
	answer, err := analytics.Learning(ctx, pool, analytics.Params{Days: 3})
	if err != nil {
		t.Fatal(err)
	}
	days := answer.Days
	today := time.Now().UTC()
	if len(days) != 3 || days[0].Day != today.AddDate(0, 0, -2).Format(time.DateOnly) || days[2].Day != today.Format(time.DateOnly) {
		t.Fatalf("days %+v, want the last 3", days)
	}
	if (days[0] != analytics.LearningDay{Day: days[0].Day}) {
		t.Errorf("a day without searches: %+v", days[0])
	}
	want := analytics.LearningDay{Day: days[2].Day, Searches: int64(2 * len(uses)), MemoryHelped: days[2].MemoryHelped,
		Labelled: int64(labelled), Hit1: hit1, Hit5: hit5, Memories: memories}
	if days[2] != want || days[2].MemoryHelped == 0 || days[2].MemoryHelped > int64(len(uses)) {
		t.Errorf("today %+v, want %+v with 1 to %d searches a memory helped", days[2], want, len(uses))
	}
	if n := count(t, pool, `SELECT count(*) FROM search_learning_daily WHERE memories > 0`); n != 1 {
		t.Errorf("search_learning_daily: %d days with memories, want 1", n)
	}
}

// TestLearningPerTenant: the learning answer of one tenant counts that tenant's searches,
// labels and memories alone (two keys of one tenant, a key of its own, the operator), and
// lists the tenants there are.
func TestLearningPerTenant(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, emb, svc := learningCatalog(t)
	keys := auth.NewKeys(pool, time.Now)
	caller := func(spec auth.Spec) auth.Caller {
		spec.Scope = auth.ScopeSearch
		k, _, err := keys.Create(ctx, spec)
		if err != nil {
			t.Fatal(err)
		}
		return *k.Caller()
	}
	a1, a2 := caller(auth.Spec{Name: "a1", Tenant: "acme"}), caller(auth.Spec{Name: "a2", Tenant: "acme"})
	solo := caller(auth.Spec{Name: "solo"})
	acmeLabelled := testfactory.LabelsAs(ctx, t, svc, a1, "fin", []testfactory.Use{
		{Query: "what does apple trade at right now", Tools: []string{"get_apple_current_stock_price"}},
		{Query: "how much money did microsoft make", Tools: []string{"get_microsoft_revenue"}},
	})
	acmeLabelled += testfactory.LabelsAs(ctx, t, svc, a2, "fin", []testfactory.Use{
		{Query: "microsoft sales last year", Tools: []string{"get_microsoft_revenue"}},
	})
	soloLabelled := testfactory.LabelsAs(ctx, t, svc, solo, "fin", []testfactory.Use{
		{Query: "amazon share price targets from analysts", Tools: []string{"get_amazon_analyst_price_targets"}},
	})
	if acmeLabelled == 0 || soloLabelled == 0 {
		t.Fatalf("labelled: acme %d, solo %d", acmeLabelled, soloLabelled)
	}
	if _, err := svc.Search(ctx, search.Internal(), search.Request{Query: "apple stock price", K: 5}); err != nil {
		t.Fatal(err)
	}
	mem := &memory.Service{Pool: pool, Embedder: emb, Logger: slog.New(slog.DiscardHandler)}
	if _, err := mem.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	// a key of no tenant is its own, named by the key ("key:solo"; inside, "key:" || its id)
	soloTenant := "key:solo"
	acmeMemories := count(t, pool, `SELECT count(*) FROM tool_memories WHERE tenant = 'acme'`)
	soloMemories := count(t, pool, `SELECT count(*) FROM tool_memories WHERE tenant = '`+solo.Tenant+`'`)
	if acmeMemories == 0 || soloMemories == 0 {
		t.Fatalf("memories: acme %d, %s %d", acmeMemories, solo.Tenant, soloMemories)
	}
	for _, c := range []struct {
		name                         string
		tenant                       *string
		searches, labelled, memories int64
	}{
		{"every tenant", nil, 5, int64(acmeLabelled + soloLabelled), acmeMemories + soloMemories},
		{"acme", new("acme"), 3, int64(acmeLabelled), acmeMemories},
		{"the key of its own", &soloTenant, 1, int64(soloLabelled), soloMemories},
		{"the operator", new(""), 1, 0, 0},
	} {
		answer, err := analytics.Learning(ctx, pool, analytics.Params{Days: 1, Tenant: c.tenant})
		if err != nil {
			t.Fatal(err)
		}
		today := answer.Days[0]
		if today.Searches != c.searches || today.Labelled != c.labelled || today.Memories != c.memories {
			t.Errorf("%s: %+v, want %d searches, %d labelled, %d memories", c.name, today, c.searches, c.labelled, c.memories)
		}
		if want := []string{analytics.OperatorTenant, "acme", soloTenant}; !slices.Equal(answer.Tenants, want) {
			t.Errorf("%s: tenants %v, want %v", c.name, answer.Tenants, want)
		}
	}
}
