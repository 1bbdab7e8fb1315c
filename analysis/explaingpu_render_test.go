package analysis_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/analysis/render"
)

func TestExplanationOfARegressedGPUPhaseShowsItsStepsAndTelemetry(t *testing.T) {
	t.Parallel()
	g := analysis.NewSynth(91, 0.004)
	head := map[string]float64{
		"msm_h sort-sec/op":               1.4,  // +16 ms: the largest step change
		"msm_h reduce-sec/op":             1.5,  // +4 ms, +50%: second, despite its larger %
		"synthesis sec/op":                1.1,  // a CPU phase: no GPU telemetry in its line
		analysis.GPUSMClockMeanUnit:       0.92, // SM clock -8%
		analysis.GPUThrottledFractionUnit: 2,    // throttled in 35% of the readings
	}
	r := analysis.Compare(analysis.Input{
		BaseRev: analysis.BaseRev, HeadRev: analysis.HeadRev,
		Base: analysis.GpuRuns(g, analysis.BaseRev, 8, nil),
		Head: analysis.GpuRuns(g, analysis.HeadRev, 8, head),
	}, analysis.DefaultOptions())
	if v := analysis.Find(r, "msm_h").Verdict; v != analysis.VerdictRegression {
		t.Fatalf("msm_h %s, want a regression", v)
	}
	e := analysis.ExplanationOf(r, "msm_h")
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
	if s := analysis.ExplanationOf(r, "synthesis"); s != nil && (len(s.Telemetry) > 0 || len(s.Steps) > 0) {
		t.Errorf("synthesis, a CPU phase, explained by the GPU: %+v", s)
	}
	if n := analysis.ExplanationOf(r, "ntt"); n != nil {
		t.Errorf("ntt did not regress but is explained: %+v", n)
	}

	plain := func(s string) string { return s }
	line := analysis.ExplanationLine(*e, nil, plain, plain, plain)
	const want = "msm_h +6.8% (p<0.001): GPU steps sort +39.8% (+15.94ms), reduce +50.5% (+4.032ms); GPU over the whole run: SM clock -8.0%, throttled 0.0% → 35.0% of readings"
	if line != want {
		t.Errorf("line\n%q\nwant\n%q", line, want)
	}
	var md bytes.Buffer
	if err := render.RenderMarkdown(&md, r, render.RenderContext{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "\n**msm\\_h** +6.8% (p&lt;0.001): GPU steps sort +39.8% (+15.94ms), reduce +50.5% (+4.032ms); GPU over the whole run: SM clock -8.0%, throttled 0.0% → 35.0% of readings\n") {
		t.Errorf("markdown lacks msm_h's GPU line:\n%s", md.String())
	}

	// A report decoded from JSON without its runs still finds the
	// telemetry of its only command.
	again := analysis.Explain(r.Phases, r.ProfileDiffs)
	for _, x := range again {
		if x.Phase == "msm_h" && len(x.Telemetry) != 2 {
			t.Errorf("Explain without runs: telemetry %+v, want the same 2 items", x.Telemetry)
		}
	}
}
