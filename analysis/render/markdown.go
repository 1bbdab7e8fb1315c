package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/analysis/internal/fmtx"
)

// RenderMarkdown writes r as the PR comment: SummaryMarker, the verdict
// and the sentence it rests on, a table of the primary-unit rows per
// benchmark (under it, for each regressed phase an Explanation explains,
// one line with its counters and the function whose share grew the most,
// and a collapsed section with the profile diff's top functions), then collapsed sections for the warnings
// (with the failed runs' output), the attribution, every other unit, the
// environment and how to reproduce the numbers with benchstat (left out
// of an error report, which has no numbers).
func RenderMarkdown(w io.Writer, r *analysis.Report, ctx RenderContext) error {
	var b strings.Builder
	b.WriteString(SummaryMarker + "\n")
	fmt.Fprintf(&b, "### perfbot: %s\n\n", verdictWord(r.Verdict))
	fmt.Fprintf(&b, "**Verdict: %s.** %s\n\n", verdictWord(r.Verdict), headline(r, MdCode))
	fmt.Fprintf(&b, "Base %s (%s) vs head %s (%s).",
		sideName(r, r.Base, r.BaseArgs, MdCode), runsLine(r.Runs.Base), sideName(r, r.Head, r.HeadArgs, MdCode), runsLine(r.Runs.Head))
	if r.Config != "" {
		fmt.Fprintf(&b, " Measured as %s says.", MdCode(r.Config))
	}
	if r.Verdict != analysis.VerdictError {
		b.WriteString(" " + methodLine(r) + " " + estimateLine(r))
	}
	if len(r.Warnings) > 0 {
		fmt.Fprintf(&b, " %s below.", capitalize(fmtx.Plural(len(r.Warnings), "warning")))
	}
	b.WriteString("\n")
	if ctx.DetailsURL != "" {
		fmt.Fprintf(&b, "\n[Full comparison](%s)\n", ctx.DetailsURL)
	}

	for _, g := range groupRows(r.Phases, true) {
		b.WriteString("\n")
		mdTable(&b, g, "####")
		for _, e := range explainedRows(r, g) {
			MdExplanation(&b, e)
		}
	}
	if line := oneSidedLine(r, MdCode); line != "" {
		fmt.Fprintf(&b, "\n%s\n", line)
	}
	if line := mdeLine(r, MdCode); line != "" {
		fmt.Fprintf(&b, "\n%s\n", line)
	}
	if line := simulationLine(r, MdCode); line != "" {
		fmt.Fprintf(&b, "\n%s\n", line)
	}
	for _, d := range r.MemoryDiffs {
		mdMemory(&b, d)
	}

	if len(r.Warnings) > 0 || len(r.Failures) > 0 {
		open := ""
		if r.Verdict == analysis.VerdictError {
			open = " open"
		}
		fmt.Fprintf(&b, "\n<details%s><summary>Warnings (%d)</summary>\n\n", open, len(r.Warnings))
		for _, warning := range r.Warnings {
			fmt.Fprintf(&b, "- %s\n", MdText(warning))
		}
		for _, f := range r.Failures {
			fmt.Fprintf(&b, "\n%s run %s ×%d", capitalize(strings.TrimSpace(f.Side+" "+f.Tool)), MdCode(string(f.Status)), f.Count)
			if f.Detail == "" {
				b.WriteString(".\n")
				continue
			}
			tail := failureTail(f.Detail, 20, 2000)
			fence := mdFence(tail)
			fmt.Fprintf(&b, ":\n\n%stext\n%s\n%s\n", fence, tail, fence)
		}
		b.WriteString("\n</details>\n")
	}

	if len(r.Attribution) > 0 {
		b.WriteString("\n<details><summary>Attribution of the change in total</summary>\n")
		for _, a := range r.Attribution {
			mdAttribution(&b, a)
		}
		b.WriteString("\n</details>\n")
	}

	if units := otherUnits(r); len(units) > 0 {
		fmt.Fprintf(&b, "\n<details><summary>Other units: %s</summary>\n\n", MdText(strings.Join(units, ", ")))
		b.WriteString("Shown for explanation; only " + MdText(strings.Join(r.Options.PrimaryUnits, ", ")) + " decides the verdict. Each unit is Holm-corrected on its own.\n")
		for _, g := range groupRows(r.Phases, false) {
			b.WriteString("\n")
			mdTable(&b, g, "#####")
			for _, e := range explainedRows(r, g) {
				MdExplanation(&b, e)
			}
		}
		b.WriteString("\n</details>\n")
	}

	if keys := r.EnvKeys(); len(keys) > 0 {
		summary := "Environment"
		if len(r.EnvDiffers) > 0 {
			summary += fmt.Sprintf(" (%s %s)", fmtx.Plural(len(r.EnvDiffers), "key"), differs(len(r.EnvDiffers)))
		}
		fmt.Fprintf(&b, "\n<details><summary>%s</summary>\n\n| key | base | head |\n| :-- | :-- | :-- |\n", summary)
		for _, k := range keys {
			bv, inBase := r.BaseEnv[k]
			hv, inHead := r.HeadEnv[k]
			cell := func(v string, ok bool) string {
				if !ok {
					return "unset"
				}
				return mdCell(v)
			}
			h := cell(hv, inHead)
			if !inBase || !inHead || bv != hv {
				h = "**" + h + "** (differs)"
			}
			fmt.Fprintf(&b, "| %s | %s | %s |\n", mdCell(k), cell(bv, inBase), h)
		}
		b.WriteString("\n</details>\n")
	}

	if r.Verdict == analysis.VerdictError {
		_, err := io.WriteString(w, b.String())
		return err
	}
	cmd := ctx.command()
	// --per-run: one value per run, each run's median, which is what was
	// compared (a run of criterion's samples or Google Benchmark's
	// repetitions holds several). Rows by phase where there are phases,
	// else by benchmark.
	row := ".fullname"
	for _, p := range r.Phases {
		if p.Phase != "" {
			row = "/phase"
			break
		}
	}
	if ctx.Repo != "" && ctx.Repo != "." {
		cmd += " --repo " + shellQuote(ctx.Repo)
	}
	fmt.Fprintf(&b, "\n<details><summary>Reproduce with benchstat</summary>\n\n```sh\n%s export --rev %s%s --kind compare --per-run > base.txt\n%s export --rev %s%s --kind compare --per-run > head.txt\nbenchstat -row %s base.txt head.txt\n```\n\n",
		cmd, revOr(r.Base, "BASE"), exportArgs(r.BaseArgs), cmd, revOr(r.Head, "HEAD"), exportArgs(r.HeadArgs), row)
	b.WriteString("benchstat prints each side's median with its interval, the change of the medians and the raw p-values of the same runs; perfbot reports the Hodges–Lehmann change instead (the medians' change can point the other way when the runs are not a shift of each other), and applies Holm's correction and the noise floor, so it calls fewer changes.\n\n</details>\n")

	_, err := io.WriteString(w, b.String())
	return err
}

