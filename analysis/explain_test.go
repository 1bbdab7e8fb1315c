package analysis

import (
	"strings"
	"testing"
)

// CounterRuns returns n ok runs of rev measuring, per phase, sec/op and
// the counters named in units, each times the factor that factor gives
// for "phase unit" (1 when absent), with seeded noise.
func CounterRuns(g *synth, rev string, n int, units map[string]map[string]float64, factor map[string]float64) []Run {
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
				runs[i].Samples = append(runs[i].Samples, Sample{Key{ProveBench, phase, unit}, v * f * g.jitter()})
			}
		}
	}
	return runs
}

func TestExplanationKeepsSignificantItemsFirstAndAtMostSix(t *testing.T) {
	t.Parallel()
	var rows []Row
	add := func(unit string, delta float64, v Verdict) {
		rows = append(rows, Row{Key: Key{ProveBench, "synthesis", unit}, ShiftPct: delta, Verdict: v,
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
	rows := []Row{{Key: Key{ProveBench, "msm_h", "sec/op"}, ShiftPct: 20.4, PValue: 0.0004, Verdict: VerdictRegression}}
	diffs := []ProfileDiff{{Benchmark: ProveBench, Phase: "msm_h", SampleType: "cpu", BaseSamples: 4180, HeadSamples: 5035,
		Flat: []FuncShare{{Name: "github.com/perfbot/perfbot/prover/groth16.split[...]", Base: 3.1, Head: 9.8, Delta: 6.7,
			BaseSamples: 130, HeadSamples: 493, P: 2e-40}}}}
	es := Explain(rows, diffs)
	if len(es) != 1 || es[0].Profile == nil || *es[0].Profile != 0 || len(es[0].Items) != 0 {
		t.Fatalf("explanations %+v; want one pointing at the diff", es)
	}
	plain := func(s string) string { return s }
	got := ExplanationLine(es[0], &diffs[0], plain, plain, plain)
	if want := "msm_h +20.4% (p<0.001): grew most: prover/groth16.split[...] +6.7 pp flat (3.1% → 9.8%, 130 → 493 samples, p<0.001)"; got != want {
		t.Errorf("line %q, want %q", got, want)
	}
	// A report stored before the counts shows the shares alone.
	old := diffs[0]
	old.Flat = []FuncShare{{Name: old.Flat[0].Name, Base: 3.1, Head: 9.8, Delta: 6.7}}
	if got, want := ExplanationLine(es[0], &old, plain, plain, plain), "msm_h +20.4% (p<0.001): grew most: prover/groth16.split[...] +6.7 pp flat (3.1% → 9.8%)"; got != want {
		t.Errorf("line of an old report %q, want %q", got, want)
	}
	// No function grew measurably: the line says so, with the samples
	// and the rule.
	none := diffs[0]
	none.Flat = nil
	if got, want := ExplanationLine(es[0], &none, plain, plain, plain),
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
