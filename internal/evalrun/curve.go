package evalrun

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/enrich"
	"github.com/toolgate/toolgate/internal/eval"
	"github.com/toolgate/toolgate/internal/memory"
	"github.com/toolgate/toolgate/internal/observed"
	"github.com/toolgate/toolgate/internal/search"
	"github.com/toolgate/toolgate/internal/setup"
)

// TrafficSplit says which queries of a dataset a learning curve replays as traffic; the
// others are its test part.
type TrafficSplit struct {
	// Kind selects the queries of this kind ("kind:traffic").
	Kind string
	// Fraction, without Kind, selects that share of the queries by position, evenly spaced:
	// the query at (0-based) position i is traffic when ⌊(i+1)·f⌋ > ⌊i·f⌋ (0.5: the 2nd,
	// 4th, 6th, ...).
	Fraction float64
}

// ParseTrafficSplit reads --traffic-split: "kind:NAME" or a fraction between 0 and 1.
func ParseTrafficSplit(s string) (*TrafficSplit, error) {
	if kind, ok := strings.CutPrefix(s, "kind:"); ok {
		if kind == "" {
			return nil, &OptionError{Msg: "--traffic-split: kind: names no kind"}
		}
		return &TrafficSplit{Kind: kind}, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || !(f > 0 && f < 1) {
		return nil, &OptionError{Msg: fmt.Sprintf("--traffic-split: %q is neither kind:NAME nor a fraction between 0 and 1", s)}
	}
	return &TrafficSplit{Fraction: f}, nil
}

func (t TrafficSplit) String() string {
	if t.Kind != "" {
		return "kind:" + t.Kind
	}
	return strconv.FormatFloat(t.Fraction, 'g', -1, 64)
}

// split parts qs into the traffic and the test queries; both must be non-empty.
func (t TrafficSplit) split(qs []eval.Query) (traffic, test []eval.Query, err error) {
	for i, q := range qs {
		in := q.Kind == t.Kind
		if t.Kind == "" {
			in = math.Floor(float64(i+1)*t.Fraction) > math.Floor(float64(i)*t.Fraction)
		}
		if in {
			traffic = append(traffic, q)
		} else {
			test = append(test, q)
		}
	}
	if len(traffic) == 0 || len(test) == 0 {
		return nil, nil, &OptionError{Msg: fmt.Sprintf("--traffic-split %s: %d traffic and %d test queries; both must be some", t, len(traffic), len(test))}
	}
	return traffic, test, nil
}

// ofKinds keeps the queries of the given kinds (all with none); a kind no query has fails.
func ofKinds(qs []eval.Query, kinds []string) ([]eval.Query, error) {
	if len(kinds) == 0 {
		return qs, nil
	}
	var out []eval.Query
	seen := map[string]bool{}
	for _, q := range qs {
		if slices.Contains(kinds, q.Kind) {
			out = append(out, q)
			seen[q.Kind] = true
		}
	}
	for _, k := range kinds {
		if !seen[k] {
			return nil, &OptionError{Msg: fmt.Sprintf("--kind: no query of kind %q", k)}
		}
	}
	return out, nil
}

// CurveFractions are the shares of the traffic after which a curve measures its test part.
var CurveFractions = []float64{0, 0.25, 0.5, 1}

// The two ways a curve replays its traffic.
const (
	// CurveKey: one search key (tenant "a") replays; its test searches and those of a key of
	// another tenant ("b") are measured.
	CurveKey = "key"
	// CurveOpen: the traffic and the test searches are the operator's (open mode, no key).
	CurveOpen = "open"
)

// Curve is the learning curve of one configuration in one way of replaying.
type Curve struct {
	Label   string       `json:"label"`
	Replay  string       `json:"replay"` // CurveKey or CurveOpen
	Traffic int          `json:"traffic"`
	Test    int          `json:"test"`
	Points  []CurvePoint `json:"points"`
}

// CurvePoint is the test part measured after a share of the traffic.
type CurvePoint struct {
	Fraction float64 `json:"fraction"`
	Replayed int     `json:"replayed"` // traffic searches made so far
	Labelled int     `json:"labelled"` // of them, those whose results held a gold tool (feedback sent)
	Memories int     `json:"memories"` // memories stored after the sweep, all tenants
	// Observed is the observed queries stored after the sweep (TOOLGATE_OBSERVED_QUERIES
	// above 0; a search key's queries need TOOLGATE_OBSERVED_MIN_KEYS keys)
	Observed int `json:"observed"`
	// Callers are the test part's reports per caller: "key" and "other_key", or "open".
	Callers map[string]eval.Report `json:"callers"`
}

// RunCurves is `toolgate eval DIR --traffic-split`: the dataset is loaded and enriched as
// for Run; then, per configuration, in each way of replaying (CurveKey, CurveOpen), the
// traffic is replayed through the HTTP API of an in-process server as an agent would
// (POST /search, then POST /search/{id}/feedback naming the gold tools it returned), the
// memories are swept, and the test part is searched and scored after each of
// CurveFractions of the traffic. Each point's reports are appended to Out as lines.
func RunCurves(ctx context.Context, env Env, o Options) ([]Curve, error) {
	s, err := start(ctx, env, o)
	if err != nil {
		return nil, err
	}
	defer s.close()
	queryStart := time.Now()
	var out []Curve
	for _, c := range s.configs {
		for _, replay := range []string{CurveKey, CurveOpen} {
			cv, err := s.r.curve(ctx, s.pool, c, replay)
			if err != nil {
				return out, err
			}
			out = append(out, cv)
		}
	}
	s.finish(queryStart)
	return out, nil
}

// curve replays the traffic in one way for configuration c and measures each point.
func (r *runner) curve(ctx context.Context, pool *pgxpool.Pool, c evalConfig, replay string) (Curve, error) {
	st := applySettings(r.base, r.o.Set, c.variation)
	svc := search.New(pool, r.embedder, st, r.env.Log)
	// every curve starts from no memory and no observed query: what an earlier curve
	// taught is forgotten
	if err := forgetAll(ctx, pool, r.ds.Tools); err != nil {
		return Curve{}, err
	}
	obs := &observed.Service{Pool: pool, Max: r.env.Config.ObservedQueries, MinKeys: r.env.Config.ObservedMinKeys, Logger: r.env.Log,
		Enrich: &enrich.Service{Pool: pool, Embedder: r.embedder, Enricher: setup.Enricher(r.env.Config, r.env.Observer), Logger: r.env.Log}}
	if _, err := obs.Forget(ctx, evalSource); err != nil {
		return Curve{}, err
	}
	srv, err := startCurveServer(ctx, pool, svc, replay == CurveOpen, r.ds.Tools)
	if err != nil {
		return Curve{}, err
	}
	defer srv.close()
	callers, err := srv.callers(ctx, replay, r.info.ID+"-"+strconv.Itoa(r.curves))
	if err != nil {
		return Curve{}, err
	}
	r.curves++
	mem := &memory.Service{Pool: pool, Embedder: r.embedder, QueryIDF: st.QueryIDF, Demotions: st.WeightDemotion > 0,
		MaxPerTool: r.env.Config.MemoryPerTool, MinKeys: r.env.Config.ObservedMinKeys,
		ListFrom: memory.ListFromSetting(r.env.Config.MemoryListsFrom), Logger: r.env.Log}
	req := search.Request{Mode: c.mode, Profile: c.profile.Name, Plan: c.plan}
	perK := evalPerK(st, effectivePlan(c, st), r.o.Ks)
	cv := Curve{Label: c.label + " / " + replay, Replay: replay, Traffic: len(r.traffic), Test: len(r.test)}
	t, done, labelled := time.Now(), 0, 0
	for _, f := range CurveFractions {
		n := int(math.Ceil(f * float64(len(r.traffic))))
		k, err := srv.replay(ctx, callers[0], req, r.o.Ks[len(r.o.Ks)-1], r.traffic[done:n])
		if err != nil {
			return cv, err
		}
		done, labelled = n, labelled+k
		if _, err := mem.Sweep(ctx); err != nil {
			return cv, err
		}
		if _, err := obs.Sweep(ctx); err != nil {
			return cv, err
		}
		pt := CurvePoint{Fraction: f, Replayed: done, Labelled: labelled, Callers: map[string]eval.Report{}}
		// Raw SQL: counts for the report, in the evaluation database.
		if err := pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM tool_memories),
			(SELECT count(*) FROM tool_components WHERE kind = 'observed')`).Scan(&pt.Memories, &pt.Observed); err != nil {
			return cv, err
		}
		for _, cl := range callers {
			label := fmt.Sprintf("%s / %s / traffic %g%%", cv.Label, cl.name, f*100)
			rep, err := r.measure(ctx, srv, cl, req, st, perK, c, label)
			if err != nil {
				return cv, err
			}
			pt.Callers[cl.name] = rep
		}
		cv.Points = append(cv.Points, pt)
		fmt.Fprintf(r.env.Progress, "eval: %s: %g%% of the traffic (%d searches, %d labelled, %d memories, %d observed queries), %.1fs\n",
			cv.Label, f*100, done, labelled, pt.Memories, pt.Observed, time.Since(t).Seconds())
	}
	return cv, nil
}

// measure searches and scores the test part as caller cl, and appends its line to --out.
func (r *runner) measure(ctx context.Context, srv *curveServer, cl curveCaller, req search.Request, st search.Settings,
	perK bool, c evalConfig, label string) (eval.Report, error) {
	cfg := r.configRecord(c, st, effectivePlan(c, st), perK)
	cfg["traffic_split"] = r.o.Traffic.String()
	cfg["caller"] = cl.name
	rep, err := eval.Run(ctx, r.test, srv.searchFunc(cl, req),
		eval.Options{Ks: r.o.Ks, PerK: perK, Config: cfg, Dataset: &r.ds.Info, PerQuery: r.perQuery.writer(r.info.ID, label)})
	if err != nil {
		return eval.Report{}, err
	}
	if r.out != nil {
		if err := r.out.write(Line{Run: r.info, Label: label, Report: rep}); err != nil {
			return eval.Report{}, err
		}
	}
	return rep, nil
}

// forgetAll removes every memory of the dataset's tools, so that the searches until now
// teach nothing (memory.Service.Forget, DELETE /admin/tools/{name}/memories).
func forgetAll(ctx context.Context, pool *pgxpool.Pool, tools []catalog.Tool) error {
	m := &memory.Service{Pool: pool}
	for _, t := range tools {
		if _, err := m.Forget(ctx, catalog.ToolName(evalSource, t.Name)); err != nil {
			return err
		}
	}
	return nil
}

// curveCaller is one caller of a curve's searches: its name in the report and its bearer
// token ("" in open mode).
type curveCaller struct {
	name  string
	token string
}

// callers are the callers of a curve, the one that replays first: in CurveKey two search
// keys of two tenants named after id, in CurveOpen the keyless operator.
func (s *curveServer) callers(ctx context.Context, replay, id string) ([]curveCaller, error) {
	if replay == CurveOpen {
		return []curveCaller{{name: "open"}}, nil
	}
	var out []curveCaller
	for _, name := range []string{"key", "other_key"} {
		_, secret, err := s.keys.Create(ctx, auth.Spec{Name: "curve-" + id + "-" + name, Scope: auth.ScopeSearch,
			Tenant: "curve-" + id + "-" + name})
		if err != nil {
			return nil, err
		}
		out = append(out, curveCaller{name: name, token: secret})
	}
	return out, nil
}
