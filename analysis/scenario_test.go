package analysis_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/analysis/render"
	"github.com/perfbot/perfbot/analysis/stats"
)

// This file renders whole comparisons a maintainer meets, every format
// checked against golden files under testdata/scenarios/: real runs
// (stored by perfbot compare, written out with their profiles) of a
// planted GPU slowdown off the critical path and one on it, measured on
// an H200, and of the README's main job on a 2-core machine; and
// synthetic ones: an A/A comparison and counts that change. Each test
// also checks what the scenario is about, so that a golden file is never
// the only thing that stands between a wrong report and a pass.

// A scenario is a comparison's input as testdata holds it: Input without
// its History (no baseline history in any of these), and each run's
// profiles, which Run's JSON leaves out.
type scenario struct {
	BaseRev      string               `json:"base_rev"`
	HeadRev      string               `json:"head_rev"`
	BaseArgs     []string             `json:"base_args,omitempty"`
	HeadArgs     []string             `json:"head_args,omitempty"`
	Base         []analysis.Run       `json:"base"`
	Head         []analysis.Run       `json:"head"`
	BaseEnv      analysis.Env         `json:"base_env,omitempty"`
	HeadEnv      analysis.Env         `json:"head_env,omitempty"`
	Looks        stats.Looks          `json:"looks"`
	Order        string               `json:"order,omitempty"`
	Seed         uint64               `json:"seed,omitempty"`
	Options      analysis.Options     `json:"options"`
	BaseProfiles [][]analysis.Profile `json:"base_profiles"`
	HeadProfiles [][]analysis.Profile `json:"head_profiles"`
}

// loadScenario reads testdata/scenarios/NAME.json.gz and compares it.
func loadScenario(t *testing.T, name string) *analysis.Report {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "scenarios", name+".json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var s scenario
	if err := json.NewDecoder(zr).Decode(&s); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	for i := range s.Base {
		if i < len(s.BaseProfiles) {
			s.Base[i].Profiles = s.BaseProfiles[i]
		}
	}
	for i := range s.Head {
		if i < len(s.HeadProfiles) {
			s.Head[i].Profiles = s.HeadProfiles[i]
		}
	}
	return analysis.Compare(analysis.Input{BaseRev: s.BaseRev, HeadRev: s.HeadRev, BaseArgs: s.BaseArgs, HeadArgs: s.HeadArgs,
		Base: s.Base, Head: s.Head, BaseEnv: s.BaseEnv, HeadEnv: s.HeadEnv, Looks: s.Looks, Order: s.Order, Seed: s.Seed}, s.Options)
}

