package analysis

import (
	"cmp"
	"math"
	"slices"

	"github.com/perfbot/perfbot/analysis/stats"
)

// A Span says when one phase of one proof (or any other repeated unit of a
// benchmark's work) ran: its start and end in seconds from the start of
// the proof, on the clock all its phases share. A program prints them as
// span lines (prover.SpanPrefix); the runner keeps them with the run.
type Span struct {
	Benchmark string  `json:"benchmark"`
	Phase     string  `json:"phase"`
	Proof     int     `json:"proof"`
	Start     float64 `json:"start"`
	End       float64 `json:"end"`
	// Lane is "" for the proof's own thread of control, whose phases run
	// one after another, and names the worker of a phase that ran beside
	// them.
	Lane string `json:"lane,omitempty"`
	// Waits names the phase, on another lane, that this one stood still
	// for: a wait, whose time is that phase's, not its own.
	Waits string `json:"waits,omitempty"`
}

// An Overlap is a part of a proof where two branches ran at once: the main
// lane's phases Branch, and Side on a lane of its own, which the main lane
// then waited for in phase Wait. The part lasts as long as the longer
// branch; the critical path runs through that one, and only a change of
// the critical path changes total.
type Overlap struct {
	Benchmark string   `json:"benchmark"`
	Wait      string   `json:"wait"`
	Side      string   `json:"side"`
	Branch    []string `json:"branch"`
	// Each side's median over its runs of the two branches' lengths, in
	// seconds from the start of the part (the first of Branch, or Side
	// if it started earlier): the main lane until Wait began, and Side
	// until it ended.
	BaseBranch float64 `json:"base_branch"`
	BaseSide   float64 `json:"base_side"`
	HeadBranch float64 `json:"head_branch"`
	HeadSide   float64 `json:"head_side"`
	// BranchShare and SideShare split the part's change,
	// max(HeadBranch, HeadSide) − max(BaseBranch, BaseSide), between the
	// two branches by their Shapley values: each branch is charged the
	// change its own change makes, averaged over the orders in which the
	// two changes can be made. A branch that stayed shorter than the other
	// on both sides is charged nothing, however much it changed.
	BranchShare float64 `json:"branch_share"`
	SideShare   float64 `json:"side_share"`
}

// Critical reports which branch the critical path took on one side:
// "branch", "side", or "" when they were equally long.
func (o Overlap) Critical(head bool) string {
	b, s := o.BaseBranch, o.BaseSide
	if head {
		b, s = o.HeadBranch, o.HeadSide
	}
	switch {
	case b > s:
		return "branch"
	case s > b:
		return "side"
	}
	return ""
}

// shapley splits the change of max(branch, side) from base to head between
// the two branches: the exact Shapley values of the two-player game whose
// worth is the part's length. A branch that is the shorter on both sides
// is charged nothing and the longer one everything: the mixed orders
// (head's branch beside base's side) can make the shorter one longer for a
// moment when the longer one shrank, a path that neither revision took.
func shapley(bb, bs, hb, hs float64) (branch, side float64) {
	total := math.Max(hb, hs) - math.Max(bb, bs)
	switch {
	case bb > bs && hb > hs:
		return total, 0
	case bs > bb && hs > hb:
		return 0, total
	}
	branch = 0.5 * ((math.Max(hb, bs) - math.Max(bb, bs)) + (math.Max(hb, hs) - math.Max(bb, hs)))
	return branch, total - branch
}

// overlapKey identifies an overlap across runs.
type overlapKey struct{ benchmark, wait, side string }

// overlapRun is one run's measure of one overlap: the medians over its
// proofs of the two branches' lengths, and the main-lane phases seen
// beside Side.
type overlapRun struct {
	branch, side float64
	phases       []string
}

