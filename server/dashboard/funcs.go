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
	"github.com/perfbot/perfbot/analysis/render"
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
	// rowsOf is a table's rows with their id and the one scale of their
	// interval bars.
	"rowsOf": func(t render.ViewTable, id string, i int) map[string]any {
		if i > 0 {
			id = fmt.Sprintf("%s-%d", id, i)
		}
		return map[string]any{"Table": t, "ID": id, "Primary": strings.HasPrefix(id, "compare-data"), "Scale": newBarScale(t.Rows)}
	},
	"intervalBar":  intervalBar,
	"intervalAxis": intervalAxis,
	"commitPage":   commitPageURL,
	"sparkline":    sparkline,
	"sparkCommits": func() int { return sparkCommits },
	"scaledPair":   scaledPair,
	"seriesName":   seriesName,
	// args are a side's variant arguments as a shell would take them,
	// or "none".
	"args": func(a []string) string {
		if len(a) == 0 {
			return "none"
		}
		return render.FormatArgs(a)
	},
	// oneIn is how many comparisons α allows one false alarm in: 100
	// for 0.01 (0: a report stored without its α).
	"oneIn": func(alpha float64) int {
		if !(alpha > 0) {
			return 0
		}
		return int(math.Round(1 / alpha))
	},
	"otherUnits": func(ts []render.ViewTable) string {
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
	"shareWidth": func(p render.ViewShare) string {
		if math.IsNaN(p.SharePct) || p.SharePct <= 0 {
			return ""
		}
		return fmt.Sprintf("%.2f", p.SharePct)
	},
}

// scaledPair formats two values of a unit in one scale: "1.20s → 1.50s".
func scaledPair(a, b float64, unit string) string {
	t := &analysis.Trend{Key: analysis.Key{Unit: unit}, Commits: []analysis.TrendCommit{{Median: a}, {Median: b}}}
	f, label := t.AxisScale()
	return number(a/f) + " → " + number(b/f) + " " + label
}

var tagRE = regexp.MustCompile(`<[^>]*>`)

// plainText strips the formatter's tags from s and unescapes it.
func plainText(s string) string { return html.UnescapeString(tagRE.ReplaceAllString(s, "")) }

// A barScale is the x scale of one table's interval bars, in percent:
// every row of the table is drawn on it, so that their bars compare at
// a glance, and intervalAxis labels it.
type barScale struct{ Lo, Hi float64 }

// The interval bars' geometry, in pixels: width, a row's height, the
// axis's height and the margin at each end.
const barW, barH, axisH, barPad = 140.0, 16.0, 18.0, 8.0

// newBarScale returns the scale that holds every row's change, its
// interval where bounded, 0 and its ±floor band, at least ±1%, its ends
// rounded out to 1, 2, 2.5 or 5 times a power of ten.
func newBarScale(rows []render.ViewRow) barScale {
	lo, hi := -1.0, 1.0
	for _, r := range rows {
		if !finite(r.DeltaPct) {
			continue // not drawn
		}
		vs := []float64{r.DeltaPct}
		if finite(r.FloorPct) && r.FloorPct > 0 {
			vs = append(vs, -r.FloorPct, r.FloorPct)
		}
		if finite(r.Lo) && finite(r.Hi) {
			vs = append(vs, r.Lo, r.Hi)
		}
		lo, hi = min(lo, slices.Min(vs)), max(hi, slices.Max(vs))
	}
	return barScale{-niceCeil(-lo), niceCeil(hi)}
}

// x is v's position in a bar.
func (s barScale) x(v float64) float64 {
	return barPad + (v-s.Lo)/(s.Hi-s.Lo)*(barW-2*barPad)
}

