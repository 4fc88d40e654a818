package tune

import (
	"container/heap"
	"math"

	"github.com/toolgate/toolgate/internal/tdwa"
)

// nKinds is the number of weightable component kinds (tdwa.Kinds).
var nKinds = len(tdwa.Kinds)

// Scoring a weighting without building any tool vector. With e_k a tool's per-kind vector
// (the mean of its components of kind k, as tdwa.Combine takes it) and q a query vector, the
// cosine of q and the tool's TDWA vector under weights w is
//
//	cos(q, Σ w_k e_k) = Σ_k w_k (q·e_k) / sqrt(Σ_ij w_i w_j (e_i·e_j))
//
// (the division by Σ w_k and the final normalization of tdwa.Combine change the length, not
// the direction). So one pass over the stored component vectors keeps, per tool, the Gram
// matrix G of its kinds (e_i·e_j) and, per query and candidate tool, the dot products q·e_k;
// any weighting is then scored with K² + K multiplications per tool instead of a pass over
// the vectors. The Concat strategy's vector is the concat component's: its cosine is q·e_concat.

// tool is what the weight search keeps of one tool.
type tool struct {
	id     int64
	has    []bool    // kind k present (index into tdwa.Kinds)
	gram   []float64 // nKinds × nKinds, row-major; zero rows for absent kinds
	concat bool      // has a concat component
}

// candidate is a tool in a query's pool with the query's dot product with each kind's
// vector (dots[nKinds] is the concat component's).
type candidate struct {
	tool int // index into model.tools
	dots []float64
}

// query is one labelled search: its vector's pool of candidate tools and which of them the
// agent used.
type query struct {
	positives map[int64]bool // labelled tool ids
	// pool is the union of each kind's top tools, the positives and the lexical candidates
	pool []candidate
	// lexical is the query's tools by BM25, best first; prepare indexes it against the pool:
	// poolBM25 is each pool candidate's BM25 (-1: none), lexTop the pool positions of the
	// lexical list's candidates, lexOnly its candidates outside the pool (without vectors)
	lexical  []lexScore
	poolBM25 []float64
	lexTop   []int
	lexOnly  []lexScore
	// meaning is the meaning cosine of the tools that can be its candidates, by tool id
	// (nil: the meaning branch does not run for it)
	meaning map[int64]float64
}

// model is everything the weight search needs, in memory: a few kilobytes per tool and per
// query.
type model struct {
	tools   []tool
	queries []query
	present []bool // kind k is present in some tool
	fusion  fusionConfig
	fuser   *fuser // fuses the lists in PostgreSQL
}

// weighting is what a tune chooses: how a tool's vector is made (TDWA weights, mean being
// all ones, or the concat vector) and the fusion weights of the lexical and vector branches.
type weighting struct {
	concat bool
	w      []float64 // nKinds weights, when !concat
	wl, wv float64   // fusion weights
}

// weightsOf returns the weighting of a stored profile definition with fusion weights wl, wv.
func weightsOf(p tdwa.Profile, wl, wv float64) weighting {
	switch p.Strategy {
	case tdwa.StrategyConcat:
		return weighting{concat: true, wl: wl, wv: wv}
	case tdwa.StrategyMean:
		w := make([]float64, nKinds)
		for i := range w {
			w[i] = 1
		}
		return weighting{w: w, wl: wl, wv: wv}
	}
	w := make([]float64, nKinds)
	for i, k := range tdwa.Kinds {
		w[i] = p.Weights[k]
	}
	return weighting{w: w, wl: wl, wv: wv}
}

// score is the cosine of the query and the tool's vector under wt, and false when the tool
// has no vector under wt (none of its kinds is weighted). norms holds the tools' vector
// norms under wt (norms computes it).
func score(c candidate, t *tool, wt weighting, norm float64) (float64, bool) {
	if wt.concat {
		return c.dots[nKinds], t.concat
	}
	if norm == 0 {
		return 0, false
	}
	s := 0.0
	for k, w := range wt.w {
		if w != 0 && t.has[k] {
			s += w * c.dots[k]
		}
	}
	return s / norm, true
}

// norm is the length of Σ_k w_k e_k for t: sqrt(wᵀ G w) over its present kinds.
func (t *tool) norm(wt weighting) float64 {
	if wt.concat {
		return 1
	}
	s := 0.0
	for i, wi := range wt.w {
		if wi == 0 || !t.has[i] {
			continue
		}
		row := t.gram[i*nKinds : (i+1)*nKinds]
		for j, wj := range wt.w {
			if wj != 0 && t.has[j] {
				s += wi * wj * row[j]
			}
		}
	}
	if s <= 0 {
		return 0
	}
	return math.Sqrt(s)
}

// Metrics are ranking metrics over a set of labelled searches: the mean reciprocal rank of
// each search's best-ranked labelled tool, and the share of searches with a labelled tool in
// the top 1, 5 and 10.
type Metrics struct {
	MRR   float64 `json:"mrr"`
	Hit1  float64 `json:"hit@1"`
	Hit5  float64 `json:"hit@5"`
	Hit10 float64 `json:"hit@10"`
}

func metricsOf(rr []float64) Metrics {
	var m Metrics
	if len(rr) == 0 {
		return m
	}
	for _, r := range rr {
		m.MRR += r
		if r >= 1 {
			m.Hit1++
		}
		if r >= 1.0/5 {
			m.Hit5++
		}
		if r >= 1.0/10 {
			m.Hit10++
		}
	}
	n := float64(len(rr))
	m.MRR /= n
	m.Hit1 /= n
	m.Hit5 /= n
	m.Hit10 /= n
	return m
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// topK keeps the k candidates with the highest key (a min-heap on key).
type topK struct {
	k       int
	entries []keyed
}

type keyed struct {
	c   candidate
	key float64
}

func (h *topK) Len() int           { return len(h.entries) }
func (h *topK) Less(i, j int) bool { return h.entries[i].key < h.entries[j].key }
func (h *topK) Swap(i, j int)      { h.entries[i], h.entries[j] = h.entries[j], h.entries[i] }
func (h *topK) Push(x any)         { h.entries = append(h.entries, x.(keyed)) }
func (h *topK) Pop() any {
	n := len(h.entries) - 1
	e := h.entries[n]
	h.entries = h.entries[:n]
	return e
}

// wants says whether a candidate of this key would be kept.
func (h *topK) wants(key float64) bool {
	return len(h.entries) < h.k || key > h.entries[0].key
}

// offer keeps c when its key is among the k highest seen.
func (h *topK) offer(c candidate, key float64) {
	switch {
	case len(h.entries) < h.k:
		heap.Push(h, keyed{c, key})
	case key > h.entries[0].key:
		h.entries[0] = keyed{c, key}
		heap.Fix(h, 0)
	}
}