// runOverlaps finds, in one run's spans, every wait of the main lane for a
// phase on another lane, and measures both branches in each proof.
func runOverlaps(spans []Span) map[overlapKey]overlapRun {
	type proofKey struct {
		benchmark string
		proof     int
	}
	byProof := make(map[proofKey][]Span)
	var order []proofKey
	for _, s := range spans {
		k := proofKey{s.Benchmark, s.Proof}
		if _, ok := byProof[k]; !ok {
			order = append(order, k)
		}
		byProof[k] = append(byProof[k], s)
	}
	lengths := make(map[overlapKey][2][]float64)
	phases := make(map[overlapKey][]string)
	var keys []overlapKey
	for _, pk := range order {
		ss := byProof[pk]
		for _, w := range ss {
			if w.Lane != "" || w.Waits == "" {
				continue
			}
			i := slices.IndexFunc(ss, func(s Span) bool { return s.Phase == w.Waits && s.Lane != "" })
			if i < 0 {
				continue
			}
			side := ss[i]
			k := overlapKey{pk.benchmark, w.Phase, side.Phase}
			start := side.Start
			for _, s := range ss {
				if s.Lane == "" && s.Phase != w.Phase && isTopLevelPhase(s.Phase) && s.Start < w.Start && s.End > side.Start {
					start = math.Min(start, s.Start)
					if !slices.Contains(phases[k], s.Phase) {
						phases[k] = append(phases[k], s.Phase)
					}
				}
			}
			if _, ok := lengths[k]; !ok {
				keys = append(keys, k)
			}
			l := lengths[k]
			l[0] = append(l[0], w.Start-start)
			l[1] = append(l[1], side.End-start)
			lengths[k] = l
		}
	}
	out := make(map[overlapKey]overlapRun, len(keys))
	for _, k := range keys {
		l := lengths[k]
		slices.Sort(l[0])
		slices.Sort(l[1])
		out[k] = overlapRun{branch: stats.Median(l[0]), side: stats.Median(l[1]), phases: phases[k]}
	}
	return out
}

// overlaps measures every overlap that the timed ok runs of both sides
// show: each side's median branch lengths over its runs, and the Shapley
// split of the change. Branch lists every main-lane phase seen beside Side
// in any run, in the order they first ran.
func overlaps(base, head []Run) []Overlap {
	type acc struct {
		branch, side [2][]float64
		phases       []string
	}
	accs := make(map[overlapKey]*acc)
	var keys []overlapKey
	for i, runs := range [2][]Run{base, head} {
		for _, run := range runs {
			if run.Tool != "" || run.Status != StatusOK || len(run.Spans) == 0 {
				continue
			}
			for k, m := range runOverlaps(run.Spans) {
				a := accs[k]
				if a == nil {
					a = &acc{}
					accs[k] = a
					keys = append(keys, k)
				}
				a.branch[i] = append(a.branch[i], m.branch)
				a.side[i] = append(a.side[i], m.side)
				for _, p := range m.phases {
					if !slices.Contains(a.phases, p) {
						a.phases = append(a.phases, p)
					}
				}
			}
		}
	}
	slices.SortFunc(keys, func(x, y overlapKey) int {
		return cmp.Or(cmp.Compare(x.benchmark, y.benchmark), cmp.Compare(x.wait, y.wait), cmp.Compare(x.side, y.side))
	})
	var out []Overlap
	for _, k := range keys {
		a := accs[k]
		if len(a.branch[0]) == 0 || len(a.branch[1]) == 0 {
			continue // one side only: nothing to split
		}
		med := func(v []float64) float64 {
			v = slices.Clone(v)
			slices.Sort(v)
			return stats.Median(v)
		}
		o := Overlap{
			Benchmark: k.benchmark, Wait: k.wait, Side: k.side, Branch: a.phases,
			BaseBranch: med(a.branch[0]), BaseSide: med(a.side[0]),
			HeadBranch: med(a.branch[1]), HeadSide: med(a.side[1]),
		}
		o.BranchShare, o.SideShare = shapley(o.BaseBranch, o.BaseSide, o.HeadBranch, o.HeadSide)
		out = append(out, o)
	}
	return out
}

// waitsOf returns, per benchmark and phase, the phase a wait waits for,
// from the spans of both sides' runs.
func waitsOf(runs ...[]Run) map[[2]string]string {
	out := make(map[[2]string]string)
	for _, rs := range runs {
		for _, run := range rs {
			for _, s := range run.Spans {
				if s.Lane == "" && s.Waits != "" {
					out[[2]string{s.Benchmark, s.Phase}] = s.Waits
				}
			}
		}
	}
	return out
}
