package plan

import (
	"context"
	"fmt"
	"testing"

	"github.com/toolgate/toolgate/internal/dataset"
)

// BenchmarkHeuristic plans a multi-company query with the vocabulary of the 1,000
// companies of the shipped dataset (about 3,000 surface forms).
func BenchmarkHeuristic(b *testing.B) {
	cs, err := dataset.Companies(1000)
	if err != nil {
		b.Fatal(err)
	}
	h := NewHeuristic(dataset.Aliases(cs))
	q := "Compare the 2023 revenue of AAPL, Ford Motor, $tsla, and Google, and determine which company achieved the highest revenue."
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if p, _ := h.Plan(ctx, q, ModeFull); len(p.Intents) != 4 {
			b.Fatalf("%d intents", len(p.Intents))
		}
	}
}

// BenchmarkMerge merges 5 intents of 50 candidates each into k=10.
func BenchmarkMerge(b *testing.B) {
	per := make([][]Ranked, 5)
	for i := range per {
		for j := range 50 {
			per[i] = append(per[i], Ranked{ID: fmt.Sprintf("tool_%d", (i*17+j)%120), Score: 1 / float64(60+j)})
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if len(Merge(10, per)) != 10 {
			b.Fatal("short merge")
		}
	}
}