// mdTable writes one group of rows as a Markdown table under a heading.
func mdTable(b *strings.Builder, g rowGroup, heading string) {
	if g.benchmark != "" {
		fmt.Fprintf(b, "%s %s (%s)\n\n", heading, MdCode(g.benchmark), MdText(g.unitTitle()))
	} else {
		fmt.Fprintf(b, "%s %s\n\n", heading, MdText(g.unitTitle()))
	}
	if g.simulated() {
		fmt.Fprintf(b, "| %s | base → head | Δ (exact) | floor | verdict |\n| :-- | --: | --: | --: | :-- |\n", g.firstColumn())
		for _, row := range g.rows {
			t := formatRow(row)
			delta, verdict := t.delta, t.verdict
			if t.changed {
				delta, verdict = "**"+delta+"**", "**"+verdict+"**"
			}
			fmt.Fprintf(b, "| %s | %s → %s | %s | %s | %s |\n", MdCode(g.label(row)), t.base, t.head, delta, t.floor, verdict)
		}
		return
	}
	fmt.Fprintf(b, "| %s | base → head | Δ [interval] | p (adj.) | floor | verdict |\n", g.firstColumn())
	b.WriteString("| :-- | --: | --: | --: | --: | :-- |\n")
	for _, row := range g.rows {
		t := formatRow(row)
		delta, verdict := t.delta, t.verdict
		if t.changed {
			delta, verdict = "**"+delta+"**", "**"+verdict+"**"
		}
		fmt.Fprintf(b, "| %s | %s → %s | %s | %s | %s | %s |\n",
			MdCode(g.label(row)), t.base, t.head, delta, mdCell(t.p), t.floor, verdict)
	}
}

