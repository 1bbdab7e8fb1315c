package render

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/analysis/internal/fmtx"
)

// RenderText writes all of r for a terminal: the verdict, aligned tables
// of the primary and then the other units (each followed by a line for
// every regressed phase an Explanation explains), the memory diffs, the
// attribution, the warnings with failed runs, and the environment. It
// uses no Markdown. RenderTextBrief writes what fits a screen.
func RenderText(w io.Writer, r *analysis.Report) error { return renderText(w, r, false) }

// RenderTextBrief writes r for a terminal as a screen holds it: the
// verdict, the primary tables with their explanation lines, what the
// runs could not see, the failed runs, the attribution's sentences and a
// count of what RenderText adds (other units, warnings, memory diffs,
// environment).
func RenderTextBrief(w io.Writer, r *analysis.Report) error { return renderText(w, r, true) }

func renderText(w io.Writer, r *analysis.Report, brief bool) error {
	var b strings.Builder
	plain := func(s string) string { return s }
	fmt.Fprintf(&b, "perfbot: %s\n%s\n\n", verdictWord(r.Verdict), wrapText(headline(r, plain), ""))
	tw := tabwriter.NewWriter(&b, 0, 8, 2, ' ', 0)
	fmt.Fprintf(tw, "base\t%s\t%s\n", sideName(r, r.Base, r.BaseArgs, plain), runsLine(r.Runs.Base))
	fmt.Fprintf(tw, "head\t%s\t%s\n", sideName(r, r.Head, r.HeadArgs, plain), runsLine(r.Runs.Head))
	tw.Flush()
	if r.Config != "" {
		// Apart from the table: a long path would widen its columns.
		fmt.Fprintf(&b, "config  %s\n", r.Config)
	}
	if r.Verdict != analysis.VerdictError {
		if brief {
			fmt.Fprintf(&b, "%s\n", wrapText(estimateLine(r), ""))
		} else {
			fmt.Fprintf(&b, "%s\n", wrapText(methodLine(r)+" "+estimateLine(r), ""))
		}
	}

	for _, g := range groupRows(r.Phases, true) {
		b.WriteString("\n")
		textTable(&b, g)
		textProfileLines(&b, r, g)
	}
	if line := oneSidedLine(r, plain); line != "" {
		fmt.Fprintf(&b, "\n%s\n", wrapText(line, ""))
	}
	if line := mdeLine(r, plain); line != "" {
		fmt.Fprintf(&b, "\n%s\n", wrapText(line, ""))
	}
	if brief {
		// Why runs failed is the first thing to read when they did.
		textFailures(&b, r)
		for _, a := range r.Attribution {
			b.WriteString("\n")
			for _, line := range attributionLines(a, plain) {
				fmt.Fprintf(&b, "%s\n", wrapText(line, ""))
			}
		}
		if more := briefOmits(r); more != "" {
			fmt.Fprintf(&b, "\n%s\n", wrapText(more, ""))
		}
		_, err := io.WriteString(w, trimLines(b.String()))
		return err
	}
	if line := simulationLine(r, plain); line != "" {
		fmt.Fprintf(&b, "\n%s\n", line)
	}
	for _, d := range r.MemoryDiffs {
		fmt.Fprintf(&b, "\n%s\n", analysis.MemoryLine(d, plain, plain))
		for _, t := range []struct {
			unit  string
			sites []analysis.AllocSite
		}{{"B", d.Space}, {"objects", d.Objects}} {
			for _, s := range t.sites {
				evidence := ""
				if s.HasEvidence() {
					evidence = ", " + fmtx.FormatPEq(s.P)
				}
				fmt.Fprintf(&b, "  %s a run (%s → %s%s), %s\n", fmtx.FormatAllocDelta(s.Delta, t.unit),
					fmtx.FormatAlloc(s.Base, t.unit), fmtx.FormatAlloc(s.Head, t.unit), evidence, analysis.ShortFuncName(s.Name))
			}
		}
	}
	if groups := groupRows(r.Phases, false); len(groups) > 0 {
		fmt.Fprintf(&b, "\nOther units (shown for explanation; only %s decides the verdict)\n", strings.Join(r.Options.PrimaryUnits, ", "))
		for _, g := range groups {
			b.WriteString("\n")
			textTable(&b, g)
			textProfileLines(&b, r, g)
		}
	}

	for _, a := range r.Attribution {
		b.WriteString("\nAttribution: ")
		for _, line := range attributionLines(a, plain) {
			fmt.Fprintf(&b, "%s\n", line)
		}
		tw := tabwriter.NewWriter(&b, 0, 8, 2, ' ', 0)
		if a.Changed() {
			fmt.Fprint(tw, "  phase\tΔ\tΔ%\tshare\tverdict\n")
		} else {
			fmt.Fprint(tw, "  phase\tΔ\tΔ%\tverdict\n")
		}
		for _, p := range a.Phases {
			if a.Changed() {
				fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", p.Phase, fmtx.FormatDelta(p.Delta, a.Unit), formatPhasePct(p.DeltaPct),
					formatShareCell(p.SharePct), shareVerdict(p))
			} else {
				fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", p.Phase, fmtx.FormatDelta(p.Delta, a.Unit), formatPhasePct(p.DeltaPct), shareVerdict(p))
			}
		}
		if a.Changed() {
			fmt.Fprintf(tw, "  the rest\t%s\t\t%s\t\n", fmtx.FormatDelta(a.Unexplained, a.Unit), formatShareCell(a.UnexplainedSharePct))
		}
		tw.Flush()
	}

	if len(r.Warnings) > 0 {
		b.WriteString("\nWarnings\n")
		for _, warning := range r.Warnings {
			fmt.Fprintf(&b, "%s\n", wrapText("  - "+warning, "    "))
		}
	}
	textFailures(&b, r)
	if keys := r.EnvKeys(); len(keys) > 0 {
		b.WriteString("\nEnvironment\n")
		tw := tabwriter.NewWriter(&b, 0, 8, 2, ' ', 0)
		fmt.Fprint(tw, "  key\tbase\thead\t\n")
		for _, k := range keys {
			bv, inBase := r.BaseEnv[k]
			hv, inHead := r.HeadEnv[k]
			mark := ""
			if !inBase || !inHead || bv != hv {
				mark = "differs"
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", k, envValueText(bv, inBase), envValueText(hv, inHead), mark)
		}
		tw.Flush()
	}
	_, err := io.WriteString(w, trimLines(b.String()))
	return err
}

