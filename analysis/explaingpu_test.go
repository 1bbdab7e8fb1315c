package analysis

import (
	"bytes"
	"strings"
	"testing"
)

// gpuRuns returns n ok runs of rev of the GPU backend as the runner
// records them for the command prove: synthesis on the CPU; ntt and msm_h
// on the GPU, each line with its kernel steps' device times; and the
// process's GPU telemetry. scale multiplies the values it names ("msm_h
// sort-sec/op", "gpu-sm-clock-mean-MHz/run"); sec/op of a GPU phase is
// the sum of its steps plus a little host time.
func gpuRuns(g *synth, rev string, n int, scale map[string]float64) []Run {
	f := func(key string) float64 {
		if v, ok := scale[key]; ok {
			return v
		}
		return 1
	}
	steps := map[string][]struct {
		name string
		sec  float64
	}{
		"ntt":   {{"upload", 0.030}, {"to_coset", 0.004}, {"pointwise", 0.002}, {"download", 0.020}},
		"msm_h": {{"upload_scalars", 0.010}, {"sort", 0.040}, {"accumulate", 0.230}, {"reduce", 0.008}},
	}
	runs := make([]Run, n)
	for i := range runs {
		run := Run{Revision: rev, Status: StatusOK}
		add := func(bench, phase, unit string, v float64) {
			run.Samples = append(run.Samples, Sample{Key{bench, phase, unit}, v * g.jitter()})
		}
		add(proveBench, "synthesis", "sec/op", 0.812*f("synthesis sec/op"))
		for _, phase := range []string{"ntt", "msm_h"} {
			total := 0.002
			for _, st := range steps[phase] {
				total += st.sec * f(phase+" "+st.name+"-sec/op")
			}
			add(proveBench, phase, "sec/op", total)
			for _, st := range steps[phase] {
				add(proveBench, phase, st.name+"-sec/op", st.sec*f(phase+" "+st.name+"-sec/op"))
			}
		}
		const proc = "process/benchmark=prove"
		add(proc, "", "wall-sec/run", 3)
		add(proc, "", GPUSMClockMeanUnit, 1980*f(GPUSMClockMeanUnit))
		add(proc, "", "gpu-power-mean-W/run", 410)
		add(proc, "", "gpu-temp-max-C/run", 61)
		// Throttled in every head run when the scale says so.
		run.Samples = append(run.Samples, Sample{Key{proc, "", GPUThrottledFractionUnit}, 0.35 * (f(GPUThrottledFractionUnit) - 1)})
		runs[i] = run
	}
	return runs
}

func explanationOf(r *Report, phase string) *Explanation {
	for i := range r.Explanations {
		if r.Explanations[i].Phase == phase {
			return &r.Explanations[i]
		}
	}
	return nil
}

