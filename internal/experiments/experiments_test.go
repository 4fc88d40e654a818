package experiments_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/derrors"
	"github.com/toolgate/toolgate/internal/embed"
	"github.com/toolgate/toolgate/internal/experiments"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/plan"
	"github.com/toolgate/toolgate/internal/profiles"
	"github.com/toolgate/toolgate/internal/search"
	"github.com/toolgate/toolgate/internal/testfactory"
)

// setup imports two companies of the demo catalog and enriches them with the local
// enricher and embedder: every built-in profile gets a ready vector set (its first, made by
// enrichment). It returns the database and a search service over it.
func setup(t *testing.T) (*pgxpool.Pool, *search.Service) {
	t.Helper()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	ids := testfactory.DemoCatalog(ctx, t, pool, 2, nil)
	testfactory.Enrich(ctx, t, testfactory.LocalEnricher(pool, 2), ids...)
	st := search.DefaultSettings()
	st.DefaultPlan = plan.ModeNone // one statement per search: the routing is what is tested
	return pool, search.New(pool, embed.NewLocal(384), st, slog.New(slog.DiscardHandler))
}

func start(t *testing.T, pool *pgxpool.Pool, d experiments.Definition) experiments.Experiment {
	t.Helper()
	e, err := experiments.Start(context.Background(), pool, d)
	if err != nil {
		t.Fatalf("start %+v: %v", d, err)
	}
	return e
}

func find(t *testing.T, s *search.Service, c auth.Caller, r search.Request) search.Response {
	t.Helper()
	resp, err := s.Search(context.Background(), c, r)
	if err != nil {
		t.Fatalf("search %+v: %v", r, err)
	}
	return resp
}

// logged is the experiment columns of a search's log row.
type logged struct {
	experimentID *int64
	arm, profile *string
}

