package eval

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// CalibrationEdges are the bounds of the confidence bins a Calibration counts in: [0, 0.1),
// [0.1, 0.25), ..., [0.8, 1].
var CalibrationEdges = []float64{0, 0.1, 0.25, 0.4, 0.6, 0.8, 1}

// Calibration says how well an answer's confidence predicts that its first result is a gold
// tool: per confidence bin, how many searches fell in it and how many of those had their
// first result right, and the same below and at or above the threshold an agent acts on.
type Calibration struct {
	Searches  int              `json:"searches"`
	Threshold float64          `json:"threshold"`
	Bins      []CalibrationBin `json:"bins"`
	Below     CalibrationBin   `json:"below"`
	Above     CalibrationBin   `json:"above"`
	// ECE is the expected calibration error: the mean over searches of |right rate − mean
	// confidence| of their bin (0: every bin right as often as its confidence says).
	ECE float64 `json:"ece"`
}

// CalibrationBin is the searches whose answer confidence is in [Low, High) (the last bin
// includes 1): their number, the share whose first result is a gold tool and their mean
// confidence (both 0 for an empty bin).
type CalibrationBin struct {
	Low            float64 `json:"low"`
	High           float64 `json:"high"`
	Searches       int     `json:"searches"`
	Right          float64 `json:"right"`
	MeanConfidence float64 `json:"mean_confidence"`
}

// calibrationCounter accumulates each search's answer confidence and whether its first
// result was right.
type calibrationCounter struct {
	threshold float64
	conf      []float64
	right     []bool
}

func (c *calibrationCounter) add(confidence float64, ranking, gold []string) {
	c.conf = append(c.conf, confidence)
	c.right = append(c.right, len(ranking) > 0 && slices.Contains(gold, ranking[0]))
}

func (c *calibrationCounter) report() *Calibration {
	out := &Calibration{Searches: len(c.conf), Threshold: c.threshold}
	bins := make([]binSum, len(CalibrationEdges)-1)
	var below, above binSum
	for i, conf := range c.conf {
		b := len(bins) - 1
		for j := range bins {
			if conf < CalibrationEdges[j+1] {
				b = j
				break
			}
		}
		bins[b].add(conf, c.right[i])
		if conf < c.threshold {
			below.add(conf, c.right[i])
		} else {
			above.add(conf, c.right[i])
		}
	}
	for j, s := range bins {
		bin := s.bin(CalibrationEdges[j], CalibrationEdges[j+1])
		out.Bins = append(out.Bins, bin)
		if out.Searches > 0 {
			out.ECE += float64(bin.Searches) / float64(out.Searches) * math.Abs(bin.Right-bin.MeanConfidence)
		}
	}
	out.Below = below.bin(0, c.threshold)
	out.Above = above.bin(c.threshold, 1)
	return out
}

type binSum struct {
	n, right int
	conf     float64
}

func (s *binSum) add(conf float64, right bool) {
	s.n++
	s.conf += conf
	if right {
		s.right++
	}
}

func (s binSum) bin(low, high float64) CalibrationBin {
	b := CalibrationBin{Low: low, High: high, Searches: s.n}
	if s.n > 0 {
		b.Right = float64(s.right) / float64(s.n)
		b.MeanConfidence = s.conf / float64(s.n)
	}
	return b
}

// CalibrationTable renders the calibration of reports as Markdown: one row per confidence
// bin, one column per report with the share of its searches whose first result was right and
// their number, then the rows below and at or above the threshold and the ECE. Reports
// without a calibration are left out; "" when none has one.
func CalibrationTable(rows []Row) string {
	var with []Row
	for _, r := range rows {
		if r.Report.Calibration != nil {
			with = append(with, r)
		}
	}
	if len(with) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("| confidence |")
	for _, r := range with {
		fmt.Fprintf(&b, " %s |", strings.ReplaceAll(r.Label, "|", `\|`))
	}
	b.WriteString("\n|---|" + strings.Repeat("---:|", len(with)) + "\n")
	cell := func(bin CalibrationBin) string {
		if bin.Searches == 0 {
			return "—"
		}
		return fmt.Sprintf("%.3f (%d)", bin.Right, bin.Searches)
	}
	for j := range len(CalibrationEdges) - 1 {
		fmt.Fprintf(&b, "| %g–%g |", CalibrationEdges[j], CalibrationEdges[j+1])
		for _, r := range with {
			fmt.Fprintf(&b, " %s |", cell(r.Report.Calibration.Bins[j]))
		}
		b.WriteString("\n")
	}
	th := with[0].Report.Calibration.Threshold
	fmt.Fprintf(&b, "| below %g |", th)
	for _, r := range with {
		fmt.Fprintf(&b, " %s |", cell(r.Report.Calibration.Below))
	}
	fmt.Fprintf(&b, "\n| %g or above |", th)
	for _, r := range with {
		fmt.Fprintf(&b, " %s |", cell(r.Report.Calibration.Above))
	}
	b.WriteString("\n| ECE |")
	for _, r := range with {
		fmt.Fprintf(&b, " %.3f |", r.Report.Calibration.ECE)
	}
	b.WriteString("\n")
	return b.String()
}
