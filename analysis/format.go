package analysis

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/perfbot/perfbot/analysis/internal/fmtx"
	"github.com/perfbot/perfbot/analysis/stats"
)

// FormatFloor formats a noise floor.
func FormatFloor(f Floor) string {
	return strconv.FormatFloat(f.Pct, 'f', 1, 64) + "%"
}

// StatusCounts formats the failed runs of a side, "crashed: 2, timed-out: 1",
// in the order of Statuses, then any unknown status by name.
func StatusCounts(s SideRuns) string {
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

// FormatChange formats a row's change with its interval, as the report's
// tables do and for messages outside a report: "+20.4% [+19.7, +20.7]"; a
// change of constants or a simulated count without one ("+75.0%"); and
// where the base's median is 0, in the row's unit ("+3 [+1, +4]").
func FormatChange(row Row) string {
	switch {
	case row.Simulated:
		if stats.Finite(row.Change()) {
			return formatExactPct(row.Change())
		}
		return fmtx.FormatDelta(row.Shift, row.Unit)
	case stats.Finite(row.Change()) && row.Exact():
		return fmtx.FormatPct(row.Change())
	case stats.Finite(row.Change()):
		return fmtx.FormatPct(row.Change()) + formatInterval(row.DeltaLoPct, row.DeltaHiPct)
	case row.Exact():
		return fmtx.FormatDelta(row.Shift, row.Unit)
	}
	return fmtx.FormatDelta(row.Shift, row.Unit) + FormatDeltaInterval(row.ShiftLo, row.ShiftHi, row.Unit)
}

// formatInterval formats the change's interval after its Δ:
// " [+1.8, +2.6]", or "" without one.
func formatInterval(lo, hi float64) string {
	if !stats.Finite(lo) || !stats.Finite(hi) {
		return ""
	}
	return fmt.Sprintf(" [%s, %s]", formatBound(lo), formatBound(hi))
}

// formatBound formats one bound of a change's interval: a signed
// percentage without the sign, to one decimal, or "0.0".
func formatBound(x float64) string {
	if math.Abs(x) < 0.05 {
		return "0.0"
	}
	return fmt.Sprintf("%+.1f", x)
}

// JoinAnd joins items as "a, b and c".
func JoinAnd(items []string) string {
	if len(items) <= 1 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

// FormatDeltaInterval formats the interval of a change in its unit:
// " [-6.100ms, +1.200ms]", or "" without one.
func FormatDeltaInterval(lo, hi float64, unit string) string {
	if !stats.Finite(lo) || !stats.Finite(hi) {
		return ""
	}
	s := fmtx.Scaler(unit, lo, hi)
	bound := func(x float64) string {
		v := fmtx.FormatScaled(s, x, unit)
		if x > 0 {
			v = "+" + v
		}
		return v
	}
	return " [" + bound(lo) + ", " + bound(hi) + "]"
}

// FormatLevel formats a confidence level in percent with two significant
// digits of what it leaves out: 0.95 is "95%", 0.995 "99.5%", 0.99986
// "99.986%".
func FormatLevel(c float64) string {
	miss := (1 - c) * 100
	if !(miss > 0) {
		return "100%"
	}
	digits := max(0, 1-int(math.Floor(math.Log10(miss))))
	s := strconv.FormatFloat(100-miss, 'f', digits, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s + "%"
}