// textFailures writes the failed runs, each distinct failure with the
// end of its output.
func textFailures(b *strings.Builder, r *analysis.Report) {
	if len(r.Failures) == 0 {
		return
	}
	b.WriteString("\nFailed runs\n")
	for _, f := range r.Failures {
		fmt.Fprintf(b, "  %s %s ×%d\n", strings.TrimSpace(f.Side+" "+f.Tool), f.Status, f.Count)
		if f.Detail != "" {
			for _, line := range strings.Split(failureTail(f.Detail, 5, 600), "\n") {
				fmt.Fprintf(b, "      %s\n", line)
			}
		}
	}
}

// briefOmits says what RenderTextBrief leaves out and how to see it:
// "Not shown: 3 warnings, 2 other units, environment (--verbose shows
// everything)." It names the failed runs too, which a reader must not
// miss; "" when nothing is left out.
func briefOmits(r *analysis.Report) string {
	var parts []string
	if n := len(r.Warnings); n > 0 {
		parts = append(parts, fmtx.Plural(n, "warning"))
	}
	if n := len(otherUnits(r)); n > 0 {
		parts = append(parts, fmtx.Plural(n, "other unit"))
	}
	if len(r.Attribution) > 0 {
		parts = append(parts, "the attribution table")
	}
	if len(r.MemoryDiffs) > 0 {
		parts = append(parts, "memory profiles")
	}
	if len(r.Simulations) > 0 {
		parts = append(parts, "callgrind runs")
	}
	if len(r.EnvKeys()) > 0 {
		parts = append(parts, "the environment")
	}
	if len(parts) == 0 {
		return ""
	}
	return "Not shown: " + analysis.JoinAnd(parts) + " (--verbose shows everything; --format markdown and json hold it too)."
}

// trimLines removes the spaces tabwriter leaves at the end of lines.
func trimLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, line := range lines {
		lines[i] = strings.TrimRight(line, " ")
	}
	return strings.Join(lines, "\n")
}

// textTable writes one group of rows as aligned columns under a title.
func textTable(b *strings.Builder, g rowGroup) {
	if g.benchmark != "" {
		fmt.Fprintf(b, "%s  %s\n", g.benchmark, g.unitTitle())
	} else {
		fmt.Fprintf(b, "%s\n", g.unitTitle())
	}
	tw := tabwriter.NewWriter(b, 0, 8, 2, ' ', 0)
	if g.simulated() {
		fmt.Fprintf(tw, "  %s\tbase\thead\tΔ (exact)\tfloor\tverdict\n", g.firstColumn())
		for _, row := range g.rows {
			t := formatRow(row)
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\n", g.label(row), t.base, t.head, t.delta, t.floor, t.verdict)
		}
		tw.Flush()
		return
	}
	fmt.Fprintf(tw, "  %s\tbase\thead\tΔ [interval]\tp (adj.)\tfloor\tverdict\n", g.firstColumn())
	for _, row := range g.rows {
		t := formatRow(row)
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\n", g.label(row), t.base, t.head, t.delta, t.p, t.floor, t.verdict)
	}
	tw.Flush()
}

// textProfileLines writes, under a group's table, the explanation of
// each explained row.
func textProfileLines(b *strings.Builder, r *analysis.Report, g rowGroup) {
	rows := explainedRows(r, g)
	if len(rows) == 0 {
		return
	}
	b.WriteString("\n")
	plain := func(s string) string { return s }
	for _, e := range rows {
		fmt.Fprintf(b, "%s\n", wrapText("  "+analysis.ExplanationLine(e.Expl, e.Diff, plain, plain, plain), "    "))
	}
}

func envValueText(v string, ok bool) string {
	if !ok {
		return "unset"
	}
	return strings.ReplaceAll(v, "\t", " ")
}

// textWidth is the width the text report's prose wraps at: a terminal's
// or a CI log's, where a 300-character line is read by scrolling.
const textWidth = 100

// wrapText wraps s at spaces so that no line is wider than textWidth
// characters (a word longer than that stays whole), starting every line
// after the first with indent. Lines s already breaks stay broken.
func wrapText(s, indent string) string {
	var out []string
	for _, para := range strings.Split(s, "\n") {
		line, width := "", 0
		for _, word := range strings.Fields(para) {
			w := utf8.RuneCountInString(word)
			switch {
			case line == "":
				line, width = leadingSpace(para)+word, utf8.RuneCountInString(leadingSpace(para))+w
			case width+1+w > textWidth:
				out = append(out, line)
				line, width = indent+word, utf8.RuneCountInString(indent)+w
			default:
				line += " " + word
				width += 1 + w
			}
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

// leadingSpace returns the spaces s starts with.
func leadingSpace(s string) string {
	return s[:len(s)-len(strings.TrimLeft(s, " "))]
}