func logRow(t *testing.T, pool *pgxpool.Pool, id int64) logged {
	t.Helper()
	var l logged
	err := pool.QueryRow(context.Background(), `SELECT experiment_id, arm, profile FROM search_log WHERE id = $1`, id).
		Scan(&l.experimentID, &l.arm, &l.profile)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func str(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

// TestBucketMatchesSQL: experiments.Bucket is toolgate_ab_bucket, bit for bit, so an
// operator can tell a unit's arm in advance.
func TestBucketMatchesSQL(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	var units []string
	for i := range 300 {
		units = append(units, fmt.Sprintf("session:%d", i), fmt.Sprintf("key:%d", i), fmt.Sprintf("caller:agent-%d", i))
	}
	units = append(units, "session:", "session:é ü ✓", "caller:")
	for _, exp := range []int64{1, 42, 9_000_000_000} {
		rows, err := pool.Query(context.Background(), `SELECT u, toolgate_ab_bucket($1, u) FROM unnest($2::text[]) AS u`, exp, units)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for rows.Next() {
			var u string
			var b float64
			if err := rows.Scan(&u, &b); err != nil {
				t.Fatal(err)
			}
			if got := experiments.Bucket(exp, u); got != b || b < 0 || b >= 1 {
				t.Errorf("experiment %d unit %q: Go %v, SQL %v", exp, u, got, b)
			}
			n++
		}
		if err := rows.Err(); err != nil || n != len(units) {
			t.Fatalf("%d rows, %v", n, err)
		}
	}
}

// TestUnitValueMatchesSQL: experiments.UnitValue is toolgate_ab_unit, which the Search
// statement hashes; a session is always its caller's.
func TestUnitValueMatchesSQL(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	for _, c := range []struct {
		unit    experiments.Unit
		session string
		key     int64
		caller  string
		want    string
	}{
		{experiments.UnitSession, "s-1", 7, "agent", "key:7/session:s-1"},
		{experiments.UnitSession, "s-1", 0, "open", "caller:open/session:s-1"},
		{experiments.UnitSession, "", 7, "agent", "key:7"},
		{experiments.UnitSession, "", 0, "open", "caller:open"},
		{experiments.UnitSession, "é ü", 0, "", "caller:/session:é ü"},
		{experiments.UnitKey, "s-1", 7, "agent", "key:7"},
		{experiments.UnitKey, "s-1", 0, "open", "caller:open"},
	} {
		var sql string
		err := pool.QueryRow(context.Background(), `SELECT toolgate_ab_unit($1, nullif($2, ''), nullif($3, 0::bigint), $4)`,
			string(c.unit), c.session, c.key, c.caller).Scan(&sql)
		if err != nil {
			t.Fatal(err)
		}
		if got := experiments.UnitValue(c.unit, c.session, c.key, c.caller); got != c.want || sql != c.want {
			t.Errorf("%+v: Go %q, SQL %q, want %q", c, got, sql, c.want)
		}
	}
}

// TestAssignmentStablePerSession: every search of a session is in the arm Bucket predicts,
// reads that arm's profile's vectors and is logged with it; over 400 sessions the
// candidate's share is near the configured one. Searches that name a profile or run no
// vector branch are in no experiment, and stopping the experiment ends the routing.
func TestAssignmentStablePerSession(t *testing.T) {
	t.Parallel()
	pool, s := setup(t)
	ctx := context.Background()
	e := start(t, pool, experiments.Definition{Name: "concat-vs-default", Candidate: "concat", Share: 0.3, Unit: experiments.UnitSession})
	if e.Control != "default" || !e.Running || e.Unit != experiments.UnitSession {
		t.Fatalf("started %+v, want control default (the active profile), running", e)
	}
	agent := auth.Caller{Name: "agent", KeyID: 7}
	query := "latest trading price of the stock"

	// The arms' results are the results of a search naming the arm's profile: the routed
	// search read that profile's vector set.
	want := map[string][]string{}
	for _, p := range []string{"default", "concat"} {
		r := find(t, s, agent, search.Request{Query: query, Mode: search.ModeVector, Profile: p, K: 5})
		for _, x := range r.Results {
			want[p] = append(want[p], fmt.Sprintf("%s %.12f", x.Name, x.Score))
		}
	}
	if fmt.Sprint(want["default"]) == fmt.Sprint(want["concat"]) {
		t.Fatalf("the two profiles rank alike (%v): the test could not tell the arms apart", want["default"])
	}

	const sessions = 400
	candidates := 0
	for i := range sessions {
		session := fmt.Sprintf("mcp-session-%03d", i)
		wantArm := experiments.ArmOf(e, experiments.UnitValue(e.Unit, session, agent.KeyID, agent.Name))
		searches := 1
		if i < 6 {
			searches = 4 // a few sessions search several times, in both modes that take part
		}
		for j := range searches {
			mode := search.ModeHybrid
			if j%2 == 1 || i < 6 {
				mode = search.ModeVector
			}
			r := find(t, s, agent, search.Request{Query: query, Mode: mode, K: 5, SessionID: session})
			if r.Experiment == nil || r.Experiment.ID != e.ID || r.Experiment.Arm != wantArm {
				t.Fatalf("session %s search %d: experiment %+v, want arm %s", session, j, r.Experiment, wantArm)
			}
			wantProfile := map[db.ExperimentArm]string{experiments.ArmControl: "default", experiments.ArmCandidate: "concat"}[wantArm]
			if r.Experiment.Profile != wantProfile {
				t.Fatalf("session %s: arm %+v, want profile %s", session, r.Experiment, wantProfile)
			}
			l := logRow(t, pool, r.SearchID)
			if l.experimentID == nil || *l.experimentID != e.ID || str(l.arm) != string(wantArm) || str(l.profile) != wantProfile {
				t.Fatalf("session %s: logged experiment %v arm %s profile %s, want %d %s %s",
					session, l.experimentID, str(l.arm), str(l.profile), e.ID, wantArm, wantProfile)
			}
			if mode == search.ModeVector {
				var got []string
				for _, x := range r.Results {
					got = append(got, fmt.Sprintf("%s %.12f", x.Name, x.Score))
				}
				if fmt.Sprint(got) != fmt.Sprint(want[wantProfile]) {
					t.Fatalf("session %s (%s): results %v, want %s's %v", session, wantArm, got, wantProfile, want[wantProfile])
				}
			}
		}
		if wantArm == experiments.ArmCandidate {
			candidates++
		}
	}
	// Binomial(400, 0.3): sd 0.023; the buckets are fixed by the experiment id and the
	// session names, so this is deterministic, and 4 sd wide.
	if share := float64(candidates) / sessions; math.Abs(share-0.3) > 4*math.Sqrt(0.3*0.7/sessions) {
		t.Errorf("candidate share %.3f over %d sessions, want about 0.3", share, sessions)
	}
	var logged, arms int
	if err := pool.QueryRow(ctx, `SELECT count(*), count(DISTINCT (session_id, arm)) FROM search_log WHERE experiment_id = $1`, e.ID).
		Scan(&logged, &arms); err != nil {
		t.Fatal(err)
	}
	if logged != sessions+6*3 || arms != sessions {
		t.Errorf("%d rows in %d (session, arm) pairs, want %d rows in %d: one arm per session", logged, arms, sessions+18, sessions)
	}

	// The report counts each session once, in its arm.
	rep, err := experiments.Get(ctx, pool, e.Name)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Arms[1].Units != int64(candidates) || rep.Arms[0].Units != int64(sessions-candidates) ||
		rep.Arms[0].Searches+rep.Arms[1].Searches != int64(sessions+18) {
		t.Errorf("arms %+v, want %d and %d sessions, %d searches", rep.Arms, sessions-candidates, candidates, sessions+18)
	}

	// Not in the experiment: a search naming its profile, a lexical search.
	for _, r := range []search.Request{
		{Query: query, Profile: "default", SessionID: "mcp-session-000"},
		{Query: query, Profile: "concat", SessionID: "mcp-session-000"},
		{Query: query, Mode: search.ModeLexical, SessionID: "mcp-session-000"},
	} {
		resp := find(t, s, agent, r)
		l := logRow(t, pool, resp.SearchID)
		if resp.Experiment != nil || l.experimentID != nil || l.arm != nil {
			t.Errorf("%+v: experiment %+v, logged %v %s: want none", r, resp.Experiment, l.experimentID, str(l.arm))
		}
		// the profile that served it: the named one, or the active one
		if want := cmp.Or(r.Profile, "default"); str(l.profile) != want {
			t.Errorf("%+v: logged profile %s, want %s", r, str(l.profile), want)
		}
	}

	// A hybrid search that runs no vector branch (no embedder here; a failed embedding
	// alike) reads no profile's vectors: it is in no arm.
	lexicalOnly := search.New(pool, nil, search.DefaultSettings(), slog.New(slog.DiscardHandler))
	resp := find(t, lexicalOnly, agent, search.Request{Query: query, SessionID: "mcp-session-000"})
	if l := logRow(t, pool, resp.SearchID); resp.Experiment != nil || l.arm != nil || str(l.profile) != "default" {
		t.Errorf("hybrid search without a query vector: experiment %+v, logged %s %s", resp.Experiment, str(l.arm), str(l.profile))
	}

	// Stopping ends the routing at once: the next search reads the active profile.
	var stopped experiments.Experiment
	stopped, err = experiments.Stop(ctx, pool, e.Name)
	if err != nil || stopped.Running || stopped.StoppedAt == nil {
		t.Fatalf("stop: %+v %v", stopped, err)
	}
	for i := range 20 {
		resp := find(t, s, agent, search.Request{Query: query, Mode: search.ModeVector, K: 5, SessionID: fmt.Sprintf("mcp-session-%03d", i)})
		l := logRow(t, pool, resp.SearchID)
		if resp.Experiment != nil || l.experimentID != nil || str(l.profile) != "default" {
			t.Fatalf("after stop: experiment %+v, logged %v %s", resp.Experiment, l.experimentID, str(l.profile))
		}
		var got []string
		for _, x := range resp.Results {
			got = append(got, fmt.Sprintf("%s %.12f", x.Name, x.Score))
		}
		if fmt.Sprint(got) != fmt.Sprint(want["default"]) {
			t.Fatalf("after stop: %v, want the active profile's %v", got, want["default"])
		}
	}
	again, err := experiments.Stop(ctx, pool, e.Name)
	if err != nil || !again.StoppedAt.Equal(*stopped.StoppedAt) {
		t.Fatalf("second stop: %+v %v, want the first stop unchanged", again, err)
	}
}

// TestAssignmentByKey: with unit key, every search of a key is in one arm whatever its
// session; a caller without a key is assigned by its name.
func TestAssignmentByKey(t *testing.T) {
	t.Parallel()
	pool, s := setup(t)
	e := start(t, pool, experiments.Definition{Name: "by-key", Candidate: "var-1", Control: "var-2", Share: 0.5, Unit: experiments.UnitKey})
	seen := map[db.ExperimentArm]bool{}
	for k := range 24 {
		c := auth.Caller{Name: fmt.Sprintf("agent-%d", k), KeyID: int64(k)} // key 0: no key
		wantArm := experiments.ArmOf(e, experiments.UnitValue(e.Unit, "any", c.KeyID, c.Name))
		seen[wantArm] = true
		for j := range 3 {
			r := find(t, s, c, search.Request{Query: "company news headlines", K: 3, SessionID: fmt.Sprintf("s-%d-%d", k, j)})
			if r.Experiment == nil || r.Experiment.Arm != wantArm {
				t.Fatalf("key %d session %d: %+v, want arm %s", k, j, r.Experiment, wantArm)
			}
		}
	}
	if !seen[experiments.ArmControl] || !seen[experiments.ArmCandidate] {
		t.Errorf("24 keys all in one arm: %v", seen)
	}
	if got := experiments.UnitValue(experiments.UnitKey, "s", 0, "open"); got != "caller:open" {
		t.Errorf("UnitValue without a key = %q", got)
	}
	if got := experiments.UnitValue(experiments.UnitSession, "", 3, "x"); got != "key:3" {
		t.Errorf("UnitValue of a search without a session = %q", got)
	}
}

// mean and the standard error of the mean (sample standard deviation / √n), by hand: what the
// clustered standard error is when every unit makes one search.
func meanSE(xs []float64) (mean float64, se float64, seOK bool) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	if len(xs) < 2 {
		return mean, 0, false
	}
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss/float64(len(xs)-1)) / math.Sqrt(float64(len(xs))), true
}

