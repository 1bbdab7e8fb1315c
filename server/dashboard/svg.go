package dashboard

import (
	"bytes"
	"fmt"
	"html/template"
	"strings"

	"github.com/perfbot/perfbot/chart"
)

// stackedSVG draws the per-phase view with chart.Stacked: one bar per
// commit, its phases stacked bottom up in data.Phases' order and the
// part of total no phase accounts for ("other") on top, in the unit the
// table shows. The table under the chart links each commit to its
// comparison with the one before. changeAt are the commits where total's
// trend has a change point, marked on the chart.
func stackedSVG(data *PhasesData, factor float64, label string, changeAt []int) (template.HTML, error) {
	st := &chart.Stack{
		Title:    data.Benchmark + ": total by phase",
		Unit:     label,
		Parts:    append(append([]string(nil), data.Phases...), "other"),
		ChangeAt: changeAt,
	}
	for _, c := range data.Commits {
		row := make([]float64, 0, len(st.Parts))
		for _, p := range data.Phases {
			row = append(row, c.Phases[p]/factor) // 0 when the commit's runs did not measure p
		}
		st.Commits = append(st.Commits, c.Commit)
		st.Values = append(st.Values, append(row, max(c.Other, 0)/factor))
	}
	var buf bytes.Buffer
	if err := chart.Stacked(&buf, st, chart.Options{Format: chart.SVG}); err != nil {
		return "", err
	}
	return inline(buf.String(), "phases-svg", "total per commit, stacked by phase")
}

// inline makes an SVG document an element for the page: without the XML
// declaration, and scaled by the page (a viewBox) rather than fixed in
// points.
func inline(s, id, label string) (template.HTML, error) {
	i := strings.Index(s, "<svg")
	if i < 0 {
		return "", fmt.Errorf("chart: no <svg> element in the chart")
	}
	s = s[i:]
	s = strings.Replace(s, "<svg", fmt.Sprintf(`<svg id=%q role="img" aria-label=%q preserveAspectRatio="xMinYMin meet"`, id, label), 1)
	return template.HTML(s), nil // the chart package escapes the text it draws
}