// MdExplanation writes a row's explanation in one line, then its profile
// diff's tables in a collapsed section, when a function's share grew
// measurably (the line says when none did).
func MdExplanation(b *strings.Builder, e ExplainedRow) {
	strong := func(s string) string { return "**" + MdText(s) + "**" }
	fmt.Fprintf(b, "\n%s\n", analysis.ExplanationLine(e.Expl, e.Diff, strong, MdCode, MdText))
	if e.Diff == nil || len(e.Diff.Flat) == 0 && len(e.Diff.Cum) == 0 {
		return
	}
	d := *e.Diff
	fmt.Fprintf(b, "\n<details><summary>%s profile of %s: the functions whose share grew most</summary>\n\n", analysis.ProfileWhat(d), MdText(d.Phase))
	fmt.Fprintf(b, "%s\n", MdText(profileNote(d)))
	for _, t := range []struct {
		kind   string
		shares []analysis.FuncShare
	}{{"flat", d.Flat}, {"cum", d.Cum}} {
		if len(t.shares) == 0 {
			fmt.Fprintf(b, "\nNo function's %s share grew measurably.\n", t.kind)
			continue
		}
		fmt.Fprintf(b, "\n| function (%s) | base | head | Δ | samples | p |\n| :-- | --: | --: | --: | --: | --: |\n", t.kind)
		for _, f := range t.shares {
			fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s |\n", MdCode(analysis.ShortFuncName(f.Name)), fmtx.FormatShare(f.Base), fmtx.FormatShare(f.Head), fmtx.FormatPP(f.Delta),
				countsCell(f.HasEvidence(), f.BaseSamples, f.HeadSamples), pCell(f.HasEvidence(), f.P))
		}
	}
	b.WriteString("\n</details>\n")
}

// countsCell formats a table's base and head sample counts, "130 → 493",
// or "—" for a row of a report stored without them.
func countsCell(ok bool, base, head int64) string {
	if !ok {
		return "—"
	}
	return fmt.Sprintf("%d → %d", base, head)
}

// pCell formats a table's p-value, or "—" for a row of a report stored
// without one.
func pCell(ok bool, p float64) string {
	if !ok {
		return "—"
	}
	return mdCell(evidenceP(ok, p))
}