// clusteredSE is the ratio estimate m = Σ Y_u / Σ n_u over units and its cluster-robust
// standard error sqrt(k/(k−1) · Σ (Y_u − m·n_u)²) / Σ n_u, k the units with n_u > 0, by
// hand: each element of units is one unit's values of the metric (one per search, or per
// labelled search).
func clusteredSE(units [][]float64) (m float64, se float64, seOK bool) {
	var n, y float64
	k := 0
	for _, u := range units {
		if len(u) == 0 {
			continue
		}
		k++
		n += float64(len(u))
		for _, x := range u {
			y += x
		}
	}
	m = y / n
	if k < 2 {
		return m, 0, false
	}
	var ss float64
	for _, u := range units {
		var yu float64
		for _, x := range u {
			yu += x
		}
		ss += (yu - m*float64(len(u))) * (yu - m*float64(len(u)))
	}
	return m, math.Sqrt(float64(k)/float64(k-1)*ss) / n, true
}

func checkEstimate(t *testing.T, what string, got experiments.Estimate, mean, se float64) {
	t.Helper()
	const tol = 1e-9
	if got.Value == nil || got.SE == nil || got.CI95 == nil {
		t.Errorf("%s: %+v, want value %v se %v", what, got, mean, se)
		return
	}
	if math.Abs(*got.Value-mean) > tol || math.Abs(*got.SE-se) > tol ||
		math.Abs(got.CI95[0]-(mean-1.96*se)) > tol || math.Abs(got.CI95[1]-(mean+1.96*se)) > tol {
		t.Errorf("%s: value %v se %v ci %v, want %v %v [%v, %v]", what, *got.Value, *got.SE, *got.CI95, mean, se, mean-1.96*se, mean+1.96*se)
	}
}

