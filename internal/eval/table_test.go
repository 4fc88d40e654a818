package eval

import (
	"reflect"
	"testing"
)

func TestParseKs(t *testing.T) {
	ks, err := ParseKs("10, 1,5,5")
	if err != nil || !reflect.DeepEqual(ks, []int{1, 5, 10}) {
		t.Fatalf("got %v, %v", ks, err)
	}
	for _, bad := range []string{"", "0", "1,x", "-5", "1,,5"} {
		if _, err := ParseKs(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestTable(t *testing.T) {
	r := Report{
		NQueries:  3,
		Metrics:   map[string]float64{"recall@1": 0.5, "ndcg@1": 0.25, "map@1": 1.0 / 3, "completeness@1": 0},
		ByKind:    map[string]Group{"single": {NQueries: 2, Metrics: map[string]float64{"recall@1": 1, "ndcg@1": 1, "map@1": 1, "completeness@1": 1}}},
		LatencyMS: Latency{P50: 1.25, P95: 9.99},
	}
	got := Table([]Row{{Label: "hybrid | var-2", Report: r}}, []int{1}, "")
	want := "| Configuration | Queries | recall@1 | ndcg@1 | map@1 | completeness@1 | p50 ms | p95 ms |\n" +
		"|---|---:|---:|---:|---:|---:|---:|---:|\n" +
		"| hybrid \\| var-2 | 3 | 0.500 | 0.250 | 0.333 | 0.000 | 1.2 | 10.0 |\n"
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	single := Table([]Row{{Label: "x", Report: r}}, []int{1}, "single")
	if want := "| x | 2 | 1.000 | 1.000 | 1.000 | 1.000 | 1.2 | 10.0 |\n"; single[len(single)-len(want):] != want {
		t.Fatalf("kind row:\n%s", single)
	}
}