// niceCeil rounds x > 0 up to 1, 2, 2.5 or 5 times a power of ten.
func niceCeil(x float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*p >= x*(1-1e-12) {
			return m * p
		}
	}
	return 10 * p
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// intervalAxis draws the axis of a table's interval bars, for its
// heading: a line with ticks at both ends and at 0, labelled in percent
// (0's label left out where it would run into an end's).
func intervalAxis(s barScale) template.HTML {
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="interval-axis" width="%g" height="%g" viewBox="0 0 %g %g" role="img" aria-label="scale %s to %s">`,
		barW, axisH, barW, axisH, axisLabel(s.Lo), axisLabel(s.Hi))
	fmt.Fprintf(&b, `<g class="axis" stroke="#6b7280"><line x1="%.1f" y1="2" x2="%.1f" y2="2"/>`, s.x(s.Lo), s.x(s.Hi))
	for _, v := range []float64{s.Lo, 0, s.Hi} {
		fmt.Fprintf(&b, `<line class="tick" data-value="%g" x1="%.1f" y1="0" x2="%.1f" y2="6"/>`, v, s.x(v), s.x(v))
	}
	b.WriteString(`</g><g class="axis-labels" font-size="9" fill="#374151">`)
	// A 9-pixel character is about 5.5 pixels wide: 0's label is left
	// out where it would come within 2 pixels of an end's.
	left, right := s.x(s.Lo)-barPad+1, s.x(s.Hi)+barPad-1
	fmt.Fprintf(&b, `<text x="%.1f" y="16" text-anchor="start">%s</text>`, left, axisLabel(s.Lo))
	if z := s.x(0); left+5.5*float64(len(axisLabel(s.Lo)))+2 <= z-3 && z+3+2 <= right-5.5*float64(len(axisLabel(s.Hi))) {
		fmt.Fprintf(&b, `<text x="%.1f" y="16" text-anchor="middle">0</text>`, z)
	}
	fmt.Fprintf(&b, `<text x="%.1f" y="16" text-anchor="end">%s</text></g></svg>`, right, axisLabel(s.Hi))
	return template.HTML(b.String())
}

// axisLabel is an end of the axis in percent: "-5%", "+25%".
func axisLabel(v float64) string { return fmt.Sprintf("%+g%%", v) }

// intervalBar draws a row's change and its interval against its noise
// floor on its table's scale: a grey band of ±floor, the 0 line, a line
// from the interval's low to its high bound and a dot at the change;
// red for a regression, green for an improvement. Nothing for a row
// without a change in percent.
func intervalBar(row render.ViewRow, s barScale) template.HTML {
	d, lo, hi, floor := row.DeltaPct, row.Lo, row.Hi, row.FloorPct
	if !finite(d) {
		return ""
	}
	color := "#4b5563"
	switch row.Verdict {
	case analysis.VerdictRegression:
		color = "#b91c1c"
	case analysis.VerdictImprovement:
		color = "#15803d"
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="interval" width="%g" height="%g" viewBox="0 0 %g %g" role="img" aria-label="change %s on a scale of %s to %s">`,
		barW, barH, barW, barH, html.EscapeString(plainText(row.Delta)), axisLabel(s.Lo), axisLabel(s.Hi))
	if finite(floor) && floor > 0 {
		fmt.Fprintf(&b, `<rect class="floor" x="%.1f" y="2" width="%.1f" height="12" fill="#e5e7eb"/>`, s.x(-floor), s.x(floor)-s.x(-floor))
	}
	fmt.Fprintf(&b, `<line class="zero" x1="%.1f" y1="0" x2="%.1f" y2="%g" stroke="#6b7280"/>`, s.x(0), s.x(0), barH)
	if finite(lo) && finite(hi) && hi > lo {
		fmt.Fprintf(&b, `<line class="ci" x1="%.1f" y1="8" x2="%.1f" y2="8" stroke="%s" stroke-width="2"/>`, s.x(lo), s.x(hi), color)
	}
	fmt.Fprintf(&b, `<circle cx="%.1f" cy="8" r="3.5" fill="%s"/></svg>`, s.x(d), color)
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
