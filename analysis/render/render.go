package render

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/analysis/internal/fmtx"
	"github.com/perfbot/perfbot/analysis/stats"
)

// SummaryMarker is the hidden first line of the PR comment, by which the
// bot finds its own comment to edit it in place.
const SummaryMarker = "<!-- perfbot:summary -->"

// A RenderContext carries what a rendering needs beyond the report.
type RenderContext struct {
	// Command is how readers invoke perfbot in the reproduction steps;
	// "perfbot" when empty.
	Command string
	// DetailsURL links to the full comparison (a dashboard page);
	// omitted when empty.
	DetailsURL string
	// Repo is the repository the reproduction commands name (--repo):
	// the path or URL the comparison measured; "" or "." for the current
	// directory, which is their default.
	Repo string
}

func (ctx RenderContext) command() string { return cmp.Or(ctx.Command, "perfbot") }

// RenderJSON writes r as indented JSON. The output is stable: rows and
// warnings keep the report's order and maps are written sorted by key.
func RenderJSON(w io.Writer, r *analysis.Report) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("render report as JSON: %w", err)
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// A rowGroup is the rows of one table: one unit and, when every row has a
// phase, one benchmark.
type rowGroup struct {
	benchmark string // "" when the table lists whole benchmarks
	unit      string
	rows      []analysis.Row
}

// groupRows splits the primary or the other rows into tables, keeping the
// report's order (which Compare made contiguous by unit and benchmark).
func groupRows(rows []analysis.Row, primary bool) []rowGroup {
	var byUnit []rowGroup
	for _, row := range rows {
		if row.Primary != primary {
			continue
		}
		if n := len(byUnit); n == 0 || byUnit[n-1].unit != row.Unit {
			byUnit = append(byUnit, rowGroup{unit: row.Unit})
		}
		byUnit[len(byUnit)-1].rows = append(byUnit[len(byUnit)-1].rows, row)
	}
	var out []rowGroup
	for _, u := range byUnit {
		if slices.ContainsFunc(u.rows, func(r analysis.Row) bool { return r.Phase == "" }) {
			out = append(out, u)
			continue
		}
		for _, row := range u.rows {
			if n := len(out); n == 0 || out[n-1].unit != u.unit || out[n-1].benchmark != row.Benchmark {
				out = append(out, rowGroup{benchmark: row.Benchmark, unit: u.unit})
			}
			out[len(out)-1].rows = append(out[len(out)-1].rows, row)
		}
	}
	return out
}

// label names a row within its group.
func (g rowGroup) label(row analysis.Row) string {
	switch {
	case g.benchmark != "":
		return row.Phase
	case row.Phase == "":
		return row.Benchmark
	}
	return row.Benchmark + "/phase=" + row.Phase
}

// simulated reports whether g's rows are simulated counts (all or none
// of a unit's rows are).
func (g rowGroup) simulated() bool { return len(g.rows) > 0 && g.rows[0].Simulated }

// unitTitle names g's unit in its table's heading, saying so when its
// counts are simulated.
func (g rowGroup) unitTitle() string {
	if g.simulated() {
		return g.unit + ", simulated by callgrind: exact, one run a side"
	}
	return g.unit
}

// simulationLine says how the callgrind runs went: "Simulated
// instruction counts (callgrind, exact, one run a side; a change counts
// from 0.5% and 1,000 instructions): prove ran 23.4× (base) and 24.0×
// (head) as long as its timed runs." code formats a command's name.
func simulationLine(r *analysis.Report, code func(string) string) string {
	if len(r.Simulations) == 0 {
		return ""
	}
	var parts []string
	for _, s := range r.Simulations {
		name := strings.TrimPrefix(s.Benchmark, analysis.ProcessBenchmark+"/benchmark=")
		parts = append(parts, fmt.Sprintf("%s ran %s (base) and %s (head) as long as its timed runs",
			code(name), fmtx.FormatSlowdown(s.Base.Slowdown), fmtx.FormatSlowdown(s.Head.Slowdown)))
	}
	return fmt.Sprintf("Simulated instruction counts (callgrind: exact, one run a side, no test; a change counts from %.1f%% and %d instructions): %s.",
		analysis.SimFloorPct, analysis.SimFloorInstructions, strings.Join(parts, "; "))
}

