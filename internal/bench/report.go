package bench

import (
	"fmt"
	"strings"
	"time"
)

// Table renders results as a Markdown table, one row per result, in the given order.
func Table(results []Result) string {
	var b strings.Builder
	b.WriteString("| Benchmark | Workers | Runs | Errors | p50 | p95 | p99 | Throughput |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range results {
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %s | %s | %s | %.1f/s |\n",
			strings.ReplaceAll(r.Name, "|", `\|`), r.Concurrency, r.Runs, r.Errors,
			FormatDuration(r.P50), FormatDuration(r.P95), FormatDuration(r.P99), r.Throughput)
	}
	return b.String()
}

// FormatDuration prints a latency with a unit that keeps three significant figures readable:
// µs below a millisecond, ms below a second, else s.
func FormatDuration(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return fmt.Sprintf("%.1f µs", float64(d)/float64(time.Microsecond))
	case d < time.Second:
		return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
	default:
		return fmt.Sprintf("%.2f s", d.Seconds())
	}
}
