package tune

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/toolgate/toolgate/internal/embed"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/search"
	"github.com/toolgate/toolgate/internal/tdwa"
)

// TestScoreIsCosineOfCombinedVector: scoring a weighting from the Gram matrix and the
// per-kind dot products gives the cosine of the query and the vector tdwa.Combine builds,
// for TDWA weights (with kinds a tool lacks and several questions), mean and concat.
func TestScoreIsCosineOfCombinedVector(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 7))
	const dims = 16
	unit := func() []float32 {
		v := make([]float64, dims)
		for i := range v {
			v[i] = rng.NormFloat64()
		}
		return embed.Normalize64(v)
	}
	q := unit()
	for trial := range 50 {
		var comps []tdwa.Component
		for _, k := range tdwa.Kinds {
			if rng.IntN(3) == 0 {
				continue // the tool lacks this kind
			}
			n := 1
			if k == tdwa.KindQuestion {
				n = 1 + rng.IntN(4)
			}
			for o := range n {
				comps = append(comps, tdwa.Component{Kind: k, Ordinal: o, Vector: unit()})
			}
		}
		comps = append(comps, tdwa.Component{Kind: tdwa.KindConcat, Vector: unit()})
		kinds := make([][]float64, nKinds+1)
		counts := make([]int, nKinds+1)
		for _, c := range comps {
			k, _ := kindIndex(c.Kind)
			if kinds[k] == nil {
				kinds[k] = make([]float64, dims)
			}
			for i, x := range c.Vector {
				kinds[k][i] += float64(x)
			}
			counts[k]++
		}
		for k, v := range kinds {
			for i := range v {
				v[i] /= float64(counts[k])
			}
		}
		tl := newTool(1, kinds)
		dots := make([]float64, nKinds+1)
		for k, v := range kinds {
			if v != nil {
				dots[k] = dot(q, v)
			}
		}
		c := candidate{dots: dots}

		weights := map[string]float64{}
		for _, k := range tdwa.Kinds {
			weights[k] = rng.Float64()
		}
		weights[tdwa.Kinds[0]] += 0.01 // at least one positive
		for _, p := range []tdwa.Profile{
			{Strategy: tdwa.StrategyTDWA, Weights: weights},
			{Strategy: tdwa.StrategyMean},
			{Strategy: tdwa.StrategyConcat},
		} {
			want, err := tdwa.Combine(comps, p)
			wt := weightsOf(p, 1.5, 1)
			got, ok := score(c, &tl, wt, tl.norm(wt))
			if err != nil {
				if ok {
					t.Fatalf("trial %d %s: Combine fails (%v) but score gives %v", trial, p.Strategy, err, got)
				}
				continue
			}
			cos := 0.0
			for i := range q {
				cos += float64(q[i]) * float64(want[i])
			}
			if !ok || math.Abs(got-cos) > 1e-5 {
				t.Fatalf("trial %d %s: score %v (ok %v), cosine of the combined vector %v", trial, p.Strategy, got, ok, cos)
			}
		}
	}
}