// armValues is what a test labelled in one arm, per unit (session, in the order of their
// first search): for each search 1 (labelled) or 0, and 1/best rank or 0; for each labelled
// search its best rank.
type armValues struct {
	labelled, rr, ranks [][]float64
}

// metric is the per-unit values of one metric: label_rate, mrr_all, mrr_labelled or
// mean_rank.
func (v armValues) metric(name string) [][]float64 {
	rrl := make([][]float64, len(v.ranks)) // 1/best rank of the labelled searches
	for u, ranks := range v.ranks {
		rrl[u] = []float64{}
		for _, r := range ranks {
			rrl[u] = append(rrl[u], 1/r)
		}
	}
	return map[string][][]float64{"label_rate": v.labelled, "mrr_all": v.rr, "mrr_labelled": rrl, "mean_rank": v.ranks}[name]
}

// estimates is the report's estimate of each metric, by name.
func (a Arm) estimates() map[string]experiments.Estimate {
	return map[string]experiments.Estimate{"label_rate": a.LabelRate, "mrr_all": a.MRRAll, "mrr_labelled": a.MRRLabelled, "mean_rank": a.MeanRank}
}

// flat is every search's value of the metric, units ignored.
func flat(units [][]float64) []float64 {
	var xs []float64
	for _, u := range units {
		xs = append(xs, u...)
	}
	return xs
}

// Arm is a report's arm, with its metrics by name.
type Arm experiments.Arm

var metrics = []string{"label_rate", "mrr_all", "mrr_labelled", "mean_rank"}

