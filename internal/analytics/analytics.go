// Package analytics answers what an operator asks of the retrieval log: searches per
// endpoint over time, the queries that found nothing or found it weakly, how each weight
// profile fares with the tools agents then chose, which tools are never returned or never
// chosen, the slowest searches, the most asked queries (GET /admin/analytics/*,
// docs/analytics.md). Every rule and every aggregate is defined once, in SQL
// (sql/functions/analytics.sql): the psql views read the same functions, so the console
// and psql agree. This package validates the parameters, runs those functions and keeps
// their rollups up to date (Rollup, run by the search_rollup job).
package analytics

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/derrors"
)

// Parameter bounds (docs/analytics.md#the-json-endpoints).
const (
	DefaultDays  = 7
	MaxDays      = 90
	DefaultLimit = 50
	MaxLimit     = 500
)

// Bucket is the width of a bucket of Searches.
type Bucket string

const (
	BucketHour Bucket = "hour"
	BucketDay  Bucket = "day"
)

// ParamError is a query parameter out of its range or of the wrong type.
type ParamError struct {
	Param  string
	Reason string
}

func (e *ParamError) Error() string { return fmt.Sprintf("query parameter %s: %s", e.Param, e.Reason) }

// Is puts a ParamError in the Invalid category.
func (e *ParamError) Is(target error) bool { return target == derrors.Invalid }

// Code is the code a caller is told.
func (e *ParamError) Code() string { return "invalid_param" }

// Params are what an answer covers: the last Days UTC days, today included, and at most
// Limit rows per list.
type Params struct {
	Days   int
	Limit  int
	Bucket Bucket
	// Endpoint narrows Latency to the searches of one endpoint ("rest", "find_tools" or
	// "internal"); "" is all of them.
	Endpoint string
	// Tenant narrows Learning to one tenant's searches and memories (docs/learning.md): ""
	// for the operator's, a key's tenant, "key:<name>" for a key of no tenant (the newest key
	// of that name); nil is every tenant's.
	Tenant *string
}

// OperatorTenant is how the answers and the tenant parameter name the operator's tenant
// ("" inside): no tenant's name has brackets.
const OperatorTenant = "(operator)"

// ParseParams reads days, limit, bucket, endpoint and tenant from query parameters (get
// returns "" for an absent one): days 1..MaxDays (DefaultDays), limit 1..MaxLimit
// (DefaultLimit), bucket hour or day (day), endpoint rest, find_tools or internal (all),
// tenant OperatorTenant, a tenant's name or key:<name> (every tenant).
func ParseParams(get func(string) string) (Params, error) {
	p := Params{Days: DefaultDays, Limit: DefaultLimit, Bucket: BucketDay}
	var err error
	if p.Days, err = intParam(get, "days", DefaultDays, MaxDays); err != nil {
		return p, err
	}
	if p.Limit, err = intParam(get, "limit", DefaultLimit, MaxLimit); err != nil {
		return p, err
	}
	switch b := Bucket(get("bucket")); b {
	case "":
	case BucketHour, BucketDay:
		p.Bucket = b
	default:
		return p, &ParamError{Param: "bucket", Reason: fmt.Sprintf("%q is not hour or day", b)}
	}
	switch e := get("endpoint"); e {
	case "", "rest", "find_tools", "internal":
		p.Endpoint = e
	default:
		return p, &ParamError{Param: "endpoint", Reason: fmt.Sprintf("%q is not rest, find_tools or internal", e)}
	}
	switch t := get("tenant"); {
	case t == "":
	case t == OperatorTenant:
		p.Tenant = new(string)
	case auth.ValidTenant(strings.TrimPrefix(t, "key:")):
		p.Tenant = &t
	default:
		return p, &ParamError{Param: "tenant", Reason: fmt.Sprintf("%q is not %s, a tenant's name or key:<name>", t, OperatorTenant)}
	}
	return p, nil
}

func intParam(get func(string) string, name string, def, most int) (int, error) {
	s := get(name)
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > most {
		return 0, &ParamError{Param: name, Reason: fmt.Sprintf("%q is not an integer from 1 to %d", s, most)}
	}
	return n, nil
}

// read runs f in a read-only transaction of pool with the settings of an analytics read
// (AnalyticsSetConfig).
func read(ctx context.Context, pool *pgxpool.Pool, f func(q *db.Queries) error) error {
	return pgx.BeginTxFunc(ctx, pool, pgx.TxOptions{AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		q := db.New(tx)
		if err := q.AnalyticsSetConfig(ctx); err != nil {
			return err
		}
		return f(q)
	})
}

