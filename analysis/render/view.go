package render

import (
	"fmt"
	"math"
	"strings"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/analysis/internal/fmtx"
	"github.com/perfbot/perfbot/analysis/stats"
)

// A Formatter formats the pieces of a report's sentences for one
// rendering: Strong a phase that leads a line, Code a series, function
// or command name, Text everything else. The dashboard passes HTML
// escapers; a nil field leaves its pieces as they are.
type Formatter struct {
	Strong, Code, Text func(string) string
}

// A View is a report worded as the PR comment words it, piece by piece,
// for renderings other than Markdown and text (the dashboard's HTML):
// the same sentences, cells and tables, each piece formatted by the
// Formatter given to NewView, so that a page and the comment can never
// tell a comparison differently.
type View struct {
	Verdict analysis.Verdict `json:"verdict"`
	// AA is true for a comparison of a revision with itself (and the
	// same arguments): any change it reports is noise.
	AA bool `json:"aa"`
	// Headline is the verdict and the sentence it rests on, as the
	// comment opens.
	Headline string `json:"headline"`
	// Sides names base and head with their runs ("abc1234 (20 ok runs)").
	Base, Head string
	// Method says how rows were decided and what Δ is (empty for an
	// error report); MDE what the noise could not show; Simulation what
	// the callgrind runs say. Each may be "".
	Method, MDE, Simulation string
	// Tables are the primary units' rows, per benchmark and unit, with
	// the explanations of their regressed phases; Others the other
	// units' (shown for explanation, never a verdict of their own).
	Tables []ViewTable `json:"tables"`
	Others []ViewTable `json:"others"`
	// Attribution splits each benchmark's change in total among its
	// phases.
	Attribution []ViewAttribution `json:"attribution"`
	// Memory explains a regression by heap profiles.
	Memory []ViewMemory `json:"memory"`
	// Warnings are the report's caveats.
	Warnings []string `json:"warnings"`
}

// A ViewTable is one table of rows: one unit and, when every row has a
// phase, one benchmark (Benchmark; rows are then named by phase).
type ViewTable struct {
	Benchmark string `json:"benchmark"`
	Unit      string `json:"unit"`
	// Title names the unit, saying so when its counts are simulated.
	Title string `json:"title"`
	// FirstColumn is the first column's heading: "phase" or "benchmark".
	FirstColumn string `json:"first_column"`
	// Simulated tables have exact counts: no p column.
	Simulated    bool              `json:"simulated"`
	Rows         []ViewRow         `json:"rows"`
	Explanations []ViewExplanation `json:"explanations"`
}

// A ViewRow is one row's cells, formatted as the comment's table.
type ViewRow struct {
	// Label names the row within its table; Key is its series.
	Label string       `json:"label"`
	Key   analysis.Key `json:"key"`
	// Base and Head are the two values the change compares, Delta the
	// change with its interval, P the adjusted p-value ("—" untested,
	// "exact" simulated), Floor the noise floor, VerdictText the verdict
	// with its reason.
	Base, Head, Delta, P, Floor, VerdictText string
	Verdict                                  analysis.Verdict
	// Changed is true for a regression or an improvement.
	Changed bool
	// DeltaPct, Lo and Hi are the change and its interval in percent
	// (NaN and ±Inf where there is none), for drawing it.
	DeltaPct, Lo, Hi, FloorPct float64 `json:"-"`
}

// A ViewExplanation explains one regressed phase in one line (its
// counters and the function whose share grew most) and, where the
// profiles show functions whose share grew, lists them.
type ViewExplanation struct {
	Phase string `json:"phase"`
	Line  string `json:"line"`
	// Profile is the profile diff's caption, note and function tables;
	// nil when there is no diff or no function's share grew.
	Profile *ViewDetail `json:"profile,omitempty"`
}

// A ViewDetail is a collapsed section of tables: a caption, a note on
// what the numbers are, and the tables.
type ViewDetail struct {
	Caption string     `json:"caption"`
	Note    string     `json:"note"`
	Lists   []ViewList `json:"lists"`
	Empty   []string   `json:"empty"` // "No function's flat share grew measurably."
}

