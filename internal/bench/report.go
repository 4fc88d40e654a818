package bench

import (
	"fmt"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
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

// Series is one line of a line plot.
type Series struct {
	Name string
	X, Y []float64
}

// LinePNG draws series as lines with point markers and writes a PNG to path.
func LinePNG(path, title, xLabel, yLabel string, series []Series) error {
	p := newPlot(title, xLabel, yLabel)
	for i, s := range series {
		if len(s.X) != len(s.Y) {
			return fmt.Errorf("bench: series %q has %d x and %d y values", s.Name, len(s.X), len(s.Y))
		}
		pts := make(plotter.XYs, len(s.X))
		for j := range s.X {
			pts[j] = plotter.XY{X: s.X[j], Y: s.Y[j]}
		}
		line, points, err := plotter.NewLinePoints(pts)
		if err != nil {
			return fmt.Errorf("bench: series %q: %w", s.Name, err)
		}
		line.Color = plotutil.Color(i)
		points.Color = plotutil.Color(i)
		points.Shape = plotutil.Shape(i)
		p.Add(line, points)
		p.Legend.Add(s.Name, line, points)
	}
	// Start the value axis at zero so differences are not exaggerated, and leave headroom
	// for the legend above the highest point.
	p.Y.Min = min(p.Y.Min, 0)
	p.Y.Max += (p.Y.Max - p.Y.Min) * 0.25
	p.Legend.Top = true
	p.Legend.Left = true
	return p.Save(8*vg.Inch, 5*vg.Inch, path)
}

func newPlot(title, xLabel, yLabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	p.Add(plotter.NewGrid())
	return p
}
