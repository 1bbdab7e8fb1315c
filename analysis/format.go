package analysis

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/perfbot/perfbot/analysis/stats"
	"golang.org/x/perf/benchunit"
)

// This file formats numbers the same way for warnings and every
// rendering.

// scaler returns the one benchunit scale for vals (a row's base and head,
// say): the scale of the largest, with at least three significant digits,
// and enough digits after the point to show the smallest with two, up to
// four. benchunit.CommonScale scales by the smallest, which prints a
// 70.8 ms base beside a 5.1 µs head as "70799.7µs".
func scaler(unit string, vals ...float64) benchunit.Scaler {
	cls := benchunit.ClassOf(unit)
	lo, hi := math.Inf(1), 0.0
	for _, v := range vals {
		if a := math.Abs(v); stats.Finite(a) && a != 0 {
			lo, hi = math.Min(lo, a), math.Max(hi, a)
		}
	}
	if hi == 0 {
		return benchunit.CommonScale(vals, cls)
	}
	s := benchunit.CommonScale([]float64{hi}, cls)
	if lo < hi {
		need := 1 - int(math.Floor(math.Log10(lo/s.Factor)))
		s.Prec = max(s.Prec, min(need, 4))
	}
	return s
}

// formatScaled formats v with s, appending "s" to the prefix of a time
// unit ("812.3ms" rather than benchstat's "812.3m" under a "sec/op"
// heading).
func formatScaled(s benchunit.Scaler, v float64, unit string) string {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return "?"
	}
	out := s.Format(v)
	if isTimeUnit(unit) {
		out += "s"
	}
	return out
}

// formatValue formats one value of unit.
func formatValue(v float64, unit string) string {
	return formatScaled(scaler(unit, v), v, unit)
}

// formatDelta formats a signed difference of unit.
func formatDelta(d float64, unit string) string {
	s := formatValue(d, unit)
	if d >= 0 {
		s = "+" + s
	}
	return s
}

// formatPct formats a signed percentage.
func formatPct(x float64) string {
	switch {
	case !stats.Finite(x):
		return "n/a"
	case math.Abs(x) < 0.05:
		return "0.0%"
	}
	return fmt.Sprintf("%+.1f%%", x)
}

// formatPhasePct formats a phase's change in percent in an attribution
// table, where its change in the unit stands beside it: "from 0" for a
// phase whose base median is 0, which no percentage can describe.
func formatPhasePct(x float64) string {
	if !stats.Finite(x) {
		return "from 0"
	}
	return formatPct(x)
}

// finitePct formats a signed percentage, or returns "" for none (a change
// from a base of 0), for the caller to say it in the unit instead.
func finitePct(x float64) string {
	if !stats.Finite(x) {
		return ""
	}
	return formatPct(x)
}

// formatShare formats a share of a total in percent.
func formatShare(x float64) string {
	if !stats.Finite(x) {
		return "n/a"
	}
	if math.Abs(x) < 0.05 {
		return "0.0%"
	}
	return fmt.Sprintf("%.1f%%", x)
}

// formatShareCell formats a share in a table: "—" where none is given.
func formatShareCell(x float64) string {
	if !stats.Finite(x) {
		return "—"
	}
	return formatShare(x)
}

// formatPP formats a signed change of a share in percentage points.
func formatPP(x float64) string {
	if math.Abs(x) < 0.05 {
		return "0.0 pp"
	}
	return fmt.Sprintf("%+.1f pp", x)
}

// formatP formats a p-value to benchstat's precision.
func formatP(p float64) string {
	if p < 0.001 {
		return "<0.001"
	}
	return fmt.Sprintf("%.3f", p)
}

// formatPEq formats a p-value as "p=0.012" or "p<0.001".
func formatPEq(p float64) string {
	if p < 0.001 {
		return "p<0.001"
	}
	return "p=" + formatP(p)
}

// formatCI formats how far a median's interval reaches from it, in
// percent: "±0.4%", or "±∞" without an interval.
func formatCI(s Summary) string {
	w := halfWidthPct(s)
	if !stats.Finite(w) {
		return "±∞"
	}
	return fmt.Sprintf("±%.1f%%", w)
}

// formatFloor formats a noise floor.
func formatFloor(f Floor) string {
	return strconv.FormatFloat(f.Pct, 'f', 1, 64) + "%"
}

// verdictWord names a verdict for readers.
func verdictWord(v Verdict) string {
	return strings.ReplaceAll(string(v), "-", " ")
}

// rowVerdict names a row's verdict with its reason when the reason matters.
func rowVerdict(row Row) string {
	switch {
	case row.Distribution != nil:
		return verdictWord(row.Verdict) + ": " + row.Distribution.Describe(row.Unit)
	case row.Reason == ReasonSpread && stats.Finite(row.SpreadRatio):
		return fmt.Sprintf("inconclusive: spread ×%s", formatRatio(row.SpreadRatio))
	}
	if row.MultiModal {
		s := scaler(row.Unit, row.Base.Median, row.Head.Median)
		return rowVerdictWord(row) + fmt.Sprintf(" (medians %s → %s: the runs sit on a few values)",
			formatScaled(s, row.Base.Median, row.Unit), formatScaled(s, row.Head.Median, row.Unit))
	}
	return rowVerdictWord(row)
}