// SearchBucket is the searches of one endpoint in one bucket.
type SearchBucket struct {
	Start      time.Time `json:"start"`
	Endpoint   string    `json:"endpoint"`
	Searches   int64     `json:"searches"`
	ZeroResult int64     `json:"zero_result"`
	Labelled   int64     `json:"labelled"`
	// LowScore counts the searches with a weak best result (LowScore's rule), LowConfidence
	// those that returned tools but no good match (the answer's no_good_match).
	LowScore      int64 `json:"low_score"`
	LowConfidence int64 `json:"low_confidence"`
}

// Searches returns the searches per bucket and endpoint, oldest first: all of them, those
// that found nothing, those labelled (the agent then chose one of the tools), and those
// of a weak best result and of low confidence.
func Searches(ctx context.Context, pool *pgxpool.Pool, p Params) ([]SearchBucket, error) {
	out := []SearchBucket{}
	err := read(ctx, pool, func(q *db.Queries) error {
		rows, err := q.AnalyticsSearches(ctx, db.AnalyticsSearchesParams{Days: int32(p.Days), Bucket: string(p.Bucket)})
		for _, r := range rows {
			out = append(out, SearchBucket{Start: r.Start.UTC(), Endpoint: r.Endpoint, Searches: r.Searches,
				ZeroResult: r.ZeroResult, Labelled: r.Labelled, LowScore: r.LowScore, LowConfidence: r.LowConfidence})
		}
		return err
	})
	return out, err
}

// LatencyBucket is the searches of one bucket and the percentiles of their latency in
// milliseconds (search_log.latency_ms: the embedding, the statement and the rerank), read
// from the latency histogram: within 19% of the exact percentile.
type LatencyBucket struct {
	Start    time.Time `json:"start"`
	Searches int64     `json:"searches"`
	P50      float64   `json:"p50_ms"`
	P95      float64   `json:"p95_ms"`
	P99      float64   `json:"p99_ms"`
}

// Latency returns the latency percentiles per bucket, oldest first, of one endpoint's
// searches or of all (p.Endpoint "").
func Latency(ctx context.Context, pool *pgxpool.Pool, p Params) ([]LatencyBucket, error) {
	out := []LatencyBucket{}
	var endpoint *string
	if p.Endpoint != "" {
		endpoint = &p.Endpoint
	}
	err := read(ctx, pool, func(q *db.Queries) error {
		rows, err := q.AnalyticsLatency(ctx, db.AnalyticsLatencyParams{Days: int32(p.Days), Bucket: string(p.Bucket), Endpoint: endpoint})
		for _, r := range rows {
			out = append(out, LatencyBucket{Start: r.Start.UTC(), Searches: r.Searches, P50: r.P50Ms, P95: r.P95Ms, P99: r.P99Ms})
		}
		return err
	})
	return out, err
}

// ZeroResultQuery is a query that found nothing, with where it came from and its filters.
type ZeroResultQuery struct {
	Query    string          `json:"query"`
	Endpoint string          `json:"endpoint"`
	Filters  json.RawMessage `json:"filters"`
	Searches int64           `json:"searches"`
	LastSeen time.Time       `json:"last_seen"`
}

// ZeroResults returns the queries that found nothing, the most frequent first.
func ZeroResults(ctx context.Context, pool *pgxpool.Pool, p Params) ([]ZeroResultQuery, error) {
	out := []ZeroResultQuery{}
	err := read(ctx, pool, func(q *db.Queries) error {
		rows, err := q.AnalyticsZeroResults(ctx, db.AnalyticsZeroResultsParams{Days: int32(p.Days), MaxRows: int32(p.Limit)})
		for _, r := range rows {
			out = append(out, ZeroResultQuery{Query: r.Query, Endpoint: r.Endpoint, Filters: r.Filters,
				Searches: r.Searches, LastSeen: r.LastSeen.UTC()})
		}
		return err
	})
	return out, err
}

// LowScoreQuery is a query whose searches had a weak best result (docs/analytics.md).
type LowScoreQuery struct {
	Query    string          `json:"query"`
	Endpoint string          `json:"endpoint"`
	Mode     string          `json:"mode"`
	Filters  json.RawMessage `json:"filters"`
	Searches int64           `json:"searches"`
	TopScore float64         `json:"top_score"`
	LastSeen time.Time       `json:"last_seen"`
}