// mdMemory writes a memory diff's line and, collapsed, its tables of the
// allocation sites that grew.
func mdMemory(b *strings.Builder, d analysis.MemoryDiff) {
	fmt.Fprintf(b, "\n%s\n", analysis.MemoryLine(d, MdCode, MdText))
	fmt.Fprintf(b, "\n<details><summary>Allocation sites that grew most, per run</summary>\n\n")
	fmt.Fprintf(b, "%s\n", MdText(memoryNote(d)))
	for _, t := range []struct {
		kind, unit string
		sites      []analysis.AllocSite
	}{{"bytes", "B", d.Space}, {"objects", "objects", d.Objects}} {
		if len(t.sites) == 0 {
			fmt.Fprintf(b, "\nNo allocation site's %s grew measurably.\n", t.kind)
			continue
		}
		fmt.Fprintf(b, "\n| allocation site (%s) | base | head | Δ | samples | p |\n| :-- | --: | --: | --: | --: | --: |\n", t.kind)
		for _, s := range t.sites {
			fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s |\n", MdCode(analysis.ShortFuncName(s.Name)),
				fmtx.FormatAlloc(s.Base, t.unit), fmtx.FormatAlloc(s.Head, t.unit), fmtx.FormatAllocDelta(s.Delta, t.unit),
				countsCell(s.HasEvidence(), s.BaseSamples, s.HeadSamples), pCell(s.HasEvidence(), s.P))
		}
	}
	b.WriteString("\n</details>\n")
}

// mdAttribution writes one benchmark's attribution: its sentences, then
// a table of the phases, with shares only when total changed.
func mdAttribution(b *strings.Builder, a analysis.Attribution) {
	b.WriteString("\n")
	for _, line := range attributionLines(a, MdCode) {
		b.WriteString(mdTextKeepCode(line) + "\n")
	}
	if a.Changed() {
		b.WriteString("\n| phase | Δ | Δ% | share of total's Δ | verdict |\n| :-- | --: | --: | --: | :-- |\n")
	} else {
		b.WriteString("\n| phase | Δ | Δ% | verdict |\n| :-- | --: | --: | :-- |\n")
	}
	for _, p := range a.Phases {
		if a.Changed() {
			fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n", MdCode(p.Phase), fmtx.FormatDelta(p.Delta, a.Unit),
				formatPhasePct(p.DeltaPct), formatShareCell(p.SharePct), MdText(shareVerdict(p)))
		} else {
			fmt.Fprintf(b, "| %s | %s | %s | %s |\n", MdCode(p.Phase), fmtx.FormatDelta(p.Delta, a.Unit),
				formatPhasePct(p.DeltaPct), MdText(shareVerdict(p)))
		}
	}
	if a.Changed() {
		fmt.Fprintf(b, "| the rest | %s | | %s | |\n", fmtx.FormatDelta(a.Unexplained, a.Unit), formatShareCell(a.UnexplainedSharePct))
	}
}

// mdTextKeepCode escapes the text of a line whose code spans MdCode
// already made, leaving the spans alone.
func mdTextKeepCode(line string) string {
	parts := strings.Split(line, "`")
	for i := 0; i < len(parts); i += 2 {
		parts[i] = MdText(parts[i])
	}
	return strings.Join(parts, "`")
}

// MdCode formats s as inline code, with enough backticks to hold any it
// contains.
func MdCode(s string) string {
	ticks := "`"
	for strings.Contains(s, ticks) {
		ticks += "`"
	}
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return ticks + strings.ReplaceAll(s, "|", `\|`) + ticks
}

// mdCell escapes s for a table cell.
func mdCell(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	return strings.ReplaceAll(MdText(s), "|", `\|`)
}

// MdText escapes the characters that would turn text into markup or HTML.
func MdText(s string) string {
	return strings.NewReplacer("<", "&lt;", ">", "&gt;", "*", `\*`, "_", `\_`, "`", "\\`").Replace(s)
}

// mdFence returns a code fence longer than any run of backticks in s.
func mdFence(s string) string {
	fence := "```"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	return fence
}

func differs(n int) string {
	if n == 1 {
		return "differs"
	}
	return "differ"
}

// exportArgs is the perfbot export flag that selects the runs of a
// variant: " --args 'ARGS'", or "" for none (export's default).
func exportArgs(args []string) string {
	if len(args) == 0 {
		return ""
	}
	return " --args " + shellQuote(FormatArgs(args))
}

func revOr(rev, placeholder string) string {
	if rev == "" {
		return placeholder
	}
	return rev
}
