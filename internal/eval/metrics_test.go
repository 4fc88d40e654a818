package eval

import (
	"math"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// Each case's expected values are worked out by hand in the comments.
func TestMetrics(t *testing.T) {
	type want struct{ recall, ndcg, ap, complete float64 }
	cases := []struct {
		name    string
		ranking []string
		gold    []string
		k       int
		want    want
	}{
		// a at rank 1 only: 1 of 2 gold; DCG=1, IDCG@1=1; AP=(1/1)/min(2,1).
		{"partial@1", []string{"a", "x", "b", "y"}, []string{"a", "b"}, 1, want{0.5, 1, 1, 0}},
		// a@1, b@3: DCG=1+1/log2(4)=1.5, IDCG=1+1/log2(3); AP=(1/1+2/3)/2.
		{"both@3", []string{"a", "x", "b", "y"}, []string{"a", "b"}, 3, want{1, 0.9197207891481876, 5.0 / 6, 1}},
		// Duplicates keep their first rank and leave their later slots empty:
		// ranks x@1 (x@2 dup) a@3 (a@4 dup) b@5. DCG=1/log2(4)+1/log2(6); AP=(1/3+2/5)/2.
		{"duplicates", []string{"x", "x", "a", "a", "b"}, []string{"a", "b"}, 5, want{1, 0.5437713091520254, (1.0/3 + 2.0/5) / 2, 1}},
		// A duplicate never counts twice: a twice in the top 2 is one hit of two gold tools.
		{"duplicate not double counted", []string{"a", "a"}, []string{"a", "b"}, 2, want{0.5, 1 / (1 + 1/math.Log2(3)), 0.5, 0}},
		// zzz is not in the catalog: it can never be found but stays in every denominator.
		{"gold missing from catalog", []string{"a", "b", "c"}, []string{"a", "zzz"}, 10, want{0.5, 0.6131471927654584, 0.5, 0}},
		// K=10 beyond a 2-result list: a@2; DCG=1/log2(3), IDCG=1; AP=(1/2)/min(1,10).
		{"k beyond results", []string{"b", "a"}, []string{"a"}, 10, want{1, 0.6309297535714575, 0.5, 1}},
		// Tied scores are broken by the order the search returns: the same two tools swapped.
		{"tie order a first", []string{"a", "b"}, []string{"b"}, 2, want{1, 0.6309297535714575, 0.5, 1}},
		{"tie order b first", []string{"b", "a"}, []string{"b"}, 2, want{1, 1, 1, 1}},
		// Duplicate gold names count once.
		{"duplicate gold", []string{"a"}, []string{"a", "a"}, 1, want{1, 1, 1, 1}},
		{"empty ranking", nil, []string{"a"}, 5, want{0, 0, 0, 0}},
		{"empty gold", []string{"a"}, nil, 5, want{0, 0, 0, 0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			j := Judge(c.ranking, c.gold)
			got := want{j.Recall(c.k), j.NDCG(c.k), j.AP(c.k), j.Complete(c.k)}
			if !near(got.recall, c.want.recall) || !near(got.ndcg, c.want.ndcg) || !near(got.ap, c.want.ap) || !near(got.complete, c.want.complete) {
				t.Fatalf("got %+v, want %+v", got, c.want)
			}
		})
	}
}
