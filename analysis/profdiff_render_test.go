package analysis_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/analysis/render"
)

func TestDiffProfilesDoesNotListAFunctionOfOneSample(t *testing.T) {
	t.Parallel()
	// The report that gave rise to the test: runtime.newarray at 0.4% of
	// head's 232 samples, one sample, none in base.
	const work, newarray = "pkg.work", "runtime.newarray"
	base := analysis.FakeProfile(t, analysis.FakeSample{"msm_h", []string{work, "main.main"}, 232})
	head := analysis.FakeProfile(t,
		analysis.FakeSample{"msm_h", []string{work, "main.main"}, 231},
		analysis.FakeSample{"msm_h", []string{newarray, work, "main.main"}, 1})
	d, _ := analysis.DiffProfiles([][]byte{base}, [][]byte{head}, "msm_h", analysis.ProfileOptions{})
	if d.BaseSamples != 232 || d.HeadSamples != 232 || len(d.Flat) != 0 || len(d.Cum) != 0 {
		t.Fatalf("diff %+v; want 232 samples a side and nothing listed", d)
	}

	e := analysis.Explanation{Benchmark: analysis.ProveBench, Phase: "msm_h", DeltaPct: 3.2, P: 0.004}
	plain := func(s string) string { return s }
	want := fmt.Sprintf("msm_h +3.2%% (p=0.004): no function's share of the CPU samples (base 232, head 232) grew measurably (Fisher's exact test, Holm α %g, ≥%d samples)",
		analysis.ProfileAlpha, analysis.MinFuncSamples)
	if got := analysis.ExplanationLine(e, &d, plain, plain, plain); got != want {
		t.Errorf("line %q, want %q", got, want)
	}
	var md strings.Builder
	render.MdExplanation(&md, render.ExplainedRow{Expl: e, Diff: &d})
	if !strings.Contains(md.String(), "grew measurably") || strings.Contains(md.String(), "<details>") || strings.Contains(md.String(), "| function") {
		t.Errorf("markdown %q; want the line and no collapsed section without a table", md.String())
	}
}

func TestAProfileDiffStoredBeforeTheTestDecodesAndRendersWithoutEvidence(t *testing.T) {
	t.Parallel()
	const stored = `{"benchmark": "B", "phase": "msm_h", "sample_type": "cpu", "unit": "nanoseconds",
		"base_profiles": 1, "head_profiles": 1, "base_samples": 232, "head_samples": 232,
		"base_value": 2320000000, "head_value": 2320000000,
		"flat": [{"name": "runtime.newarray", "base": 0, "head": 0.4, "delta": 0.4}], "cum": []}`
	var d analysis.ProfileDiff
	if err := json.Unmarshal([]byte(stored), &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Flat) != 1 || d.Flat[0].HeadSamples != 0 || d.Flat[0].P != 0 || d.Flat[0].HasEvidence() {
		t.Fatalf("flat %+v; want the stored share, without counts or p", d.Flat)
	}
	var md strings.Builder
	render.MdExplanation(&md, render.ExplainedRow{Expl: analysis.Explanation{Phase: "msm_h", DeltaPct: 3, P: 0.01}, Diff: &d})
	if !strings.Contains(md.String(), "| `runtime.newarray` | 0.0% | 0.4% | +0.4 pp | — | — |\n") || strings.Contains(md.String(), "samples, p") {
		t.Errorf("markdown %q; want the share with dashes for its counts and p", md.String())
	}
}

func TestCompareExplainsARegressedCPUPhaseByItsRealProfiles(t *testing.T) {
	base, head := analysis.RealProfiles(t)
	g := analysis.NewSynth(61, 0.004)
	regressed := map[string]float64{"synthesis": 1.1, "msm_h": 1.1}
	in := analysis.Input{
		BaseRev: analysis.BaseRev, HeadRev: analysis.HeadRev,
		Base: analysis.WithProfiles(g.Runs(analysis.BaseRev, 8, nil), "prove", base),
		Head: analysis.WithProfiles(g.Runs(analysis.HeadRev, 8, regressed), "prove", head),
	}
	r := analysis.Compare(in, analysis.DefaultOptions())
	for _, p := range []string{"synthesis", "msm_h", "total"} {
		if v := analysis.Find(r, p).Verdict; v != analysis.VerdictRegression {
			t.Fatalf("%s: %s, want a regression", p, v)
		}
	}
	// total regressed too, but no sample is labelled total.
	if len(r.ProfileDiffs) != 2 {
		t.Fatalf("%d profile diffs, want synthesis's and msm_h's: %+v", len(r.ProfileDiffs), r.ProfileDiffs)
	}
	helper := analysis.FuncName(analysis.SlowHelper)
	d := r.ProfileDiffs[0]
	if d.Benchmark != analysis.ProveBench || d.Phase != "synthesis" || d.BaseProfiles != 8 || d.HeadProfiles != 8 {
		t.Errorf("first diff %s/%s from %d and %d profiles; want synthesis of %s from 8 a side", d.Benchmark, d.Phase, d.BaseProfiles, d.HeadProfiles, analysis.ProveBench)
	}
	if len(d.Flat) == 0 || d.Flat[0].Name != helper || d.Flat[0].Delta <= 0 {
		t.Errorf("synthesis flat %+v: want %s first, grown", d.Flat, helper)
	}
	m := r.ProfileDiffs[1]
	if m.Phase != "msm_h" {
		t.Fatalf("second diff is %s's, want msm_h's", m.Phase)
	}
	if _, ok := analysis.ShareOf(slices.Concat(m.Flat, m.Cum), helper); ok {
		t.Errorf("msm_h's diff lists %s: %+v %+v", helper, m.Flat, m.Cum)
	}
	for _, w := range r.Warnings {
		if strings.Contains(w, "profile") {
			t.Errorf("warning %q; want none about profiles", w)
		}
	}

	var md, txt bytes.Buffer
	if err := render.RenderMarkdown(&md, r, render.RenderContext{}); err != nil {
		t.Fatal(err)
	}
	if err := render.RenderText(&txt, r); err != nil {
		t.Fatal(err)
	}
	short := strings.TrimPrefix(helper, "github.com/perfbot/perfbot/")
	if !strings.Contains(md.String(), "**synthesis** +") || !strings.Contains(md.String(), "grew most: `"+short+"` +") {
		t.Errorf("the comment does not explain synthesis by %s:\n%s", short, md.String())
	}
	if !strings.Contains(txt.String(), "\n  synthesis +") || !strings.Contains(txt.String(), "grew most: "+short+" +") {
		t.Errorf("the terminal report does not explain synthesis by %s:\n%s", short, txt.String())
	}
}
