package evalrun

import (
	"fmt"
	"slices"
	"strings"

	"github.com/toolgate/toolgate/internal/eval"
)

// CurveTables renders curves as Markdown: per curve, one table of the whole test part and
// one per kind of its queries; a row per point, Recall@K for each K and Completeness@5 (or
// at the largest K without 5) per caller.
func CurveTables(curves []Curve, ks []int) string {
	var b strings.Builder
	for i, cv := range curves {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "## %s (%d traffic, %d test queries)\n\n", cv.Label, cv.Traffic, cv.Test)
		curveTable(&b, cv, ks, "")
		for _, kind := range curveKinds(cv) {
			fmt.Fprintf(&b, "\n### %s\n\n", kind)
			curveTable(&b, cv, ks, kind)
		}
	}
	return b.String()
}

// curveCallers are the callers of a curve's points, in report order.
func curveCallers(cv Curve) []string {
	if cv.Replay == CurveOpen {
		return []string{"open"}
	}
	return []string{"key", "other_key"}
}

func curveKinds(cv Curve) []string {
	if len(cv.Points) == 0 {
		return nil
	}
	kinds := cv.Points[0].Callers[curveCallers(cv)[0]].Kinds()
	if len(kinds) < 2 {
		return nil // the table of the whole test part says it all
	}
	return kinds
}

func curveTable(b *strings.Builder, cv Curve, ks []int, kind string) {
	c := 5
	if !slices.Contains(ks, 5) {
		c = ks[len(ks)-1]
	}
	cols := []string{"traffic", "searches", "labelled", "memories", "observed"}
	for _, who := range curveCallers(cv) {
		for _, k := range ks {
			cols = append(cols, fmt.Sprintf("%s R@%d", who, k))
		}
		cols = append(cols, fmt.Sprintf("%s C@%d", who, c))
	}
	fmt.Fprintf(b, "| %s |\n|%s\n", strings.Join(cols, " | "), strings.Repeat("---:|", len(cols)))
	for _, p := range cv.Points {
		fmt.Fprintf(b, "| %g%% | %d | %d | %d | %d |", p.Fraction*100, p.Replayed, p.Labelled, p.Memories, p.Observed)
		for _, who := range curveCallers(cv) {
			m := curveMetrics(p.Callers[who], kind)
			for _, k := range ks {
				fmt.Fprintf(b, " %.3f |", m[fmt.Sprintf("recall@%d", k)])
			}
			fmt.Fprintf(b, " %.3f |", m[fmt.Sprintf("completeness@%d", c)])
		}
		b.WriteString("\n")
	}
}

func curveMetrics(r eval.Report, kind string) map[string]float64 {
	if kind == "" {
		return r.Metrics
	}
	return r.ByKind[kind].Metrics
}
