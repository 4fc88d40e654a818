package eval

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ParseKs reads a --k list such as "1,5,10": positive, deduplicated, sorted.
func ParseKs(s string) ([]int, error) {
	var ks []int
	for part := range strings.SplitSeq(s, ",") {
		k, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || k < 1 {
			return nil, fmt.Errorf("--k takes positive integers, got %q", part)
		}
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return slices.Compact(ks), nil
}

// Row is one labelled report of a comparison table, e.g. "hybrid / var-2".
type Row struct {
	Label  string
	Report Report
}

// Table renders reports as a Markdown table with one row per report and one column per
// metric and K (as the papers' tables 2 and 4), followed by the latency percentiles. kind
// selects a by_kind group; "" uses the overall metrics.
func Table(rows []Row, ks []int, kind string) string {
	var b strings.Builder
	names := MetricNames(ks)
	b.WriteString("| Configuration | Queries |")
	for _, n := range names {
		fmt.Fprintf(&b, " %s |", n)
	}
	b.WriteString(" p50 ms | p95 ms |\n|---|---:|")
	b.WriteString(strings.Repeat("---:|", len(names)+2))
	b.WriteString("\n")
	for _, r := range rows {
		metrics, n := r.Report.Metrics, r.Report.NQueries
		if kind != "" {
			g := r.Report.ByKind[kind]
			metrics, n = g.Metrics, g.NQueries
		}
		fmt.Fprintf(&b, "| %s | %d |", strings.ReplaceAll(r.Label, "|", `\|`), n)
		for _, name := range names {
			fmt.Fprintf(&b, " %.3f |", metrics[name])
		}
		fmt.Fprintf(&b, " %.1f | %.1f |\n", r.Report.LatencyMS.P50, r.Report.LatencyMS.P95)
	}
	return b.String()
}
