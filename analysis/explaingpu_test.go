package analysis

import (
	"strings"
	"testing"
)

// GpuRuns returns n ok runs of rev of the GPU backend as the runner
// records them for the command prove: synthesis on the CPU; ntt and msm_h
// on the GPU, each line with its kernel steps' device times; and the
// process's GPU telemetry. scale multiplies the values it names ("msm_h
// sort-sec/op", "gpu-sm-clock-mean-MHz/run"); sec/op of a GPU phase is
// the sum of its steps plus a little host time.
func GpuRuns(g *synth, rev string, n int, scale map[string]float64) []Run {
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
		add(ProveBench, "synthesis", "sec/op", 0.812*f("synthesis sec/op"))
		for _, phase := range []string{"ntt", "msm_h"} {
			total := 0.002
			for _, st := range steps[phase] {
				total += st.sec * f(phase+" "+st.name+"-sec/op")
			}
			add(ProveBench, phase, "sec/op", total)
			for _, st := range steps[phase] {
				add(ProveBench, phase, st.name+"-sec/op", st.sec*f(phase+" "+st.name+"-sec/op"))
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

func ExplanationOf(r *Report, phase string) *Explanation {
	for i := range r.Explanations {
		if r.Explanations[i].Phase == phase {
			return &r.Explanations[i]
		}
	}
	return nil
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
	g := NewSynth(92, 0.004)
	busy := func(runs []Run, pct float64) []Run {
		for i := range runs {
			runs[i].Samples = append(runs[i].Samples, Sample{Key{"process/benchmark=prove", "", "gpu-util-mean-pct/run"}, pct * g.jitter()})
		}
		return runs
	}
	r := Compare(Input{
		BaseRev: BaseRev, HeadRev: HeadRev,
		Base: busy(GpuRuns(g, BaseRev, 8, nil), 12),
		Head: busy(GpuRuns(g, HeadRev, 8, map[string]float64{"msm_h accumulate-sec/op": 1.2}), 80.7),
	}, DefaultOptions())
	e := ExplanationOf(r, "msm_h")
	if e == nil {
		t.Fatalf("no explanation of msm_h: %+v", r.Explanations)
	}
	plain := func(s string) string { return s }
	line := ExplanationLine(*e, nil, plain, plain, plain)
	if !strings.Contains(line, "; GPU over the whole run: busy +57") || strings.Contains(line, "GPU GPU") {
		t.Errorf("line %q: want the busy share once, as \"GPU over the whole run: busy +57…%%\"", line)
	}
}