// LowScore returns the queries with low-score searches, the most frequent first.
func LowScore(ctx context.Context, pool *pgxpool.Pool, p Params) ([]LowScoreQuery, error) {
	out := []LowScoreQuery{}
	err := read(ctx, pool, func(q *db.Queries) error {
		rows, err := q.AnalyticsLowScore(ctx, db.AnalyticsLowScoreParams{Days: int32(p.Days), MaxRows: int32(p.Limit)})
		for _, r := range rows {
			out = append(out, LowScoreQuery{Query: r.Query, Endpoint: r.Endpoint, Mode: r.Mode, Filters: r.Filters,
				Searches: r.Searches, TopScore: r.TopScore, LastSeen: r.LastSeen.UTC()})
		}
		return err
	})
	return out, err
}

// LearningDay is how the catalog learned on one day: its searches and those a memory helped
// (a result the memory branch scored), its labelled searches and how many of those had their
// best label ranked first and in the top 5, and the memories stored now that were stored by
// its end (docs/analytics.md#learning).
type LearningDay struct {
	Day          string `json:"day"` // YYYY-MM-DD (UTC)
	Searches     int64  `json:"searches"`
	MemoryHelped int64  `json:"memory_helped"`
	Labelled     int64  `json:"labelled"`
	Hit1         int64  `json:"hit_1"`
	Hit5         int64  `json:"hit_5"`
	Memories     int64  `json:"memories"`
}

// LearningAnswer is how one tenant's searches learn (Tenant), or every tenant's (Tenant
// nil), and the tenants there are to choose from.
type LearningAnswer struct {
	Tenant *string       `json:"tenant"`
	Days   []LearningDay `json:"days"`
	// Tenants are the tenants with searches in the window or with memories, the operator's
	// (OperatorTenant) first. A search logged before the log named its tenant (migration
	// 0054) counts for every tenant's answer only.
	Tenants []string `json:"tenants"`
}

// Learning returns every day of the window, oldest first, of p.Tenant's searches and
// memories, or of every tenant's.
func Learning(ctx context.Context, pool *pgxpool.Pool, p Params) (LearningAnswer, error) {
	out := LearningAnswer{Days: []LearningDay{}, Tenants: []string{}}
	if p.Tenant != nil {
		out.Tenant = new(tenantName(*p.Tenant))
	}
	err := read(ctx, pool, func(q *db.Queries) error {
		rows, err := q.AnalyticsLearning(ctx, db.AnalyticsLearningParams{Days: int32(p.Days), Tenant: p.Tenant})
		if err != nil {
			return err
		}
		for _, r := range rows {
			out.Days = append(out.Days, LearningDay{Day: r.Day.Time.Format(time.DateOnly), Searches: r.Searches, MemoryHelped: r.MemoryHelped,
				Labelled: r.Labelled, Hit1: r.Hit1, Hit5: r.Hit5, Memories: r.Memories})
		}
		tenants, err := q.AnalyticsTenants(ctx, int32(p.Days))
		for _, t := range tenants {
			out.Tenants = append(out.Tenants, tenantName(t))
		}
		return err
	})
	return out, err
}

// tenantName is how the answers name tenant: OperatorTenant for the operator's.
func tenantName(tenant string) string {
	if tenant == "" {
		return OperatorTenant
	}
	return tenant
}

// ProfileDay is one serving profile's searches of one day and how agents fared with them.
type ProfileDay struct {
	Day       string  `json:"day"` // YYYY-MM-DD (UTC)
	Profile   string  `json:"profile"`
	Searches  int64   `json:"searches"`
	Labelled  int64   `json:"labelled"`
	LabelRate float64 `json:"label_rate"`
	// MRR is the mean over the labelled searches of 1 / the rank of their best label; nil
	// when none was labelled.
	MRR *float64 `json:"mrr"`
}

// Profiles returns the searches per day and serving profile, oldest first.
func Profiles(ctx context.Context, pool *pgxpool.Pool, p Params) ([]ProfileDay, error) {
	out := []ProfileDay{}
	err := read(ctx, pool, func(q *db.Queries) error {
		rows, err := q.AnalyticsProfiles(ctx, int32(p.Days))
		for _, r := range rows {
			d := ProfileDay{Day: r.Day.Time.Format(time.DateOnly), Profile: r.Profile, Searches: r.Searches,
				Labelled: r.Labelled, LabelRate: r.LabelRate}
			if r.Labelled > 0 {
				d.MRR = &r.Mrr
			}
			out = append(out, d)
		}
		return err
	})
	return out, err
}

