package eval

import (
	"errors"
	"strings"
	"testing"
)

func traces(t *testing.T, s string) []Trace {
	t.Helper()
	out, err := ParseTraces(strings.NewReader(s))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// The two examples of Toolshed appendix A (seed 001, figure 4).
func TestToolshedExamples(t *testing.T) {
	gold := traces(t, `{"id":"1","steps":[[{"name":"Stock_Price","arguments":{"ticker":"AAPL"}}]]}
{"id":"2","steps":[[{"name":"Stock_Price","arguments":{"ticker":"AAPL"}},{"name":"Get_Stock_Ticker","arguments":{"company_name":"Ford"}}]]}`)
	pred := traces(t, `{"id":"1","steps":[[{"name":"Get_Stock_Price","arguments":{"ticker":"AAPL"}}]]}
{"id":"2","steps":[[{"name":"Get_Stock_Ticker","arguments":{"company":"Ford"}},{"name":"Stock_Price","arguments":{ "ticker" : "AAPL" }}]]}`)
	one, err := ScoreCalls(gold[:1], pred[:1])
	if err != nil {
		t.Fatal(err)
	}
	// Names 0%, keys 100%, values 100% → 50%.
	if one.NameScore != 0 || one.KeyScore != 1 || one.ValueScore != 1 || one.WeightedScore != 0.5 {
		t.Fatalf("example 1: %+v", one)
	}
	two, err := ScoreCalls(gold[1:], pred[1:])
	if err != nil {
		t.Fatal(err)
	}
	// Names 100%, keys 50% (ticker but not company_name), values 100% → 87.5%.
	if two.NameScore != 1 || two.KeyScore != 0.5 || two.ValueScore != 1 || two.WeightedScore != 0.875 {
		t.Fatalf("example 2: %+v", two)
	}
	both, err := ScoreCalls(gold, pred)
	if err != nil {
		t.Fatal(err)
	}
	if both.NSamples != 2 || both.WeightedScore != (0.5+0.875)/2 {
		t.Fatalf("mean: %+v", both)
	}
}

func TestFinMCPMetrics(t *testing.T) {
	gold := `{"id":"s","steps":[[{"name":"a"},{"name":"b"}],[{"name":"c"}]]}`
	cases := []struct {
		name                string
		pred                string
		precision, recall   float64
		f1, exact, weighted float64
	}{
		// Same groups, order inside the parallel group swapped: an exact match.
		{"swapped parallel", `{"id":"s","steps":[[{"name":"b"},{"name":"a"}],[{"name":"c"}]]}`, 1, 1, 1, 1, 1},
		// Same tools, run one by one: every tool right, grouping wrong.
		{"sequential", `{"id":"s","steps":[[{"name":"a"}],[{"name":"b"}],[{"name":"c"}]]}`, 1, 1, 1, 0, 1},
		// Tool sets {a,d} (a repeated counts once) vs {a,b,c}: P=1/2, R=1/3,
		// F1=2·(1/2)(1/3)/(5/6)=0.4. Toolshed: a paired by name, b with d and c with the
		// second a (wrong names, all argument-less): names 1/3, keys 1, values 1 → 2/3.
		{"partial", `{"id":"s","steps":[[{"name":"a"},{"name":"d"},{"name":"a"}]]}`, 0.5, 1.0 / 3, 0.4, 0, 2.0 / 3},
		// Only a and d: c stays unpaired, so names 1/3, keys 2/3, values 2/3 → 0.5.
		{"unpaired", `{"id":"s","steps":[[{"name":"a"},{"name":"d"}]]}`, 0.5, 1.0 / 3, 0.4, 0, 0.5},
		// No prediction for the sample: zero everywhere.
		{"missing", ``, 0, 0, 0, 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := ScoreCalls(traces(t, gold), traces(t, c.pred))
			if err != nil {
				t.Fatal(err)
			}
			if !near(s.ToolPrecision, c.precision) || !near(s.ToolRecall, c.recall) || !near(s.ToolF1, c.f1) || s.ExactMatchRate != c.exact || !near(s.WeightedScore, c.weighted) {
				t.Fatalf("got %+v", s)
			}
		})
	}
}

func TestCallErrors(t *testing.T) {
	gold := traces(t, `{"id":"1","steps":[[{"name":"a"}]]}`)
	var ue *UnknownTraceError
	if _, err := ScoreCalls(gold, traces(t, `{"id":"2","steps":[]}`)); !errors.As(err, &ue) || ue.IDs[0] != "2" {
		t.Fatalf("want UnknownTraceError, got %v", err)
	}
	if _, err := ScoreCalls(traces(t, `{"id":"1","steps":[]}`), nil); err == nil {
		t.Fatal("gold trace without calls accepted")
	}
	_, err := ParseTraces(strings.NewReader("{\"id\":\"1\",\"steps\":[]}\n{\"id\":\"1\",\"steps\":[]}\n{\"id\":\"3\",\"steps\":[[{\"arguments\":{}}]]}\n[1]\n"))
	var de *DatasetError
	if !errors.As(err, &de) || len(de.Problems) != 3 || de.Problems[0].Line != 2 || de.Problems[2].Line != 4 {
		t.Fatalf("want problems on lines 2, 3, 4, got %v", err)
	}
}