// rowVerdictWord is a row's verdict with its reason, without notes.
func rowVerdictWord(row Row) string {
	switch row.Verdict {
	case VerdictInconclusive:
		return "inconclusive: " + row.Reason
	case VerdictWait:
		return "wait for " + row.Waits
	}
	return verdictWord(row.Verdict)
}

// shareVerdict names a phase's verdict in an attribution, with where it
// stood on the critical path when that matters.
func shareVerdict(p PhaseShare) string {
	switch {
	case p.Waits != "":
		return "wait for " + p.Waits
	case p.OffCriticalPath:
		return verdictWord(p.Verdict) + ", off the critical path"
	}
	return verdictWord(p.Verdict)
}

// overlapSentence says which branch of an overlap the critical path took
// on each side: "msm_b2 ran beside msm_a, msm_b1, msm_l, msm_h; the
// critical path went through msm_b2 at base (401ms against 300ms) and
// through msm_a … msm_h at head (470ms against 401ms)."
func overlapSentence(o Overlap) string {
	s := scaler("sec/op", o.BaseBranch, o.BaseSide, o.HeadBranch, o.HeadSide)
	branch := strings.Join(o.Branch, ", ")
	if len(o.Branch) > 2 {
		branch = o.Branch[0] + " … " + o.Branch[len(o.Branch)-1]
	}
	side := func(head bool) string {
		b, d := o.BaseBranch, o.BaseSide
		if head {
			b, d = o.HeadBranch, o.HeadSide
		}
		switch o.Critical(head) {
		case "branch":
			return fmt.Sprintf("through %s (%s against %s)", branch, formatScaled(s, b, "sec/op"), formatScaled(s, d, "sec/op"))
		case "side":
			return fmt.Sprintf("through %s (%s against %s)", o.Side, formatScaled(s, d, "sec/op"), formatScaled(s, b, "sec/op"))
		}
		return fmt.Sprintf("through both (%s each)", formatScaled(s, b, "sec/op"))
	}
	return fmt.Sprintf("%s ran beside %s, and %s waited for it; the critical path went %s at base and %s at head.",
		o.Side, strings.Join(o.Branch, ", "), o.Wait, side(false), side(true))
}

// FormatArgs joins args for a POSIX shell: an argument that is empty or
// holds anything but letters, digits and @%+=:,./_- is single-quoted (a
// single quote inside closes the quoting, is escaped with a backslash and
// opens it again), so the result splits back into args.
func FormatArgs(args []string) string {
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = shellQuote(a)
	}
	return strings.Join(quoted, " ")
}

func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./_-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// sideName names one side of r for readers, in code (mdCode or plain
// text): its short revision, and when r compares variants, "with ARGS"
// or "with no extra args".
func sideName(r *Report, rev string, args []string, code func(string) string) string {
	name := code(shortRev(rev))
	switch {
	case !r.Variants():
	case len(args) == 0:
		name += " with no extra args"
	default:
		name += " with " + code(FormatArgs(args))
	}
	return name
}

// shortRev abbreviates a commit SHA as GitHub does.
func shortRev(rev string) string {
	if rev == "" {
		return "?"
	}
	if len(rev) > 7 {
		return rev[:7]
	}
	return rev
}

// list joins up to limit items and says how many more there are.
func list(items []string, limit int) string {
	if len(items) > limit {
		return strings.Join(items[:limit], ", ") + fmt.Sprintf(" and %d more", len(items)-limit)
	}
	return strings.Join(items, ", ")
}

// plural returns n and the noun, with an s unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// statusCounts formats the failed runs of a side, "crashed: 2, timed-out: 1",
// in the order of Statuses, then any unknown status by name.
func statusCounts(s SideRuns) string {
	var parts []string
	seen := make(map[Status]bool)
	for _, st := range Statuses {
		seen[st] = true
		if n := s.Failed[st]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s: %d", st, n))
		}
	}
	var other []string
	for st, n := range s.Failed {
		if !seen[st] && n > 0 {
			other = append(other, fmt.Sprintf("%s: %d", st, n))
		}
	}
	slices.Sort(other)
	return strings.Join(append(parts, other...), ", ")
}

// runsLine describes a side's runs: "20 runs, 18 ok, crashed: 2".
func runsLine(s SideRuns) string {
	out := plural(s.Total, "run") + ", " + strconv.Itoa(s.OK) + " ok"
	if s.FailedRuns() > 0 {
		out += ", " + statusCounts(s)
	}
	if len(s.ByBenchmark) > 1 {
		counts := slices.Sorted(maps.Values(s.ByBenchmark))
		if counts[0] == counts[len(counts)-1] {
			out += fmt.Sprintf(" (%d benchmarks, %d ok runs each)", len(counts), counts[0])
		} else {
			names := slices.Sorted(maps.Keys(s.ByBenchmark))
			parts := make([]string, len(names))
			for i, n := range names {
				parts[i] = fmt.Sprintf("%s %d", n, s.ByBenchmark[n])
			}
			out += " (ok runs: " + strings.Join(parts, ", ") + ")"
		}
	}
	return out
}

// formatRatio formats a factor with two significant digits: "13",
// "2.4", "0.31".
func formatRatio(x float64) string {
	if x >= 10 {
		return strconv.FormatFloat(x, 'f', 0, 64)
	}
	return strconv.FormatFloat(x, 'g', 2, 64)
}