func TestExplanationOfARegressedGPUPhaseShowsItsStepsAndTelemetry(t *testing.T) {
	t.Parallel()
	g := newSynth(91, 0.004)
	head := map[string]float64{
		"msm_h sort-sec/op":      1.4,  // +16 ms: the largest step change
		"msm_h reduce-sec/op":    1.5,  // +4 ms, +50%: second, despite its larger %
		"synthesis sec/op":       1.1,  // a CPU phase: no GPU telemetry in its line
		GPUSMClockMeanUnit:       0.92, // SM clock -8%
		GPUThrottledFractionUnit: 2,    // throttled in 35% of the readings
	}
	r := Compare(Input{
		BaseRev: baseRev, HeadRev: headRev,
		Base: gpuRuns(g, baseRev, 8, nil),
		Head: gpuRuns(g, headRev, 8, head),
	}, DefaultOptions())
	if v := find(r, "msm_h").Verdict; v != VerdictRegression {
		t.Fatalf("msm_h %s, want a regression", v)
	}
	e := explanationOf(r, "msm_h")
	if e == nil {
		t.Fatalf("no explanation of msm_h: %+v", r.Explanations)
	}
	if len(e.Steps) != 2 || e.Steps[0].Name != "sort" || e.Steps[1].Name != "reduce" || !e.Steps[0].Significant {
		t.Errorf("steps %+v; want sort then reduce, the significant ones, largest change in seconds first", e.Steps)
	}
	if len(e.Telemetry) != 2 || e.Telemetry[0].Name != "SM clock" || !e.Telemetry[0].Significant ||
		e.Telemetry[1].Name != "throttled" || e.Telemetry[1].Base != 0 {
		t.Errorf("telemetry %+v; want the SM clock's drop and the throttling, not the steady power and temperature", e.Telemetry)
	}
	if s := explanationOf(r, "synthesis"); s != nil && (len(s.Telemetry) > 0 || len(s.Steps) > 0) {
		t.Errorf("synthesis, a CPU phase, explained by the GPU: %+v", s)
	}
	if n := explanationOf(r, "ntt"); n != nil {
		t.Errorf("ntt did not regress but is explained: %+v", n)
	}

	plain := func(s string) string { return s }
	line := explanationLine(*e, nil, plain, plain, plain)
	const want = "msm_h +6.8% (p<0.001): GPU steps sort +39.8% (+15.94ms), reduce +50.5% (+4.032ms); GPU over the whole run: SM clock -8.0%, throttled 0.0% → 35.0% of readings"
	if line != want {
		t.Errorf("line\n%q\nwant\n%q", line, want)
	}
	var md bytes.Buffer
	if err := RenderMarkdown(&md, r, RenderContext{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "\n**msm\\_h** +6.8% (p&lt;0.001): GPU steps sort +39.8% (+15.94ms), reduce +50.5% (+4.032ms); GPU over the whole run: SM clock -8.0%, throttled 0.0% → 35.0% of readings\n") {
		t.Errorf("markdown lacks msm_h's GPU line:\n%s", md.String())
	}

	// A report decoded from JSON without its runs still finds the
	// telemetry of its only command.
	again := Explain(r.Phases, r.ProfileDiffs)
	for _, x := range again {
		if x.Phase == "msm_h" && len(x.Telemetry) != 2 {
			t.Errorf("Explain without runs: telemetry %+v, want the same 2 items", x.Telemetry)
		}
	}
}

func TestTelemetryItemsNameTheGPUAndMarkThrottlingThatIsNotSignificant(t *testing.T) {
	t.Parallel()
	rows := []Row{
		{Key: Key{"process/benchmark=prove/gpu=1", "", GPUSMClockMeanUnit}, Verdict: VerdictRegression, ShiftPct: -5,
			Base: Summary{Median: 1980}, Head: Summary{Median: 1881}, BaseValue: 1980, HeadValue: 1881, Shift: -99},
		{Key: Key{"process/benchmark=prove/gpu=0", "", GPUSMClockMeanUnit}, Verdict: VerdictNoChange, ShiftPct: 0.1},
		{Key: Key{"process/benchmark=prove/gpu=0", "", GPUThrottledFractionUnit}, Verdict: VerdictInconclusive,
			Base: Summary{Median: 0}, Head: Summary{Median: 0.05}, BaseValue: 0, HeadValue: 0.05, Shift: 0.05},
		{Key: Key{"process/benchmark=other", "", GPUSMClockMeanUnit}, Verdict: VerdictRegression, ShiftPct: -20},
	}
	items := telemetryItems(rows, []string{"process/benchmark=prove"})
	var texts []string
	for _, it := range items {
		texts = append(texts, gpuItemText(it))
	}
	want := "SM clock (gpu=1) -5.0%, throttled (gpu=0) 0.0% → 5.0% of readings (~)"
	if got := strings.Join(texts, ", "); got != want {
		t.Errorf("items %q, want %q (another command's clock is not this phase's)", got, want)
	}
}

func TestStepUnitsAreTheDeviceTimesNotTheCounters(t *testing.T) {
	t.Parallel()
	for unit, want := range map[string]bool{
		"sort-sec/op": true, "upload_scalars-sec/op": true, "sec/op": false, "task-clock-sec/op": false,
		"instructions/op": false, "wall-sec/run": false,
	} {
		if got := isStepUnit(unit); got != want {
			t.Errorf("isStepUnit(%q) = %v, want %v", unit, got, want)
		}
	}
}

// The report: "GPU GPU busy +572.2%". Telemetry in a GPU line is
// labelled once, and says it covers the whole run.
func TestGPUTelemetryInAnExplanationIsLabelledOnce(t *testing.T) {
	t.Parallel()
	g := newSynth(92, 0.004)
	busy := func(runs []Run, pct float64) []Run {
		for i := range runs {
			runs[i].Samples = append(runs[i].Samples, Sample{Key{"process/benchmark=prove", "", "gpu-util-mean-pct/run"}, pct * g.jitter()})
		}
		return runs
	}
	r := Compare(Input{
		BaseRev: baseRev, HeadRev: headRev,
		Base: busy(gpuRuns(g, baseRev, 8, nil), 12),
		Head: busy(gpuRuns(g, headRev, 8, map[string]float64{"msm_h accumulate-sec/op": 1.2}), 80.7),
	}, DefaultOptions())
	e := explanationOf(r, "msm_h")
	if e == nil {
		t.Fatalf("no explanation of msm_h: %+v", r.Explanations)
	}
	plain := func(s string) string { return s }
	line := explanationLine(*e, nil, plain, plain, plain)
	if !strings.Contains(line, "; GPU over the whole run: busy +57") || strings.Contains(line, "GPU GPU") {
		t.Errorf("line %q: want the busy share once, as \"GPU over the whole run: busy +57…%%\"", line)
	}
}
