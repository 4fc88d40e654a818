package tune

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
)

// Weight search over the simplex of the kinds the catalog has and the lexical fusion weight
// (the vector one stays the baseline's: only their ratio orders a ranking): random starting
// points (Dirichlet(1), uniform on the simplex, with a lexical weight log-uniform between a
// quarter and four times the vector weight) plus every stored TDWA profile (with the
// baseline's fusion weights), then coordinate search from the best few: each kind's weight
// is set to 0, halved, doubled, or raised by a tenth of the total, the lexical weight halved,
// cut by a quarter, raised by a third or doubled, and a change is kept when it raises the
// training MRR of the fused ranking. Cheap, since a weighting is scored from the model
// without touching a vector, and deterministic for a seed.

const (
	randomStarts = 150 // random weightings tried first
	refineStarts = 3   // best starting points refined by coordinate search
	refineRounds = 12  // coordinate search passes at most
	// minImprovement is the least training-MRR gain a coordinate step must bring: below
	// it, a step only fits noise.
	minImprovement = 1e-4
)

// optimize returns the weighting with the best MRR on the training searches, starting from
// starts and random points, and how many weightings it scored; tick is called for each.
func (m *model) optimize(train []int, base weighting, starts []weighting, rng *rand.Rand, tick func()) (weighting, float64, int) {
	evals := 0
	mrr := func(wt weighting) float64 {
		evals++
		tick()
		return mean(m.reciprocalRanks(wt, train))
	}
	kinds := m.presentKinds()
	type point struct {
		wt  weighting
		mrr float64
	}
	var tried []point
	for _, s := range starts {
		if s.concat {
			continue
		}
		w := normalized(s.w, kinds)
		if w == nil {
			continue
		}
		wt := weighting{w: w, wl: s.wl, wv: s.wv}
		tried = append(tried, point{wt, mrr(wt)})
	}
	for range randomStarts {
		w := make([]float64, nKinds)
		for _, k := range kinds {
			w[k] = rng.ExpFloat64() // normalized exponentials are Dirichlet(1)
		}
		ratio := math.Exp((rng.Float64()*2 - 1) * math.Log(4))
		if w = normalized(w, kinds); w != nil {
			wt := weighting{w: w, wl: clampLexical(base.wv*ratio, base.wv), wv: base.wv}
			tried = append(tried, point{wt, mrr(wt)})
		}
	}
	if len(tried) == 0 {
		return weighting{}, 0, evals // no tool has a weightable kind: nothing to search
	}
	// best first; equal MRR keeps the earlier (the stored profiles come first)
	sort.SliceStable(tried, func(i, j int) bool { return tried[i].mrr > tried[j].mrr })
	best := tried[0]
	for _, s := range tried[:min(refineStarts, len(tried))] {
		wt, score := s.wt, s.mrr
		for range refineRounds {
			improved := false
			for _, k := range kinds {
				total := 0.0
				for _, x := range wt.w {
					total += x
				}
				for _, x := range []float64{0, wt.w[k] / 2, wt.w[k] * 2, wt.w[k] + total/10} {
					next := slices.Clone(wt.w)
					next[k] = x
					next = normalized(next, kinds)
					if next == nil {
						continue
					}
					if s := mrr(weighting{w: next, wl: wt.wl, wv: wt.wv}); s > score+minImprovement {
						wt.w, score, improved = next, s, true
					}
				}
			}
			for _, f := range []float64{0.5, 0.75, 4.0 / 3, 2} {
				next := weighting{w: wt.w, wl: clampLexical(wt.wl*f, wt.wv), wv: wt.wv}
				if next.wl == wt.wl {
					continue
				}
				if s := mrr(next); s > score+minImprovement {
					wt, score, improved = next, s, true
				}
			}
			if !improved {
				break
			}
		}
		if score > best.mrr {
			best = point{wt, score}
		}
	}
	return best.wt, best.mrr, evals
}

// clampLexical keeps a lexical fusion weight within what a profile may store (0 to 100) and
// above a hundredth of the vector weight (below it the lexical branch is off in all but name).
func clampLexical(wl, wv float64) float64 {
	return math.Round(min(max(wl, wv/100), 100)*1000) / 1000
}

// shrinkGrid are the shares of the way from the baseline to the searched weights that
// cross-validation chooses among (0: keep the baseline's weights).
var shrinkGrid = []float64{0, 0.25, 0.5, 0.75, 1}

