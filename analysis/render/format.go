package render

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/analysis/internal/fmtx"
	"github.com/perfbot/perfbot/analysis/stats"
)

// formatPhasePct formats a phase's change in percent in an attribution
// table, where its change in the unit stands beside it: "from 0" for a
// phase whose base median is 0, which no percentage can describe.
func formatPhasePct(x float64) string {
	if !stats.Finite(x) {
		return "from 0"
	}
	return fmtx.FormatPct(x)
}

// finitePct formats a signed percentage, or returns "" for none (a change
// from a base of 0), for the caller to say it in the unit instead.
func finitePct(x float64) string {
	if !stats.Finite(x) {
		return ""
	}
	return fmtx.FormatPct(x)
}

// formatShareCell formats a share in a table: "—" where none is given.
func formatShareCell(x float64) string {
	if !stats.Finite(x) {
		return "—"
	}
	return fmtx.FormatShare(x)
}

// FormatCI formats how far a median's interval reaches from it, in
// percent: "±0.4%", or "±∞" without an interval.
func FormatCI(s analysis.Summary) string {
	w := analysis.HalfWidthPct(s)
	if !stats.Finite(w) {
		return "±∞"
	}
	return fmt.Sprintf("±%.1f%%", w)
}

// verdictWord names a verdict for readers.
func verdictWord(v analysis.Verdict) string {
	return strings.ReplaceAll(string(v), "-", " ")
}

// RowVerdict names a row's verdict with its reason when the reason matters.
func RowVerdict(row analysis.Row) string {
	switch {
	case row.Distribution != nil:
		return verdictWord(row.Verdict) + ": " + row.Distribution.Describe(row.Unit)
	case row.Reason == analysis.ReasonSpread && stats.Finite(row.SpreadRatio):
		return fmt.Sprintf("inconclusive: spread ×%s", fmtx.FormatRatio(row.SpreadRatio))
	}
	if row.MultiModal {
		s := fmtx.Scaler(row.Unit, row.Base.Median, row.Head.Median)
		return rowVerdictWord(row) + fmt.Sprintf(" (medians %s → %s: the runs sit on a few values)",
			fmtx.FormatScaled(s, row.Base.Median, row.Unit), fmtx.FormatScaled(s, row.Head.Median, row.Unit))
	}
	return rowVerdictWord(row)
}

// rowVerdictWord is a row's verdict with its reason, without notes.
func rowVerdictWord(row analysis.Row) string {
	switch row.Verdict {
	case analysis.VerdictInconclusive:
		return "inconclusive: " + row.Reason
	case analysis.VerdictWait:
		return "wait for " + row.Waits
	}
	return verdictWord(row.Verdict)
}

// shareVerdict names a phase's verdict in an attribution, with where it
// stood on the critical path when that matters.
func shareVerdict(p analysis.PhaseShare) string {
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
func overlapSentence(o analysis.Overlap) string {
	s := fmtx.Scaler("sec/op", o.BaseBranch, o.BaseSide, o.HeadBranch, o.HeadSide)
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
			return fmt.Sprintf("through %s (%s against %s)", branch, fmtx.FormatScaled(s, b, "sec/op"), fmtx.FormatScaled(s, d, "sec/op"))
		case "side":
			return fmt.Sprintf("through %s (%s against %s)", o.Side, fmtx.FormatScaled(s, d, "sec/op"), fmtx.FormatScaled(s, b, "sec/op"))
		}
		return fmt.Sprintf("through both (%s each)", fmtx.FormatScaled(s, b, "sec/op"))
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

// sideName names one side of r for readers, in code (MdCode or plain
// text): its short revision, and when r compares variants, "with ARGS"
// or "with no extra args".
func sideName(r *analysis.Report, rev string, args []string, code func(string) string) string {
	name := code(fmtx.ShortRev(rev))
	switch {
	case !r.Variants():
	case len(args) == 0:
		name += " with no extra args"
	default:
		name += " with " + code(FormatArgs(args))
	}
	return name
}

// runsLine describes a side's runs: "20 runs, 18 ok, crashed: 2".
func runsLine(s analysis.SideRuns) string {
	out := fmtx.Plural(s.Total, "run") + ", " + strconv.Itoa(s.OK) + " ok"
	if s.FailedRuns() > 0 {
		out += ", " + analysis.StatusCounts(s)
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
