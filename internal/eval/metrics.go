// Package eval measures retrieval quality the way the papers do: Recall@K, NDCG@K, MAP@K and
// Completeness@K over ranked tool names (seed 000 section 5, seed 004), a dataset format of
// tools and gold-labelled queries, a runner that scores a query set against any ranking
// function, and scores of agent tool-call traces (seed 002 section 3.2, seed 001 appendix A).
package eval

import "math"

// Judged is one ranking prepared for scoring: the ranking without duplicates (a name counts
// once, at its first rank) and the gold set.
type Judged struct {
	ranked []string
	gold   map[string]bool
}

// Judge prepares a ranking against a gold set. Duplicate names in the ranking keep only their
// first rank, so a search that returns a tool twice is neither rewarded nor punished for the
// repeat; later tools keep their original positions. Duplicate gold names count once. A gold
// name that the ranking can never contain (a tool missing from the catalog) still counts in
// every denominator: the retriever is charged for it.
func Judge(ranking, gold []string) Judged {
	j := Judged{gold: make(map[string]bool, len(gold))}
	for _, g := range gold {
		j.gold[g] = true
	}
	seen := make(map[string]bool, len(ranking))
	for _, name := range ranking {
		if seen[name] {
			// The slot stays, empty: a duplicate occupies a rank the search spent on it.
			j.ranked = append(j.ranked, "")
			continue
		}
		seen[name] = true
		j.ranked = append(j.ranked, name)
	}
	return j
}

// relevant reports whether rank i (0-based) holds a gold tool.
func (j Judged) relevant(i int) bool {
	return i < len(j.ranked) && j.ranked[i] != "" && j.gold[j.ranked[i]]
}

// hits is the number of gold tools in the top k.
func (j Judged) hits(k int) int {
	n := 0
	for i := 0; i < k && i < len(j.ranked); i++ {
		if j.relevant(i) {
			n++
		}
	}
	return n
}

// Recall is |top k ∩ gold| / |gold|; 0 for an empty gold set.
func (j Judged) Recall(k int) float64 {
	if len(j.gold) == 0 {
		return 0
	}
	return float64(j.hits(k)) / float64(len(j.gold))
}

// NDCG is the normalized discounted cumulative gain at k with binary relevance:
// DCG = Σ_{i≤k} rel_i / log2(i+1), divided by the DCG of the ideal ranking, which puts
// min(|gold|, k) gold tools first. 0 for an empty gold set.
func (j Judged) NDCG(k int) float64 {
	if len(j.gold) == 0 || k <= 0 {
		return 0
	}
	var dcg, ideal float64
	for i := 0; i < k; i++ {
		gain := 1 / math.Log2(float64(i)+2)
		if j.relevant(i) {
			dcg += gain
		}
		if i < len(j.gold) {
			ideal += gain
		}
	}
	return dcg / ideal
}

// AP is the average precision at k: Σ_{i≤k} P@i · rel_i divided by min(|gold|, k), so a
// ranking that puts every gold tool it can fit into the first ranks scores 1. MAP@K is its
// mean over queries. 0 for an empty gold set.
func (j Judged) AP(k int) float64 {
	if len(j.gold) == 0 || k <= 0 {
		return 0
	}
	var sum float64
	hits := 0
	for i := 0; i < k && i < len(j.ranked); i++ {
		if j.relevant(i) {
			hits++
			sum += float64(hits) / float64(i+1)
		}
	}
	return sum / float64(min(len(j.gold), k))
}

// Complete is Completeness@K (seed 004): 1 if every gold tool is in the top k, else 0.
// 0 for an empty gold set.
func (j Judged) Complete(k int) float64 {
	if len(j.gold) == 0 || j.hits(k) < len(j.gold) {
		return 0
	}
	return 1
}
