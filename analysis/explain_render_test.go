package analysis_test

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/analysis/render"
)

func TestExplanationOfARegressedPhaseShowsItsCountersAndIPC(t *testing.T) {
	t.Parallel()
	g := analysis.NewSynth(7, 0.004)
	g.Uniform = true
	units := map[string]map[string]float64{
		"synthesis": {"sec/op": 0.812, "instructions/op": 3.2e9, "cycles/op": 2.4e9, "page-faults/op": 1200},
		"ntt":       {"sec/op": 0.120, "instructions/op": 5e8, "cycles/op": 4e8},
		"msm_a":     {"sec/op": 0.210},
	}
	// synthesis runs the same instructions in 10% more cycles (and so
	// 10% more time); msm_a regresses with no counters to explain it; ntt
	// does not change.
	head := map[string]float64{"synthesis sec/op": 1.1, "synthesis cycles/op": 1.1, "msm_a sec/op": 1.2}
	r := analysis.Compare(analysis.Input{
		BaseRev: analysis.BaseRev, HeadRev: analysis.HeadRev,
		Base: analysis.CounterRuns(g, analysis.BaseRev, 10, units, nil),
		Head: analysis.CounterRuns(g, analysis.HeadRev, 10, units, head),
	}, analysis.DefaultOptions())
	if v := analysis.Find(r, "synthesis").Verdict; v != analysis.VerdictRegression {
		t.Fatalf("synthesis %s, want a regression", v)
	}
	if v := analysis.Find(r, "msm_a").Verdict; v != analysis.VerdictRegression {
		t.Fatalf("msm_a %s, want a regression", v)
	}
	if len(r.Explanations) != 1 {
		t.Fatalf("explanations %+v; want synthesis's only (msm_a has no other units, ntt did not regress)", r.Explanations)
	}
	e := r.Explanations[0]
	if e.Phase != "synthesis" || e.Profile != nil || len(e.Items) != 4 {
		t.Fatalf("explanation %+v; want synthesis's 4 items and no profile", e)
	}
	byName := make(map[string]analysis.ExplanationItem)
	for _, it := range e.Items {
		byName[it.Name] = it
	}
	if it := byName["instructions"]; it.Significant {
		t.Errorf("instructions %+v; want not significant", it)
	}
	if it := byName["cycles"]; !it.Significant || it.DeltaPct < 5 {
		t.Errorf("cycles %+v; want a significant rise", it)
	}
	ins, cyc := analysis.FindUnit(r, "synthesis", "instructions/op"), analysis.FindUnit(r, "synthesis", "cycles/op")
	wantIPC := (ins.HeadValue/cyc.HeadValue)/(ins.BaseValue/cyc.BaseValue)*100 - 100
	if it := byName["IPC"]; !it.Significant || math.Abs(it.DeltaPct-wantIPC) > 1e-9 || it.DeltaPct > -5 {
		t.Errorf("IPC %+v; want %.3f%%, negative and significant (cycles rose significantly, so IPC fell by more than 1%%)", it, wantIPC)
	}

	var md, txt bytes.Buffer
	if err := render.RenderMarkdown(&md, r, render.RenderContext{}); err != nil {
		t.Fatal(err)
	}
	if err := render.RenderText(&txt, r); err != nil {
		t.Fatal(err)
	}
	const wantMD = "**synthesis** +9.6% (p&lt;0.001): instructions -0.1% (~), IPC -9.3%, cycles +10.1%, page faults +0.1% (~)\n"
	if !strings.Contains(md.String(), "\n"+wantMD) {
		t.Errorf("markdown lacks the line %q:\n%s", wantMD, md.String())
	}
	const wantText = "  synthesis +9.6% (p<0.001): instructions -0.1% (~), IPC -9.3%, cycles +10.1%, page faults +0.1% (~)\n"
	if !strings.Contains(txt.String(), "\n"+wantText) {
		t.Errorf("text lacks the line %q:\n%s", wantText, txt.String())
	}
	for _, out := range []string{md.String(), txt.String()} {
		if strings.Contains(out, "\n  msm_a +") || strings.Contains(out, "\n**msm\\_a**") || strings.Contains(out, "grew most") {
			t.Errorf("a phase with only sec/op and no profile got a line:\n%s", out)
		}
	}
}