// A ViewList is a small table: column headings and rows of cells.
type ViewList struct {
	Columns []string   `json:"columns"`
	Rows    [][]string `json:"rows"`
}

// A ViewAttribution is one benchmark's split of total's change.
type ViewAttribution struct {
	Benchmark string `json:"benchmark"`
	Unit      string `json:"unit"`
	// Changed is true when total changed: only then are there shares.
	Changed bool `json:"changed"`
	// Lines are the comment's sentences.
	Lines []string `json:"lines"`
	// Parts are the phases and, when total changed, the rest.
	Parts []ViewShare `json:"parts"`
}

// A ViewShare is one phase's part of total's change.
type ViewShare struct {
	Phase, Delta, DeltaPct, Share, VerdictText string
	Verdict                                    analysis.Verdict
	// SharePct is the share in percent, NaN where none is given.
	SharePct float64 `json:"-"`
	// Rest marks the part no significant phase accounts for.
	Rest bool
}

// A ViewMemory is one command's heap-profile diff: its line and the
// allocation sites that grew.
type ViewMemory struct {
	Line   string     `json:"line"`
	Detail ViewDetail `json:"detail"`
}

// Markers the view's internal formatter puts around pieces, so that a
// sentence built by the comment's own helpers can be formatted for any
// rendering afterwards. They are control characters no report holds.
const (
	CodeOpen, CodeClose     = "\x01", "\x02"
	StrongOpen, StrongClose = "\x03", "\x04"
)

func markCode(s string) string   { return CodeOpen + s + CodeClose }
func markStrong(s string) string { return StrongOpen + s + StrongClose }
func markNone(s string) string   { return s }

// apply formats a marked sentence: the pieces between markers by Code
// and Strong, the rest by Text.
func (f Formatter) apply(s string) string {
	id := func(s string) string { return s }
	text, code, strong := id, id, id
	if f.Text != nil {
		text = f.Text
	}
	if f.Code != nil {
		code = f.Code
	}
	if f.Strong != nil {
		strong = f.Strong
	}
	var b strings.Builder
	for s != "" {
		i := strings.IndexAny(s, CodeOpen+StrongOpen)
		if i < 0 {
			b.WriteString(text(s))
			break
		}
		b.WriteString(text(s[:i]))
		open, end, fmtr := s[i:i+1], CodeClose, code
		if open == StrongOpen {
			end, fmtr = StrongClose, strong
		}
		j := strings.Index(s[i+1:], end)
		if j < 0 { // unbalanced: never made by the view
			b.WriteString(text(s[i+1:]))
			break
		}
		b.WriteString(fmtr(s[i+1 : i+1+j]))
		s = s[i+1+j+1:]
	}
	return b.String()
}

// NewView words r for a rendering that formats its pieces with f.
func NewView(r *analysis.Report, f Formatter) *View {
	v := &View{
		Verdict:     r.Verdict,
		AA:          r.Base != "" && r.Base == r.Head && !r.Variants(),
		Headline:    f.apply(markNone(capitalize(verdictWord(r.Verdict))) + ". " + headline(r, markCode)),
		Base:        f.apply(sideName(r, r.Base, r.BaseArgs, markCode) + " (" + runsLine(r.Runs.Base) + ")"),
		Head:        f.apply(sideName(r, r.Head, r.HeadArgs, markCode) + " (" + runsLine(r.Runs.Head) + ")"),
		Tables:      []ViewTable{},
		Others:      []ViewTable{},
		Attribution: []ViewAttribution{},
		Memory:      []ViewMemory{},
		Warnings:    []string{},
	}
	if r.Verdict != analysis.VerdictError && r.Options.Alpha > 0 { // a report stored without its options says nothing of them
		v.Method = f.apply(methodLine(r) + " " + estimateLine(r))
	}
	if line := mdeLine(r, markCode); line != "" {
		v.MDE = f.apply(line)
	}
	if line := simulationLine(r, markCode); line != "" {
		v.Simulation = f.apply(line)
	}
	for _, primary := range []bool{true, false} {
		for _, g := range groupRows(r.Phases, primary) {
			t := viewTable(r, g, f)
			if primary {
				v.Tables = append(v.Tables, t)
			} else {
				v.Others = append(v.Others, t)
			}
		}
	}
	for _, a := range r.Attribution {
		v.Attribution = append(v.Attribution, viewAttribution(a, f))
	}
	for _, d := range r.MemoryDiffs {
		v.Memory = append(v.Memory, viewMemory(d, f))
	}
	for _, w := range r.Warnings {
		v.Warnings = append(v.Warnings, f.apply(w))
	}
	return v
}

