package dashboard

import (
	"fmt"
	"html"
	"html/template"
	"math"
	"regexp"
	"slices"
	"strings"

	"github.com/perfbot/perfbot/analysis"
)

// funcs are the templates' helpers.
var funcs = template.FuncMap{
	"short":  short,
	"mul100": func(x float64) float64 { return x * 100 },
	// scale formats a phases page value in the page's scale.
	"scale": func(d *PhasesData, v float64) string { return number(v / d.factor) },
	"jobs": func(title, id string, jobs []JobView) map[string]any {
		return map[string]any{"Title": title, "ID": id, "Jobs": jobs}
	},
	// safe marks a piece the view's htmlFormatter already escaped.
	"safe": func(s string) template.HTML { return template.HTML(s) },
	// plain is a formatted piece as plain text, for an attribute.
	"plain": plainText,
	"rowsOf": func(t analysis.ViewTable, id string, i int) map[string]any {
		if i > 0 {
			id = fmt.Sprintf("%s-%d", id, i)
		}
		return map[string]any{"Table": t, "ID": id, "Primary": strings.HasPrefix(id, "compare-data")}
	},
	"intervalBar":  intervalBar,
	"commitPage":   commitPageURL,
	"sparkline":    sparkline,
	"sparkCommits": func() int { return sparkCommits },
	// scaledPair formats two values of a unit in one scale: "1.20s → 1.50s".
	"scaledPair": func(a, b float64, unit string) string {
		t := &analysis.Trend{Key: analysis.Key{Unit: unit}, Commits: []analysis.TrendCommit{{Median: a}, {Median: b}}}
		f, label := t.AxisScale()
		return number(a/f) + " → " + number(b/f) + " " + label
	},
	"seriesName": seriesName,
	// args are a side's variant arguments as a shell would take them,
	// or "none".
	"args": func(a []string) string {
		if len(a) == 0 {
			return "none"
		}
		return analysis.FormatArgs(a)
	},
	// oneIn is how many comparisons α allows one false alarm in: 100
	// for 0.01 (0: a report stored without its α).
	"oneIn": func(alpha float64) int {
		if !(alpha > 0) {
			return 0
		}
		return int(math.Round(1 / alpha))
	},
	"otherUnits": func(ts []analysis.ViewTable) string {
		var units []string
		for _, t := range ts {
			if !slices.Contains(units, t.Unit) {
				units = append(units, t.Unit)
			}
		}
		return strings.Join(units, ", ")
	},
	// shareWidth is a part's width in the attribution's bar, in percent
	// (0: not drawn).
	"shareWidth": func(p analysis.ViewShare) string {
		if math.IsNaN(p.SharePct) || p.SharePct <= 0 {
			return ""
		}
		return fmt.Sprintf("%.2f", p.SharePct)
	},
}

var tagRE = regexp.MustCompile(`<[^>]*>`)

// plainText strips the formatter's tags from s and unescapes it.
func plainText(s string) string { return html.UnescapeString(tagRE.ReplaceAllString(s, "")) }

// intervalBar draws a row's change and its interval against its noise
// floor: a grey band of ±floor, a line from the interval's low to its
// high bound and a dot at the change, on a scale that holds them all;
// red for a regression, green for an improvement. Nothing for a row
// without a change in percent.
func intervalBar(row analysis.ViewRow) template.HTML {
	const w, h, mid, half = 140.0, 16.0, 70.0, 64.0
	d, lo, hi, floor := row.DeltaPct, row.Lo, row.Hi, row.FloorPct
	if math.IsNaN(d) || math.IsInf(d, 0) {
		return ""
	}
	span := math.Max(math.Abs(d), 2*floor)
	bounded := !math.IsInf(lo, 0) && !math.IsInf(hi, 0) && !math.IsNaN(lo) && !math.IsNaN(hi)
	if bounded {
		span = math.Max(span, math.Max(math.Abs(lo), math.Abs(hi)))
	}
	span = math.Max(span, 1) * 1.05
	x := func(v float64) float64 { return mid + v/span*half }
	color := "#4b5563"
	switch row.Verdict {
	case analysis.VerdictRegression:
		color = "#b91c1c"
	case analysis.VerdictImprovement:
		color = "#15803d"
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="interval" width="%g" height="%g" viewBox="0 0 %g %g" role="img" aria-label="change %s">`, w, h, w, h, html.EscapeString(plainText(row.Delta)))
	if floor > 0 {
		fmt.Fprintf(&b, `<rect x="%.1f" y="2" width="%.1f" height="12" fill="#e5e7eb"/>`, x(-floor), x(floor)-x(-floor))
	}
	fmt.Fprintf(&b, `<line x1="%g" y1="1" x2="%g" y2="15" stroke="#9ca3af"/>`, mid, mid)
	if bounded && hi > lo {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="8" x2="%.1f" y2="8" stroke="%s" stroke-width="2"/>`, x(lo), x(hi), color)
	}
	fmt.Fprintf(&b, `<circle cx="%.1f" cy="8" r="3.5" fill="%s"/></svg>`, x(d), color)
	return template.HTML(b.String())
}

// sparkline draws a headline's last commits as a small line, with a red
// tick at each change point; its title says what it shows.
func sparkline(h *IndexHeadline) template.HTML {
	const w, ht, pad = 160.0, 30.0, 3.0
	if len(h.Values) == 0 {
		return ""
	}
	lo, hi := slices.Min(h.Values), slices.Max(h.Values)
	if hi == lo {
		lo, hi = lo-1, hi+1
	}
	x := func(i int) float64 {
		if len(h.Values) == 1 {
			return w / 2
		}
		return pad + float64(i)*(w-2*pad)/float64(len(h.Values)-1)
	}
	y := func(v float64) float64 { return ht - pad - (v-lo)/(hi-lo)*(ht-2*pad) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="spark" width="%g" height="%g" viewBox="0 0 %g %g" role="img" aria-label="last %d commits"><title>%s: the medians of the last %d commits, oldest first</title>`,
		w, ht, w, ht, len(h.Values), html.EscapeString(h.Phase+" "+h.Unit), len(h.Values))
	for _, i := range h.ChangeAt {
		fmt.Fprintf(&b, `<line class="spark-change" x1="%.1f" y1="0" x2="%.1f" y2="%g"/>`, x(i), x(i), ht)
	}
	b.WriteString(`<polyline class="spark-line" points="`)
	for i, v := range h.Values {
		fmt.Fprintf(&b, "%.1f,%.1f ", x(i), y(v))
	}
	b.WriteString(`"/></svg>`)
	return template.HTML(b.String())
}
