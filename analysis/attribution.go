package analysis

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/perfbot/perfbot/analysis/internal/fmtx"
)

// attribute splits the change of every benchmark's total phase, in each
// primary unit, among the benchmark's top-level phases, along the critical
// path: a phase that runs alone is charged its own change; phases that ran
// at once (ovs, from the runs' spans, in sec/op) are charged their
// branch's share of the change of the part they overlap, and a wait
// nothing. Every change is the rows' one estimate (Row.Shift). Shares
// are given only of a total that changed, and only to the phases that
// changed significantly on the critical path; a share outside [0, 100]%
// is left out and a note says why.
func attribute(rows []Row, ovs []Overlap) []Attribution {
	var out []Attribution
	for _, total := range rows {
		if !total.Primary || total.Phase != "total" {
			continue
		}
		a := Attribution{
			Benchmark:           total.Benchmark,
			Unit:                total.Unit,
			Base:                total.BaseValue,
			Head:                total.HeadValue,
			Delta:               total.Shift,
			DeltaLo:             total.ShiftLo,
			DeltaHi:             total.ShiftHi,
			DeltaPct:            total.Change(),
			Verdict:             total.Verdict,
			Phases:              []PhaseShare{},
			ExplainedBy:         []string{},
			UnexplainedSharePct: math.NaN(),
		}
		for _, row := range rows {
			if row.Benchmark != total.Benchmark || row.Unit != total.Unit || !isTopLevelPhase(row.Phase) {
				continue
			}
			a.Phases = append(a.Phases, PhaseShare{
				Phase:      row.Phase,
				Delta:      row.Shift,
				DeltaPct:   row.Change(),
				Attributed: row.Shift,
				SharePct:   math.NaN(),
				Verdict:    row.Verdict,
			})
		}
		if total.Unit == TimeUnit {
			for _, o := range ovs {
				if o.Benchmark == total.Benchmark && a.along(o) {
					a.Overlaps = append(a.Overlaps, o)
				}
			}
		}
		// By |Attributed| descending, then |Delta|: what moved total
		// first, then what moved off its path.
		slices.SortStableFunc(a.Phases, func(x, y PhaseShare) int {
			return cmp.Or(cmp.Compare(math.Abs(y.Attributed), math.Abs(x.Attributed)),
				cmp.Compare(math.Abs(y.Delta), math.Abs(x.Delta)), strings.Compare(x.Phase, y.Phase))
		})
		sum := 0.0
		for _, p := range a.Phases {
			if (p.Verdict == VerdictRegression || p.Verdict == VerdictImprovement) && !p.OffCriticalPath && p.Attributed != 0 {
				a.ExplainedBy = append(a.ExplainedBy, p.Phase)
				sum += p.Attributed
			}
		}
		a.Unexplained = a.Delta - sum
		if a.Changed() {
			a.share()
		}
		out = append(out, a)
	}
	return out
}

// share gives the parts of total's change their shares: the phases of
// ExplainedBy and the rest (Unexplained). A part that moved with total
// gets its share of everything that moved with it, so shares lie in
// [0, 100]% and add up to 100%; a part that moved against total gets
// none, and a note says how much it took back.
func (a *Attribution) share() {
	dir := math.Copysign(1, a.Delta)
	gross := math.Max(0, dir*a.Unexplained)
	for _, p := range a.Phases {
		if slices.Contains(a.ExplainedBy, p.Phase) {
			gross += math.Max(0, dir*p.Attributed)
		}
	}
	if gross == 0 {
		return
	}
	var against []string
	for i := range a.Phases {
		p := &a.Phases[i]
		if !slices.Contains(a.ExplainedBy, p.Phase) {
			continue
		}
		if dir*p.Attributed > 0 {
			p.SharePct = dir * p.Attributed / gross * 100
		} else {
			against = append(against, fmt.Sprintf("%s (%s)", p.Phase, fmtx.FormatDelta(p.Attributed, a.Unit)))
		}
	}
	if dir*a.Unexplained > 0 {
		a.UnexplainedSharePct = dir * a.Unexplained / gross * 100
	} else if a.Unexplained != 0 {
		against = append(against, fmt.Sprintf("the rest (%s)", fmtx.FormatDelta(a.Unexplained, a.Unit)))
	}
	if len(against) > 0 {
		a.Notes = append(a.Notes, fmt.Sprintf("Shares are of the %s that moved total %s; %s moved the other way and took it back.",
			fmtx.FormatValue(gross, a.Unit), upOrDown(a.Delta), JoinAnd(against)))
	}
}

// upOrDown names which way a change went.
func upOrDown(d float64) string {
	if d < 0 {
		return "down"
	}
	return "up"
}

// slack returns how much longer a branch that is off the critical path
// (its length own on each side, against the other branch's other) may
// grow before total waits for it.
func slack(behind string, ownBase, otherBase, ownHead, otherHead float64) *Slack {
	return &Slack{Behind: behind, Base: otherBase - ownBase, Head: otherHead - ownHead}
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
	if side.OffCriticalPath {
		side.Slack = slack(strings.Join(o.Branch, ", "), o.BaseSide, o.BaseBranch, o.HeadSide, o.HeadBranch)
	}
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
		if p.OffCriticalPath {
			p.Slack = slack(o.Side, o.BaseBranch, o.BaseSide, o.HeadBranch, o.HeadSide)
		}
	}
	return true
}

// isTopLevelPhase reports whether phase is a phase of its own inside total:
// not total itself, not empty, and not a sub-step such as
// "msm_h/step=sort", whose time is inside its parent.
func isTopLevelPhase(phase string) bool {
	return phase != "" && phase != "total" && !strings.Contains(phase, "/")
}
