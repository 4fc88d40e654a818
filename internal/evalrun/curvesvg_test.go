package evalrun_test

import (
	"encoding/xml"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/eval"
	"github.com/toolgate/toolgate/internal/evalrun"
)

// TestCurveSVG: the chart of a key's curve and open mode's is well-formed SVG with a line per
// caller (the other tenant's dashed), a point per measured share of the traffic, each at
// its Recall@5, and the callers named in the legend, markup escaped.
func TestCurveSVG(t *testing.T) {
	point := func(f float64, recall map[string]float64) evalrun.CurvePoint {
		p := evalrun.CurvePoint{Fraction: f, Callers: map[string]eval.Report{}}
		for who, r := range recall {
			p.Callers[who] = eval.Report{Metrics: map[string]float64{"recall@5": r}}
		}
		return p
	}
	curves := []evalrun.Curve{
		{Label: "hybrid / <default> / key", Replay: evalrun.CurveKey, Points: []evalrun.CurvePoint{
			point(0, map[string]float64{"key": 0.5, "other_key": 0.5}), point(0.5, map[string]float64{"key": 0.6, "other_key": 0.5}),
			point(1, map[string]float64{"key": 0.75, "other_key": 0.5})}},
		{Label: "hybrid / <default> / open", Replay: evalrun.CurveOpen, Points: []evalrun.CurvePoint{
			point(0, map[string]float64{"open": 0.5}), point(1, map[string]float64{"open": 0.7})}},
	}
	svg := evalrun.CurveSVG(curves, 5)
	var doc struct {
		Polylines []struct {
			Points string `xml:"points,attr"`
			Dash   string `xml:"stroke-dasharray,attr"`
		} `xml:"polyline"`
		Circles []struct{} `xml:"circle"`
		Texts   []string   `xml:"text"`
	}
	if err := xml.Unmarshal([]byte(svg), &doc); err != nil {
		t.Fatalf("not XML: %v\n%s", err, svg)
	}
	if len(doc.Polylines) != 3 || len(doc.Circles) != 8 {
		t.Fatalf("%d lines and %d points, want 3 and 8:\n%s", len(doc.Polylines), len(doc.Circles), svg)
	}
	// the value axis runs from y 372 (0) to y 40 (1); the traffic axis from x 56 (0%) to 510 (100%)
	if got := doc.Polylines[0].Points; got != "56.0,206.0 283.0,172.8 510.0,123.0" {
		t.Errorf("the key's line: %s", got)
	}
	if doc.Polylines[1].Dash == "" || doc.Polylines[0].Dash != "" || doc.Polylines[2].Dash != "" {
		t.Errorf("dashes %q %q %q: want the other tenant's key alone dashed", doc.Polylines[0].Dash, doc.Polylines[1].Dash, doc.Polylines[2].Dash)
	}
	legend := strings.Join(doc.Texts, "|")
	for _, want := range []string{"Recall@5", "the teaching key", "another tenant's key", "open mode"} {
		if !strings.Contains(legend, want) {
			t.Errorf("no %q in %q", want, legend)
		}
	}
	if strings.Contains(svg, "<default>") {
		t.Error("a label's markup is not escaped")
	}
}
