package plan

import (
	"cmp"
	"slices"
)

// Ranked is one tool of a ranking: its name and fused score. In Merge's output, Intent is
// the index of the intent whose share placed it.
type Ranked struct {
	ID     string  `json:"name"`
	Score  float64 `json:"score"`
	Intent int     `json:"intent"`
}

// Merge builds the final top-k from one ranking per intent (best first) so that every
// intent gets its share of k (Toolshed's per-intent top-k, seed 001 appendix C fig. 19):
//
//   - each intent gets k/n slots (n intents), filled round-robin by rank: the first tool of
//     every intent, then the second of every intent, and so on;
//   - a tool already placed is skipped, so it appears once, at its best position, and the
//     intent that skipped it takes its next tool instead;
//   - the slots left over (k mod n, and the share of intents that ran out of tools) go to
//     the best remaining tools of any intent by fused score.
//
// A tool's Score in the output is its best score over all intents. Ties in the leftover
// pass go to the better rank, then the earlier intent, then the name.
func Merge(k int, perIntent [][]Ranked) []Ranked {
	n := len(perIntent)
	if k <= 0 || n == 0 {
		return nil
	}
	best := map[string]float64{}
	for _, list := range perIntent {
		for _, r := range list {
			if s, ok := best[r.ID]; !ok || r.Score > s {
				best[r.ID] = r.Score
			}
		}
	}
	out := make([]Ranked, 0, min(k, len(best)))
	placed := map[string]bool{}
	next := make([]int, n)
	quota := k / n
	for range quota {
		for i, list := range perIntent {
			for next[i] < len(list) && placed[list[next[i]].ID] {
				next[i]++
			}
			if next[i] < len(list) {
				r := list[next[i]]
				placed[r.ID] = true
				out = append(out, Ranked{ID: r.ID, Score: best[r.ID], Intent: i})
				next[i]++
			}
		}
	}
	if len(out) == k {
		return out
	}
	type leftover struct {
		Ranked
		rank int
	}
	var rest []leftover
	seen := map[string]bool{}
	for i, list := range perIntent {
		for rank, r := range list {
			if placed[r.ID] || seen[r.ID] || r.Score != best[r.ID] {
				continue
			}
			seen[r.ID] = true
			rest = append(rest, leftover{Ranked{ID: r.ID, Score: r.Score, Intent: i}, rank})
		}
	}
	slices.SortFunc(rest, func(a, b leftover) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(a.rank, b.rank), cmp.Compare(a.Intent, b.Intent), cmp.Compare(a.ID, b.ID))
	})
	for _, r := range rest {
		if len(out) == k {
			break
		}
		out = append(out, r.Ranked)
	}
	return out
}