// labelExperiment starts an experiment named name (candidate var-1, half of the sessions),
// makes searchesOf(i) searches in each session sess-<i> for i < sessions, and labels them
// through the production paths (feedback, and the gateway's call labels) in a pattern that
// varies with the session and the search; the sessions for which unlabelled(i) make no
// label at all. It returns the report and what it labelled, per arm and unit. A labelled
// search outside the experiment (a named profile) is made too: it must not count.
func labelExperiment(t *testing.T, pool *pgxpool.Pool, s *search.Service, name string, sessions int,
	searchesOf func(i int) int, unlabelled func(i int) bool) (experiments.Report, map[db.ExperimentArm]*armValues) {
	t.Helper()
	ctx := context.Background()
	e := start(t, pool, experiments.Definition{Name: name, Candidate: "var-1", Share: 0.5})
	agent := auth.Caller{Name: "agent"}

	rep, err := experiments.Get(ctx, pool, name)
	if err != nil || len(rep.Arms) != 2 || rep.Arms[0].Searches != 0 || rep.Arms[0].LabelRate.Value != nil || rep.Difference.MRRAll.Value != nil {
		t.Fatalf("report before any search: %+v %v", rep, err)
	}

	yes := true
	queries := []string{"latest trading price of the stock", "company news headlines", "dividend history", "earnings report"}
	got := map[db.ExperimentArm]*armValues{experiments.ArmControl: {}, experiments.ArmCandidate: {}}
	g := 0 // searches made
	for i := range sessions {
		session := fmt.Sprintf("sess-%02d", i)
		var unit struct{ labelled, rr, ranks []float64 }
		var arm db.ExperimentArm
		for j := range searchesOf(i) {
			// a find_tools of the session: a call labels only those
			r := find(t, s, agent, search.Request{Query: queries[g%len(queries)], K: 5, SessionID: session, Endpoint: search.EndpointFindTools})
			if r.Experiment == nil || len(r.Results) < 4 {
				t.Fatalf("session %d search %d: experiment %+v, %d results", i, j, r.Experiment, len(r.Results))
			}
			if j > 0 && r.Experiment.Arm != arm {
				t.Fatalf("session %d: search %d in arm %s, the first in %s", i, j, r.Experiment.Arm, arm)
			}
			arm = r.Experiment.Arm
			best := 0 // best-ranked label, 0: none
			label := func(pos int, call bool) {
				tool := r.Results[pos-1].Name
				if call {
					// labels the session's most recent search that returned the tool: this one
					now, err := db.New(pool).DatabaseNow(ctx)
					if err != nil {
						t.Fatal(err)
					}
					if _, err := db.New(pool).RecordCallLabel(ctx, db.RecordCallLabelParams{ToolName: tool, ToolSource: "fin", Success: true,
						SessionID: session, Caller: agent.Name, StartedAt: now,
						LabelWindow: pgtype.Interval{Microseconds: time.Hour.Microseconds(), Valid: true}}); err != nil {
						t.Fatalf("call label: %v", err)
					}
				} else if _, err := s.RecordFeedback(ctx, agent, r.SearchID, []search.Feedback{{Name: tool, Success: &yes}}); err != nil {
					t.Fatalf("feedback: %v", err)
				}
				if best == 0 || pos < best {
					best = pos
				}
			}
			if !unlabelled(i) {
				switch (i + j) % 4 {
				case 1:
					label(1+g%5%len(r.Results), false)
				case 2:
					label(1+(g/4)%3, true)
				case 3: // two labels: the best-ranked counts
					label(4, false)
					label(2, true)
					label(2, false) // the same tool from both sources
				}
			}
			if best == 0 {
				unit.labelled = append(unit.labelled, 0)
				unit.rr = append(unit.rr, 0)
			} else {
				unit.labelled = append(unit.labelled, 1)
				unit.rr = append(unit.rr, 1/float64(best))
				unit.ranks = append(unit.ranks, float64(best))
			}
			g++
		}
		v := got[arm]
		v.labelled, v.rr, v.ranks = append(v.labelled, unit.labelled), append(v.rr, unit.rr), append(v.ranks, unit.ranks)
	}
	out := find(t, s, agent, search.Request{Query: queries[0], K: 5, Profile: "var-1", SessionID: "sess-00"})
	if _, err := s.RecordFeedback(ctx, agent, out.SearchID, []search.Feedback{{Name: out.Results[0].Name, Success: &yes}}); err != nil {
		t.Fatal(err)
	}

	rep, err = experiments.Get(ctx, pool, name)
	if err != nil {
		t.Fatal(err)
	}
	if rep.ID != e.ID || len(rep.Arms) != 2 || rep.Arms[0].Arm != experiments.ArmControl || rep.Arms[1].Arm != experiments.ArmCandidate ||
		rep.Arms[0].Profile != "default" || rep.Arms[1].Profile != "var-1" {
		t.Fatalf("report: %+v", rep)
	}
	for _, a := range rep.Arms {
		v := got[a.Arm]
		units, n, nl := len(v.labelled), len(flat(v.labelled)), len(flat(v.ranks))
		if a.Units != int64(units) || a.Searches != int64(n) || a.Labelled != int64(nl) {
			t.Errorf("arm %s: %d units, %d searches, %d labelled, want %d, %d, %d", a.Arm, a.Units, a.Searches, a.Labelled, units, n, nl)
		}
	}
	return rep, got
}

