package analysis

import (
	"cmp"
	"math"
	"slices"
	"strings"
)

// attribute splits the change of every benchmark's total phase, in each
// primary unit, among the benchmark's top-level phases, along the critical
// path: a phase that runs alone is charged its own change; phases that ran
// at once (ovs, from the runs' spans, in sec/op) are charged their
// branch's share of the change of the part they overlap, and a wait
// nothing.
func attribute(rows []Row, ovs []Overlap) []Attribution {
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
		for _, row := range rows {
			if row.Benchmark != total.Benchmark || row.Unit != total.Unit || !isTopLevelPhase(row.Phase) {
				continue
			}
			d := row.Head.Median - row.Base.Median
			a.Phases = append(a.Phases, PhaseShare{
				Phase:      row.Phase,
				Delta:      d,
				DeltaPct:   row.DeltaPct,
				Attributed: d,
				Verdict:    row.Verdict,
			})
		}
		if total.Unit == "sec/op" {
			for _, o := range ovs {
				if o.Benchmark == total.Benchmark && a.along(o) {
					a.Overlaps = append(a.Overlaps, o)
				}
			}
		}
		sum := 0.0
		for i := range a.Phases {
			p := &a.Phases[i]
			p.SharePct = share(p.Attributed, a.Delta)
			sum += p.Attributed
		}
		// By |Attributed| descending, then |Delta|: what moved total
		// first, then what moved off its path.
		slices.SortStableFunc(a.Phases, func(x, y PhaseShare) int {
			return cmp.Or(cmp.Compare(math.Abs(y.Attributed), math.Abs(x.Attributed)),
				cmp.Compare(math.Abs(y.Delta), math.Abs(x.Delta)), strings.Compare(x.Phase, y.Phase))
		})
		for _, p := range a.Phases {
			if (p.Verdict == VerdictRegression || p.Verdict == VerdictImprovement) && !p.OffCriticalPath && p.Attributed != 0 {
				a.ExplainedBy = append(a.ExplainedBy, p.Phase)
			}
		}
		a.Unexplained = a.Delta - sum
		a.UnexplainedSharePct = share(a.Unexplained, a.Delta)
		out = append(out, a)
	}
	return out
}

// along charges the phases of overlap o along the critical path: the wait
// nothing, Side its Shapley share, and Branch's phases theirs in
// proportion to their own changes. It reports whether a has o's wait and
// side phases (otherwise it leaves a alone).
func (a *Attribution) along(o Overlap) bool {
	find := func(phase string) *PhaseShare {
		for i := range a.Phases {
			if a.Phases[i].Phase == phase {
				return &a.Phases[i]
			}
		}
		return nil
	}
	wait, side := find(o.Wait), find(o.Side)
	if wait == nil || side == nil {
		return false
	}
	wait.Attributed, wait.Waits = 0, o.Side
	side.Attributed = o.SideShare
	side.OffCriticalPath = o.Critical(false) == "branch" && o.Critical(true) == "branch"
	var branch []*PhaseShare
	sum := 0.0
	for _, name := range o.Branch {
		if p := find(name); p != nil {
			branch = append(branch, p)
			sum += p.Delta
		}
	}
	for _, p := range branch {
		p.Attributed = 0
		if sum != 0 {
			p.Attributed = o.BranchShare * p.Delta / sum
		}
		p.OffCriticalPath = o.Critical(false) == "side" && o.Critical(true) == "side"
	}
	return true
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
