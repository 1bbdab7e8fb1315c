package analysis

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

// counterRuns returns n ok runs of rev measuring, per phase, sec/op and
// the counters named in units, each times the factor that factor gives
// for "phase unit" (1 when absent), with seeded noise.
func counterRuns(g *synth, rev string, n int, units map[string]map[string]float64, factor map[string]float64) []Run {
	runs := make([]Run, n)
	for i := range runs {
		runs[i] = Run{Revision: rev, Status: StatusOK}
		for _, phase := range []string{"synthesis", "ntt", "msm_a"} {
			for _, unit := range []string{"sec/op", "instructions/op", "cycles/op", "page-faults/op"} {
				v, ok := units[phase][unit]
				if !ok {
					continue
				}
				f := factor[phase+" "+unit]
				if f == 0 {
					f = 1
				}
				runs[i].Samples = append(runs[i].Samples, Sample{Key{proveBench, phase, unit}, v * f * g.jitter()})
			}
		}
	}
	return runs
}

func TestExplanationOfARegressedPhaseShowsItsCountersAndIPC(t *testing.T) {
	t.Parallel()
	g := newSynth(7, 0.004)
	g.uniform = true
	units := map[string]map[string]float64{
		"synthesis": {"sec/op": 0.812, "instructions/op": 3.2e9, "cycles/op": 2.4e9, "page-faults/op": 1200},
		"ntt":       {"sec/op": 0.120, "instructions/op": 5e8, "cycles/op": 4e8},
		"msm_a":     {"sec/op": 0.210},
	}
	// synthesis runs the same instructions in 10% more cycles (and so
	// 10% more time); msm_a regresses with no counters to explain it; ntt
	// does not change.
	head := map[string]float64{"synthesis sec/op": 1.1, "synthesis cycles/op": 1.1, "msm_a sec/op": 1.2}
	r := Compare(Input{
		BaseRev: baseRev, HeadRev: headRev,
		Base: counterRuns(g, baseRev, 10, units, nil),
		Head: counterRuns(g, headRev, 10, units, head),
	}, DefaultOptions())
	if v := find(r, "synthesis").Verdict; v != VerdictRegression {
		t.Fatalf("synthesis %s, want a regression", v)
	}
	if v := find(r, "msm_a").Verdict; v != VerdictRegression {
		t.Fatalf("msm_a %s, want a regression", v)
	}
	if len(r.Explanations) != 1 {
		t.Fatalf("explanations %+v; want synthesis's only (msm_a has no other units, ntt did not regress)", r.Explanations)
	}
	e := r.Explanations[0]
	if e.Phase != "synthesis" || e.Profile != nil || len(e.Items) != 4 {
		t.Fatalf("explanation %+v; want synthesis's 4 items and no profile", e)
	}
	byName := make(map[string]ExplanationItem)
	for _, it := range e.Items {
		byName[it.Name] = it
	}
	if it := byName["instructions"]; it.Significant {
		t.Errorf("instructions %+v; want not significant", it)
	}
	if it := byName["cycles"]; !it.Significant || it.DeltaPct < 5 {
		t.Errorf("cycles %+v; want a significant rise", it)
	}
	ins, cyc := findUnit(r, "synthesis", "instructions/op"), findUnit(r, "synthesis", "cycles/op")
	wantIPC := (ins.HeadValue/cyc.HeadValue)/(ins.BaseValue/cyc.BaseValue)*100 - 100
	if it := byName["IPC"]; !it.Significant || math.Abs(it.DeltaPct-wantIPC) > 1e-9 || it.DeltaPct > -5 {
		t.Errorf("IPC %+v; want %.3f%%, negative and significant (cycles rose significantly, so IPC fell by more than 1%%)", it, wantIPC)
	}

	var md, txt bytes.Buffer
	if err := RenderMarkdown(&md, r, RenderContext{}); err != nil {
		t.Fatal(err)
	}
	if err := RenderText(&txt, r); err != nil {
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

func TestExplanationKeepsSignificantItemsFirstAndAtMostSix(t *testing.T) {
	t.Parallel()
	var rows []Row
	add := func(unit string, delta float64, v Verdict) {
		rows = append(rows, Row{Key: Key{proveBench, "synthesis", unit}, ShiftPct: delta, Verdict: v,
			Base: Summary{Median: 100}, Head: Summary{Median: 100 * (1 + delta/100)},
			BaseValue: 100, HeadValue: 100 * (1 + delta/100), Shift: delta})
	}
	add("sec/op", 9, VerdictRegression)
	for _, u := range explanationOrder {
		if !strings.Contains(u.unit, "÷") {
			add(u.unit, 0, VerdictNoChange)
		}
	}
	rows[len(rows)-1].Verdict = VerdictRegression  // allocs/op, last in the order
	rows[len(rows)-3].Verdict = VerdictImprovement // task-clock-sec/op
	es := Explain(rows, nil)
	if len(es) != 1 {
		t.Fatalf("explanations %+v", es)
	}
	var names []string
	for _, it := range es[0].Items {
		names = append(names, it.Name)
	}
	want := "instructions,IPC,cycles,cache-miss rate,task-clock,allocs/op"
	if got := strings.Join(names, ","); got != want {
		t.Errorf("items %s, want %s", got, want)
	}
}

func TestExplanationOfAPhaseWithOnlyAProfileIsTheProfileLine(t *testing.T) {
	t.Parallel()
	rows := []Row{{Key: Key{proveBench, "msm_h", "sec/op"}, ShiftPct: 20.4, PValue: 0.0004, Verdict: VerdictRegression}}
	diffs := []ProfileDiff{{Benchmark: proveBench, Phase: "msm_h", SampleType: "cpu", BaseSamples: 4180, HeadSamples: 5035,
		Flat: []FuncShare{{Name: "github.com/perfbot/perfbot/prover/groth16.split[...]", Base: 3.1, Head: 9.8, Delta: 6.7,
			BaseSamples: 130, HeadSamples: 493, P: 2e-40}}}}
	es := Explain(rows, diffs)
	if len(es) != 1 || es[0].Profile == nil || *es[0].Profile != 0 || len(es[0].Items) != 0 {
		t.Fatalf("explanations %+v; want one pointing at the diff", es)
	}
	plain := func(s string) string { return s }
	got := explanationLine(es[0], &diffs[0], plain, plain, plain)
	if want := "msm_h +20.4% (p<0.001): grew most: prover/groth16.split[...] +6.7 pp flat (3.1% → 9.8%, 130 → 493 samples, p<0.001)"; got != want {
		t.Errorf("line %q, want %q", got, want)
	}
	// A report stored before the counts shows the shares alone.
	old := diffs[0]
	old.Flat = []FuncShare{{Name: old.Flat[0].Name, Base: 3.1, Head: 9.8, Delta: 6.7}}
	if got, want := explanationLine(es[0], &old, plain, plain, plain), "msm_h +20.4% (p<0.001): grew most: prover/groth16.split[...] +6.7 pp flat (3.1% → 9.8%)"; got != want {
		t.Errorf("line of an old report %q, want %q", got, want)
	}
	// No function grew measurably: the line says so, with the samples
	// and the rule.
	none := diffs[0]
	none.Flat = nil
	if got, want := explanationLine(es[0], &none, plain, plain, plain),
		"msm_h +20.4% (p<0.001): no function's share of the CPU samples (base 4180, head 5035) grew measurably (Fisher's exact test, Holm α 0.01, ≥10 samples)"; got != want {
		t.Errorf("line without a function %q, want %q", got, want)
	}
	if es := Explain(rows, nil); len(es) != 0 {
		t.Errorf("a phase with only sec/op and no profile: %+v, want no explanation", es)
	}
}

// A manyfold change of a counter shows its two values, not a percentage
// of five digits; smaller changes stay percentages.
func TestExplanationItemShowsManyfoldChangesAsTheirValues(t *testing.T) {
	for _, tc := range []struct {
		it   ExplanationItem
		want string
	}{
		{ExplanationItem{Name: "allocs/op", DeltaPct: 409500, Significant: true, Unit: "allocs/op", Base: 1, Head: 4096}, "allocs/op 1.000 → 4.096k"},
		{ExplanationItem{Name: "B/op", DeltaPct: 300253.3, Significant: true, Unit: "B/op", Base: 64, Head: 192226}, "B/op 64.00 → 187.7Ki"},
		{ExplanationItem{Name: "B/op", DeltaPct: 999, Significant: true, Unit: "B/op", Base: 100, Head: 1099}, "B/op +999.0%"},
		{ExplanationItem{Name: "cycles", DeltaPct: 2000, Unit: "cycles/op", Base: 1e6, Head: 2.1e7}, "cycles 1.000M → 21.00M (~)"},
	} {
		if got := itemText(tc.it); got != tc.want {
			t.Errorf("itemText(%+v) = %q, want %q", tc.it, got, tc.want)
		}
	}
}
