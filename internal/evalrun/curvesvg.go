package evalrun

import (
	"fmt"
	"html"
	"os"
	"slices"
	"strings"
)

// WriteCurveSVG writes CurveSVG of curves to path, with Recall@5, or at the largest of ks
// when 5 is not among them.
func WriteCurveSVG(path string, curves []Curve, ks []int) error {
	k := 5
	if !slices.Contains(ks, 5) {
		k = ks[len(ks)-1]
	}
	return os.WriteFile(path, []byte(CurveSVG(curves, k)), 0o644)
}

// curveColors are the lines' colours, in series order (repeated past the last).
var curveColors = []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"}

// CurveSVG draws curves as one SVG line chart: for each curve and caller, Recall@k of the
// whole test part against the share of the traffic replayed (0 to 100%), the value axis
// from 0 to 1; the legend names the caller, and the configuration when there are several (a
// configuration has two curves: a key's replay and open mode's). A curve without a point
// draws nothing.
func CurveSVG(curves []Curve, k int) string {
	const w, h = 760.0, 420.0
	const left, right, top, bottom = 56.0, 250.0, 40.0, 48.0
	x := func(f float64) float64 { return left + f*(w-left-right) }
	y := func(v float64) float64 { return h - bottom - v*(h-top-bottom) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %g %g" width="%g" height="%g" font-family="sans-serif" font-size="12">`+"\n", w, h, w, h)
	fmt.Fprintf(&b, `<rect width="%g" height="%g" fill="white"/>`+"\n", w, h)
	fmt.Fprintf(&b, `<text x="%g" y="22" font-size="15">Learning curve: Recall@%d of the test part</text>`+"\n", left, k)
	for i := 0; i <= 5; i++ {
		v := float64(i) / 5
		fmt.Fprintf(&b, `<line x1="%g" x2="%g" y1="%.1f" y2="%.1f" stroke="#ddd"/>`, left, w-right, y(v), y(v))
		fmt.Fprintf(&b, `<text x="%g" y="%.1f" text-anchor="end">%.1f</text>`+"\n", left-6, y(v)+4, v)
	}
	for i := 0; i <= 4; i++ {
		f := float64(i) / 4
		fmt.Fprintf(&b, `<text x="%.1f" y="%g" text-anchor="middle">%g%%</text>`+"\n", x(f), h-bottom+18, f*100)
	}
	fmt.Fprintf(&b, `<text x="%g" y="%g" text-anchor="middle">traffic replayed (share of the traffic part, labelled by its gold tools)</text>`+"\n",
		(left+w-right)/2, h-8)
	fmt.Fprintf(&b, `<line x1="%g" x2="%g" y1="%.1f" y2="%.1f" stroke="#333"/>`+"\n", left, w-right, y(0), y(0))
	metric := fmt.Sprintf("recall@%d", k)
	n, several := 0, len(curves) > 2
	for _, cv := range curves {
		if len(cv.Points) == 0 {
			continue
		}
		for _, who := range curveCallers(cv) {
			color := curveColors[n%len(curveColors)]
			var pts []string
			for _, p := range cv.Points {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(p.Fraction), y(p.Callers[who].Metrics[metric])))
			}
			dash := ""
			if who == "other_key" {
				dash = ` stroke-dasharray="5 4"`
			}
			fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2"%s points="%s"/>`+"\n", color, dash, strings.Join(pts, " "))
			for _, p := range pts {
				xy := strings.Split(p, ",")
				fmt.Fprintf(&b, `<circle cx="%s" cy="%s" r="3" fill="%s"/>`, xy[0], xy[1], color)
			}
			ly := top + 10 + float64(n)*20
			fmt.Fprintf(&b, "\n"+`<line x1="%g" x2="%g" y1="%g" y2="%g" stroke="%s" stroke-width="2"%s/>`, w-right+14, w-right+34, ly, ly, color, dash)
			fmt.Fprintf(&b, `<text x="%g" y="%g">%s</text>`+"\n", w-right+40, ly+4, html.EscapeString(curveLegend(cv, who, several)))
			n++
		}
	}
	b.WriteString("</svg>\n")
	return b.String()
}

// curveLegend names a line: the caller, and the curve's configuration when withLabel.
func curveLegend(cv Curve, who string, withLabel bool) string {
	name := map[string]string{"key": "the teaching key", "other_key": "another tenant's key", "open": "open mode"}[who]
	if !withLabel {
		return name
	}
	return name + " · " + strings.TrimSuffix(cv.Label, " / "+cv.Replay)
}
