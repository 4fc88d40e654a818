package plan

import (
	"fmt"
	"slices"
	"testing"
)

// ranking makes a ranking from names with scores descending from top by step.
func ranking(top, step float64, names ...string) []Ranked {
	out := make([]Ranked, len(names))
	for i, n := range names {
		out[i] = Ranked{ID: n, Score: top - float64(i)*step}
	}
	return out
}

func ids(rs []Ranked) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.ID
	}
	return out
}

func TestMerge(t *testing.T) {
	cases := []struct {
		name      string
		k         int
		perIntent [][]Ranked
		want      []string
		intents   []int // Intent of each output, when checked
	}{
		{"no intents", 5, nil, nil, nil},
		{"k zero", 0, [][]Ranked{ranking(1, 0.1, "a")}, nil, nil},
		{"k negative", -1, [][]Ranked{ranking(1, 0.1, "a")}, nil, nil},
		{"one intent keeps its order", 3, [][]Ranked{ranking(1, 0.1, "a", "b", "c", "d")}, []string{"a", "b", "c"}, []int{0, 0, 0}},
		{"one intent with duplicates", 3, [][]Ranked{ranking(1, 0.1, "a", "a", "b", "c")}, []string{"a", "b", "c"}, nil},
		{"two intents even split, round-robin", 4,
			[][]Ranked{ranking(1, 0.1, "a1", "a2", "a3"), ranking(0.5, 0.1, "b1", "b2", "b3")},
			[]string{"a1", "b1", "a2", "b2"}, []int{0, 1, 0, 1}},
		{"weak intent still gets its share", 4,
			[][]Ranked{ranking(1, 0.01, "a1", "a2", "a3", "a4"), ranking(0.1, 0.01, "b1", "b2")},
			[]string{"a1", "b1", "a2", "b2"}, nil},
		{"three intents, k=10: 3 each and the leftover by score", 10,
			[][]Ranked{
				ranking(0.9, 0.1, "a1", "a2", "a3", "a4"),
				ranking(0.5, 0.1, "b1", "b2", "b3", "b4"),
				ranking(0.95, 0.01, "c1", "c2", "c3", "c4"),
			},
			// c4 (0.92) beats a4 (0.6) and b4 (0.2) for the tenth slot.
			[]string{"a1", "b1", "c1", "a2", "b2", "c2", "a3", "b3", "c3", "c4"}, []int{0, 1, 2, 0, 1, 2, 0, 1, 2, 2}},
		{"shared tool appears once at its best position; the other intent takes its next", 4,
			[][]Ranked{ranking(1, 0.1, "x", "a2", "a3"), ranking(0.5, 0.1, "x", "b2", "b3")},
			[]string{"x", "b2", "a2", "b3"}, []int{0, 1, 0, 1}},
		{"shared tool ranked low by one intent, high by the other", 4,
			[][]Ranked{ranking(1, 0.1, "a1", "a2", "x"), ranking(0.5, 0.1, "x", "b2")},
			[]string{"a1", "x", "a2", "b2"}, nil},
		{"short intent's share goes to the best remaining", 5,
			[][]Ranked{ranking(1, 0.1, "a1", "a2", "a3", "a4"), ranking(0.95, 0.1, "b1")},
			// quota 2: a1 b1 a2 (b ran out), then a3, a4 by score.
			[]string{"a1", "b1", "a2", "a3", "a4"}, nil},
		{"fewer tools than k", 10,
			[][]Ranked{ranking(1, 0.1, "a1"), ranking(0.5, 0.1, "b1", "a1")},
			[]string{"a1", "b1"}, nil},
		{"more intents than k: best tops by score", 2,
			[][]Ranked{ranking(0.3, 0.1, "a1"), ranking(0.9, 0.1, "b1"), ranking(0.6, 0.1, "c1")},
			[]string{"b1", "c1"}, []int{1, 2}},
		{"empty intent", 3,
			[][]Ranked{nil, ranking(0.9, 0.1, "b1", "b2", "b3", "b4")},
			[]string{"b1", "b2", "b3"}, nil},
		{"leftover ties: better rank first, then earlier intent", 3,
			[][]Ranked{
				{{ID: "a1", Score: 0.5}, {ID: "a2", Score: 0.4}},
				{{ID: "b1", Score: 0.5}, {ID: "b2", Score: 0.4}},
			},
			// quota 1: a1 b1; leftover tie at 0.4 between a2 and b2 at the same rank: a2.
			[]string{"a1", "b1", "a2"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Merge(c.k, c.perIntent)
			if !slices.Equal(ids(got), c.want) {
				t.Fatalf("Merge = %v, want %v", ids(got), c.want)
			}
			if c.intents != nil {
				gotIntents := make([]int, len(got))
				for i, r := range got {
					gotIntents[i] = r.Intent
				}
				if !slices.Equal(gotIntents, c.intents) {
					t.Errorf("intents = %v, want %v", gotIntents, c.intents)
				}
			}
		})
	}
}

// TestMergeBestScore: a tool found by two intents carries its best score.
func TestMergeBestScore(t *testing.T) {
	got := Merge(2, [][]Ranked{{{ID: "x", Score: 0.2}}, {{ID: "x", Score: 0.7}, {ID: "y", Score: 0.1}}})
	if len(got) != 2 || got[0].ID != "x" || got[0].Score != 0.7 || got[1].ID != "y" {
		t.Errorf("Merge = %+v", got)
	}
}

// TestMergeProperties checks on many shapes: no duplicates, length min(k, distinct tools),
// and every intent with enough tools holds at least k/n of the slots.
func TestMergeProperties(t *testing.T) {
	for n := 1; n <= 5; n++ {
		for k := 1; k <= 12; k++ {
			per := make([][]Ranked, n)
			distinct := map[string]bool{}
			for i := range per {
				var names []string
				for j := range 4 + i {
					name := fmt.Sprintf("t%d", (i*3+j)%11) // overlapping lists
					names = append(names, name)
					distinct[name] = true
				}
				per[i] = ranking(1-float64(i)*0.05, 0.07, names...)
			}
			got := Merge(k, per)
			if len(got) != min(k, len(distinct)) {
				t.Fatalf("n=%d k=%d: %d results, want %d", n, k, len(got), min(k, len(distinct)))
			}
			seen := map[string]bool{}
			share := make([]int, n)
			for _, r := range got {
				if seen[r.ID] {
					t.Fatalf("n=%d k=%d: %s twice", n, k, r.ID)
				}
				seen[r.ID] = true
				share[r.Intent]++
			}
			if k <= len(distinct) {
				for i, s := range share {
					if s < k/n && s < len(per[i]) {
						// An intent may get fewer only when its own tools were placed by others.
						own := 0
						for _, r := range per[i] {
							if seen[r.ID] {
								own++
							}
						}
						if own < min(k/n, len(per[i])) {
							t.Errorf("n=%d k=%d: intent %d has %d of its tools, share %d", n, k, i, own, k/n)
						}
					}
				}
			}
		}
	}
}