// Tool is a tool in one of the lists of Tools.
type Tool struct {
	Name          string `json:"name"`
	Source        string `json:"source"`
	Returned      int64  `json:"returned"`
	ReturnedFirst int64  `json:"returned_first"`
	Called        int64  `json:"called"`
	Succeeded     int64  `json:"succeeded"`
}

// NeverReturned is a searchable tool no search returned.
type NeverReturned struct {
	Name   string `json:"name"`
	Source string `json:"source"`
}

// NeverCalled is a tool of the catalog that searches returned and no agent chose.
type NeverCalled struct {
	Name     string `json:"name"`
	Source   string `json:"source"`
	Returned int64  `json:"returned"`
}

// Popular is a tool agents chose, or searches returned.
type Popular struct {
	Name          string `json:"name"`
	Returned      int64  `json:"returned"`
	ReturnedFirst int64  `json:"returned_first"`
	Called        int64  `json:"called"`
	Succeeded     int64  `json:"succeeded"`
}

// ToolLists are the three lists of GET /admin/analytics/tools, over the whole retained log.
type ToolLists struct {
	NeverReturned []NeverReturned `json:"never_returned"`
	NeverCalled   []NeverCalled   `json:"never_called"`
	Popular       []Popular       `json:"popular"`
}

// Tools returns the searchable tools no search returned (by name), the tools searches
// returned that no agent chose (the most returned first) and the most chosen tools (then
// the most returned), each at most p.Limit long.
func Tools(ctx context.Context, pool *pgxpool.Pool, p Params) (ToolLists, error) {
	out := ToolLists{NeverReturned: []NeverReturned{}, NeverCalled: []NeverCalled{}, Popular: []Popular{}}
	err := read(ctx, pool, func(q *db.Queries) error {
		rows, err := q.AnalyticsTools(ctx, int32(p.Limit))
		for _, r := range rows {
			switch r.List {
			case "never_returned":
				out.NeverReturned = append(out.NeverReturned, NeverReturned{Name: r.Name, Source: r.Source})
			case "never_called":
				out.NeverCalled = append(out.NeverCalled, NeverCalled{Name: r.Name, Source: r.Source, Returned: r.Returned})
			case "popular":
				out.Popular = append(out.Popular, Popular{Name: r.Name, Returned: r.Returned,
					ReturnedFirst: r.ReturnedFirst, Called: r.Called, Succeeded: r.Succeeded})
			}
		}
		return err
	})
	return out, err
}

// SlowSearch is one of the slowest searches.
type SlowSearch struct {
	ID          int64     `json:"id"`
	CreatedAt   time.Time `json:"created_at"`
	LatencyMs   float64   `json:"latency_ms"`
	Endpoint    string    `json:"endpoint"`
	Mode        string    `json:"mode"`
	Query       string    `json:"query"`
	ResultCount int32     `json:"result_count"`
}

// Slowest returns the slowest searches, the slowest first.
func Slowest(ctx context.Context, pool *pgxpool.Pool, p Params) ([]SlowSearch, error) {
	out := []SlowSearch{}
	err := read(ctx, pool, func(q *db.Queries) error {
		rows, err := q.AnalyticsSlowest(ctx, db.AnalyticsSlowestParams{Days: int32(p.Days), MaxRows: int32(p.Limit)})
		for _, r := range rows {
			out = append(out, SlowSearch{ID: r.ID, CreatedAt: r.CreatedAt.UTC(), LatencyMs: r.LatencyMs,
				Endpoint: r.Endpoint, Mode: r.Mode, Query: r.Query, ResultCount: r.ResultCount})
		}
		return err
	})
	return out, err
}

// TopQuery is a query by how often it was searched.
type TopQuery struct {
	Query      string    `json:"query"`
	Searches   int64     `json:"searches"`
	ZeroResult int64     `json:"zero_result"`
	LastSeen   time.Time `json:"last_seen"`
}

// TopQueries returns the most searched queries.
func TopQueries(ctx context.Context, pool *pgxpool.Pool, p Params) ([]TopQuery, error) {
	out := []TopQuery{}
	err := read(ctx, pool, func(q *db.Queries) error {
		rows, err := q.AnalyticsTopQueries(ctx, db.AnalyticsTopQueriesParams{Days: int32(p.Days), MaxRows: int32(p.Limit)})
		for _, r := range rows {
			out = append(out, TopQuery{Query: r.Query, Searches: r.Searches, ZeroResult: r.ZeroResult, LastSeen: r.LastSeen.UTC()})
		}
		return err
	})
	return out, err
}