// checkReport checks every number of the report against the clustered computation by hand
// from what was labelled; it returns the hand standard errors per arm and metric.
func checkReport(t *testing.T, rep experiments.Report, got map[db.ExperimentArm]*armValues) map[db.ExperimentArm]map[string]float64 {
	t.Helper()
	type est struct{ mean, se float64 }
	hand := map[db.ExperimentArm]map[string]est{}
	ses := map[db.ExperimentArm]map[string]float64{}
	for _, a := range rep.Arms {
		hand[a.Arm], ses[a.Arm] = map[string]est{}, map[string]float64{}
		for _, metric := range metrics {
			m, se, ok := clusteredSE(got[a.Arm].metric(metric))
			if !ok {
				t.Fatalf("arm %s %s: fewer than two units: too few for the test", a.Arm, metric)
			}
			hand[a.Arm][metric], ses[a.Arm][metric] = est{m, se}, se
		}
		for metric, est := range Arm(a).estimates() {
			checkEstimate(t, string(a.Arm)+" "+metric, est, hand[a.Arm][metric].mean, hand[a.Arm][metric].se)
		}
	}
	d := rep.Difference
	for metric, d := range map[string]experiments.Estimate{"label_rate": d.LabelRate, "mrr_all": d.MRRAll, "mrr_labelled": d.MRRLabelled, "mean_rank": d.MeanRank} {
		c, k := hand[experiments.ArmCandidate][metric], hand[experiments.ArmControl][metric]
		checkEstimate(t, "difference "+metric, d, c.mean-k.mean, math.Sqrt(c.se*c.se+k.se*k.se))
	}
	return ses
}

// TestComparisonMatchesHandComputation: units (sessions) make several searches each, from
// one to four, and some units label none of theirs; the searches are labelled through the
// production paths. The report's label rate, MRR and mean rank per arm, their standard
// errors clustered by unit and intervals, and the candidate − control differences equal a
// computation by hand from the labels the test made. Labels of searches outside the
// experiment do not count.
func TestComparisonMatchesHandComputation(t *testing.T) {
	t.Parallel()
	pool, s := setup(t)
	rep, got := labelExperiment(t, pool, s, "hand", 32,
		func(i int) int { return 1 + i*7%4 }, // 1, 4, 3, 2, 1, 4, ...
		func(i int) bool { return i%6 == 5 }) // a few units label nothing
	for _, a := range rep.Arms {
		v := got[a.Arm]
		several, unlabelled := 0, 0
		for u := range v.labelled {
			if len(v.labelled[u]) > 1 {
				several++
			}
			if len(v.ranks[u]) == 0 {
				unlabelled++
			}
		}
		if several < 2 || len(flat(v.ranks)) < 4 {
			t.Fatalf("arm %s: %d units with several searches, %d labelled searches: too few for the test", a.Arm, several, len(flat(v.ranks)))
		}
		t.Logf("arm %s: %d units (%d with several searches, %d without a label), %d searches",
			a.Arm, len(v.labelled), several, unlabelled, len(flat(v.labelled)))
	}
	ses := checkReport(t, rep, got)
	// The clustered standard errors are not the per-search ones: the test tells them apart.
	differ := false
	for arm, v := range got {
		for _, metric := range metrics {
			if _, naive, _ := meanSE(flat(v.metric(metric))); math.Abs(naive-ses[arm][metric]) > 1e-6 {
				differ = true
			}
		}
	}
	if !differ {
		t.Error("every clustered standard error equals sd/√n over searches: the test cannot tell them apart")
	}
}

// TestComparisonOneSearchPerUnit: when every unit makes one search, the clustered standard
// error is the sample standard deviation over searches / √n, and so is the report's.
func TestComparisonOneSearchPerUnit(t *testing.T) {
	t.Parallel()
	pool, s := setup(t)
	rep, got := labelExperiment(t, pool, s, "one-each", 48,
		func(int) int { return 1 }, func(int) bool { return false })
	ses := checkReport(t, rep, got)
	for _, a := range rep.Arms {
		v := got[a.Arm]
		if a.Units != a.Searches {
			t.Errorf("arm %s: %d units, %d searches, want one search per unit", a.Arm, a.Units, a.Searches)
		}
		for _, metric := range metrics {
			m, naive, ok := meanSE(flat(v.metric(metric)))
			if !ok || math.Abs(naive-ses[a.Arm][metric]) > 1e-12 {
				t.Errorf("arm %s %s: clustered se %v, sd/√n %v (ok %v)", a.Arm, metric, ses[a.Arm][metric], naive, ok)
			}
			checkEstimate(t, string(a.Arm)+" "+metric+" as sd/√n", Arm(a).estimates()[metric], m, naive)
		}
	}
}

