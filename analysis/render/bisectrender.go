package render

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/analysis/internal/fmtx"
)

// RenderBisectMarkdown writes r as a pull request comment: the first bad
// commit (or the range skipped commits leave) and the change it made,
// the range searched and what it cost, a table of the ends and every
// probe, the comparison of the first bad commit against the last good
// one (collapsed), the warnings and the commands that reproduce it.
func RenderBisectMarkdown(w io.Writer, r *analysis.BisectReport) error {
	var b strings.Builder
	fb, lg := MdCode(fmtx.ShortRev(r.FirstBad.SHA)), MdCode(fmtx.ShortRev(r.LastGood.SHA))
	switch {
	case r.Exact():
		fmt.Fprintf(&b, "### perfbot bisect: the first bad commit is %s\n\n", fb)
		fmt.Fprintf(&b, "**%s %s** %s against the last good commit %s.\n", fb, MdText(r.FirstBad.Subject), bisectChange(r, MdCode, "**"), lg)
	case r.Stopped:
		fmt.Fprintf(&b, "### perfbot bisect: the change is in one of %d commits\n\n", len(r.Candidates))
		fmt.Fprintf(&b, "A probe could not be placed on either side (see the warnings), so the search stopped: the change is in %s, "+
			"after the last good commit %s.\n", bisectCandidates(r, MdCode), lg)
	case len(r.Candidates) > 1:
		fmt.Fprintf(&b, "### perfbot bisect: the first bad commit is one of %d\n\n", len(r.Candidates))
		fmt.Fprintf(&b, "Commits that could not be measured leave a range: the first bad commit is one of %s. "+
			"%s is the last good commit, %s the first measured bad one.\n", bisectCandidates(r, MdCode), lg, fb)
	default:
		fmt.Fprintf(&b, "### perfbot bisect: probably %s, not confirmed\n\n", fb)
		fmt.Fprintf(&b, "The search ended at **%s %s**, but beside the last good commit %s it %s: not the change the ends showed (see the warnings).\n",
			fb, MdText(r.FirstBad.Subject), lg, bisectChange(r, MdCode, "**"))
	}
	fmt.Fprintf(&b, "\n%s\n", bisectScope(r, MdCode))

	b.WriteString("\n| step | commit | at | subject | verdict | median | vs good | vs bad | runs reused + new |\n")
	b.WriteString("| --: | :-- | --: | :-- | :-- | --: | --: | --: | --: |\n")
	for _, p := range r.Probes {
		t := probeCells(r, p)
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %d + %d |\n",
			t.step, MdCode(fmtx.ShortRev(p.Commit.SHA)), t.at, mdCell(bisectCut(p.Commit.Subject, 60)), mdCell(t.verdict),
			t.median, t.vsGood, t.vsBad, p.Reused, p.Measured)
	}

	if c := r.Comparison; c != nil {
		fmt.Fprintf(&b, "\n<details><summary>Every series of %s against %s</summary>\n\n", fb, lg)
		fmt.Fprintf(&b, "**Verdict: %s.** %s\n", verdictWord(c.Verdict), headline(c, MdCode))
		if c.Verdict != analysis.VerdictError {
			fmt.Fprintf(&b, "\nLast good %s (%s) vs first bad %s (%s). %s\n", lg, runsLine(c.Runs.Base), fb, runsLine(c.Runs.Head), methodLine(c))
		}
		for _, g := range groupRows(c.Phases, true) {
			b.WriteString("\n")
			mdTable(&b, g, "####")
		}
		b.WriteString("\n</details>\n")
	}

	if len(r.Warnings) > 0 {
		fmt.Fprintf(&b, "\n<details open><summary>Warnings (%d)</summary>\n\n", len(r.Warnings))
		for _, warning := range r.Warnings {
			fmt.Fprintf(&b, "- %s\n", MdText(warning))
		}
		b.WriteString("\n</details>\n")
	}
	if len(r.Reproduce) > 0 {
		cmds := strings.Join(r.Reproduce, "\n")
		fence := mdFence(cmds)
		fmt.Fprintf(&b, "\nReproduce:\n\n%ssh\n%s\n%s\n", fence, cmds, fence)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// RenderBisectText writes r for a terminal, without Markdown.
func RenderBisectText(w io.Writer, r *analysis.BisectReport) error {
	var b strings.Builder
	plain := func(s string) string { return s }
	fb, lg := fmtx.ShortRev(r.FirstBad.SHA), fmtx.ShortRev(r.LastGood.SHA)
	switch {
	case r.Exact():
		fmt.Fprintf(&b, "perfbot bisect: first bad commit %s %s\n", fb, r.FirstBad.Subject)
		fmt.Fprintf(&b, "It %s against the last good commit %s.\n", bisectChange(r, plain, ""), lg)
	case r.Stopped:
		fmt.Fprintf(&b, "perfbot bisect: the change is in one of %d commits\n", len(r.Candidates))
		fmt.Fprintf(&b, "A probe could not be placed on either side (see the warnings), so the search stopped: the change is in %s, after the last good commit %s.\n",
			bisectCandidates(r, plain), lg)
	case len(r.Candidates) > 1:
		fmt.Fprintf(&b, "perfbot bisect: the first bad commit is one of %d\n", len(r.Candidates))
		fmt.Fprintf(&b, "Commits that could not be measured leave a range: %s. %s is the last good commit, %s the first measured bad one.\n",
			bisectCandidates(r, plain), lg, fb)
	default:
		fmt.Fprintf(&b, "perfbot bisect: probably %s %s, not confirmed\n", fb, r.FirstBad.Subject)
		fmt.Fprintf(&b, "Beside the last good commit %s it %s: not the change the ends showed (see the warnings).\n", lg, bisectChange(r, plain, ""))
	}
	fmt.Fprintf(&b, "%s\n\n", bisectScope(r, plain))

	tw := tabwriter.NewWriter(&b, 0, 8, 2, ' ', 0)
	fmt.Fprint(tw, "step\tcommit\tat\tverdict\tmedian\tvs good\tvs bad\treused+new\tsubject\n")
	for _, p := range r.Probes {
		t := probeCells(r, p)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d+%d\t%s\n",
			t.step, fmtx.ShortRev(p.Commit.SHA), t.at, t.verdict, t.median, t.vsGood, t.vsBad, p.Reused, p.Measured, bisectCut(p.Commit.Subject, 50))
	}
	tw.Flush()

	if c := r.Comparison; c != nil {
		fmt.Fprintf(&b, "\n%s against %s: %s. %s\n", fb, lg, verdictWord(c.Verdict), headline(c, plain))
		for _, g := range groupRows(c.Phases, true) {
			b.WriteString("\n")
			textTable(&b, g)
		}
	}
	if len(r.Warnings) > 0 {
		b.WriteString("\nWarnings\n")
		for _, warning := range r.Warnings {
			fmt.Fprintf(&b, "  - %s\n", warning)
		}
	}
	if len(r.Reproduce) > 0 {
		b.WriteString("\nReproduce:\n")
		for _, c := range r.Reproduce {
			fmt.Fprintf(&b, "  %s\n", c)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// RenderBisectJSON writes r as indented JSON.
func RenderBisectJSON(w io.Writer, r *analysis.BisectReport) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("render bisection as JSON: %w", err)
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// BisectHeadline says in one plain line what r found: "First bad commit
// 1a2b3c4 (solve: more work): Work/phase=total sec/op +19.9%."
func BisectHeadline(r *analysis.BisectReport) string {
	plain := func(s string) string { return s }
	switch {
	case r.Exact():
	case r.Stopped:
		return fmt.Sprintf("The change is in one of %d commits (a probe could not be placed): %s.", len(r.Candidates), bisectCandidates(r, plain))
	case len(r.Candidates) > 1:
		return fmt.Sprintf("The first bad commit is one of %d (skipped commits leave a range): %s.",
			len(r.Candidates), bisectCandidates(r, plain))
	default:
		return fmt.Sprintf("Probably %s (%s), not confirmed: beside the last good commit %s it %s.", fmtx.ShortRev(r.FirstBad.SHA),
			bisectCut(r.FirstBad.Subject, 60), fmtx.ShortRev(r.LastGood.SHA), bisectChange(r, plain, ""))
	}
	return fmt.Sprintf("First bad commit %s (%s): %s %s.", fmtx.ShortRev(r.FirstBad.SHA), bisectCut(r.FirstBad.Subject, 60),
		r.Key, fmtx.FormatPct(bisectDelta(r)))
}

// bisectDelta is the first bad commit's change against the last good
// one in the searched series: from the comparison when it has the row,
// else the ends' change.
func bisectDelta(r *analysis.BisectReport) float64 {
	if row, ok := bisectRow(r); ok {
		return row.Change()
	}
	return r.Change.Change()
}

// bisectRow returns the comparison's row of the searched series.
func bisectRow(r *analysis.BisectReport) (analysis.Row, bool) {
	if r.Confirmation != nil {
		return *r.Confirmation, true
	}
	if r.Comparison == nil {
		return analysis.Row{}, false
	}
	for _, row := range r.Comparison.Phases {
		if row.Key == r.Key && !row.Simulated {
			return row, true
		}
	}
	return analysis.Row{}, false
}

// bisectChange says what the first bad commit did to the series: "made
// `X` (sec/op) slower: 61.2ms → 73.4ms, +19.9% (p=0.002)". strong
// brackets the change in Markdown ("**").
func bisectChange(r *analysis.BisectReport, code func(string) string, strong string) string {
	row, ok := bisectRow(r)
	if !ok {
		row = r.Change
	}
	worse := row.Shift > 0
	if row.Better == "higher" {
		worse = !worse
	}
	how := "better"
	if worse {
		how = "worse"
	}
	s := fmtx.Scaler(row.Unit, row.BaseValue, row.HeadValue)
	if !row.Changed() {
		return fmt.Sprintf("did not settle a change of %s (%s): %s → %s, %s (%s, %s)",
			code(bisectSeries(r.Key)), row.Unit, fmtx.FormatScaled(s, row.BaseValue, row.Unit), fmtx.FormatScaled(s, row.HeadValue, row.Unit),
			analysis.FormatChange(row), fmtx.FormatPEq(row.PValue), RowVerdict(row))
	}
	return fmt.Sprintf("made %s (%s) %s: %s → %s, %s%s%s (%s, %s)",
		code(bisectSeries(r.Key)), row.Unit, how, fmtx.FormatScaled(s, row.BaseValue, row.Unit), fmtx.FormatScaled(s, row.HeadValue, row.Unit),
		strong, analysis.FormatChange(row), strong, fmtx.FormatPEq(row.PValue), RowVerdict(row))
}

// bisectScope says what was searched, between which ends, and what it
// cost.
func bisectScope(r *analysis.BisectReport, code func(string) string) string {
	order := "first-parent history"
	if r.Order == analysis.BisectAllCommits {
		order = "all commits, in topological order"
	}
	c := r.Change
	s := fmtx.Scaler(c.Unit, c.BaseValue, c.HeadValue)
	reused, measured := r.RunCounts()
	probes := 0
	for _, p := range r.Probes {
		if p.End == "" {
			probes++
		}
	}
	line := fmt.Sprintf("Searched %s of %s (%s) for the change in %s (%s) from good %s (%s) to bad %s (%s): %s (%s, %s); %s, %s measured, %s reused.",
		fmtx.Plural(r.Commits, "commit"), code(fmtx.ShortRev(r.Good.SHA)+".."+fmtx.ShortRev(r.Bad.SHA)), order, code(bisectSeries(r.Key)), c.Unit,
		code(fmtx.ShortRev(r.Good.SHA)), fmtx.FormatScaled(s, c.BaseValue, c.Unit), code(fmtx.ShortRev(r.Bad.SHA)), fmtx.FormatScaled(s, c.HeadValue, c.Unit),
		fmtx.FormatPct(c.Change()), RowVerdict(c), fmtx.FormatPEq(c.PValue), fmtx.Plural(probes, "probe"), fmtx.Plural(measured, "run"), fmtx.Plural(reused, "run"))
	if n := len(r.Skipped()); n > 0 {
		line += fmt.Sprintf(" %s skipped.", capitalize(fmtx.Plural(n, "commit")))
	}
	return line
}

// bisectCandidates lists the candidates, marking the skipped ones.
func bisectCandidates(r *analysis.BisectReport, code func(string) string) string {
	skipped := map[string]bool{}
	for _, p := range r.Skipped() {
		skipped[p.Commit.SHA] = true
	}
	var parts []string
	for _, c := range r.Candidates {
		s := code(fmtx.ShortRev(c.SHA))
		switch {
		case skipped[c.SHA]:
			s += " (skipped)"
		case c.SHA == r.FirstBad.SHA:
			s += " (bad)"
		case r.Stopped && slices.ContainsFunc(r.Probes, func(p analysis.Probe) bool { return p.Commit.SHA == c.SHA && p.Class == analysis.ProbeUnclear }):
			s += " (unclear)"
		default:
			s += " (not measured)"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

// bisectSeries names a key without its unit: "Work/phase=total".
func bisectSeries(k analysis.Key) string {
	if k.Phase == "" {
		return k.Benchmark
	}
	return k.Benchmark + "/phase=" + k.Phase
}

// probeText is one probe's table cells.
type probeText struct {
	step, at, verdict, median, vsGood, vsBad string
}

func probeCells(r *analysis.BisectReport, p analysis.Probe) probeText {
	t := probeText{step: strconv.Itoa(p.Step), at: fmt.Sprintf("%d/%d", p.Position, r.Commits), verdict: string(p.Class)}
	if p.End != "" {
		t.step, t.verdict = p.End, p.End+" end"
	}
	switch {
	case p.Class == analysis.ProbeUnclear:
		t.verdict = "unclear: the search stopped here"
	case p.Uncertain:
		t.verdict += " (uncertain: nearer median)"
	}
	if p.Class == analysis.ProbeSkipped && p.Reason != "" {
		t.verdict += ": " + p.Reason
	}
	if p.Runs > 0 {
		t.median = fmtx.FormatValue(p.Median, r.Key.Unit)
	}
	vs := func(row *analysis.Row) string {
		if row == nil {
			return ""
		}
		return fmtx.FormatPct(row.Change()) + " (" + fmtx.FormatPEq(row.PValue) + ")"
	}
	t.vsGood, t.vsBad = vs(p.VsGood), vs(p.VsBad)
	return t
}

// bisectCut shortens s to at most n runes, marking the cut with "…".
func bisectCut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return strings.TrimSpace(string(r[:n-1])) + "…"
}

// RenderBisectProgressMarkdown writes the probes a running bisection has
// decided so far (the ends first) as a Markdown table, medians in unit:
// what a pull request shows until the report is ready.
func RenderBisectProgressMarkdown(w io.Writer, probes []analysis.Probe, unit string) error {
	var b strings.Builder
	b.WriteString("| step | commit | subject | verdict | median | runs reused + new |\n| --: | :-- | :-- | :-- | --: | --: |\n")
	for _, p := range probes {
		t := probeCells(&analysis.BisectReport{Key: analysis.Key{Unit: unit}}, p)
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %d + %d |\n", t.step, MdCode(fmtx.ShortRev(p.Commit.SHA)),
			mdCell(bisectCut(p.Commit.Subject, 60)), mdCell(t.verdict), t.median, p.Reused, p.Measured)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
