package eval

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/toolgate/toolgate/internal/bench"
	"github.com/toolgate/toolgate/internal/confidence"
)

// SearchFunc ranks tools for a query and returns at most k tool names, best first. The eval
// command passes the same search code that serves POST /search; tests pass an in-memory one.
type SearchFunc func(ctx context.Context, query string, k int) ([]string, error)

// DefaultKs are the cut-offs the papers report (seed 000 tables 2 and 4).
var DefaultKs = []int{1, 5, 10}

// Options configure a run.
type Options struct {
	// Ks are the cut-offs to report; the search is asked for max(Ks) tools. DefaultKs when empty.
	Ks []int
	// PerK runs one search per K and scores each K on its own answer, as a caller asking
	// for k=K would get it. Without it one search asks for max(Ks) and each K scores that
	// ranking's top K, which is only right when the search's top K never depends on k.
	// It does with a query plan: plan.Merge gives every intent a share of k, so the first 5
	// of a k=10 answer are not the k=5 answer. Latency is that of the max(Ks) search (run
	// first), so it compares with runs without PerK.
	PerK bool
	// Now is the clock used to time each search; time.Now when nil.
	Now func() time.Time
	// Config is echoed into the report as its "config" object (mode, profile, ...).
	Config map[string]any
	// Dataset is echoed into the report as its "dataset" object; nil leaves it out.
	Dataset *DatasetInfo
	// PerQuery, when set, gets each query's outcome as soon as it is scored; an error
	// stops the run.
	PerQuery func(QueryOutcome) error
	// Confidence, when set, gives the answer confidence of the max(Ks) search of a query
	// just made (false: the search reported none); the report then has a Calibration
	// against ConfidenceThreshold.
	Confidence          func(query string) (float64, bool)
	ConfidenceThreshold float64
	// Signals, when set, gives what the confidence models of the max(Ks) search of a query
	// just made were given (nil: nothing), for the query's outcome.
	Signals func(query string) *confidence.Inputs
}

// QueryOutcome is one query's ranking (the max(Ks) search) and the rank of each of its gold
// tools in it, for reading which queries fail and why (`toolgate eval --per-query`).
type QueryOutcome struct {
	ID      string     `json:"id"`
	Kind    string     `json:"kind,omitempty"`
	Query   string     `json:"query"`
	Results []string   `json:"results"`
	Gold    []GoldRank `json:"gold"`
	// Confidence is the answer's confidence, when the search reports one.
	Confidence *float64 `json:"confidence,omitempty"`
	// Signals are the inputs of the confidence models, one per result (in the order of
	// Results) and the answer's, when the search reports them: the data
	// `toolgate eval fit-confidence` fits the models on.
	Signals *confidence.Inputs `json:"signals,omitempty"`
}

// GoldRank is where a gold tool is in a ranking: its 1-based rank, nil when the ranking
// does not hold it.
type GoldRank struct {
	Tool string `json:"tool"`
	Rank *int   `json:"rank"`
}

// outcome is q's QueryOutcome for ranking.
func outcome(q Query, ranking []string) QueryOutcome {
	o := QueryOutcome{ID: q.ID, Kind: q.Kind, Query: q.Query, Results: slices.Clone(ranking), Gold: make([]GoldRank, len(q.Gold))}
	if o.Results == nil {
		o.Results = []string{}
	}
	for i, g := range q.Gold {
		o.Gold[i].Tool = g
		if at := slices.Index(ranking, g); at >= 0 {
			r := at + 1
			o.Gold[i].Rank = &r
		}
	}
	return o
}

// Group is the mean of every metric over a set of queries.
type Group struct {
	NQueries int `json:"n_queries"`
	// Metrics maps "recall@5", "ndcg@5", "map@5" and "completeness@5" (for every K) to means.
	Metrics map[string]float64 `json:"metrics"`
}

// Latency summarizes the search time per query, in milliseconds.
type Latency struct {
	P50 float64 `json:"p50"`
	P95 float64 `json:"p95"`
}

// Report is the result of a run, the --json output of `toolgate eval`.
type Report struct {
	NQueries  int                `json:"n_queries"`
	Metrics   map[string]float64 `json:"metrics"`
	ByKind    map[string]Group   `json:"by_kind"`
	LatencyMS Latency            `json:"latency_ms"`
	// Hubness counts the tools that wrongly enter the top HubK of the searches (hubness.go).
	Hubness Hubness `json:"hubness"`
	// Calibration is how often the first result is right per answer confidence
	// (calibration.go); nil when the search reports no confidence.
	Calibration *Calibration   `json:"calibration,omitempty"`
	Config      map[string]any `json:"config,omitempty"`
	Dataset     *DatasetInfo   `json:"dataset,omitempty"`
}

// NoKind is the by_kind key of queries without a kind.
const NoKind = "unlabelled"

// SearchError is a failed search of one query; the run stops at the first.
type SearchError struct {
	ID  string
	Err error
}

func (e *SearchError) Error() string { return fmt.Sprintf("query %s: %v", e.ID, e.Err) }
func (e *SearchError) Unwrap() error { return e.Err }