// TestReciprocalRanksCountTiesAgainst: in a vector-only fused ranking (no lexical
// candidate), a labelled tool tied with another ranks after it, and a labelled tool with no
// vector under the weighting scores 0.
func TestReciprocalRanksCountTiesAgainst(t *testing.T) {
	t.Parallel()
	has := func(k int) []bool { h := make([]bool, nKinds); h[k] = true; return h }
	gram := func(k int) []float64 { g := make([]float64, nKinds*nKinds); g[k*nKinds+k] = 1; return g }
	dots := func(k int, x float64) []float64 { d := make([]float64, nKinds+1); d[k] = x; return d }
	m := &model{
		tools: []tool{
			{id: 10, has: has(0), gram: gram(0)},
			{id: 11, has: has(0), gram: gram(0)},
			{id: 12, has: has(1), gram: gram(1)},
		},
		queries: []query{
			{positives: map[int64]bool{11: true}, pool: []candidate{{0, dots(0, 0.5)}, {1, dots(0, 0.5)}, {2, dots(1, 0.9)}}},
			{positives: map[int64]bool{12: true}, pool: []candidate{{0, dots(0, 0.5)}, {2, dots(1, 0.9)}}},
		},
		fusion: fusionConfig{method: search.FusionMinMax, cand: 20},
		fuser:  testFuser(t),
	}
	m.prepare()
	w := make([]float64, nKinds)
	w[0] = 1
	rr := m.reciprocalRanks(weighting{w: w, wl: 1.5, wv: 1}, []int{0, 1})
	if rr[0] != 0.5 || rr[1] != 0 {
		t.Errorf("name-only weighting: reciprocal ranks %v, want [0.5 0] (tie counted against; tool 12 has no vector)", rr)
	}
	w[1] = 1
	rr = m.reciprocalRanks(weighting{w: w, wl: 1.5, wv: 1}, []int{0, 1})
	if rr[0] != 1.0/3 || rr[1] != 1 {
		t.Errorf("two kinds: reciprocal ranks %v, want [1/3 1]", rr)
	}
}

// threeTools is the model of the fused-rank tests: tools 10, 11 and 12 of one component
// kind, whose vectors have similarities sims to the query's, and the query's lexical list,
// 10 (BM25 10) and 12 (BM25 2).
func threeTools(t *testing.T, fusion fusionConfig, sims [3]float64) (*model, query) {
	has := make([]bool, nKinds)
	has[0] = true
	gram := make([]float64, nKinds*nKinds)
	gram[0] = 1
	dots := func(x float64) []float64 { d := make([]float64, nKinds+1); d[0] = x; return d }
	m := &model{
		tools:  []tool{{id: 10, has: has, gram: gram}, {id: 11, has: has, gram: gram}, {id: 12, has: has, gram: gram}},
		fusion: fusion,
		fuser:  testFuser(t),
	}
	q := query{pool: []candidate{{0, dots(sims[0])}, {1, dots(sims[1])}, {2, dots(sims[2])}},
		lexical: []lexScore{{10, 10}, {12, 2}}}
	return m, q
}

// fusedRR is the reciprocal rank of q's labelled tool in the fused ranking, the one kind
// weighing 1 and the branches wl and 1.
func (m *model) fusedRR(q query, wl float64) float64 {
	m.queries = []query{q}
	m.prepare()
	w := make([]float64, nKinds)
	w[0] = 1
	return m.reciprocalRanks(weighting{w: w, wl: wl, wv: 1}, []int{0})[0]
}

// TestFusedRankFollowsTheStatement: the fused ranking of the model is min-max fusion with
// its floor, as toolgate_fuse (the statement's) computes it. A tool first lexically (BM25 10 of a list 10,
// 2) but last by vector similarity (0.1 of 0.9, 0.5, 0.1) scores wl + wv/3; the vector
// first, lexically absent, wv; the lexical second (BM25 2, similarity 0.5) wl/2 + wv·2/3.
// With wl 1.5 (and wv 1) they rank lexical first, second, vector first; with wl 0.5 vector
// first, lexical second, lexical first.
func TestFusedRankFollowsTheStatement(t *testing.T) {
	t.Parallel()
	m, q := threeTools(t, fusionConfig{method: search.FusionMinMax, cand: 20}, [3]float64{0.1, 0.9, 0.5})
	for _, c := range []struct {
		wl       float64
		positive int64
		want     float64
	}{{1.5, 10, 1}, {1.5, 11, 1.0 / 3}, {0.5, 11, 1}, {0.5, 10, 1.0 / 3}} {
		q.positives = map[int64]bool{c.positive: true}
		if rr := m.fusedRR(q, c.wl); rr != c.want {
			t.Errorf("wl %v: tool %d reciprocal rank %v, want %v", c.wl, c.positive, rr, c.want)
		}
	}
}