// checkScenario renders r in every format against the golden files
// testdata/scenarios/NAME.{txt,verbose.txt,md,json}, and returns the
// brief text.
func checkScenario(t *testing.T, name string, r *analysis.Report) string {
	t.Helper()
	var brief, verbose, md, js bytes.Buffer
	for _, err := range []error{
		render.RenderTextBrief(&brief, r), render.RenderText(&verbose, r), render.RenderMarkdown(&md, r, render.RenderContext{}), render.RenderJSON(&js, r),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	dir := "scenarios/" + name
	checkGolden(t, dir+".txt", brief.Bytes())
	checkGolden(t, dir+".verbose.txt", verbose.Bytes())
	checkGolden(t, dir+".md", md.Bytes())
	checkGolden(t, dir+".json", js.Bytes())
	if bad := checkReport(r); len(bad) > 0 {
		t.Errorf("%s contradicts itself: %s", name, strings.Join(bad, "; "))
	}
	return brief.String()
}

func shareOfPhase(a analysis.Attribution, phase string) (analysis.PhaseShare, bool) {
	for _, p := range a.Phases {
		if p.Phase == phase {
			return p, true
		}
	}
	return analysis.PhaseShare{}, false
}

// A 5% plant in msm_h's device accumulation at 2^20 on an H200: msm_h
// and its accumulate step regress, total's change is not significant, so
// the verdict (total's) is not settled, no share is given, the headline
// names msm_h as a phase that changed, and msm_h is reported with the
// slack the host's longer G2 MSM leaves it. It fails a check only with
// fail_on: any-phase.
func TestScenarioGPUPlantOffTheCriticalPath(t *testing.T) {
	t.Parallel()
	r := loadScenario(t, "gpu-offpath")
	brief := checkScenario(t, "gpu-offpath", r)
	msmH := analysis.Find(r, "msm_h")
	if r.Verdict != analysis.VerdictInconclusive || msmH.Verdict != analysis.VerdictRegression || msmH.Change() < 4 || msmH.Change() > 8 {
		t.Errorf("verdict %s, msm_h %s %+.1f%%; want total's (not settled) and the planted +5%% msm_h regression", r.Verdict, msmH.Verdict, msmH.Change())
	}
	if r.Fails() {
		t.Errorf("fails a check by default: msm_h is not the headline")
	}
	anyPhase := *r
	anyPhase.Options.FailOn = analysis.FailOnAnyPhase
	if !anyPhase.Fails() {
		t.Errorf("with fail_on: any-phase, msm_h's regression does not fail the check")
	}
	if !strings.Contains(unwrapped(brief), "Phases that changed: msm_h +6.0%") {
		t.Errorf("the headline does not name msm_h as a phase that changed:\n%s", brief)
	}
	a := r.Attribution[0]
	if a.Changed() {
		t.Fatalf("total %s: the plant is off the critical path, total should not change", a.Verdict)
	}
	p, ok := shareOfPhase(a, "msm_h")
	if !ok || !p.OffCriticalPath || p.Slack == nil || p.Slack.Behind != "msm_b2" || !(p.Slack.Base > 0.03 && p.Slack.Head > 0.03) || !math.IsNaN(p.SharePct) {
		t.Errorf("msm_h in the attribution %+v (slack %+v): want off the critical path behind msm_b2 with tens of ms of slack, no share", p, p.Slack)
	}
	for _, want := range []string{"not a significant change (inconclusive), so no phase's share of it is given",
		"msm_h +6.0% (regression) is off the critical path: msm_b2 took longer on both sides", "GPU steps accumulate +"} {
		if !strings.Contains(unwrapped(brief), want) {
			t.Errorf("the brief report lacks %q:\n%s", want, brief)
		}
	}
	if strings.Contains(brief, "grew most") {
		t.Errorf("msm_h runs on the GPU: its few CPU samples show no function that grew measurably, yet:\n%s", brief)
	}
}

// msm_h made 100 ms slower (a comparison cut off at 12 and 11 runs): its
// branch outgrows the host's G2 MSM, so the critical path moves to it and
// msm_h is charged along it; total's own change, +0.4% with synthesis's
// noise around it, is not significant at these runs, so no share is
// given, and the report says where the path went rather than a share of
// noise.
func TestScenarioGPUPlantOnTheCriticalPath(t *testing.T) {
	t.Parallel()
	r := loadScenario(t, "gpu-onpath")
	brief := checkScenario(t, "gpu-onpath", r)
	if analysis.Find(r, "msm_h").Verdict != analysis.VerdictRegression {
		t.Errorf("msm_h %s, want the planted regression", analysis.Find(r, "msm_h").Verdict)
	}
	a := r.Attribution[0]
	o := a.Overlaps[0]
	if o.Critical(false) != "side" || o.Critical(true) != "branch" {
		t.Errorf("critical path %s at base, %s at head; want the G2 MSM (side) at base and msm_h's branch at head", o.Critical(false), o.Critical(true))
	}
	p, _ := shareOfPhase(a, "msm_h")
	if p.OffCriticalPath || p.Slack != nil || !(p.Attributed > 0.01) {
		t.Errorf("msm_h %+v: want on the critical path at head and charged tens of ms along it", p)
	}
	if a.Changed() {
		t.Errorf("total %s: at 11 runs its change should not be significant here", a.Verdict)
	}
	for _, q := range a.Phases {
		if stats.Finite(q.SharePct) {
			t.Errorf("%s has a share %.1f%% of a total that did not change", q.Phase, q.SharePct)
		}
	}
	if flat := unwrapped(brief); !strings.Contains(flat, "through msm_a … msm_h (153.6ms against 133.5ms) at head") || !strings.Contains(flat, "so no phase's share of it is given") {
		t.Errorf("the brief report does not say where the critical path went:\n%s", brief)
	}
}

// The README's main job on a 2-core machine: the report's rows never
// contradict the values beside them, and the attribution of a total that
// did not change gives no shares.
func TestScenarioREADMEMainJob(t *testing.T) {
	t.Parallel()
	r := loadScenario(t, "readme-2core")
	checkScenario(t, "readme-2core", r)
	for _, a := range r.Attribution {
		if !a.Changed() {
			for _, p := range a.Phases {
				if stats.Finite(p.SharePct) {
					t.Errorf("%s has a share of a total that did not change", p.Phase)
				}
			}
		}
	}
}

// A/A: one distribution on both sides, 30 runs each; nothing changed,
// and the report says so without an improvement or a share.
func TestScenarioAA(t *testing.T) {
	t.Parallel()
	g := analysis.NewSynth(3401, 0.01)
	r := analysis.Compare(analysis.Input{Base: g.Runs(analysis.BaseRev, 30, nil), Head: g.Runs(analysis.BaseRev, 30, nil)}, analysis.DefaultOptions())
	brief := checkScenario(t, "aa", r)
	if r.Verdict == analysis.VerdictRegression || r.Verdict == analysis.VerdictImprovement {
		t.Errorf("A/A verdict %s", r.Verdict)
	}
	if !strings.Contains(brief, "an A/A comparison") && !analysis.HasWarning(r, "A/A comparison") {
		t.Errorf("the A/A comparison is not named one:\n%s", brief)
	}
}

// Counts: allocs/op a constant 4 in base and 7 in head, page faults 0 in
// base and mostly 3 in head, and a constant 2 migrations on both sides.
func TestScenarioCountsThatChange(t *testing.T) {
	t.Parallel()
	g := analysis.NewSynth(3402, 0.005)
	base, head := g.Runs(analysis.BaseRev, 20, nil), g.Runs(analysis.HeadRev, 20, nil)
	count := func(runs []analysis.Run, unit string, v func(i int) float64) {
		for i := range runs {
			runs[i].Samples = append(runs[i].Samples, analysis.Sample{analysis.Key{analysis.ProveBench, "synthesis", unit}, v(i)})
		}
	}
	count(base, "allocs/op", func(int) float64 { return 4 })
	count(head, "allocs/op", func(int) float64 { return 7 })
	count(base, "page-faults/op", func(int) float64 { return 0 })
	count(head, "page-faults/op", func(i int) float64 { return float64(3 + i%3/2) })
	count(base, "cpu-migrations/op", func(int) float64 { return 2 })
	count(head, "cpu-migrations/op", func(int) float64 { return 2 })
	r := analysis.Compare(analysis.Input{Base: base, Head: head}, analysis.DefaultOptions())
	checkScenario(t, "counts", r)
	allocs, faults, migr := analysis.FindUnit(r, "synthesis", "allocs/op"), analysis.FindUnit(r, "synthesis", "page-faults/op"), analysis.FindUnit(r, "synthesis", "cpu-migrations/op")
	if allocs.Verdict != analysis.VerdictRegression || allocs.Change() != 75 || !allocs.Exact() || analysis.FormatChange(*allocs) != "+75.0%" {
		t.Errorf("allocs 4 → 7: %s %q, want a regression of exactly +75.0%%", allocs.Verdict, analysis.FormatChange(*allocs))
	}
	if faults.Verdict != analysis.VerdictRegression || !math.IsNaN(faults.Change()) || faults.Shift != 3 || !strings.HasPrefix(analysis.FormatChange(*faults), "+3") {
		t.Errorf("page faults 0 → 3: %s %q (shift %v), want a regression of +3 in the unit", faults.Verdict, analysis.FormatChange(*faults), faults.Shift)
	}
	if migr.Verdict != analysis.VerdictNoChange || analysis.FormatChange(*migr) != "0.0%" {
		t.Errorf("2 → 2 migrations: %s %q, want no change without an interval", migr.Verdict, analysis.FormatChange(*migr))
	}
}
