package fmtx

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/perfbot/perfbot/analysis/stats"
	"golang.org/x/perf/benchunit"
)

// This file formats numbers the same way for warnings and every
// rendering.

// Scaler returns the one benchunit scale for vals (a row's base and head,
// say): the scale of the largest, with at least three significant digits,
// and enough digits after the point to show the smallest with two, up to
// four. benchunit.CommonScale scales by the smallest, which prints a
// 70.8 ms base beside a 5.1 µs head as "70799.7µs".
func Scaler(unit string, vals ...float64) benchunit.Scaler {
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

// FormatScaled formats v with s, appending "s" to the prefix of a time
// unit ("812.3ms" rather than benchstat's "812.3m" under a "sec/op"
// heading).
func FormatScaled(s benchunit.Scaler, v float64, unit string) string {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return "?"
	}
	out := s.Format(v)
	if IsTimeUnit(unit) {
		out += "s"
	}
	return out
}

// FormatValue formats one value of unit.
func FormatValue(v float64, unit string) string {
	return FormatScaled(Scaler(unit, v), v, unit)
}

// FormatDelta formats a signed difference of unit.
func FormatDelta(d float64, unit string) string {
	s := FormatValue(d, unit)
	if d >= 0 {
		s = "+" + s
	}
	return s
}

// FormatPct formats a signed percentage.
func FormatPct(x float64) string {
	switch {
	case !stats.Finite(x):
		return "n/a"
	case math.Abs(x) < 0.05:
		return "0.0%"
	}
	return fmt.Sprintf("%+.1f%%", x)
}

// FormatShare formats a share of a total in percent.
func FormatShare(x float64) string {
	if !stats.Finite(x) {
		return "n/a"
	}
	if math.Abs(x) < 0.05 {
		return "0.0%"
	}
	return fmt.Sprintf("%.1f%%", x)
}

// FormatPP formats a signed change of a share in percentage points.
func FormatPP(x float64) string {
	if math.Abs(x) < 0.05 {
		return "0.0 pp"
	}
	return fmt.Sprintf("%+.1f pp", x)
}

// FormatP formats a p-value to benchstat's precision.
func FormatP(p float64) string {
	if p < 0.001 {
		return "<0.001"
	}
	return fmt.Sprintf("%.3f", p)
}

// FormatPEq formats a p-value as "p=0.012" or "p<0.001".
func FormatPEq(p float64) string {
	if p < 0.001 {
		return "p<0.001"
	}
	return "p=" + FormatP(p)
}

// ShortRev abbreviates a commit SHA as GitHub does.
func ShortRev(rev string) string {
	if rev == "" {
		return "?"
	}
	if len(rev) > 7 {
		return rev[:7]
	}
	return rev
}

// List joins up to limit items and says how many more there are.
func List(items []string, limit int) string {
	if len(items) > limit {
		return strings.Join(items[:limit], ", ") + fmt.Sprintf(" and %d more", len(items)-limit)
	}
	return strings.Join(items, ", ")
}

// Plural returns n and the noun, with an s unless n is 1.
func Plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// FormatRatio formats a factor with two significant digits: "13",
// "2.4", "0.31".
func FormatRatio(x float64) string {
	if x >= 10 {
		return strconv.FormatFloat(x, 'f', 0, 64)
	}
	return strconv.FormatFloat(x, 'g', 2, 64)
}

// FormatAlloc formats an amount of allocation in unit "B" (bytes, binary
// prefixes: "8.000MiB", "0B") or "objects" ("1.234k objects").
func FormatAlloc(v float64, unit string) string {
	num := FormatValue(v, unit)
	if v == 0 {
		num = "0"
	}
	if unit == "B" {
		return num + "B"
	}
	return num + " objects"
}

// FormatAllocDelta formats a signed change of an amount of allocation.
func FormatAllocDelta(d float64, unit string) string {
	if d >= 0 {
		return "+" + FormatAlloc(d, unit)
	}
	return FormatAlloc(d, unit)
}

// FormatSlowdown formats a slowdown factor: "23.4×", or "?" when unknown.
func FormatSlowdown(x float64) string {
	if !stats.Finite(x) {
		return "?"
	}
	return fmt.Sprintf("%.1f×", x)
}

// IsTimeUnit reports whether unit measures time in seconds per something,
// so that its values print as "812.3ms" rather than "812.3m".
func IsTimeUnit(unit string) bool {
	return unit == "sec" || strings.HasPrefix(unit, "sec/")
}
