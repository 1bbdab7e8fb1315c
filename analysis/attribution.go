package analysis

import (
	"cmp"
	"math"
	"slices"
	"strings"
)

// attribute splits the change of every benchmark's total phase, in each
// primary unit, among the benchmark's top-level phases.
func attribute(rows []Row) []Attribution {
	var out []Attribution
	for _, total := range rows {
		if !total.Primary || total.Phase != "total" {
			continue
		}
		a := Attribution{
			Benchmark:   total.Benchmark,
			Unit:        total.Unit,
			Base:        total.Base.Median,
			Head:        total.Head.Median,
			Delta:       total.Head.Median - total.Base.Median,
			DeltaPct:    total.DeltaPct,
			Verdict:     total.Verdict,
			Phases:      []PhaseShare{},
			ExplainedBy: []string{},
		}
		sum := 0.0
		for _, row := range rows {
			if row.Benchmark != total.Benchmark || row.Unit != total.Unit || !isTopLevelPhase(row.Phase) {
				continue
			}
			d := row.Head.Median - row.Base.Median
			sum += d
			a.Phases = append(a.Phases, PhaseShare{
				Phase:    row.Phase,
				Delta:    d,
				DeltaPct: row.DeltaPct,
				SharePct: share(d, a.Delta),
				Verdict:  row.Verdict,
			})
		}
		// By |Δ| descending, which is also |share| descending.
		slices.SortStableFunc(a.Phases, func(x, y PhaseShare) int {
			return cmp.Or(cmp.Compare(math.Abs(y.Delta), math.Abs(x.Delta)), strings.Compare(x.Phase, y.Phase))
		})
		for _, p := range a.Phases {
			if p.Verdict == VerdictRegression || p.Verdict == VerdictImprovement {
				a.ExplainedBy = append(a.ExplainedBy, p.Phase)
			}
		}
		a.Unexplained = a.Delta - sum
		a.UnexplainedSharePct = share(a.Unexplained, a.Delta)
		out = append(out, a)
	}
	return out
}

// isTopLevelPhase reports whether phase is a phase of its own inside total:
// not total itself, not empty, and not a sub-step such as
// "msm_h/step=sort", whose time is inside its parent.
func isTopLevelPhase(phase string) bool {
	return phase != "" && phase != "total" && !strings.Contains(phase, "/")
}

// share returns part as a percentage of whole, NaN when whole is 0.
func share(part, whole float64) float64 {
	if whole == 0 {
		return math.NaN()
	}
	return part / whole * 100
}
