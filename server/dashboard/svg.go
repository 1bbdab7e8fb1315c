package dashboard

import (
	"bytes"
	"fmt"
	"html/template"
	"strings"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/chart"
)

// trendSVG draws the trend with chart.Trend (the chart perfbot trend
// --format svg writes) for inlining: without the XML declaration, and
// scaled by the page (a viewBox) rather than fixed in points.
func trendSVG(t *analysis.Trend) (template.HTML, error) {
	var buf bytes.Buffer
	if err := chart.Trend(&buf, t, chart.Options{Format: chart.SVG}); err != nil {
		return "", err
	}
	s := buf.String()
	i := strings.Index(s, "<svg")
	if i < 0 {
		return "", fmt.Errorf("chart: no <svg> element in the chart")
	}
	s = s[i:]
	// chart.Trend sizes the image in points; a viewBox lets CSS size it.
	s = strings.Replace(s, "<svg", `<svg id="trend-svg" role="img" aria-label="trend chart" preserveAspectRatio="xMinYMin meet"`, 1)
	return template.HTML(s), nil // chart.Trend escapes the text it draws
}

// stackColors are the phases' colors (matplotlib's tab10, which the
// trend chart's colors come from too).
var stackColors = []string{"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#bcbd22", "#17becf"}

// otherColor is the part of total no phase accounts for.
const otherColor = "#c7c7c7"

// stackedSVG draws one bar per commit, its phases stacked bottom up in
// data.Phases' order and the unaccounted rest on top, the bar's height
// its total (or the phases' sum, when that is larger); each segment has
// a <title> naming commit, phase and value, and each bar links to the
// commit's comparison with the one before.
//
// It is drawn here rather than with gonum/plot (which draws the trend
// chart) because a bar must be a link and carry a tooltip, which
// gonum/plot's SVG canvas cannot express; it is a few rectangles and
// needs no script.
func stackedSVG(data *PhasesData, factor float64, label string) template.HTML {
	const (
		w, h                     = 1000, 420
		left, right, top, bottom = 70, 160, 20, 50
	)
	n := len(data.Commits)
	peak := 0.0
	for _, c := range data.Commits {
		sum := c.Other
		for _, v := range c.Phases {
			sum += v
		}
		peak = max(peak, c.Total, sum)
	}
	if peak <= 0 {
		peak = 1
	}
	plotW, plotH := float64(w-left-right), float64(h-top-bottom)
	slot := plotW / float64(max(n, 1))
	barW := max(1, slot*0.8)
	y := func(v float64) float64 { return float64(top) + plotH - v/peak*plotH }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg id="phases-svg" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" role="img" aria-label="total time per commit, stacked by phase" font-family="sans-serif" font-size="11">`, w, h)
	// Axis with five ticks.
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%g" stroke="#333"/>`, left, top, left, y(0))
	for i := 0; i <= 4; i++ {
		v := peak * float64(i) / 4
		fmt.Fprintf(&b, `<line x1="%d" x2="%g" y1="%.1f" y2="%.1f" stroke="#ddd"/><text x="%d" y="%.1f" text-anchor="end">%s</text>`,
			left, float64(w-right), y(v), y(v), left-4, y(v)+4, template.HTMLEscapeString(number(v/factor)))
	}
	fmt.Fprintf(&b, `<text x="12" y="%d" transform="rotate(-90 12 %d)" text-anchor="middle">%s</text>`, top+int(plotH)/2, top+int(plotH)/2, template.HTMLEscapeString(label))
	colors := map[string]string{}
	for i, p := range data.Phases {
		colors[p] = stackColors[i%len(stackColors)]
	}
	labelEvery := max(1, n/12)
	for i, c := range data.Commits {
		x := float64(left) + float64(i)*slot + (slot-barW)/2
		if c.CompareURL != "" {
			fmt.Fprintf(&b, `<a href="%s">`, template.HTMLEscapeString(c.CompareURL))
		}
		fmt.Fprintf(&b, `<g class="bar" data-commit="%s" data-total="%g">`, template.HTMLEscapeString(c.Commit), c.Total)
		base := 0.0
		seg := func(name, color string, v float64) {
			if v <= 0 {
				return
			}
			fmt.Fprintf(&b, `<rect class="seg" data-phase="%s" data-value="%g" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s %s: %s %s</title></rect>`,
				template.HTMLEscapeString(name), v, x, y(base+v), barW, y(base)-y(base+v), color,
				template.HTMLEscapeString(short(c.Commit)), template.HTMLEscapeString(name), number(v/factor), template.HTMLEscapeString(label))
			base += v
		}
		for _, p := range data.Phases {
			if v, ok := c.Phases[p]; ok {
				seg(p, colors[p], v)
			}
		}
		seg("other", otherColor, c.Other)
		b.WriteString(`</g>`)
		if c.CompareURL != "" {
			b.WriteString(`</a>`)
		}
		if i%labelEvery == 0 {
			fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`, x+barW/2, h-bottom+16, template.HTMLEscapeString(short(c.Commit)))
		}
	}
	// Legend, top phase first as the bars stack.
	entries := append([]string{"other"}, reversed(data.Phases)...)
	for i, p := range entries {
		color := otherColor
		if p != "other" {
			color = colors[p]
		}
		ly := top + 10 + i*18
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="12" height="12" fill="%s"/><text x="%d" y="%d">%s</text>`,
			w-right+14, ly-10, color, w-right+32, ly, template.HTMLEscapeString(p))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

func reversed(xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[len(xs)-1-i] = x
	}
	return out
}