// firstColumn is the heading of a group's first column.
func (g rowGroup) firstColumn() string {
	if g.benchmark != "" {
		return "phase"
	}
	return "benchmark"
}

// An ExplainedRow is a row, its explanation and the profile diff the
// explanation refers to (nil for none).
type ExplainedRow struct {
	Row  analysis.Row
	Expl analysis.Explanation
	Diff *analysis.ProfileDiff
}

// explainedRows returns the rows of g that one of r's explanations
// explains, in the group's order.
func explainedRows(r *analysis.Report, g rowGroup) []ExplainedRow {
	var out []ExplainedRow
	expls := analysis.ReportExplanations(r)
	for _, row := range g.rows {
		if row.Unit != analysis.TimeUnit {
			continue
		}
		for _, e := range expls {
			if e.Benchmark == row.Benchmark && e.Phase == row.Phase {
				er := ExplainedRow{Row: row, Expl: e}
				if e.Profile != nil && *e.Profile >= 0 && *e.Profile < len(r.ProfileDiffs) {
					er.Diff = &r.ProfileDiffs[*e.Profile]
				}
				out = append(out, er)
				break
			}
		}
	}
	return out
}

// profileSide describes one side of a profile diff: "12 profiles, 9.620s
// in 962 samples".
func profileSide(profiles int, samples, value int64, unit string) string {
	v := fmt.Sprintf("%d %s", value, unit)
	if unit == "nanoseconds" {
		v = fmtx.FormatValue(float64(value)/1e9, "sec")
	}
	return fmt.Sprintf("%s, %s in %s", fmtx.Plural(profiles, "profile"), v, fmtx.Plural(int(samples), "sample"))
}

// rowText is a row's cells, formatted.
type rowText struct {
	base, head, delta, p, floor, verdict string
	changed                              bool // regression or improvement
}

// formatRow formats a row's cells. base and head are the values its
// change compares (Row.BaseValue, Row.HeadValue), so that Δ, the two
// values and the verdict are one estimate.
func formatRow(row analysis.Row) rowText {
	s := fmtx.Scaler(row.Unit, row.BaseValue, row.HeadValue)
	t := rowText{
		base:    fmtx.FormatScaled(s, row.BaseValue, row.Unit),
		head:    fmtx.FormatScaled(s, row.HeadValue, row.Unit),
		delta:   analysis.FormatChange(row),
		floor:   analysis.FormatFloor(row.Floor),
		verdict: RowVerdict(row),
		changed: row.Verdict == analysis.VerdictRegression || row.Verdict == analysis.VerdictImprovement,
	}
	if row.Simulated {
		t.p = "exact"
		return t
	}
	t.p = fmtx.FormatP(row.PValue)
	if row.Reason == analysis.ReasonTooFewRuns || row.Reason == analysis.ReasonRunsFailed || row.Verdict == analysis.VerdictWait {
		t.p = "—" // not tested, so not Holm-corrected either
	}
	if row.Verdict == analysis.VerdictInconclusive && stats.Finite(row.MDEPct) {
		t.verdict += fmt.Sprintf(" (MDE %.1f%%)", row.MDEPct)
	}
	return t
}

// Headline says in one sentence what the verdict rests on. code formats
// a series name (backticks in Markdown).
// Headline is the report's verdict and what decided it in one plain-text
// line, such as a check run's title: "Regression. Head is worse than base
// in msm_h +5.2%, total +3.9%."
func Headline(r *analysis.Report) string {
	return capitalize(verdictWord(r.Verdict)) + ". " + headline(r, func(s string) string { return s })
}

