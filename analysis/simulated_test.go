package analysis

import (
	"math"
	"testing"
)

// SimRun returns a callgrind run of rev as the runner stores one: per
// phase its simulated count, the process's count and the run's wall
// time.
func SimRun(rev string, counts map[string]float64, wall float64) Run {
	run := Run{Revision: rev, Status: StatusOK, Tool: ToolCallgrind}
	total := 0.0
	for _, p := range ProvePhases {
		if c, ok := counts[p.name]; ok {
			run.Samples = append(run.Samples, Sample{Key{ProveBench, p.name, SimInstructionsUnit}, c})
			total += c
		}
	}
	run.Samples = append(run.Samples,
		Sample{Key{ProveBench, "total", SimInstructionsUnit}, total + 1e6},
		Sample{Key{"process/benchmark=prove", "", SimProcessInstructionsUnit}, total + 5e7},
		Sample{Key{"process/benchmark=prove", "", SimWallUnit}, wall},
	)
	return run
}

// TimedWithWall returns runs with a wall-sec/run process sample of
// wall seconds each, as the runner records for the command prove.
func TimedWithWall(runs []Run, wall float64) []Run {
	for i := range runs {
		runs[i].Samples = append(runs[i].Samples, Sample{Key{"process/benchmark=prove", "", "wall-sec/run"}, wall})
	}
	return runs
}

func FindSim(r *Report, phase string) *Row {
	return FindUnit(r, phase, SimInstructionsUnit)
}

func TestSimulatedCountsNeverFlagBelowTheirFloor(t *testing.T) {
	t.Parallel()
	cases := []struct {
		base, head float64
		verdict    Verdict
	}{
		{1e9, 1e9 * 1.0049, VerdictNoChange},  // 0.49%
		{1e9, 1e9 * 1.005, VerdictRegression}, // 0.5%
		{1e9, 1e9 * 0.99, VerdictImprovement}, // -1%
		{100_000, 100_900, VerdictNoChange},   // 0.9%, 900 instructions
		{100_000, 101_000, VerdictRegression}, // 1%, 1,000 instructions
		{0, 5000, VerdictRegression},          // from nothing
		{7, 7, VerdictNoChange},
	}
	for _, c := range cases {
		row := simRow(Key{ProveBench, "synthesis", SimInstructionsUnit}, []float64{c.base}, []float64{c.head})
		if row.Verdict != c.verdict {
			t.Errorf("%.0f → %.0f: %s (%s), want %s", c.base, c.head, row.Verdict, row.Reason, c.verdict)
		}
		if row.Verdict == VerdictNoChange && row.Reason != ReasonExactBelowFloor {
			t.Errorf("%.0f → %.0f: reason %q, want %q", c.base, c.head, row.Reason, ReasonExactBelowFloor)
		}
	}
}

func TestCallgrindRunWithoutSpansIsSaidToCountTheWholeProcessOnly(t *testing.T) {
	t.Parallel()
	g := NewSynth(73, 0.004)
	whole := func(rev string, n float64) Run {
		return Run{Revision: rev, Status: StatusOK, Tool: ToolCallgrind, Samples: []Sample{
			{Key{"process/benchmark=gotest", "", SimProcessInstructionsUnit}, n},
			{Key{"process/benchmark=gotest", "", SimWallUnit}, 9},
		}}
	}
	r := Compare(Input{
		Base: append(g.Runs(BaseRev, 6, nil), whole(BaseRev, 1e9)),
		Head: append(g.Runs(HeadRev, 6, nil), whole(HeadRev, 1.02e9)),
	}, DefaultOptions())
	if row := FindUnit(r, "", SimProcessInstructionsUnit); row == nil || row.Verdict != VerdictRegression || math.Abs(row.Change()-2) > 1e-9 {
		t.Errorf("process row %+v, want a 2%% regression", row)
	}
	if !HasWarning(r, "callgrind counted only the whole process of gotest") {
		t.Errorf("warnings %q", r.Warnings)
	}
}