// fit searches the weights on train (optimize) and shrinks them toward the baseline's by
// the share λ of shrinkGrid that two-fold cross-validation on train scores best (weights
// searched on one half, scored on the other; a tie keeps the smaller λ). Searched weights
// fit their training searches better than they generalize; shrinking toward the baseline
// trades that back, and λ = 0 says the labels found nothing better than the baseline.
// A concat baseline has no weights to shrink toward: λ is then 1. With no weightable kind
// in the catalog there is nothing to search: the baseline, λ 0.
//
// onEval, when not nil, is called after each weighting scored with the count so far and
// fitBudget, the most there can be (the coordinate searches usually stop well before it).
func (m *model) fit(train []int, base weighting, starts []weighting, rng *rand.Rand, onEval func(done, budget int)) (weighting, float64, int) {
	kinds := m.presentKinds()
	if len(kinds) == 0 {
		return base, 0, 0
	}
	budget, done := fitBudget(len(starts), len(kinds)), 0
	tick := func() {
		done++
		if onEval != nil {
			onEval(done, budget)
		}
	}
	best, _, evals := m.optimize(train, base, starts, rng, tick)
	var b []float64
	if !base.concat {
		b = normalized(base.w, kinds)
	}
	if b == nil {
		return best, 1, evals
	}
	bw := weighting{w: b, wl: base.wl, wv: base.wv}
	folds := [2][]int{}
	for i, j := range rng.Perm(len(train)) {
		folds[i%2] = append(folds[i%2], train[j])
	}
	totals := make([]float64, len(shrinkGrid))
	for f := range folds {
		w, _, n := m.optimize(folds[1-f], base, starts, rng, tick)
		evals += n
		for g, lambda := range shrinkGrid {
			for _, rr := range m.reciprocalRanks(mix(bw, w, lambda), folds[f]) {
				totals[g] += rr
			}
			evals++
			tick()
		}
	}
	g := 0
	for i := range totals {
		if totals[i] > totals[g]+1e-9 {
			g = i
		}
	}
	return mix(bw, best, shrinkGrid[g]), shrinkGrid[g], evals
}

// fitBudget is the most weightings fit scores with starts stored profiles over kinds
// kinds: three searches (the training searches, then each fold's), each of the starts, the
// random points and at most refineStarts coordinate searches of refineRounds passes of four
// steps per kind and four of the lexical weight, and the shrink grid scored on both folds.
func fitBudget(starts, kinds int) int {
	one := starts + randomStarts + refineStarts*refineRounds*(kinds+1)*4
	return 3*one + 2*len(shrinkGrid)
}

// mix is (1-λ)·b + λ·w for the TDWA weights and b^(1-λ)·w^λ for the lexical fusion weight
// (a ratio to the vector weight, which both share).
func mix(b, w weighting, lambda float64) weighting {
	out := make([]float64, nKinds)
	for k := range out {
		out[k] = (1-lambda)*b.w[k] + lambda*w.w[k]
	}
	wl := b.wl
	if b.wl > 0 && w.wl > 0 {
		wl = math.Exp((1-lambda)*math.Log(b.wl) + lambda*math.Log(w.wl))
	}
	return weighting{w: out, wl: wl, wv: b.wv}
}

// presentKinds are the indexes of the kinds some tool has.
func (m *model) presentKinds() []int {
	var ks []int
	for k, p := range m.present {
		if p {
			ks = append(ks, k)
		}
	}
	return ks
}

// normalized returns w restricted to kinds, summing to 1; nil when no weight is positive.
func normalized(w []float64, kinds []int) []float64 {
	out := make([]float64, nKinds)
	total := 0.0
	for _, k := range kinds {
		out[k] = w[k]
		total += w[k]
	}
	if total <= 0 || math.IsNaN(total) || math.IsInf(total, 0) {
		return nil
	}
	for _, k := range kinds {
		out[k] /= total
	}
	return out
}

// rounded rounds weights to three decimals, dropping those below 0.005, and renormalizes:
// the profile stores what an operator can read.
func rounded(w []float64) []float64 {
	out := make([]float64, len(w))
	total := 0.0
	for k, x := range w {
		if x >= 0.005 {
			out[k] = x
			total += x
		}
	}
	for k := range out {
		out[k] = math.Round(out[k]/total*1000) / 1000
	}
	return out
}

// Gain is the held-out difference of the tuned weights' metric and the baseline's, with a
// 95% confidence interval from a paired bootstrap over the held-out searches.
type Gain struct {
	Metric string     `json:"metric"`
	Mean   float64    `json:"mean"`
	CI95   [2]float64 `json:"ci95"`
	// Verdict: "better" when the whole interval is above 0, "worse" when it is below,
	// "inconclusive" otherwise (the labels cannot tell the two weightings apart).
	Verdict string `json:"verdict"`
}

// bootstrapResamples is the number of bootstrap resamples of the held-out searches.
const bootstrapResamples = 2000

// pairedGain returns the mean of tuned[i] - base[i] with its 95% percentile bootstrap
// interval (resampling searches with replacement, rng-seeded so a tune is reproducible).
func pairedGain(tuned, base []float64, rng *rand.Rand) Gain {
	n := len(tuned)
	d := make([]float64, n)
	for i := range d {
		d[i] = tuned[i] - base[i]
	}
	g := Gain{Metric: "mrr", Mean: mean(d)}
	if n == 0 {
		g.Verdict = "inconclusive"
		return g
	}
	means := make([]float64, bootstrapResamples)
	for b := range means {
		s := 0.0
		for range n {
			s += d[rng.IntN(n)]
		}
		means[b] = s / float64(n)
	}
	slices.Sort(means)
	g.CI95 = [2]float64{percentile(means, 0.025), percentile(means, 0.975)}
	switch {
	case g.CI95[0] > 0:
		g.Verdict = "better"
	case g.CI95[1] < 0:
		g.Verdict = "worse"
	default:
		g.Verdict = "inconclusive"
	}
	return g
}

// percentile of sorted xs, linear between closest ranks.
func percentile(xs []float64, p float64) float64 {
	h := float64(len(xs)-1) * p
	lo := int(math.Floor(h))
	if lo+1 >= len(xs) {
		return xs[len(xs)-1]
	}
	return xs[lo] + (h-float64(lo))*(xs[lo+1]-xs[lo])
}
