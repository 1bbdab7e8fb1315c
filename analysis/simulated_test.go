package analysis

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
)

// simRun returns a callgrind run of rev as the runner stores one: per
// phase its simulated count, the process's count and the run's wall
// time.
func simRun(rev string, counts map[string]float64, wall float64) Run {
	run := Run{Revision: rev, Status: StatusOK, Tool: ToolCallgrind}
	total := 0.0
	for _, p := range provePhases {
		if c, ok := counts[p.name]; ok {
			run.Samples = append(run.Samples, Sample{Key{proveBench, p.name, SimInstructionsUnit}, c})
			total += c
		}
	}
	run.Samples = append(run.Samples,
		Sample{Key{proveBench, "total", SimInstructionsUnit}, total + 1e6},
		Sample{Key{"process/benchmark=prove", "", SimProcessInstructionsUnit}, total + 5e7},
		Sample{Key{"process/benchmark=prove", "", SimWallUnit}, wall},
	)
	return run
}

// timedWithWall returns runs with a wall-sec/run process sample of
// wall seconds each, as the runner records for the command prove.
func timedWithWall(runs []Run, wall float64) []Run {
	for i := range runs {
		runs[i].Samples = append(runs[i].Samples, Sample{Key{"process/benchmark=prove", "", "wall-sec/run"}, wall})
	}
	return runs
}

func findSim(r *Report, phase string) *Row {
	return findUnit(r, phase, SimInstructionsUnit)
}

func TestSimulatedCountsAreComparedExactlyAndExplainTheRegressedPhase(t *testing.T) {
	t.Parallel()
	g := newSynth(71, 0.004)
	baseCounts := map[string]float64{"synthesis": 3e9, "ntt": 4e8, "msm_a": 6e8, "assemble": 150_000}
	headCounts := map[string]float64{"synthesis": 3.126e9, "ntt": 4.0016e8, "msm_a": 6e8, "assemble": 151_000}
	in := Input{
		BaseRev: baseRev, HeadRev: headRev,
		Base: append(timedWithWall(g.runs(baseRev, 8, nil), 2.0), simRun(baseRev, baseCounts, 47.0)),
		Head: append(timedWithWall(g.runs(headRev, 8, map[string]float64{"synthesis": 1.1}), 2.5), simRun(headRev, headCounts, 60.0)),
	}
	r := Compare(in, DefaultOptions())
	if r.Runs.Base.Total != 8 || r.Runs.Head.Total != 8 || r.Runs.Base.OK != 8 {
		t.Errorf("runs %+v: want the 8 timed runs a side, the callgrind runs apart", r.Runs)
	}
	for _, w := range r.Warnings {
		if strings.Contains(w, "only some") || strings.Contains(w, "only in") || strings.Contains(w, "callgrind") {
			t.Errorf("warning %q: the callgrind runs are complete", w)
		}
	}

	cases := []struct {
		phase   string
		delta   float64
		verdict Verdict
	}{
		{"synthesis", 4.2, VerdictRegression},        // 4.2%: far above the floor
		{"ntt", 0.04, VerdictNoChange},               // 160,000 instructions, but 0.04%
		{"msm_a", 0, VerdictNoChange},                // unchanged, exactly
		{"assemble", 100.0 / 150, VerdictRegression}, // 0.67%, and exactly SimFloorInstructions
	}
	for _, c := range cases {
		row := findSim(r, c.phase)
		if row == nil {
			t.Fatalf("no simulated row for %s", c.phase)
		}
		if !row.Simulated || row.Primary || row.Base.N != 1 || row.Head.N != 1 || !math.IsNaN(row.PValue) || row.Floor.Pct != SimFloorPct {
			t.Errorf("%s: %+v; want a simulated, non-primary row of 1 run a side, no p-value, the %.1f%% floor", c.phase, row, SimFloorPct)
		}
		if math.Abs(row.Change()-c.delta) > 1e-9 {
			t.Errorf("%s: Δ %.6f%%, want exactly %.6f%%", c.phase, row.Change(), c.delta)
		}
		if row.Verdict != c.verdict {
			t.Errorf("%s: verdict %s (%s), want %s", c.phase, row.Verdict, row.Reason, c.verdict)
		}
	}
	if row := findUnit(r, "", SimProcessInstructionsUnit); row == nil || !row.Simulated {
		t.Errorf("no simulated row for the whole process")
	}
	if row := findUnit(r, "", SimWallUnit); row != nil {
		t.Errorf("the callgrind run's wall time is a row: %+v; it is the slowdown's, not a count", row)
	}

	// The slowdown: 47 s against 2 s, 60 s against 2.5 s.
	want := []Simulation{{Benchmark: "process/benchmark=prove", Tool: ToolCallgrind,
		Base: SimulationSide{Runs: 1, Wall: 47, TimedWall: 2, Slowdown: 23.5},
		Head: SimulationSide{Runs: 1, Wall: 60, TimedWall: 2.5, Slowdown: 24}}}
	if !reflect.DeepEqual(r.Simulations, want) {
		t.Errorf("simulations %+v, want %+v", r.Simulations, want)
	}

	// The regressed phase's explanation leads with its exact count.
	var synth *Explanation
	for i := range r.Explanations {
		if r.Explanations[i].Phase == "synthesis" {
			synth = &r.Explanations[i]
		}
	}
	if synth == nil || synth.Simulated == nil || !synth.Simulated.Exact || !synth.Simulated.Significant {
		t.Fatalf("synthesis explanation %+v; want a significant exact simulated item", synth)
	}

	var md, txt, js bytes.Buffer
	if err := RenderMarkdown(&md, r, RenderContext{}); err != nil {
		t.Fatal(err)
	}
	if err := RenderText(&txt, r); err != nil {
		t.Fatal(err)
	}
	if err := RenderJSON(&js, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"**synthesis** +10.",
		"(p=0.002): sim-instructions +4.20% (exact)\n",
		"Simulated instruction counts (callgrind: exact, one run a side, no test; a change counts from 0.5% and 1000 instructions): `prove` ran 23.5× (base) and 24.0× (head) as long as its timed runs.",
		"(sim-instructions/op, simulated by callgrind: exact, one run a side)",
		"| `synthesis` | 3.000G → 3.126G | **+4.20%** | 0.5% | **regression** |",
		"| `ntt` | 400.0M → 400.2M | +0.04% | 0.5% | no change |",
		"| `msm_a` | 600.0M → 600.0M | 0.00% | 0.5% | no change |",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
	for _, want := range []string{
		"(p=0.002): sim-instructions +4.20% (exact)\n",
		"prove ran 23.5× (base) and 24.0× (head) as long as its timed runs.",
		"sim-instructions/op, simulated by callgrind: exact, one run a side\n",
	} {
		if !strings.Contains(txt.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, txt.String())
		}
	}
	for _, want := range []string{`"simulated": true`, `"p_value": null`, `"floor_source": "simulated"`, `"exact": true`, `"slowdown": 23.5`} {
		if !strings.Contains(js.String(), want) {
			t.Errorf("JSON lacks %s", want)
		}
	}
	var back Report
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if row := findSim(&back, "synthesis"); row == nil || !row.Simulated || !math.IsNaN(row.PValue) || math.Abs(row.Change()-4.2) > 1e-9 {
		t.Errorf("decoded synthesis row %+v", row)
	}
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
		row := simRow(Key{proveBench, "synthesis", SimInstructionsUnit}, []float64{c.base}, []float64{c.head})
		if row.Verdict != c.verdict {
			t.Errorf("%.0f → %.0f: %s (%s), want %s", c.base, c.head, row.Verdict, row.Reason, c.verdict)
		}
		if row.Verdict == VerdictNoChange && row.Reason != ReasonExactBelowFloor {
			t.Errorf("%.0f → %.0f: reason %q, want %q", c.base, c.head, row.Reason, ReasonExactBelowFloor)
		}
	}
}

