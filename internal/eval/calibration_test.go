package eval

import (
	"context"
	"math"
	"strings"
	"testing"
)

// The calibration bins each search by its answer confidence and counts whether its first
// result is a gold tool; below and above split at the threshold; the ECE weighs each bin's
// gap between its right rate and its mean confidence by its share of the searches.
func TestCalibration(t *testing.T) {
	// confidence, first result right
	cases := []struct {
		conf  float64
		right bool
	}{{0.05, false}, {0.05, false}, {0.3, true}, {0.3, false}, {0.7, true}, {0.7, true}, {0.7, false}, {1, true}}
	var queries []Query
	rankings, conf := map[string][]string{}, map[string]float64{}
	for i, c := range cases {
		q := string(rune('a' + i))
		queries = append(queries, Query{ID: q, Query: q, Gold: []string{"gold"}})
		rankings[q] = []string{"wrong", "gold"}
		if c.right {
			rankings[q] = []string{"gold"}
		}
		conf[q] = c.conf
	}
	queries = append(queries, Query{ID: "none", Query: "none", Gold: []string{"gold"}}) // no confidence: not counted
	search := func(_ context.Context, q string, _ int) ([]string, error) { return rankings[q], nil }
	outcomes := map[string]*float64{}
	r, err := Run(context.Background(), queries, search, Options{Ks: []int{5}, ConfidenceThreshold: 0.4,
		Confidence: func(q string) (float64, bool) { c, ok := conf[q]; return c, ok },
		PerQuery:   func(o QueryOutcome) error { outcomes[o.ID] = o.Confidence; return nil }})
	if err != nil {
		t.Fatal(err)
	}
	// the per-query file carries each answer's confidence, none where the search gave none
	if outcomes["c"] == nil || *outcomes["c"] != 0.3 || outcomes["none"] != nil {
		t.Fatalf("per-query confidences %v", outcomes)
	}
	c := r.Calibration
	if c == nil || c.Searches != 8 || len(c.Bins) != 6 {
		t.Fatalf("calibration %+v", c)
	}
	want := []struct {
		n     int
		right float64
	}{{2, 0}, {0, 0}, {2, 0.5}, {0, 0}, {3, 2.0 / 3}, {1, 1}}
	for i, w := range want {
		if b := c.Bins[i]; b.Searches != w.n || math.Abs(b.Right-w.right) > 1e-9 {
			t.Fatalf("bin %d: %+v, want %d searches, right %v", i, b, w.n, w.right)
		}
	}
	if c.Below.Searches != 4 || c.Below.Right != 0.25 || c.Above.Searches != 4 || c.Above.Right != 0.75 {
		t.Fatalf("below %+v above %+v", c.Below, c.Above)
	}
	// (2·|0−0.05| + 2·|0.5−0.3| + 3·|2/3−0.7| + 1·|1−1|) / 8
	if ece := (2*0.05 + 2*0.2 + 3*(0.7-2.0/3)) / 8; math.Abs(c.ECE-ece) > 1e-9 {
		t.Fatalf("ece %v, want %v", c.ECE, ece)
	}
	table := CalibrationTable([]Row{{Label: "hybrid", Report: r}, {Label: "no confidence", Report: Report{}}})
	for _, line := range []string{"| confidence | hybrid |", "| 0–0.1 | 0.000 (2) |", "| 0.1–0.25 | — |", "| 0.8–1 | 1.000 (1) |",
		"| below 0.4 | 0.250 (4) |", "| 0.4 or above | 0.750 (4) |"} {
		if !strings.Contains(table, line) {
			t.Fatalf("table lacks %q:\n%s", line, table)
		}
	}
	if strings.Contains(table, "no confidence") {
		t.Fatalf("a report without calibration got a column:\n%s", table)
	}
	// a search that reports no confidence gives a report without calibration
	r, err = Run(context.Background(), queries[:1], search, Options{Ks: []int{5}})
	if err != nil || r.Calibration != nil {
		t.Fatalf("calibration %+v, err %v", r.Calibration, err)
	}
}