func headline(r *analysis.Report, code func(string) string) string {
	label := reportLabeler(r)
	isHeadline := r.IsHeadline()
	name := func(row analysis.Row) string {
		n := code(label(row.Key))
		if len(r.Options.PrimaryUnits) > 1 {
			n += " (" + row.Unit + ")"
		}
		return n
	}
	changes := func(v analysis.Verdict) []string {
		var rows []analysis.Row
		for _, row := range r.Phases {
			if row.Primary && row.Verdict == v {
				rows = append(rows, row)
			}
		}
		slices.SortStableFunc(rows, func(a, b analysis.Row) int {
			return cmp.Compare(math.Abs(b.Change()), math.Abs(a.Change()))
		})
		var out []string
		for _, row := range rows {
			out = append(out, name(row)+" "+changeWord(row))
		}
		return out
	}
	switch r.Verdict {
	case analysis.VerdictRegression, analysis.VerdictImprovement:
		worse, better := changes(analysis.VerdictRegression), changes(analysis.VerdictImprovement)
		var parts []string
		if len(worse) > 0 {
			parts = append(parts, "head is worse than base in "+fmtx.List(worse, 5))
		}
		if len(better) > 0 {
			parts = append(parts, "better in "+fmtx.List(better, 5))
		}
		switch {
		case len(worse) == 0 && len(better) == 0:
			// A report stored by an older perfbot, whose rows carry no
			// primary flag.
			return "The report marks none of its series as the ones its verdict rests on, so none is named here."
		case len(worse) == 0:
			parts[0] = "head is better than base in " + fmtx.List(better, 5)
		case r.Verdict == analysis.VerdictImprovement:
			// Better in the headline, worse in a phase: say the
			// headline first, then the trade.
			var hb []string
			for _, row := range r.Phases {
				if isHeadline(row) && row.Verdict == analysis.VerdictImprovement {
					hb = append(hb, name(row)+" "+changeWord(row))
				}
			}
			return "Head is better than base in " + fmtx.List(hb, 5) + "; " + tradeOff(r, name)
		}
		return capitalize(strings.Join(parts, "; ")) + "."
	case analysis.VerdictNoChange:
		if t := tradeOff(r, name); t != "" {
			var within []string
			for _, row := range r.Phases {
				if isHeadline(row) {
					within = append(within, name(row)+" "+changeWord(row))
				}
			}
			return fmt.Sprintf("No slower overall: %s, within %s noise floor; %s", fmtx.List(within, 5), possessive(len(within)), t)
		}
		var moved []string
		for _, row := range r.Phases {
			if row.Primary && !isHeadline(row) && row.Changed() {
				moved = append(moved, name(row)+" "+changeWord(row))
			}
		}
		s := fmt.Sprintf("No %s series changed beyond its noise floor (%s at α = %v, Holm-corrected).",
			strings.Join(r.Options.PrimaryUnits, ", "), fmtx.Plural(r.HolmFamily, "test"), r.Options.Alpha)
		if len(moved) > 0 {
			var within []string
			for _, row := range r.Phases {
				if isHeadline(row) {
					within = append(within, name(row)+" "+changeWord(row))
				}
			}
			s = fmt.Sprintf("No change overall: %s, within %s noise floor. Phases that changed: %s.", fmtx.List(within, 5), possessive(len(within)), fmtx.List(moved, 5))
		}
		if moved := otherUnitsMoved(r, name); len(moved) > 0 {
			s += " In other units, which decide nothing: " + fmtx.List(moved, 4) + "."
		}
		return s
	case analysis.VerdictInconclusive:
		reasons := make(map[string][]string)
		var order []string
		var ruledOut []string
		var moved []string
		for _, row := range r.Phases {
			if row.Primary && !isHeadline(row) && (row.Verdict == analysis.VerdictRegression || row.Verdict == analysis.VerdictImprovement) {
				moved = append(moved, name(row)+" "+changeWord(row))
			}
			if isHeadline(row) && row.Verdict == analysis.VerdictInconclusive {
				if _, ok := reasons[row.Reason]; !ok {
					order = append(order, row.Reason)
				}
				reasons[row.Reason] = append(reasons[row.Reason], name(row))
				if stats.Finite(row.DeltaLoPct) && stats.Finite(row.DeltaHiPct) {
					ruledOut = append(ruledOut, fmt.Sprintf("outside [%s, %s] in %s", fmtx.FormatPct(row.DeltaLoPct), fmtx.FormatPct(row.DeltaHiPct), name(row)))
				}
			}
		}
		if len(order) == 0 {
			return fmt.Sprintf("No series in %s was measured on both sides.", strings.Join(r.Options.PrimaryUnits, ", "))
		}
		var parts []string
		for _, reason := range order {
			parts = append(parts, reason+": "+fmtx.List(reasons[reason], 5))
		}
		s := "Not settled (" + strings.Join(parts, "; ") + ")."
		if len(ruledOut) > 0 {
			s += " Ruled out: changes " + fmtx.List(ruledOut, 3) + "."
		}
		if len(moved) > 0 {
			s += " Phases that changed: " + fmtx.List(moved, 5) + "."
		}
		if r.NeedMoreRuns() {
			s += " More runs may settle it."
		}
		return s
	case analysis.VerdictError:
		var parts []string
		for _, side := range []struct {
			name string
			runs analysis.SideRuns
		}{{"base", r.Runs.Base}, {"head", r.Runs.Head}} {
			switch {
			case side.runs.Total == 0:
				parts = append(parts, side.name+" has no runs")
			case side.runs.OK == 0:
				parts = append(parts, fmt.Sprintf("every %s run failed (%s)", side.name, analysis.StatusCounts(side.runs)))
			}
		}
		if len(parts) == 0 {
			parts = append(parts, "no ok run of one side printed a benchmark result")
		}
		return "Nothing to compare: " + strings.Join(parts, "; ") + "."
	}
	return ""
}

