package analysis_test

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/analysis/render"
)

func TestSimulatedCountsAreComparedExactlyAndExplainTheRegressedPhase(t *testing.T) {
	t.Parallel()
	g := analysis.NewSynth(71, 0.004)
	baseCounts := map[string]float64{"synthesis": 3e9, "ntt": 4e8, "msm_a": 6e8, "assemble": 150_000}
	headCounts := map[string]float64{"synthesis": 3.126e9, "ntt": 4.0016e8, "msm_a": 6e8, "assemble": 151_000}
	in := analysis.Input{
		BaseRev: analysis.BaseRev, HeadRev: analysis.HeadRev,
		Base: append(analysis.TimedWithWall(g.Runs(analysis.BaseRev, 8, nil), 2.0), analysis.SimRun(analysis.BaseRev, baseCounts, 47.0)),
		Head: append(analysis.TimedWithWall(g.Runs(analysis.HeadRev, 8, map[string]float64{"synthesis": 1.1}), 2.5), analysis.SimRun(analysis.HeadRev, headCounts, 60.0)),
	}
	r := analysis.Compare(in, analysis.DefaultOptions())
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
		verdict analysis.Verdict
	}{
		{"synthesis", 4.2, analysis.VerdictRegression},        // 4.2%: far above the floor
		{"ntt", 0.04, analysis.VerdictNoChange},               // 160,000 instructions, but 0.04%
		{"msm_a", 0, analysis.VerdictNoChange},                // unchanged, exactly
		{"assemble", 100.0 / 150, analysis.VerdictRegression}, // 0.67%, and exactly SimFloorInstructions
	}
	for _, c := range cases {
		row := analysis.FindSim(r, c.phase)
		if row == nil {
			t.Fatalf("no simulated row for %s", c.phase)
		}
		if !row.Simulated || row.Primary || row.Base.N != 1 || row.Head.N != 1 || !math.IsNaN(row.PValue) || row.Floor.Pct != analysis.SimFloorPct {
			t.Errorf("%s: %+v; want a simulated, non-primary row of 1 run a side, no p-value, the %.1f%% floor", c.phase, row, analysis.SimFloorPct)
		}
		if math.Abs(row.Change()-c.delta) > 1e-9 {
			t.Errorf("%s: Δ %.6f%%, want exactly %.6f%%", c.phase, row.Change(), c.delta)
		}
		if row.Verdict != c.verdict {
			t.Errorf("%s: verdict %s (%s), want %s", c.phase, row.Verdict, row.Reason, c.verdict)
		}
	}
	if row := analysis.FindUnit(r, "", analysis.SimProcessInstructionsUnit); row == nil || !row.Simulated {
		t.Errorf("no simulated row for the whole process")
	}
	if row := analysis.FindUnit(r, "", analysis.SimWallUnit); row != nil {
		t.Errorf("the callgrind run's wall time is a row: %+v; it is the slowdown's, not a count", row)
	}

	// The slowdown: 47 s against 2 s, 60 s against 2.5 s.
	want := []analysis.Simulation{{Benchmark: "process/benchmark=prove", Tool: analysis.ToolCallgrind,
		Base: analysis.SimulationSide{Runs: 1, Wall: 47, TimedWall: 2, Slowdown: 23.5},
		Head: analysis.SimulationSide{Runs: 1, Wall: 60, TimedWall: 2.5, Slowdown: 24}}}
	if !reflect.DeepEqual(r.Simulations, want) {
		t.Errorf("simulations %+v, want %+v", r.Simulations, want)
	}

	// The regressed phase's explanation leads with its exact count.
	var synth *analysis.Explanation
	for i := range r.Explanations {
		if r.Explanations[i].Phase == "synthesis" {
			synth = &r.Explanations[i]
		}
	}
	if synth == nil || synth.Simulated == nil || !synth.Simulated.Exact || !synth.Simulated.Significant {
		t.Fatalf("synthesis explanation %+v; want a significant exact simulated item", synth)
	}

	var md, txt, js bytes.Buffer
	if err := render.RenderMarkdown(&md, r, render.RenderContext{}); err != nil {
		t.Fatal(err)
	}
	if err := render.RenderText(&txt, r); err != nil {
		t.Fatal(err)
	}
	if err := render.RenderJSON(&js, r); err != nil {
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
	var back analysis.Report
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if row := analysis.FindSim(&back, "synthesis"); row == nil || !row.Simulated || !math.IsNaN(row.PValue) || math.Abs(row.Change()-4.2) > 1e-9 {
		t.Errorf("decoded synthesis row %+v", row)
	}
}

func TestFailedCallgrindRunIsAWarningNotAFailedComparison(t *testing.T) {
	t.Parallel()
	g := analysis.NewSynth(72, 0.004)
	failedSim := analysis.Run{Revision: analysis.HeadRev, Status: analysis.StatusCrashed, Tool: analysis.ToolCallgrind, Detail: "exit status 1\nvalgrind's log (last lines):\n==1== unhandled syscall 435"}
	in := analysis.Input{
		BaseRev: analysis.BaseRev, HeadRev: analysis.HeadRev,
		Base: append(analysis.TimedWithWall(g.Runs(analysis.BaseRev, 6, nil), 2), analysis.SimRun(analysis.BaseRev, map[string]float64{"synthesis": 3e9}, 40)),
		Head: append(analysis.TimedWithWall(g.Runs(analysis.HeadRev, 6, nil), 2), failedSim),
	}
	r := analysis.Compare(in, analysis.DefaultOptions())
	if r.Runs.Head.Total != 6 || r.Runs.Head.FailedRuns() != 0 {
		t.Errorf("head runs %+v: the callgrind run is not a timed run", r.Runs.Head)
	}
	if analysis.FindSim(r, "synthesis") != nil {
		t.Errorf("a simulated row from one side")
	}
	if len(r.Failures) != 1 || r.Failures[0].Tool != analysis.ToolCallgrind || r.Failures[0].Side != "head" {
		t.Errorf("failures %+v, want head's callgrind run", r.Failures)
	}
	if !analysis.HasWarning(r, "1 of head's 1 callgrind run failed (crashed: exit status 1)") {
		t.Errorf("warnings %q, want one about head's callgrind run", r.Warnings)
	}
	if analysis.HasWarning(r, "only base has a callgrind run") {
		t.Errorf("warnings %q: head had one, it failed", r.Warnings)
	}
	var md bytes.Buffer
	if err := render.RenderMarkdown(&md, r, render.RenderContext{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "Head callgrind run `crashed` ×1") {
		t.Errorf("markdown does not name the failed callgrind run:\n%s", md.String())
	}
}