// TestFusedRankScalesAnUnsureVectorBranch: with a vector confidence τ the model weighs the
// vector list as the statement does, w_vec · min(1, best similarity / τ). The lists of
// TestFusedRankFollowsTheStatement at half the similarities (best 0.45) and wl 0.5: without
// τ the vector first leads (1 against the lexical first's 0.5 + 1/3), with τ 0.9 the vector
// list weighs half and the lexical first leads (0.5 + 1/6 against 0.5 and 0.25 + 1/3).
func TestFusedRankScalesAnUnsureVectorBranch(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		tau  float64
		want float64
	}{{0, 1.0 / 3}, {0.9, 1}} {
		m, q := threeTools(t, fusionConfig{method: search.FusionMinMax, cand: 20, confidence: c.tau}, [3]float64{0.05, 0.45, 0.25})
		q.positives = map[int64]bool{10: true}
		if rr := m.fusedRR(q, 0.5); rr != c.want {
			t.Errorf("τ %v: the lexical first's reciprocal rank %v, want %v", c.tau, rr, c.want)
		}
	}
}

// TestFusedRankAddsTheMeaningBranch: TestFusedRankScalesAnUnsureVectorBranch's query
// without τ, the lexical first fused third (0.5 + 1/3 against 1 and 0.25 + 2/3). The
// meaning branch re-scores the three candidates of the two lists (meaning cosines 0.9, 0.1,
// 0.1: min-max shares 1, 1/3, 1/3); at weight 0.3 that puts the lexical first first (1.133
// against 1.1 and 1.017), at 0.1 not (0.933 against 1.033 and 0.95).
func TestFusedRankAddsTheMeaningBranch(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		weight float64
		want   float64
	}{{0, 1.0 / 3}, {0.1, 1.0 / 3}, {0.3, 1}} {
		m, q := threeTools(t, fusionConfig{method: search.FusionMinMax, cand: 20, meaning: c.weight}, [3]float64{0.05, 0.45, 0.25})
		q.positives = map[int64]bool{10: true}
		q.meaning = map[int64]float64{10: 0.9, 11: 0.1, 12: 0.1}
		if rr := m.fusedRR(q, 0.5); math.Abs(rr-c.want) > 1e-12 {
			t.Errorf("meaning weight %v: the lexical first's reciprocal rank %v, want %v", c.weight, rr, c.want)
		}
	}
}

// TestPairedGain: the bootstrap interval brackets the mean, a constant improvement is
// "better" with a zero-width interval, and no difference is inconclusive.
func TestPairedGain(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	base := []float64{0.5, 0.25, 1, 0, 0.2}
	up := []float64{1, 0.5, 1, 0.1, 0.7}
	g := pairedGain(up, base, rng)
	if math.Abs(g.Mean-0.27) > 1e-12 || g.CI95[0] > g.Mean || g.CI95[1] < g.Mean || g.Verdict != "better" {
		t.Errorf("improvement: %+v", g)
	}
	g = pairedGain(base, base, rng)
	if g.Mean != 0 || g.CI95 != [2]float64{0, 0} || g.Verdict != "inconclusive" {
		t.Errorf("no difference: %+v", g)
	}
	mixed := []float64{1, 0, 1, 0, 0.2}
	if g := pairedGain(mixed, base, rng); g.Verdict != "inconclusive" || g.CI95[0] >= 0 || g.CI95[1] <= 0 {
		t.Errorf("mixed: %+v", g)
	}
}

// TestRounded: weights are rounded to three decimals, tiny ones dropped, summing to 1.
func TestRounded(t *testing.T) {
	t.Parallel()
	w := make([]float64, nKinds)
	w[0], w[1], w[2] = 0.6666666, 0.3303, 0.003
	r := rounded(w)
	if r[0] != 0.669 || r[1] != 0.331 || r[2] != 0 {
		t.Errorf("rounded %v", r)
	}
}

// testFuser fuses in a fresh test database (toolgate_fuse reads no table).
func testFuser(t *testing.T) *fuser {
	t.Helper()
	return &fuser{ctx: context.Background(), pool: pgtest.NewPool(t)}
}
