// Package bench is the shared harness of the `toolgate bench` subcommands: warm-up, repeated
// or timed runs over concurrent workers, latency percentiles, throughput, errors, a machine
// description, and output as a Markdown table and a PNG plot.
package bench

import (
	"math"
	"slices"
)

// Percentile returns the p-th percentile (0–100) of values by linear interpolation between
// the closest ranks (the "type 7" definition of R and NumPy's default): with the values
// sorted, rank h = (n-1)·p/100 and the result is v[⌊h⌋] + (h-⌊h⌋)·(v[⌊h⌋+1]-v[⌊h⌋]).
// It returns 0 for no values. values is not modified.
func Percentile(values []float64, p float64) float64 {
	if len(values) == 0 {
		return 0
	}
	s := slices.Clone(values)
	slices.Sort(s)
	p = math.Max(0, math.Min(100, p))
	h := float64(len(s)-1) * p / 100
	lo := int(math.Floor(h))
	if lo+1 >= len(s) {
		return s[len(s)-1]
	}
	return s[lo] + (h-float64(lo))*(s[lo+1]-s[lo])
}