// TestStartValidation: the definition's errors, typed, and one running experiment at a time.
func TestStartValidation(t *testing.T) {
	t.Parallel()
	pool, _ := setup(t)
	ctx := context.Background()
	for _, c := range []struct {
		d    experiments.Definition
		want error // a category
		code string
	}{
		{experiments.Definition{Name: "Bad Name", Candidate: "var-1", Share: 0.5}, derrors.Invalid, "invalid_experiment"},
		{experiments.Definition{Name: "x", Share: 0.5}, derrors.Invalid, "invalid_experiment"},
		{experiments.Definition{Name: "x", Candidate: "var-1", Share: 0}, derrors.Invalid, "invalid_experiment"},
		{experiments.Definition{Name: "x", Candidate: "var-1", Share: 1}, derrors.Invalid, "invalid_experiment"},
		{experiments.Definition{Name: "x", Candidate: "var-1", Share: math.NaN()}, derrors.Invalid, "invalid_experiment"},
		{experiments.Definition{Name: "x", Candidate: "var-1", Share: 0.5, Unit: "request"}, derrors.Invalid, "invalid_experiment"},
		{experiments.Definition{Name: "x", Candidate: "default", Share: 0.5}, derrors.Invalid, "invalid_experiment"},
		{experiments.Definition{Name: "x", Candidate: "var-1", Control: "var-1", Share: 0.5}, derrors.Invalid, "invalid_experiment"},
		{experiments.Definition{Name: "x", Candidate: "nope", Share: 0.5}, derrors.NotFound, "not_found"},
		{experiments.Definition{Name: "x", Candidate: "var-1", Control: "nope", Share: 0.5}, derrors.NotFound, "not_found"},
	} {
		_, err := experiments.Start(ctx, pool, c.d)
		a, _ := derrors.Classify(err)
		if !errors.Is(err, c.want) || a.Code != c.code {
			t.Errorf("%+v: %v (%s), want %v %s", c.d, err, a.Code, c.want, c.code)
		}
	}

	// A profile without vectors, in a catalog with embedded tools.
	testfactory.Weights(ctx, t, pool, "fresh", map[string]float64{"name": 1})
	var nb *profiles.NotBuiltError
	if _, err := experiments.Start(ctx, pool, experiments.Definition{Name: "x", Candidate: "fresh", Share: 0.5}); !errors.As(err, &nb) {
		t.Errorf("unbuilt candidate: %v", err)
	}

	first := start(t, pool, experiments.Definition{Name: "first", Candidate: "var-1", Share: 0.2})
	var running *experiments.RunningError
	if _, err := experiments.Start(ctx, pool, experiments.Definition{Name: "second", Candidate: "var-2", Share: 0.2}); !errors.As(err, &running) || running.Name != "first" {
		t.Errorf("second running experiment: %v", err)
	}
	// The arms' profiles cannot be deleted while it runs.
	var inExp *profiles.InExperimentError
	if err := profiles.Delete(ctx, pool, "var-1"); !errors.As(err, &inExp) || inExp.Experiment != "first" {
		t.Errorf("delete the candidate of a running experiment: %v", err)
	}
	if _, err := experiments.Stop(ctx, pool, "first"); err != nil {
		t.Fatal(err)
	}
	var exists *experiments.ExistsError
	if _, err := experiments.Start(ctx, pool, experiments.Definition{Name: "first", Candidate: "var-2", Share: 0.2}); !errors.As(err, &exists) {
		t.Errorf("a stopped experiment's name: %v", err)
	}
	// Once stopped, the profile can go; the report keeps its name.
	if err := profiles.Delete(ctx, pool, "var-1"); err != nil {
		t.Fatalf("delete after stop: %v", err)
	}
	rep, err := experiments.Get(ctx, pool, "first")
	if err != nil || rep.Candidate != "var-1" || rep.Arms[1].Profile != "var-1" || rep.ID != first.ID {
		t.Fatalf("report after the profile's deletion: %+v %v", rep, err)
	}
	var nf *experiments.NotFoundError
	if _, err := experiments.Get(ctx, pool, "nope"); !errors.As(err, &nf) {
		t.Errorf("get unknown: %v", err)
	}
	if _, err := experiments.Stop(ctx, pool, "nope"); !errors.As(err, &nf) {
		t.Errorf("stop unknown: %v", err)
	}
	list, err := experiments.List(ctx, pool)
	if err != nil || len(list) != 1 || list[0].Name != "first" || list[0].Running {
		t.Errorf("list: %+v %v", list, err)
	}
}