// changeWord is a row's change as a headline names it: its percentage,
// or, where the base's median is 0 and no percentage exists, the change
// in its unit ("+4.839ms").
func changeWord(row analysis.Row) string {
	if stats.Finite(row.Change()) {
		return fmtx.FormatPct(row.Change())
	}
	return fmtx.FormatDelta(row.Shift, row.Unit)
}

// otherUnitsMoved names the rows of units that do not decide the
// verdict which changed: "synthesis allocs/op +75.0%".
func otherUnitsMoved(r *analysis.Report, name func(analysis.Row) string) []string {
	var moved []string
	for _, row := range r.Phases {
		if !row.Primary && row.Changed() {
			moved = append(moved, name(row)+" "+row.Unit+" "+analysis.FormatChange(row))
		}
	}
	return moved
}

// oneSidedLine names the primary series only one side measured: phases
// a change added or removed, which no table row shows. "" when none.
func oneSidedLine(r *analysis.Report, code func(string) string) string {
	label := reportLabeler(r)
	names := func(keys []analysis.Key) []string {
		var out []string
		for _, k := range keys {
			if slices.Contains(r.Options.PrimaryUnits, k.Unit) {
				out = append(out, code(label(k)))
			}
		}
		return out
	}
	var parts []string
	if added := names(r.OnlyHead); len(added) > 0 {
		parts = append(parts, "only head measured "+fmtx.List(added, 6)+" (added)")
	}
	if removed := names(r.OnlyBase); len(removed) > 0 {
		parts = append(parts, "only base measured "+fmtx.List(removed, 6)+" (removed)")
	}
	if len(parts) == 0 {
		return ""
	}
	return capitalize(strings.Join(parts, "; ")) + ": not compared."
}