// Run sends every query to search, one at a time so latencies are not inflated by the run
// itself, and scores the rankings against the gold lists. Queries with an empty gold list
// cannot be scored and are rejected before any search runs.
func Run(ctx context.Context, queries []Query, search SearchFunc, opts Options) (Report, error) {
	ks := slices.Clone(opts.Ks)
	if len(ks) == 0 {
		ks = slices.Clone(DefaultKs)
	}
	slices.Sort(ks)
	ks = slices.Compact(ks)
	if ks[0] <= 0 {
		return Report{}, fmt.Errorf("eval: K must be positive, got %d", ks[0])
	}
	for _, q := range queries {
		if len(q.Gold) == 0 {
			return Report{}, fmt.Errorf("eval: query %s has an empty gold list", q.ID)
		}
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	maxK := ks[len(ks)-1]
	overall := newAccumulator(ks)
	byKind := map[string]*accumulator{}
	latencies := make([]float64, 0, len(queries))
	hubs := newHubCounter()
	calib := &calibrationCounter{threshold: opts.ConfidenceThreshold}
	for _, q := range queries {
		if err := ctx.Err(); err != nil {
			return Report{}, err
		}
		start := now()
		ranking, err := search(ctx, q.Query, maxK)
		if err != nil {
			return Report{}, &SearchError{ID: q.ID, Err: err}
		}
		latencies = append(latencies, float64(now().Sub(start))/float64(time.Millisecond))
		judged := map[int]Judged{maxK: Judge(ranking, q.Gold)}
		hubs.add(ranking, q.Gold)
		o := outcome(q, ranking)
		if opts.Confidence != nil {
			if c, ok := opts.Confidence(q.Query); ok {
				calib.add(c, ranking, q.Gold)
				o.Confidence = &c
			}
		}
		if opts.Signals != nil {
			o.Signals = opts.Signals(q.Query)
		}
		if opts.PerQuery != nil {
			if err := opts.PerQuery(o); err != nil {
				return Report{}, err
			}
		}
		for _, k := range ks[:len(ks)-1] {
			if !opts.PerK {
				judged[k] = judged[maxK] // its top k is scored
				continue
			}
			ranking, err := search(ctx, q.Query, k)
			if err != nil {
				return Report{}, &SearchError{ID: q.ID, Err: err}
			}
			judged[k] = Judge(ranking, q.Gold)
		}
		overall.add(judged)
		kind := q.Kind
		if kind == "" {
			kind = NoKind
		}
		if byKind[kind] == nil {
			byKind[kind] = newAccumulator(ks)
		}
		byKind[kind].add(judged)
	}
	r := Report{
		NQueries: len(queries),
		Metrics:  overall.means(),
		ByKind:   make(map[string]Group, len(byKind)),
		LatencyMS: Latency{
			P50: bench.Percentile(latencies, 50),
			P95: bench.Percentile(latencies, 95),
		},
		Hubness: hubs.report(),
		Config:  opts.Config,
		Dataset: opts.Dataset,
	}
	if len(calib.conf) > 0 {
		r.Calibration = calib.report()
	}
	for kind, a := range byKind {
		r.ByKind[kind] = Group{NQueries: a.n, Metrics: a.means()}
	}
	return r, nil
}

// MetricNames lists the report's metric keys for ks, in display order (by K, then metric).
func MetricNames(ks []int) []string {
	var out []string
	for _, k := range ks {
		for _, m := range metricKinds {
			out = append(out, m.name+"@"+strconv.Itoa(k))
		}
	}
	return out
}

var metricKinds = []struct {
	name  string
	score func(Judged, int) float64
}{
	{"recall", Judged.Recall},
	{"ndcg", Judged.NDCG},
	{"map", Judged.AP},
	{"completeness", Judged.Complete},
}

type accumulator struct {
	ks   []int
	n    int
	sums map[string]float64
}

func newAccumulator(ks []int) *accumulator {
	return &accumulator{ks: ks, sums: map[string]float64{}}
}

// add counts one query, each K scored on the ranking judged[K].
func (a *accumulator) add(judged map[int]Judged) {
	a.n++
	for _, k := range a.ks {
		for _, m := range metricKinds {
			a.sums[m.name+"@"+strconv.Itoa(k)] += m.score(judged[k], k)
		}
	}
}

func (a *accumulator) means() map[string]float64 {
	out := make(map[string]float64, len(a.sums))
	for name, s := range a.sums {
		out[name] = 0
		if a.n > 0 {
			out[name] = s / float64(a.n)
		}
	}
	// Every metric appears even for an empty query set, so tables always have their columns.
	for _, name := range MetricNames(a.ks) {
		if _, ok := out[name]; !ok {
			out[name] = 0
		}
	}
	return out
}

// Kinds returns the report's kinds in sorted order.
func (r Report) Kinds() []string {
	kinds := make([]string, 0, len(r.ByKind))
	for k := range r.ByKind {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	return kinds
}