func TestFailedCallgrindRunIsAWarningNotAFailedComparison(t *testing.T) {
	t.Parallel()
	g := newSynth(72, 0.004)
	failedSim := Run{Revision: headRev, Status: StatusCrashed, Tool: ToolCallgrind, Detail: "exit status 1\nvalgrind's log (last lines):\n==1== unhandled syscall 435"}
	in := Input{
		BaseRev: baseRev, HeadRev: headRev,
		Base: append(timedWithWall(g.runs(baseRev, 6, nil), 2), simRun(baseRev, map[string]float64{"synthesis": 3e9}, 40)),
		Head: append(timedWithWall(g.runs(headRev, 6, nil), 2), failedSim),
	}
	r := Compare(in, DefaultOptions())
	if r.Runs.Head.Total != 6 || r.Runs.Head.FailedRuns() != 0 {
		t.Errorf("head runs %+v: the callgrind run is not a timed run", r.Runs.Head)
	}
	if findSim(r, "synthesis") != nil {
		t.Errorf("a simulated row from one side")
	}
	if len(r.Failures) != 1 || r.Failures[0].Tool != ToolCallgrind || r.Failures[0].Side != "head" {
		t.Errorf("failures %+v, want head's callgrind run", r.Failures)
	}
	if !hasWarning(r, "1 of head's 1 callgrind run failed (crashed: exit status 1)") {
		t.Errorf("warnings %q, want one about head's callgrind run", r.Warnings)
	}
	if hasWarning(r, "only base has a callgrind run") {
		t.Errorf("warnings %q: head had one, it failed", r.Warnings)
	}
	var md bytes.Buffer
	if err := RenderMarkdown(&md, r, RenderContext{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "Head callgrind run `crashed` ×1") {
		t.Errorf("markdown does not name the failed callgrind run:\n%s", md.String())
	}
}

func TestCallgrindRunWithoutSpansIsSaidToCountTheWholeProcessOnly(t *testing.T) {
	t.Parallel()
	g := newSynth(73, 0.004)
	whole := func(rev string, n float64) Run {
		return Run{Revision: rev, Status: StatusOK, Tool: ToolCallgrind, Samples: []Sample{
			{Key{"process/benchmark=gotest", "", SimProcessInstructionsUnit}, n},
			{Key{"process/benchmark=gotest", "", SimWallUnit}, 9},
		}}
	}
	r := Compare(Input{
		Base: append(g.runs(baseRev, 6, nil), whole(baseRev, 1e9)),
		Head: append(g.runs(headRev, 6, nil), whole(headRev, 1.02e9)),
	}, DefaultOptions())
	if row := findUnit(r, "", SimProcessInstructionsUnit); row == nil || row.Verdict != VerdictRegression || math.Abs(row.Change()-2) > 1e-9 {
		t.Errorf("process row %+v, want a 2%% regression", row)
	}
	if !hasWarning(r, "callgrind counted only the whole process of gotest") {
		t.Errorf("warnings %q", r.Warnings)
	}
}
