package analysis_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/analysis/render"
)

func TestCompareShowsTheMemoryDiffOnlyWhenAPhaseRegressed(t *testing.T) {
	t.Parallel()
	base := analysis.FakeHeapProfile(t, analysis.FakeAlloc{[]string{analysis.NewSystem, analysis.MainMain}, 2, 10 << 20})
	head := analysis.FakeHeapProfile(t, analysis.FakeAlloc{[]string{analysis.NewSystem, analysis.MainMain}, 2, 10 << 20}, analysis.FakeAlloc{[]string{analysis.Planted, analysis.MainMain}, 48, 3 << 20})
	g := analysis.NewSynth(81, 0.004)

	steady := analysis.Compare(analysis.Input{
		Base: analysis.WithMemProfiles(g.Runs(analysis.BaseRev, 6, nil), "prove", base),
		Head: analysis.WithMemProfiles(g.Runs(analysis.HeadRev, 6, nil), "prove", head),
	}, analysis.DefaultOptions())
	if steady.MemoryDiffs != nil {
		t.Errorf("no phase regressed, yet memory diffs %+v", steady.MemoryDiffs)
	}

	r := analysis.Compare(analysis.Input{
		Base: analysis.WithMemProfiles(g.Runs(analysis.BaseRev, 6, nil), "prove", base),
		Head: analysis.WithMemProfiles(g.Runs(analysis.HeadRev, 6, map[string]float64{"synthesis": 1.1}), "prove", head),
	}, analysis.DefaultOptions())
	if len(r.MemoryDiffs) != 1 {
		t.Fatalf("memory diffs %+v; want prove's", r.MemoryDiffs)
	}
	d := r.MemoryDiffs[0]
	if d.Command != "prove" || d.BaseProfiles != 6 || d.HeadProfiles != 6 || len(d.Space) != 1 || d.Space[0].Name != analysis.Planted || d.Space[0].Delta != 3<<20 {
		t.Errorf("diff %+v; want prove's 6 profiles a side and grow +3 MiB a run", d)
	}
	if r.ProfileDiffs != nil {
		t.Errorf("profile diffs %+v: a memory profile is no CPU profile", r.ProfileDiffs)
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
		"\nAllocations per run of `prove` (heap profiles of whole runs, not phases: Go's heap profiles carry no labels): +3.000MiB (+30.0%), +48.00 objects (+2400.0%); grew most: `prover/r1cs.(*LC).grow` +3.000MiB a run (p&lt;0.001)\n",
		// 6 runs of 768 periods and of 48 sampled allocations.
		"| `prover/r1cs.(*LC).grow` | 0B | 3.000MiB | +3.000MiB | 0 → 4608 | &lt;0.001 |",
		"| `prover/r1cs.(*LC).grow` | 0 objects | 48.00 objects | +48.00 objects | 0 → 288 | &lt;0.001 |",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
	if !strings.Contains(txt.String(), "  +3.000MiB a run (0B → 3.000MiB, p<0.001), prover/r1cs.(*LC).grow\n") {
		t.Errorf("text lacks the site:\n%s", txt.String())
	}
	var back analysis.Report
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.MemoryDiffs, r.MemoryDiffs) {
		t.Errorf("JSON round trip: %+v, want %+v", back.MemoryDiffs, r.MemoryDiffs)
	}
}