// TestComparisonOneUnit: however many searches one unit makes, it is one observation: its
// arm has its metrics but no standard error or interval, and neither has the difference.
func TestComparisonOneUnit(t *testing.T) {
	t.Parallel()
	pool, s := setup(t)
	ctx := context.Background()
	e := start(t, pool, experiments.Definition{Name: "one-key", Candidate: "var-1", Share: 0.5, Unit: experiments.UnitKey})
	agent := auth.Caller{Name: "agent", KeyID: 3}
	arm := experiments.ArmOf(e, experiments.UnitValue(e.Unit, "", agent.KeyID, agent.Name))
	yes := true
	for i := range 5 {
		r := find(t, s, agent, search.Request{Query: "company news headlines", K: 5, SessionID: fmt.Sprintf("s-%d", i)})
		if i%2 == 0 {
			if _, err := s.RecordFeedback(ctx, agent, r.SearchID, []search.Feedback{{Name: r.Results[i%3].Name, Success: &yes}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	rep, err := experiments.Get(ctx, pool, e.Name)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range rep.Arms {
		if a.Arm != arm {
			if a.Units != 0 || a.Searches != 0 || a.LabelRate.Value != nil || a.MeanRank.Value != nil {
				t.Errorf("arm %s without searches: %+v", a.Arm, a)
			}
			continue
		}
		if a.Units != 1 || a.Searches != 5 || a.Labelled != 3 {
			t.Errorf("arm %s: %d units, %d searches, %d labelled, want 1, 5, 3", a.Arm, a.Units, a.Searches, a.Labelled)
		}
		for name, est := range Arm(a).estimates() {
			if est.Value == nil || est.SE != nil || est.CI95 != nil {
				t.Errorf("arm %s %s from one unit: %+v, want a value and no se or interval", a.Arm, name, est)
			}
		}
		if v := *a.LabelRate.Value; math.Abs(v-0.6) > 1e-12 {
			t.Errorf("arm %s label rate %v, want 0.6", a.Arm, v)
		}
	}
	if d := rep.Difference; d.LabelRate.Value != nil || d.LabelRate.SE != nil || d.MRRAll.SE != nil || d.MRRLabelled.SE != nil || d.MeanRank.SE != nil {
		t.Errorf("difference with an empty arm: %+v", d)
	}
}

// TestArmsFuseWithTheirProfilesWeights: a search routed to an arm fuses with that arm's
// profile's own fusion weights (a tuned profile's), and the control with the settings'.
func TestArmsFuseWithTheirProfilesWeights(t *testing.T) {
	t.Parallel()
	pool, s := setup(t)
	ctx := context.Background()
	if _, err := pool.Exec(ctx, `UPDATE weight_profiles SET weight_lexical = 4, weight_vector = 0.5 WHERE name = 'concat'`); err != nil {
		t.Fatal(err)
	}
	e := start(t, pool, experiments.Definition{Name: "fused-arms", Candidate: "concat", Share: 0.5, Unit: experiments.UnitSession})
	agent := auth.Caller{Name: "agent", KeyID: 7}
	st := search.DefaultSettings()
	seen := map[db.ExperimentArm]bool{}
	for i := 0; i < 40 && len(seen) < 2; i++ {
		session := fmt.Sprintf("s-%02d", i)
		r := find(t, s, agent, search.Request{Query: "latest trading price of the stock", Mode: search.ModeHybrid, K: 5, SessionID: session, Explain: true})
		if r.Experiment == nil || r.Experiment.ID != e.ID {
			t.Fatalf("session %s: experiment %+v", session, r.Experiment)
		}
		// the memory branch's weight is the settings' in both arms: profiles have none
		want := search.BranchWeights{Lexical: st.WeightLexical, Vector: st.WeightVector, Memory: st.WeightMemory}
		if r.Experiment.Arm == experiments.ArmCandidate {
			want = search.BranchWeights{Lexical: 4, Vector: 0.5, Memory: st.WeightMemory}
		}
		if r.Explain.Weights != want {
			t.Errorf("session %s (%s): fused with %+v, want %+v", session, r.Experiment.Arm, r.Explain.Weights, want)
		}
		seen[r.Experiment.Arm] = true
	}
	if len(seen) != 2 {
		t.Fatalf("40 sessions reached only the arms %v", seen)
	}
}