// tradeOff is the sentence that names a trade-off (Report.TradeOff),
// "" when there is none: "a trade-off: msm_b1 +2.7% and msm_l +3.4%
// slower, msm_h −2.3% faster."
func tradeOff(r *analysis.Report, name func(analysis.Row) string) string {
	rows := r.TradeOff()
	if len(rows) == 0 {
		return ""
	}
	var worse, better []string
	for _, row := range rows {
		s := name(row) + " " + changeWord(row)
		if row.Verdict == analysis.VerdictRegression {
			worse = append(worse, s)
		} else {
			better = append(better, s)
		}
	}
	s := "a trade-off: " + fmtx.List(worse, 5) + " worse"
	if len(better) > 0 {
		s += ", " + fmtx.List(better, 5) + " better"
	}
	if r.Options.FailOn == analysis.FailOnAnyPhase {
		return s + " (fail_on: any-phase fails the check on it)."
	}
	return s + "; it fails no check (fail_on: headline)."
}

// possessive is "its" for one series, "their" for more.
func possessive(n int) string {
	if n == 1 {
		return "its"
	}
	return "their"
}

// reportLabeler names series as the report's warnings do.
func reportLabeler(r *analysis.Report) func(analysis.Key) string {
	keys := make([]analysis.Key, 0, len(r.Phases))
	for _, row := range r.Phases {
		keys = append(keys, row.Key)
	}
	return analysis.Labeler(keys)
}

// methodLine says how rows were decided: the test, Holm's family, the
// floor, and the looks with each one's nominal threshold.
func methodLine(r *analysis.Report) string {
	test := "Mann-Whitney U (as benchstat)"
	if slices.ContainsFunc(r.Phases, func(row analysis.Row) bool { return row.Paired }) {
		test = "Wilcoxon signed-rank of the rounds' log ratios (paired; Mann-Whitney U where a row's runs do not pair)"
	}
	s := fmt.Sprintf(test+", Holm-corrected over %s at α = %v; a change needs the change's interval at this look's level (1 − its p threshold, so it excludes 0 exactly when the test is significant) to exclude 0 and Δ to reach its noise floor (at least %.1f%%), \"no change\" means its %s interval lies within the floor, and a side needs %d ok runs.",
		fmtx.Plural(r.HolmFamily, "test"), r.Options.Alpha, r.Options.MinChangePct, analysis.FormatLevel(r.Options.Confidence), r.Options.MinRuns)
	if line := looksLine(r); line != "" {
		s += " " + line
	}
	if r.Order != "" {
		s += " " + orderLine(r)
	}
	return s
}

// looksLine says how many looks the comparison took and the threshold
// of each: "2 looks (10 and 15 runs a side) with O'Brien–Fleming
// α-spending to 30: one test needed p < 0.00015, then < 0.0031; p (adj.)
// accounts for them."
func looksLine(r *analysis.Report) string {
	d := r.Sequential
	if len(d.Looks) == 0 {
		return ""
	}
	runs := make([]string, len(d.Looks))
	th := make([]string, len(d.Looks))
	for i, l := range d.Looks {
		runs[i] = strconv.Itoa(l.Runs)
		th[i] = formatThreshold(l.Threshold)
	}
	if len(d.Looks) == 1 && d.Looks[0].Fraction >= 1 {
		return fmt.Sprintf("One look (%s a side): one test needed p < %s.", fmtx.Plural(d.Looks[0].Runs, "run"), th[0])
	}
	return fmt.Sprintf("%s (%s runs a side) of a sequential design up to %d, with %s α-spending so that the looks together keep α: one test needed p < %s; p (adj.) accounts for the looks and the family.",
		capitalize(fmtx.Plural(len(d.Looks), "look")), analysis.JoinAnd(runs), d.MaxRuns, spendingName(d.Spending), joinThen(th))
}

// orderLine says how the sides were ordered within rounds.
func orderLine(r *analysis.Report) string {
	switch {
	case r.Order == "random" && r.Seed != 0:
		return fmt.Sprintf("Each round ran the sides in a random order (seed %d: --seed %d replays it).", r.Seed, r.Seed)
	case r.Order == "abba":
		return "Rounds alternated base-head and head-base (abba)."
	case r.Order == "alternate":
		return "Every round ran base, then head (alternate)."
	}
	return "Sides ordered: " + r.Order + "."
}

