package bench

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// WriteReport prints a benchmark's Markdown section: its title, the command that ran it
// (toolgate followed by args), the machine and the table of results.
func WriteReport(w io.Writer, title string, args []string, m Machine, results []Result) {
	fmt.Fprintf(w, "### %s\n\nCommand: `toolgate %s`\n\nMachine: %s\n\n%s", title, strings.Join(args, " "), m, Table(results))
}

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

// Durations lists durations formatted by FormatDuration, comma-separated.
func Durations(ds []time.Duration) string {
	s := make([]string, len(ds))
	for i, d := range ds {
		s[i] = FormatDuration(d)
	}
	return strings.Join(s, ", ")
}

// Ratios lists a[i] / b[i], comma-separated; "–" where b has no positive value.
func Ratios(a, b []time.Duration) string {
	s := make([]string, len(a))
	for i := range a {
		if i >= len(b) || b[i] <= 0 {
			s[i] = "–"
			continue
		}
		s[i] = fmt.Sprintf("%.2f×", float64(a[i])/float64(b[i]))
	}
	return strings.Join(s, ", ")
}