func viewTable(r *analysis.Report, g rowGroup, f Formatter) ViewTable {
	t := ViewTable{Benchmark: g.benchmark, Unit: g.unit, Title: f.apply(g.unitTitle()), FirstColumn: f.apply(g.firstColumn()),
		Simulated: g.simulated(), Explanations: []ViewExplanation{}}
	for _, row := range g.rows {
		c := formatRow(row)
		lo, hi := row.DeltaLoPct, row.DeltaHiPct
		if row.Exact() {
			lo, hi = row.Change(), row.Change()
		}
		t.Rows = append(t.Rows, ViewRow{
			Label: f.apply(markCode(g.label(row))), Key: row.Key,
			Base: f.apply(c.base), Head: f.apply(c.head), Delta: f.apply(c.delta), P: f.apply(c.p),
			Floor: f.apply(c.floor), VerdictText: f.apply(c.verdict), Verdict: row.Verdict, Changed: c.changed,
			DeltaPct: row.Change(), Lo: lo, Hi: hi, FloorPct: row.Floor.Pct,
		})
	}
	for _, e := range explainedRows(r, g) {
		x := ViewExplanation{Phase: e.Expl.Phase, Line: f.apply(analysis.ExplanationLine(e.Expl, e.Diff, markStrong, markCode, markNone))}
		if d := e.Diff; d != nil && (len(d.Flat) > 0 || len(d.Cum) > 0) {
			x.Profile = profileDetail(*d, f)
		}
		t.Explanations = append(t.Explanations, x)
	}
	return t
}

// profileDetail is the comment's collapsed section of a profile diff.
func profileDetail(d analysis.ProfileDiff, f Formatter) *ViewDetail {
	det := &ViewDetail{
		Caption: f.apply(fmt.Sprintf("%s profile of %s: the functions whose share grew most", analysis.ProfileWhat(d), markCode(d.Phase))),
		Note:    f.apply(profileNote(d)),
		Lists:   []ViewList{}, Empty: []string{},
	}
	for _, l := range []struct {
		kind   string
		shares []analysis.FuncShare
	}{{"flat", d.Flat}, {"cum", d.Cum}} {
		if len(l.shares) == 0 {
			det.Empty = append(det.Empty, f.apply(fmt.Sprintf("No function's %s share grew measurably.", l.kind)))
			continue
		}
		list := ViewList{Columns: []string{"function (" + l.kind + ")", "base", "head", "Δ", "samples", "p"}}
		for _, s := range l.shares {
			list.Rows = append(list.Rows, []string{f.apply(markCode(analysis.ShortFuncName(s.Name))), f.apply(fmtx.FormatShare(s.Base)), f.apply(fmtx.FormatShare(s.Head)),
				f.apply(fmtx.FormatPP(s.Delta)), f.apply(countsCell(s.HasEvidence(), s.BaseSamples, s.HeadSamples)), f.apply(evidenceP(s.HasEvidence(), s.P))})
		}
		det.Lists = append(det.Lists, list)
	}
	return det
}

// viewMemory is the comment's memory line and its collapsed tables.
func viewMemory(d analysis.MemoryDiff, f Formatter) ViewMemory {
	m := ViewMemory{Line: f.apply(analysis.MemoryLine(d, markCode, markNone))}
	m.Detail = ViewDetail{
		Caption: f.apply("Allocation sites that grew most, per run"),
		Note:    f.apply(memoryNote(d)),
		Lists:   []ViewList{}, Empty: []string{},
	}
	for _, l := range []struct {
		kind, unit string
		sites      []analysis.AllocSite
	}{{"bytes", "B", d.Space}, {"objects", "objects", d.Objects}} {
		if len(l.sites) == 0 {
			m.Detail.Empty = append(m.Detail.Empty, f.apply(fmt.Sprintf("No allocation site's %s grew measurably.", l.kind)))
			continue
		}
		list := ViewList{Columns: []string{"allocation site (" + l.kind + ")", "base", "head", "Δ", "samples", "p"}}
		for _, s := range l.sites {
			list.Rows = append(list.Rows, []string{f.apply(markCode(analysis.ShortFuncName(s.Name))), f.apply(fmtx.FormatAlloc(s.Base, l.unit)), f.apply(fmtx.FormatAlloc(s.Head, l.unit)),
				f.apply(fmtx.FormatAllocDelta(s.Delta, l.unit)), f.apply(countsCell(s.HasEvidence(), s.BaseSamples, s.HeadSamples)), f.apply(evidenceP(s.HasEvidence(), s.P))})
		}
		m.Detail.Lists = append(m.Detail.Lists, list)
	}
	return m
}

