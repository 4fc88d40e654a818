package plan

import "context"

// SearchFunc returns the ranking of one intent, best first, at most n tools: the search
// statement run with the intent's query and its variants fused by reciprocal rank.
type SearchFunc func(ctx context.Context, query string, variants []string, n int) ([]Ranked, error)

// Retrieve runs a plan: one search per intent for n candidates each, then Merge into k.
// A plan of one intent is its ranking cut to k.
func Retrieve(ctx context.Context, p Plan, n, k int, search SearchFunc) ([]Ranked, error) {
	perIntent := make([][]Ranked, len(p.Intents))
	for i, in := range p.Intents {
		r, err := search(ctx, in.Query, in.Variants, n)
		if err != nil {
			return nil, err
		}
		perIntent[i] = r
	}
	return Merge(k, perIntent), nil
}