func spendingName(s string) string {
	switch s {
	case stats.SpendingOBrienFleming:
		return "O'Brien–Fleming-type"
	case stats.SpendingPocock:
		return "Pocock-type"
	}
	return s
}

// formatThreshold formats a nominal p-value threshold to two
// significant digits.
func formatThreshold(p float64) string {
	if !stats.Finite(p) {
		return "n/a"
	}
	if p == 0 {
		return "0"
	}
	return strconv.FormatFloat(p, 'g', 2, 64)
}

// joinThen joins thresholds as "a, then b, then c".
func joinThen(items []string) string { return strings.Join(items, ", then < ") }

// mdeLine says, for the inconclusive primary rows, which changes the runs
// could not have called (each row's MDE: half its printed interval) and
// how many runs would settle a change of floor size: "At this noise,
// changes under 6.1% in msm_h and 4.2% in ntt cannot be seen at 30 runs
// a side; seeing msm_h's 1.0% floor would take about 1,100 runs a side
// (perfbot calibrate measures each phase's noise)." It is "" when no such
// row has an MDE.
func mdeLine(r *analysis.Report, code func(string) string) string {
	label := reportLabeler(r)
	var rows []analysis.Row
	for _, row := range r.Phases {
		if row.Primary && row.Verdict == analysis.VerdictInconclusive && stats.Finite(row.MDEPct) && row.MDEPct > row.Floor.Pct {
			rows = append(rows, row)
		}
	}
	if len(rows) == 0 {
		return ""
	}
	slices.SortStableFunc(rows, func(a, b analysis.Row) int { return cmp.Compare(b.MDEPct, a.MDEPct) })
	var parts []string
	for _, row := range rows {
		parts = append(parts, fmt.Sprintf("%.1f%% in %s", row.MDEPct, code(label(row.Key))))
	}
	n := min(rows[0].Base.N, rows[0].Head.N)
	s := fmt.Sprintf("At this noise, changes under %s cannot be seen at %s a side",
		analysis.JoinAnd(parts[:min(len(parts), 4)]), fmtx.Plural(n, "run"))
	// The runs a floor needs, from the row that needs the most.
	slices.SortStableFunc(rows, func(a, b analysis.Row) int { return cmp.Compare(b.RunsToFloor, a.RunsToFloor) })
	worst := rows[0]
	if worst.RunsToFloor <= n {
		// Narrow enough at the last look's level already: more looks
		// settle it.
		return s + "."
	}
	// The interval narrows as one over the root of the runs: past a sane
	// bound, say what floor the cap can judge instead of a count nobody
	// will run.
	capRuns := max(r.Sequential.MaxRuns, n)
	limit := RunsBoundFactor * capRuns
	if worst.RunsToFloor <= limit {
		return s + fmt.Sprintf("; seeing %s's %s floor would take about %s runs a side (perfbot calibrate measures each phase's noise and the count it needs).",
			code(label(worst.Key)), analysis.FormatFloor(worst.Floor), formatCount(roundRuns(float64(worst.RunsToFloor))))
	}
	judgeable := worst.Floor.Pct * math.Sqrt(float64(worst.RunsToFloor)/float64(capRuns))
	return s + fmt.Sprintf("; %s's %s floor is below what this runner resolves (more than %s runs a side); at %s a side it could judge a floor of about %.1f%% (perfbot calibrate measures each phase's noise).",
		code(label(worst.Key)), analysis.FormatFloor(worst.Floor), formatCount(limit), fmtx.Plural(capRuns, "run"), judgeable)
}

// RunsBoundFactor bounds the run counts a report suggests: at most this
// many times the comparison's cap.
const RunsBoundFactor = 10

