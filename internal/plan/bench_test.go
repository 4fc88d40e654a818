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

// taskBenchQueries are typical agent requests: single tasks and multi-task requests.
var taskBenchQueries = []string{
	"send an email to Bob and book a flight to Paris",
	"Retrieve the profile of patient John Doe. After that, get the health statistics of China for 2020. Lastly, check the status of connection d97fg1saS9.",
	"Is Pentair stock up or down today? Show me the current price.",
	"Show me read and write permissions for /etc/passwd",
	"What's the weather like in Berlin tomorrow?",
	"List the open pull requests in toolgate/toolgate, then post a summary to the #dev channel on Slack.",
	"Get the profit and loss statement for Q3 2023",
	"I'm planning a trip to Rome next month. Find me a hotel near the Colosseum and book a table for two at 8pm.",
}

// BenchmarkDecomposeTasks splits typical requests (one op = all of taskBenchQueries) with
// no vocabulary, as the server runs without TOOLGATE_PLAN_VOCABULARY.
func BenchmarkDecomposeTasks(b *testing.B) {
	h := NewHeuristic(nil)
	b.ReportAllocs()
	for b.Loop() {
		for _, q := range taskBenchQueries {
			if len(h.Decompose(q)) == 0 {
				b.Fatal("no pieces")
			}
		}
	}
}

// BenchmarkSplitTasks splits every request of the task table (82 requests, about half of
// them multi-task) per op.
func BenchmarkSplitTasks(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		for _, c := range taskCases {
			SplitTasks(c.query)
		}
	}
}