// evidenceP formats a listed function's or site's p-value, "—" for one
// of a report stored without it.
func evidenceP(ok bool, p float64) string {
	if !ok {
		return "—"
	}
	return fmtx.FormatP(p)
}

func viewAttribution(a analysis.Attribution, f Formatter) ViewAttribution {
	va := ViewAttribution{Benchmark: a.Benchmark, Unit: a.Unit, Changed: a.Changed(), Parts: []ViewShare{}}
	for _, line := range attributionLines(a, markCode) {
		va.Lines = append(va.Lines, f.apply(line))
	}
	for _, p := range a.Phases {
		va.Parts = append(va.Parts, ViewShare{Phase: f.apply(markCode(p.Phase)), Delta: f.apply(fmtx.FormatDelta(p.Delta, a.Unit)),
			DeltaPct: f.apply(formatPhasePct(p.DeltaPct)), Share: f.apply(formatShareCell(p.SharePct)), VerdictText: f.apply(shareVerdict(p)),
			Verdict: p.Verdict, SharePct: drawnShare(a, p.SharePct)})
	}
	if a.Changed() {
		va.Parts = append(va.Parts, ViewShare{Phase: f.apply("the rest"), Delta: f.apply(fmtx.FormatDelta(a.Unexplained, a.Unit)),
			Share: f.apply(formatShareCell(a.UnexplainedSharePct)), SharePct: drawnShare(a, a.UnexplainedSharePct), Rest: true})
	}
	return va
}

// drawnShare is a share to draw: NaN where total did not change or the
// share is not given.
func drawnShare(a analysis.Attribution, x float64) float64 {
	if !a.Changed() || !stats.Finite(x) {
		return math.NaN()
	}
	return x
}

// profileNote says what a profile diff's tables show, as the comment and
// the dashboard word it (plain text).
func profileNote(d analysis.ProfileDiff) string {
	return fmt.Sprintf("Shares of the %s samples labelled phase=%s in each side's merged profiles: base %s; head %s. Flat: the function itself was running; cum: it was on the stack. Δ in percentage points. Listed only when the share grew measurably: %s (p adjusted over the functions tested).",
		analysis.ProfileWhat(d), d.Phase, profileSide(d.BaseProfiles, d.BaseSamples, d.BaseValue, d.Unit),
		profileSide(d.HeadProfiles, d.HeadSamples, d.HeadValue, d.Unit), analysis.ProfileTestNote())
}

// memoryNote says what a memory diff's tables show (plain text).
func memoryNote(d analysis.MemoryDiff) string {
	return fmt.Sprintf("Heap profiles (alloc_space, alloc_objects), the mean of each side's runs: base %s, %s and %s a run; head %s, %s and %s a run. They cover whole runs (setup, warm-ups and proofs), not phases: Go's heap profiles carry no labels. Listed only when the site grew measurably: %s (samples: the allocations sampled, or the bytes in sampling periods, in all of a side's profiles; p adjusted over the sites tested).",
		fmtx.Plural(d.BaseProfiles, "profile"), fmtx.FormatAlloc(d.BaseSpace, "B"), fmtx.FormatAlloc(d.BaseObjects, "objects"),
		fmtx.Plural(d.HeadProfiles, "profile"), fmtx.FormatAlloc(d.HeadSpace, "B"), fmtx.FormatAlloc(d.HeadObjects, "objects"), analysis.MemoryTestNote())
}