// formatCount formats a whole number with thousands separators:
// "14,000".
func formatCount(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// roundRuns rounds a run count up to two significant digits.
func roundRuns(x float64) int {
	if !(x < 1e9) {
		return 1e9
	}
	n := int(math.Ceil(x))
	for scale := 1; ; scale *= 10 {
		if n < 100*scale {
			return (n + scale - 1) / scale * scale
		}
	}
}

// otherUnits lists the units of the non-primary rows.
func otherUnits(r *analysis.Report) []string {
	var units []string
	for _, row := range r.Phases {
		if !row.Primary && !slices.Contains(units, row.Unit) {
			units = append(units, row.Unit)
		}
	}
	return units
}

// failureTail returns the last lines of a failure's detail, at most
// maxLines lines and maxBytes bytes: the end of stderr says why.
func failureTail(detail string, maxLines, maxBytes int) string {
	detail = strings.TrimRight(detail, "\n")
	lines := strings.Split(detail, "\n")
	if len(lines) > maxLines {
		lines = lines[len(lines)-maxLines:]
	}
	out := strings.Join(lines, "\n")
	if len(out) > maxBytes {
		out = out[len(out)-maxBytes:]
		// Do not start inside a UTF-8 sequence.
		for len(out) > 0 && out[0]&0xC0 == 0x80 {
			out = out[1:]
		}
		out = "…" + out
	}
	return out
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// attributionLines says in sentences what an attribution found: total's
// change with its interval and verdict; for a total that changed, which
// phases account for it and the notes on shares not given; for one that
// did not, that no share is given; then which branch of each overlap the
// critical path took, and how much slack every phase that changed
// significantly off the critical path has left. code formats a series
// name.
func attributionLines(a analysis.Attribution, code func(string) string) []string {
	s := fmtx.Scaler(a.Unit, a.Base, a.Head)
	head := fmt.Sprintf("%s (%s): total %s → %s, %s%s (%s)", code(a.Benchmark), a.Unit,
		fmtx.FormatScaled(s, a.Base, a.Unit), fmtx.FormatScaled(s, a.Head, a.Unit),
		fmtx.FormatDelta(a.Delta, a.Unit), analysis.FormatDeltaInterval(a.DeltaLo, a.DeltaHi, a.Unit), fmtx.FormatPct(a.DeltaPct))
	var lines []string
	switch {
	case a.Changed() && len(a.ExplainedBy) > 0:
		var parts []string
		for _, p := range a.Phases {
			if slices.Contains(a.ExplainedBy, p.Phase) && stats.Finite(p.SharePct) {
				parts = append(parts, fmt.Sprintf("%s %s", code(p.Phase), fmtx.FormatShare(p.SharePct)))
			}
		}
		line := head + ", " + verdictWord(a.Verdict) + "."
		if stats.Finite(a.UnexplainedSharePct) {
			parts = append(parts, fmt.Sprintf("the rest (phases that moved within their noise, and time outside the phases) %s", fmtx.FormatShare(a.UnexplainedSharePct)))
		}
		if len(parts) > 0 {
			line += " Shares of it: " + analysis.JoinAnd(parts) + "."
		}
		lines = append(lines, line)
		lines = append(lines, a.Notes...)
	case a.Changed():
		lines = append(lines, head+", "+verdictWord(a.Verdict)+". No phase changed significantly on the critical path: the change is in phases that moved within their noise, or outside the phases.")
	default:
		lines = append(lines, fmt.Sprintf("%s: %s, so no phase's share of it is given.", head, notChangedWord(a.Verdict)))
	}
	for _, o := range a.Overlaps {
		lines = append(lines, overlapSentence(o))
	}
	for _, p := range a.Phases {
		if p.Slack != nil && (p.Verdict == analysis.VerdictRegression || p.Verdict == analysis.VerdictImprovement) {
			lines = append(lines, slackSentence(p, code))
		}
	}
	return lines
}

// notChangedWord says why a total that did not change gets no shares.
func notChangedWord(v analysis.Verdict) string {
	switch v {
	case analysis.VerdictNoChange:
		return "no change beyond its noise floor"
	case analysis.VerdictInconclusive:
		return "not a significant change (inconclusive)"
	}
	return "not compared"
}

// slackSentence says how much a phase off the critical path may still
// grow before the proof waits for it: "msm_h +4.9% (regression) is off
// the critical path: msm_b2 took longer on both sides, so msm_h's branch
// could grow by 14.10ms more at base and 12.30ms more at head before it
// lengthens the proof."
func slackSentence(p analysis.PhaseShare, code func(string) string) string {
	s := fmtx.Scaler("sec/op", p.Slack.Base, p.Slack.Head)
	return fmt.Sprintf("%s %s (%s) is off the critical path: %s took longer on both sides, so %s's branch could grow by %s more at base and %s more at head before it lengthens the proof.",
		code(p.Phase), cmp.Or(finitePct(p.DeltaPct), fmtx.FormatDelta(p.Delta, "sec/op")), verdictWord(p.Verdict), code(p.Slack.Behind), p.Phase,
		fmtx.FormatScaled(s, p.Slack.Base, "sec/op"), fmtx.FormatScaled(s, p.Slack.Head, "sec/op"))
}

// estimateLine says what Δ and the values beside it are, and what the
// intervals are: each the one its row's verdict was decided on.
func estimateLine(r *analysis.Report) string {
	if slices.ContainsFunc(r.Phases, func(row analysis.Row) bool { return row.Paired }) {
		return "Paired by round: Δ is the Hodges–Lehmann estimate of the rounds' own head/base ratios, " +
			"tested with Wilcoxon's signed-rank test, so what the machine did to both runs of a round cancels; base is the base's median and head is base moved by Δ " +
			"(benchstat's unpaired medians and p: perfbot export --per-run). " + intervalSentence(r)
	}
	return "Δ is the change's Hodges–Lehmann estimate (the median of every head/base ratio); base is the base's median and head is base moved by Δ, " +
		"so the three never disagree (benchstat's own medians: perfbot export). " + intervalSentence(r)
}

// intervalSentence says what each row's interval is and how it decides:
// "Each interval is the one its verdict was decided on, at this look's
// level (99.5%) for a change or a row not settled, at 95% for no change:
// a change when it excludes 0 and Δ reaches the floor, no change when it
// lies within ±floor, not settled otherwise." Levels are the primary
// rows'; other units' families have their own.
func intervalSentence(r *analysis.Report) string {
	lo, hi := math.Inf(1), math.Inf(-1)
	fixed := false
	for _, row := range r.Phases {
		if !row.Primary || row.Simulated || !stats.Finite(row.Threshold) {
			continue
		}
		if row.Verdict == analysis.VerdictNoChange {
			fixed = true
			continue
		}
		lo, hi = math.Min(lo, row.Confidence), math.Max(hi, row.Confidence)
	}
	var at []string
	switch {
	case lo > hi: // every tested row is no change, or none was tested
	case lo == hi:
		at = append(at, "at this look's level ("+analysis.FormatLevel(lo)+") for a change or a row not settled")
	default:
		at = append(at, "at this look's level ("+strings.TrimSuffix(analysis.FormatLevel(lo), "%")+"–"+analysis.FormatLevel(hi)+", by the row's p threshold) for a change or a row not settled")
	}
	if fixed || len(at) == 0 {
		at = append(at, "at "+analysis.FormatLevel(r.Options.Confidence)+" for no change")
	}
	s := "Each interval is the one its verdict was decided on, " + strings.Join(at, ", ") +
		": a change when it excludes 0 and Δ reaches the floor, no change when it lies within ±floor, not settled otherwise."
	if slices.ContainsFunc(r.Phases, func(row analysis.Row) bool { return row.Distribution != nil }) {
		s += " A verdict that names a share of non-zero runs or two medians is a change of the runs' distribution, which Δ (0 when most head/base pairs are equal) cannot show."
	}
	return s
}
