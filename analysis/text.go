package analysis

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// RenderText writes r for a terminal: the verdict, aligned tables of the
// primary and then the other units (each followed by a line for every
// regressed phase an Explanation explains), the attribution, the warnings with
// failed runs, and the environment. It uses no Markdown.
func RenderText(w io.Writer, r *Report) error {
	var b strings.Builder
	plain := func(s string) string { return s }
	fmt.Fprintf(&b, "perfbot: %s\n%s\n\n", verdictWord(r.Verdict), headline(r, plain))
	tw := tabwriter.NewWriter(&b, 0, 8, 2, ' ', 0)
	fmt.Fprintf(tw, "base\t%s\t%s\n", sideName(r, r.Base, r.BaseArgs, plain), runsLine(r.Runs.Base))
	fmt.Fprintf(tw, "head\t%s\t%s\n", sideName(r, r.Head, r.HeadArgs, plain), runsLine(r.Runs.Head))
	tw.Flush()
	if r.Verdict != VerdictError {
		fmt.Fprintf(&b, "%s\n", methodLine(r))
	}

	for _, g := range groupRows(r.Phases, true) {
		b.WriteString("\n")
		textTable(&b, g)
		textProfileLines(&b, r, g)
	}
	if line := mdeLine(r, plain); line != "" {
		fmt.Fprintf(&b, "\n%s\n", line)
	}
	if line := simulationLine(r, plain); line != "" {
		fmt.Fprintf(&b, "\n%s\n", line)
	}
	for _, d := range r.MemoryDiffs {
		fmt.Fprintf(&b, "\n%s\n", memoryLine(d, plain, plain))
		for _, t := range []struct {
			unit  string
			sites []AllocSite
		}{{"B", d.Space}, {"objects", d.Objects}} {
			for _, s := range t.sites {
				fmt.Fprintf(&b, "  %s a run (%s → %s), %s\n", formatAllocDelta(s.Delta, t.unit),
					formatAlloc(s.Base, t.unit), formatAlloc(s.Head, t.unit), shortFuncName(s.Name))
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
		s := scaler(a.Unit, a.Base, a.Head)
		fmt.Fprintf(&b, "\nAttribution: %s (%s): total %s → %s, %s (%s, %s)\n", a.Benchmark, a.Unit,
			formatScaled(s, a.Base, a.Unit), formatScaled(s, a.Head, a.Unit),
			formatDelta(a.Delta, a.Unit), formatPct(a.DeltaPct), verdictWord(a.Verdict))
		if len(a.ExplainedBy) > 0 {
			fmt.Fprintf(&b, "explained by %s\n", strings.Join(a.ExplainedBy, ", "))
		} else {
			b.WriteString("no phase changed significantly\n")
		}
		for _, o := range a.Overlaps {
			b.WriteString(overlapSentence(o) + "\n")
		}
		tw := tabwriter.NewWriter(&b, 0, 8, 2, ' ', 0)
		fmt.Fprint(tw, "  phase\tΔ\tΔ%\tshare\tverdict\n")
		for _, p := range a.Phases {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", p.Phase, formatDelta(p.Delta, a.Unit), formatPct(p.DeltaPct),
				formatShare(p.SharePct), shareVerdict(p))
		}
		fmt.Fprintf(tw, "  unexplained\t%s\t\t%s\t\n", formatDelta(a.Unexplained, a.Unit), formatShare(a.UnexplainedSharePct))
		tw.Flush()
	}

	if len(r.Warnings) > 0 {
		b.WriteString("\nWarnings\n")
		for _, warning := range r.Warnings {
			fmt.Fprintf(&b, "  - %s\n", warning)
		}
	}
	if len(r.Failures) > 0 {
		b.WriteString("\nFailed runs\n")
		for _, f := range r.Failures {
			fmt.Fprintf(&b, "  %s %s ×%d\n", strings.TrimSpace(f.Side+" "+f.Tool), f.Status, f.Count)
			if f.Detail != "" {
				for _, line := range strings.Split(failureTail(f.Detail, 5, 600), "\n") {
					fmt.Fprintf(&b, "      %s\n", line)
				}
			}
		}
	}
	if keys := envKeys(r); len(keys) > 0 {
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
	fmt.Fprintf(tw, "  %s\tbase\thead\tΔ [95%% CI]\tp (adj.)\t95%% CI base / head\tfloor\tverdict\n", g.firstColumn())
	for _, row := range g.rows {
		t := formatRow(row)
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", g.label(row), t.base, t.head, t.delta, t.p, t.ci, t.floor, t.verdict)
	}
	tw.Flush()
}

// textProfileLines writes, under a group's table, the explanation of
// each explained row.
func textProfileLines(b *strings.Builder, r *Report, g rowGroup) {
	rows := explainedRows(r, g)
	if len(rows) == 0 {
		return
	}
	b.WriteString("\n")
	plain := func(s string) string { return s }
	for _, e := range rows {
		fmt.Fprintf(b, "  %s\n", explanationLine(e.expl, e.diff, plain, plain, plain))
	}
}

func envValueText(v string, ok bool) string {
	if !ok {
		return "unset"
	}
	return strings.ReplaceAll(v, "\t", " ")
}
