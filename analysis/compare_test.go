package analysis

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/analysis/stats"
)

func TestComparePlantedRegressionInOnePhaseIsFoundAndAttributed(t *testing.T) {
	t.Parallel()
	g := NewSynth(1, 0.005)
	in := Input{
		BaseRev: BaseRev, HeadRev: HeadRev,
		Base: g.Runs(BaseRev, 20, nil),
		Head: g.Runs(HeadRev, 20, map[string]float64{"msm_h": 1.20}),
	}
	r := Compare(in, DefaultOptions())

	if r.Verdict != VerdictRegression {
		t.Fatalf("verdict = %s, want regression; warnings: %q", r.Verdict, r.Warnings)
	}
	msm := Find(r, "msm_h")
	if msm == nil || msm.Verdict != VerdictRegression {
		t.Fatalf("msm_h = %+v, want a regression", msm)
	}
	if math.Abs(msm.Change()-20) > 1 {
		t.Errorf("msm_h Δ = %.2f%%, want 20%% ± 1", msm.Change())
	}
	// 20 against 20 clearly separated runs: the exact U-test p is
	// 2/C(40,20) ≈ 1.45e-11, and Holm over 10 tests multiplies it by 10.
	if msm.PRaw > 1e-10 || msm.PValue != 10*msm.PRaw {
		t.Errorf("msm_h p_raw = %g, p = %g; want p_raw ≈ 1.45e-11 and p = 10·p_raw", msm.PRaw, msm.PValue)
	}
	if r.HolmFamily != 10 {
		t.Errorf("Holm family = %d, want 10 (9 phases and total)", r.HolmFamily)
	}
	for _, row := range r.Phases {
		switch row.Phase {
		case "msm_h", "total":
			continue
		}
		if row.Verdict != VerdictNoChange {
			t.Errorf("%s: verdict %s (%s), Δ %.2f%%, p %.3g; want no-change", row.Phase, row.Verdict, row.Reason, row.Change(), row.PValue)
		}
	}
	if total := Find(r, "total"); total.Verdict != VerdictRegression {
		t.Errorf("total: verdict %s, want regression (msm_h is a sixth of it)", total.Verdict)
	}
	if r.NeedMoreRuns() {
		t.Error("NeedMoreRuns = true, want false: every row is decided")
	}

	if len(r.Attribution) != 1 {
		t.Fatalf("got %d attributions, want 1", len(r.Attribution))
	}
	a := r.Attribution[0]
	if a.Phases[0].Phase != "msm_h" || math.Abs(a.Phases[0].SharePct-100) > 10 {
		t.Errorf("largest share: %s %.1f%%, want msm_h ≈ 100%%", a.Phases[0].Phase, a.Phases[0].SharePct)
	}
	if !slices.Equal(a.ExplainedBy, []string{"msm_h"}) {
		t.Errorf("explained by %q, want [msm_h]", a.ExplainedBy)
	}
	// 8 top-level phases; total itself and the sort step are left out.
	if len(a.Phases) != 8 {
		t.Errorf("attribution has %d phases, want 8", len(a.Phases))
	}
	for _, p := range a.Phases {
		if p.Phase == "msm_h/step=sort" || p.Phase == "total" {
			t.Errorf("attribution lists %s", p.Phase)
		}
	}
	sum := a.Unexplained
	for _, p := range a.Phases {
		if slices.Contains(a.ExplainedBy, p.Phase) {
			sum += p.Attributed
		}
	}
	if math.Abs(sum-a.Delta) > 1e-12 {
		t.Errorf("Σ Δ of the explaining phases + the rest = %g, want total Δ %g", sum, a.Delta)
	}
	if a.UnexplainedSharePct < 0 || a.UnexplainedSharePct > 100 || a.Phases[0].SharePct+a.UnexplainedSharePct > 100.0001 {
		t.Errorf("msm_h's share %.1f%% and the rest's %.1f%%: want both in [0, 100]%% and adding up to at most 100%%", a.Phases[0].SharePct, a.UnexplainedSharePct)
	}
	for _, p := range a.Phases[1:] {
		if stats.Finite(p.SharePct) {
			t.Errorf("%s (%s) has a share %.1f%%: only a phase that changed significantly gets one", p.Phase, p.Verdict, p.SharePct)
		}
	}
	for i := 1; i < len(a.Phases); i++ {
		if math.Abs(a.Phases[i].Delta) > math.Abs(a.Phases[i-1].Delta) {
			t.Errorf("attribution not sorted by |Δ|: %s before %s", a.Phases[i-1].Phase, a.Phases[i].Phase)
		}
	}
}

func TestCompareSameDistributionIsNoChange(t *testing.T) {
	t.Parallel()
	for seed := uint64(1); seed <= 5; seed++ {
		g := NewSynth(100+seed, 0.005)
		r := Compare(Input{BaseRev: BaseRev, HeadRev: HeadRev, Base: g.Runs(BaseRev, 20, nil), Head: g.Runs(HeadRev, 20, nil)}, DefaultOptions())
		if r.Verdict != VerdictNoChange {
			for _, row := range r.Phases {
				t.Logf("%s: %s %s Δ=%.2f%% p=%.3g", row.Key, row.Verdict, row.Reason, row.Change(), row.PValue)
			}
			t.Errorf("seed %d: verdict %s, want no-change", seed, r.Verdict)
		}
		for _, row := range r.Phases {
			if row.Verdict != VerdictNoChange {
				t.Errorf("seed %d: %s is %s", seed, row.Key, row.Verdict)
			}
		}
	}
}

func TestCompareTooFewRunsIsInconclusiveEvenForALargeChange(t *testing.T) {
	t.Parallel()
	g := NewSynth(2, 0.005)
	r := Compare(Input{
		Base: g.Runs(BaseRev, 5, nil),
		Head: g.Runs(HeadRev, 5, map[string]float64{"msm_h": 1.5}),
	}, DefaultOptions())
	if r.Verdict != VerdictInconclusive {
		t.Fatalf("verdict %s, want inconclusive", r.Verdict)
	}
	for _, row := range r.Phases {
		if row.Verdict != VerdictInconclusive || row.Reason != ReasonTooFewRuns {
			t.Errorf("%s: %s (%s), want inconclusive (too few runs)", row.Key, row.Verdict, row.Reason)
		}
	}
	if !r.NeedMoreRuns() {
		t.Error("NeedMoreRuns = false, want true")
	}
	if r.HolmFamily != 0 {
		t.Errorf("Holm family = %d, want 0: rows with too few runs are not tested", r.HolmFamily)
	}
	// Revisions come from the runs when the input names none.
	if r.Base != BaseRev || r.Head != HeadRev {
		t.Errorf("revisions %s..%s, want them from the runs", r.Base, r.Head)
	}
	if !HasWarning(r, "too few runs", "synthesis (base 5, head 5)", "and 4 more", "needs 6 ok runs") {
		t.Errorf("no too-few-runs warning in %q", r.Warnings)
	}
}

func TestCompareThroughputUnitGoingUpIsAnImprovement(t *testing.T) {
	t.Parallel()
	g := NewSynth(3, 0.005)
	mk := func(rev string, n int, rate float64) []Run {
		runs := make([]Run, n)
		for i := range runs {
			runs[i] = Run{Revision: rev, Status: StatusOK, Samples: []Sample{
				{Key{"Synthesize/constraints=65536", "", "constraints/s"}, rate * g.jitter()},
				{Key{"Synthesize/constraints=65536", "", "sec/op"}, 65536 / rate * g.jitter()},
			}}
		}
		return runs
	}
	opts := Options{PrimaryUnits: []string{"constraints/s"}}
	up := Compare(Input{Base: mk(BaseRev, 10, 80000), Head: mk(HeadRev, 10, 88000)}, opts)
	if up.Verdict != VerdictImprovement {
		t.Errorf("constraints/s +10%%: verdict %s, want improvement", up.Verdict)
	}
	if row := FindUnit(up, "", "constraints/s"); row.Better != "higher" || row.Verdict != VerdictImprovement {
		t.Errorf("constraints/s row: better %s, verdict %s", row.Better, row.Verdict)
	}
	// sec/op went down: also an improvement, though it does not decide.
	if row := FindUnit(up, "", "sec/op"); row.Primary || row.Better != "lower" || row.Verdict != VerdictImprovement {
		t.Errorf("sec/op row: primary %v, better %s, verdict %s; want a non-primary improvement", row.Primary, row.Better, row.Verdict)
	}
	down := Compare(Input{Base: mk(BaseRev, 10, 80000), Head: mk(HeadRev, 10, 72000)}, opts)
	if down.Verdict != VerdictRegression {
		t.Errorf("constraints/s −10%%: verdict %s, want regression", down.Verdict)
	}
}

func TestCompareFailedRunsAreCountedAndNeverARegression(t *testing.T) {
	t.Parallel()
	g := NewSynth(4, 0.005)
	head := g.Runs(HeadRev, 16, nil)
	crash := "exit status 2\npanic: runtime error: index out of range [3] with length 3"
	head = append(head, failed(HeadRev, 3, StatusCrashed, crash)...)
	head = append(head, failed(HeadRev, 1, StatusTimedOut, "killed after 10m0s")...)
	// A crashed run may still have printed lines before it died, and
	// they may be wild: they must not count.
	wild := g.run(HeadRev, map[string]float64{"msm_h": 3})
	wild.Status, wild.Detail = StatusCrashed, crash
	head = append(head, wild)

	r := Compare(Input{BaseRev: BaseRev, HeadRev: HeadRev, Base: g.Runs(BaseRev, 20, nil), Head: head}, DefaultOptions())
	if r.Verdict != VerdictNoChange {
		t.Errorf("verdict %s, want no-change", r.Verdict)
	}
	want := SideRuns{Total: 21, OK: 16, Failed: map[Status]int{StatusCrashed: 4, StatusTimedOut: 1}}
	if got := r.Runs.Head; got.Total != want.Total || got.OK != want.OK || got.Failed[StatusCrashed] != 4 || got.Failed[StatusTimedOut] != 1 || len(got.Failed) != 2 {
		t.Errorf("head runs = %+v, want %+v", got, want)
	}
	if r.Runs.Base.Failed != nil || r.Runs.Base.OK != 20 {
		t.Errorf("base runs = %+v, want 20 ok", r.Runs.Base)
	}
	wantFailures := []Failure{
		{Side: "head", Status: StatusCrashed, Detail: crash, Count: 4},
		{Side: "head", Status: StatusTimedOut, Detail: "killed after 10m0s", Count: 1},
	}
	if !slices.Equal(r.Failures, wantFailures) {
		t.Errorf("failures = %+v, want %+v", r.Failures, wantFailures)
	}
	if !HasWarning(r, "5 of head's 21 runs failed", "crashed: 4, timed-out: 1", "never counted as a regression") {
		t.Errorf("no failed-runs warning in %q", r.Warnings)
	}
	if row := Find(r, "msm_h"); row.Head.N != 16 {
		t.Errorf("msm_h head n = %d, want 16 (ok runs only)", row.Head.N)
	}
}

func TestCompareRowsShortOfRunsBecauseRunsFailedSayWhy(t *testing.T) {
	t.Parallel()
	g := NewSynth(5, 0.005)
	head := append(g.Runs(HeadRev, 4, nil), failed(HeadRev, 4, StatusCrashed, "signal: killed")...)
	r := Compare(Input{Base: g.Runs(BaseRev, 8, nil), Head: head}, DefaultOptions())
	if r.Verdict != VerdictInconclusive {
		t.Errorf("verdict %s, want inconclusive", r.Verdict)
	}
	for _, row := range r.Phases {
		if row.Verdict != VerdictInconclusive || row.Reason != ReasonRunsFailed {
			t.Errorf("%s: %s (%s), want inconclusive (runs failed)", row.Key, row.Verdict, row.Reason)
		}
	}
	if r.NeedMoreRuns() {
		t.Error("NeedMoreRuns = true; more runs do not fix a crash")
	}
}

func TestCompareSideWithoutOkRunIsAnError(t *testing.T) {
	t.Parallel()
	g := NewSynth(6, 0.005)
	r := Compare(Input{
		BaseRev: BaseRev, HeadRev: HeadRev,
		Base: g.Runs(BaseRev, 10, nil),
		Head: append(failed(HeadRev, 1, StatusBuildFailed, "undefined: foo"), failed(HeadRev, 2, StatusCrashed, "")...),
	}, DefaultOptions())
	if r.Verdict != VerdictError {
		t.Fatalf("verdict %s, want error", r.Verdict)
	}
	if len(r.Phases) != 0 || len(r.Attribution) != 0 || r.NeedMoreRuns() {
		t.Errorf("an error report has %d rows, %d attributions, NeedMoreRuns %v", len(r.Phases), len(r.Attribution), r.NeedMoreRuns())
	}
	if !HasWarning(r, "every head run failed (build-failed: 1, crashed: 2)") {
		t.Errorf("warnings %q do not say every head run failed", r.Warnings)
	}
	if r.Runs.Head.OK != 0 || r.Runs.Head.Total != 3 {
		t.Errorf("head runs %+v", r.Runs.Head)
	}

	noRuns := Compare(Input{Base: g.Runs(BaseRev, 10, nil)}, DefaultOptions())
	if noRuns.Verdict != VerdictError || !HasWarning(noRuns, "head has no runs") {
		t.Errorf("no head runs: verdict %s, warnings %q", noRuns.Verdict, noRuns.Warnings)
	}
	noOutput := Compare(Input{Base: g.Runs(BaseRev, 10, nil), Head: []Run{{Revision: HeadRev, Status: StatusOK}}}, DefaultOptions())
	if noOutput.Verdict != VerdictError {
		t.Errorf("ok head runs without samples: verdict %s, want error", noOutput.Verdict)
	}
}

func TestCompareSignificantChangeBelowLearnedFloorIsNoChange(t *testing.T) {
	t.Parallel()
	g := NewSynth(8, 0.002)
	base := g.Runs(BaseRev, 20, nil)
	head := g.Runs(HeadRev, 20, map[string]float64{"ntt": 1.03})
	// ntt's history alternates 100, 105: |Δ%| of 5% and 4.76%, so its
	// floor is far above 3%.
	var hist []float64
	for i := range 21 {
		hist = append(hist, 100+5*float64(i%2))
	}
	k := Key{ProveBench, "ntt", "sec/op"}
	r := Compare(Input{Base: base, Head: head, History: History{k: hist}}, DefaultOptions())
	row := Find(r, "ntt")
	if row.PValue >= 0.05 {
		t.Fatalf("ntt +3%% with 0.2%% noise: p = %g, want significant", row.PValue)
	}
	if row.Verdict != VerdictNoChange || row.Reason != ReasonBelowFloor || row.Floor.Source != FloorFromHistory || row.Floor.Pct < 5 {
		t.Errorf("ntt: %s (%s), floor %+v; want no-change below a learned floor ≥ 5%%", row.Verdict, row.Reason, row.Floor)
	}
	if !HasWarning(r, "noisy in history", "ntt (") {
		t.Errorf("no noisy-history warning in %q", r.Warnings)
	}
	if !HasWarning(r, "history too short", "needs 10 consecutive baseline pairs") {
		t.Errorf("no short-history warning for the other phases in %q", r.Warnings)
	}
	// Without history the same change is a regression.
	r = Compare(Input{Base: base, Head: head}, DefaultOptions())
	if row := Find(r, "ntt"); row.Verdict != VerdictRegression || row.Floor.Source != FloorMinimum {
		t.Errorf("ntt without history: %s, floor %+v; want a regression over the 1%% minimum", row.Verdict, row.Floor)
	}
	if !HasWarning(r, "no baseline history yet") {
		t.Errorf("no missing-history warning in %q", r.Warnings)
	}
}

func TestCompareTakesEachRunsMedianOnce(t *testing.T) {
	t.Parallel()
	k := Key{"Decode", "", "sec/op"}
	// A run with -count=3 reports three values; an outlier among them
	// must not move the run's value, and the run counts once.
	mk := func(rev string, vals ...[]float64) []Run {
		var runs []Run
		for _, vs := range vals {
			run := Run{Revision: rev, Status: StatusOK}
			for _, v := range vs {
				run.Samples = append(run.Samples, Sample{k, v})
			}
			runs = append(runs, run)
		}
		return runs
	}
	base := mk(BaseRev, []float64{1, 2, 100}, []float64{2}, []float64{2, 2}, []float64{3, 1, 2}, []float64{2}, []float64{2})
	head := mk(HeadRev, []float64{2}, []float64{2}, []float64{2}, []float64{2}, []float64{2}, []float64{2, 2, 2, 2, 2, 2})
	r := Compare(Input{Base: base, Head: head}, DefaultOptions())
	row := r.Phases[0]
	if row.Base.N != 6 || row.Head.N != 6 || row.Base.Median != 2 || row.Base.Hi != 2 {
		t.Errorf("base %+v head %+v; want 6 runs each, every run's value 2", row.Base, row.Head)
	}
}

func TestCompareDriftWithinASideIsWarned(t *testing.T) {
	t.Parallel()
	g := NewSynth(9, 0.002)
	base := g.Runs(BaseRev, 20, nil)
	head := g.Runs(HeadRev, 20, nil)
	// Base heats up: its second half of runs is 5% slower in msm_a.
	for i := 10; i < 20; i++ {
		for j := range base[i].Samples {
			if base[i].Samples[j].Phase == "msm_a" {
				base[i].Samples[j].Value *= 1.05
			}
		}
	}
	// Head cools down: its second half is 5% faster in msm_b2. (The sign
	// also proves the check sees the runs in order, not sorted.)
	for i := 10; i < 20; i++ {
		for j := range head[i].Samples {
			if head[i].Samples[j].Phase == "msm_b2" {
				head[i].Samples[j].Value *= 0.95
			}
		}
	}
	r := Compare(Input{Base: base, Head: head}, DefaultOptions())
	// One warning for the comparison, naming each series and side.
	if !HasWarning(r, "the machine drifted", "msm_a +4.9% (base)", "msm_b2 -5.") {
		t.Errorf("no drift warning naming msm_a (base) and msm_b2 (head) in %q", r.Warnings)
	}
	if n := strings.Count(strings.Join(r.Warnings, "\n"), "drifted"); n != 1 {
		t.Errorf("%d drift warnings, want 1: %q", n, r.Warnings)
	}
}

func TestCompareWarnsAboutDifferentEnvironmentsAndOneSidedSeries(t *testing.T) {
	t.Parallel()
	g := NewSynth(10, 0.005)
	head := g.Runs(HeadRev, 10, nil)
	for i := range head {
		head[i].Samples = append(head[i].Samples, Sample{Key{ProveBench, "msm_h/step=scatter", "sec/op"}, 0.05})
	}
	r := Compare(Input{
		BaseRev: BaseRev, HeadRev: HeadRev,
		Base:    g.Runs(BaseRev, 10, nil),
		Head:    head,
		BaseEnv: Env{"cpu": "AMD EPYC 9654", "gpu": "NVIDIA H200", "go": "go1.26.8"},
		HeadEnv: Env{"cpu": "AMD EPYC 9654", "gpu": "NVIDIA H100", "kernel": "6.8"},
	}, DefaultOptions())
	if !slices.Equal(r.EnvDiffers, []string{"go", "gpu", "kernel"}) {
		t.Errorf("env differs in %q, want go, gpu, kernel", r.EnvDiffers)
	}
	if !HasWarning(r, "different environments", `gpu (base "NVIDIA H200", head "NVIDIA H100")`, "go (base \"go1.26.8\", head unset)") {
		t.Errorf("no environment warning in %q", r.Warnings)
	}
	if len(r.OnlyHead) != 1 || r.OnlyHead[0].Phase != "msm_h/step=scatter" || len(r.OnlyBase) != 0 {
		t.Errorf("only head %v, only base %v", r.OnlyHead, r.OnlyBase)
	}
	if !HasWarning(r, "only in head (new, not compared): msm_h/step=scatter sec/op") {
		t.Errorf("no one-sided warning in %q", r.Warnings)
	}

	same := Compare(Input{BaseRev: BaseRev, HeadRev: BaseRev, Base: g.Runs(BaseRev, 10, nil), Head: g.Runs(HeadRev, 10, nil)}, DefaultOptions())
	if !HasWarning(same, "same revision") || !HasWarning(same, "10 ok head runs report a revision other than 1111111") {
		t.Errorf("warnings %q miss the same-revision or wrong-revision warning", same.Warnings)
	}
}

func TestCompareDropsNonFiniteValues(t *testing.T) {
	t.Parallel()
	g := NewSynth(11, 0.005)
	base := g.Runs(BaseRev, 10, nil)
	base[0].Samples[0].Value = math.NaN()
	base[1].Samples[0].Value = math.Inf(1)
	r := Compare(Input{Base: base, Head: g.Runs(HeadRev, 10, nil)}, DefaultOptions())
	if row := Find(r, base[0].Samples[0].Phase); row.Base.N != 8 {
		t.Errorf("base n = %d, want 8 after dropping NaN and +Inf", row.Base.N)
	}
	if !HasWarning(r, "base: dropped 2 values that were NaN or infinite") || !HasWarning(r, "measured by only some ok runs", "(8 of 10 base runs)") {
		t.Errorf("warnings %q", r.Warnings)
	}
}

func TestCompareOrdersPrimaryRowsFirstInPrintedOrder(t *testing.T) {
	t.Parallel()
	g := NewSynth(12, 0.005)
	g.Instructions = true
	r := Compare(Input{Base: g.Runs(BaseRev, 6, nil), Head: g.Runs(HeadRev, 6, nil)}, DefaultOptions())
	var got []string
	for _, row := range r.Phases {
		got = append(got, row.Phase+" "+row.Unit)
	}
	want := "synthesis sec/op, ntt sec/op, msm_a sec/op, msm_b1 sec/op, msm_b2 sec/op, msm_l sec/op, msm_h sec/op, msm_h/step=sort sec/op, assemble sec/op, total sec/op, synthesis instructions/op, msm_h instructions/op"
	if strings.Join(got, ", ") != want {
		t.Errorf("rows:\n%s\nwant\n%s", strings.Join(got, ", "), want)
	}
}

func TestNeedMoreRunsOnlyForRunsOrNoise(t *testing.T) {
	t.Parallel()
	mk := func(verdict Verdict, reason string, primary bool) *Report {
		return &Report{Verdict: VerdictInconclusive, Phases: []Row{{Primary: primary, Verdict: verdict, Reason: reason}}}
	}
	cases := []struct {
		r    *Report
		want bool
	}{
		{mk(VerdictInconclusive, ReasonTooFewRuns, true), true},
		{mk(VerdictInconclusive, ReasonTooNoisy, true), true},
		{mk(VerdictInconclusive, ReasonRunsFailed, true), false},
		{mk(VerdictInconclusive, ReasonTooNoisy, false), false},
		{mk(VerdictNoChange, ReasonWithinFloor, true), false},
		{mk(VerdictInconclusive, ReasonUnconfirmed, true), true},
		{&Report{Verdict: VerdictError}, false},
		// A change found ends the comparison, though another row is unsettled.
		{&Report{Verdict: VerdictRegression, Phases: []Row{{Primary: true, Verdict: VerdictRegression},
			{Primary: true, Verdict: VerdictInconclusive, Reason: ReasonTooNoisy}}}, false},
	}
	for i, c := range cases {
		if got := c.r.NeedMoreRuns(); got != c.want {
			t.Errorf("case %d: NeedMoreRuns = %v, want %v", i, got, c.want)
		}
	}
}

func TestOptionsZeroFieldsTakeDefaultsAndValidate(t *testing.T) {
	t.Parallel()
	got := Options{}.withDefaults()
	want := DefaultOptions()
	if got.Alpha != want.Alpha || got.Confidence != want.Confidence || got.MinChangePct != want.MinChangePct ||
		got.MinHistory != want.MinHistory || got.MinRuns != want.MinRuns || !slices.Equal(got.PrimaryUnits, want.PrimaryUnits) {
		t.Errorf("Options{} with defaults = %+v, want %+v", got, want)
	}
	if err := DefaultOptions().Validate(); err != nil {
		t.Errorf("defaults do not validate: %v", err)
	}
	err := Options{Alpha: 1.5, MinRuns: 3}.Validate()
	if err == nil || !strings.Contains(err.Error(), "alpha 1.5") || !strings.Contains(err.Error(), "min runs 3") {
		t.Errorf("Validate = %v, want errors for alpha and min runs", err)
	}
}

// withGPU returns runs with GPU telemetry samples of benchmark added to
// each: the i-th run's mean SM clock is clocks[i] and its throttled
// fraction fractions[i].
func withGPU(runs []Run, benchmark string, clocks, fractions []float64) []Run {
	return withProcess(runs, benchmark, []string{GPUSMClockMeanUnit, GPUThrottledFractionUnit}, clocks, fractions)
}

// withProcess returns runs with process samples of benchmark added: the
// i-th run gets values[j][i] in units[j].
func withProcess(runs []Run, benchmark string, units []string, values ...[]float64) []Run {
	out := make([]Run, len(runs))
	for i, run := range runs {
		run.Samples = slices.Clone(run.Samples)
		for j, unit := range units {
			run.Samples = append(run.Samples, Sample{Key{benchmark, "", unit}, values[j][i]})
		}
		out[i] = run
	}
	return out
}

func TestCompareWarnsAboutGPUThrottlingAndClockDifferences(t *testing.T) {
	t.Parallel()
	g := NewSynth(14, 0.005)
	baseClocks := []float64{1980, 1975, 1985, 1980, 1978, 1982, 1980, 1990, 1970, 1980}
	headClocks := []float64{1755, 1750, 1760, 1755, 1755, 1740, 1770, 1755, 1752, 1758}
	base := withGPU(g.Runs(BaseRev, 10, nil), "process", baseClocks, []float64{0, 0, 0.25, 0, 0, 0.4, 0, 0.1, 0, 0})
	head := withGPU(g.Runs(HeadRev, 10, nil), "process", headClocks, make([]float64, 10))
	// A failed run's samples never count, throttled or not.
	crashed := withGPU(failed(BaseRev, 1, StatusCrashed, "exit status 1"), "process", []float64{1000}, []float64{1})
	base = append(base, crashed...)
	r := Compare(Input{BaseRev: BaseRev, HeadRev: HeadRev, Base: base, Head: head}, DefaultOptions())

	want := "GPU throttled during 3 of 10 runs (base), in up to 40.0% of a run's readings: timings on that side may be slowed by power or thermal limits"
	if !slices.Contains(r.Warnings, want) {
		t.Errorf("warnings %q lack %q", r.Warnings, want)
	}
	if HasWarning(r, "(head)") {
		t.Errorf("a throttling warning for head, which never throttled: %q", r.Warnings)
	}
	want = "base ran at a median SM clock of 1980 MHz, head at 1755 MHz: a clock difference this large can explain a change in GPU phases"
	if !slices.Contains(r.Warnings, want) {
		t.Errorf("warnings %q lack %q", r.Warnings, want)
	}

	// Several GPUs: a run counts once however many of its GPUs throttled,
	// and each GPU's clocks are compared with its own.
	g = NewSynth(15, 0.005)
	base = g.Runs(BaseRev, 8, nil)
	head = g.Runs(HeadRev, 8, nil)
	same := []float64{1980, 1980, 1980, 1980, 1980, 1980, 1980, 1980}
	none := make([]float64, 8)
	base = withGPU(withGPU(base, "process/gpu=0", same, none), "process/gpu=1", same, none)
	head = withGPU(head, "process/gpu=0", same, []float64{0, 0.5, 0, 0, 0, 0, 0, 0.2})
	head = withGPU(head, "process/gpu=1", []float64{1900, 1900, 1900, 1900, 1850, 1900, 1900, 1900}, []float64{0, 0.6, 0, 0, 0, 0, 0, 0})
	r = Compare(Input{BaseRev: BaseRev, HeadRev: HeadRev, Base: base, Head: head}, DefaultOptions())
	for _, want := range []string{
		"GPU throttled during 2 of 8 runs (head), in up to 60.0% of a run's readings: timings on that side may be slowed by power or thermal limits",
		"process/gpu=1: base ran at a median SM clock of 1980 MHz, head at 1900 MHz: a clock difference this large can explain a change in GPU phases",
	} {
		if !slices.Contains(r.Warnings, want) {
			t.Errorf("warnings %q lack %q", r.Warnings, want)
		}
	}
	if n := strings.Count(strings.Join(r.Warnings, "\n"), "SM clock"); n != 1 {
		t.Errorf("%d clock warnings, want 1 (gpu=1 only): %q", n, r.Warnings)
	}
	if HasWarning(r, "(base)") {
		t.Errorf("a throttling warning for base, which never throttled: %q", r.Warnings)
	}
}

func TestCompareIsQuietAboutGPUsThatAgreeAndNeverThrottled(t *testing.T) {
	t.Parallel()
	g := NewSynth(16, 0.005)
	// 1930 is 2.5% below 1980: within the 3% that clocks may differ.
	base := withGPU(g.Runs(BaseRev, 10, nil), "process", slices.Repeat([]float64{1980}, 10), make([]float64, 10))
	head := withGPU(g.Runs(HeadRev, 10, nil), "process", slices.Repeat([]float64{1930}, 10), make([]float64, 10))
	r := Compare(Input{BaseRev: BaseRev, HeadRev: HeadRev, Base: base, Head: head}, DefaultOptions())
	if HasWarning(r, "GPU throttled") || HasWarning(r, "SM clock") {
		t.Errorf("GPU warnings %q for clocks within 3%% and no throttling", r.Warnings)
	}
	if row := FindUnit(r, "", GPUSMClockMeanUnit); row == nil || row.Base.Median != 1980 || row.Head.Median != 1930 {
		t.Errorf("SM clock row %+v: the telemetry is still compared", row)
	}

	// 1920 is 3.03% below: warned.
	head = withGPU(g.Runs(HeadRev, 10, nil), "process", slices.Repeat([]float64{1920}, 10), make([]float64, 10))
	r = Compare(Input{BaseRev: BaseRev, HeadRev: HeadRev, Base: base, Head: head}, DefaultOptions())
	if !HasWarning(r, "base ran at a median SM clock of 1980 MHz, head at 1920 MHz") {
		t.Errorf("no clock warning for a 3.03%% difference in %q", r.Warnings)
	}
}

// At a strict α a few runs cannot make any change significant (nor rule
// one out: the interval at that level is unbounded): six runs
// a side give Mann-Whitney a smallest p of 2/C(12, 6) = 0.0022, above
// α/10 = 0.001 for nine phases and total at α 0.01. A 50% slowdown must then read
// inconclusive with a warning that says so and how many runs it takes
// (seven: 2/C(14, 7) = 0.00058), not an MDE that silently is missing; at
// α 0.05 (0.005 a row) the same runs find it and nothing is warned.
func TestCompareWarnsWhenNoChangeCouldBeCalled(t *testing.T) {
	t.Parallel()
	g := NewSynth(7, 0.005)
	in := Input{Base: g.Runs(BaseRev, 6, nil), Head: g.Runs(HeadRev, 6, map[string]float64{"msm_h": 1.5})}
	strict := DefaultOptions()
	strict.Alpha = 0.01
	r := Compare(in, strict)
	if r.HolmFamily != 10 {
		t.Fatalf("Holm family %d, want the 9 phases and total", r.HolmFamily)
	}
	for _, row := range r.Phases {
		if row.Phase == "msm_h" && row.Unit == "sec/op" && (row.Verdict != VerdictInconclusive || stats.Finite(row.MDEPct)) {
			t.Errorf("msm_h at α 0.01: %s, MDE %v; want inconclusive with no MDE", row.Verdict, row.MDEPct)
		}
	}
	if !HasWarning(r, "no change of any size could be called in", "synthesis (base 6, head 6 runs)", "above the 0.001 a change needed", "α 0.01", "it takes 7 runs a side") {
		t.Errorf("no warning that 6 runs cannot reach α 0.01's threshold in %q", r.Warnings)
	}
	r = Compare(in, DefaultOptions())
	if r.Verdict != VerdictRegression || HasWarning(r, "no change of any size") {
		t.Errorf("at α 0.05: verdict %s, warnings %q; want the regression and no blindness warning", r.Verdict, r.Warnings)
	}
	if got := stats.SmallestUP(6, 6); math.Abs(got-2.0/924) > 1e-12 {
		t.Errorf("smallestUP(6, 6) = %v, want 2/924", got)
	}
}

// withEnergy adds GPU energy and utilization samples of benchmark to
// every run: energy[i] joules at util[i] percent busy.
func withEnergy(runs []Run, benchmark string, energy, util []float64) []Run {
	return withProcess(runs, benchmark, []string{GPUEnergyUnit, GPUUtilMeanUnit}, energy, util)
}

// A CPU-backend benchmark on a GPU host: head's runs are longer, so the
// idle GPU draws +20% energy a run. The row stays a regression (it is
// real), and a warning says that it is the run's length, not GPU work;
// once the GPU does work on a side, nothing is warned.
func TestCompareWarnsThatAnIdleGPUsEnergyFollowsTheRunsLength(t *testing.T) {
	t.Parallel()
	g := NewSynth(17, 0.005)
	energy := func(level float64) []float64 {
		out := make([]float64, 12)
		for i := range out {
			out[i] = level * (1 + 0.002*float64(i%3))
		}
		return out
	}
	idle := make([]float64, 12)
	idle[4] = 0.5 // a reading or two while the driver wakes
	base := withEnergy(g.Runs(BaseRev, 12, nil), "process", energy(100), idle)
	head := withEnergy(g.Runs(HeadRev, 12, map[string]float64{"synthesis": 1.2}), "process", energy(120), idle)
	r := Compare(Input{BaseRev: BaseRev, HeadRev: HeadRev, Base: base, Head: head}, DefaultOptions())
	row := FindUnit(r, "", GPUEnergyUnit)
	if row == nil || row.Verdict != VerdictRegression {
		t.Fatalf("energy row %+v; want a regression", row)
	}
	if !HasWarning(r, "GPU energy per run +20.0% while the GPU was idle", "utilization at most 1%", "follows the run's length, not GPU work") {
		t.Errorf("no idle-GPU warning for the energy row in %q", r.Warnings)
	}

	busy := slices.Clone(idle)
	busy[7] = 35
	head = withEnergy(g.Runs(HeadRev, 12, map[string]float64{"synthesis": 1.2}), "process", energy(120), busy)
	r = Compare(Input{BaseRev: BaseRev, HeadRev: HeadRev, Base: base, Head: head}, DefaultOptions())
	if row := FindUnit(r, "", GPUEnergyUnit); row == nil || row.Verdict != VerdictRegression {
		t.Fatalf("energy row %+v with a busy head run; want a regression still", row)
	}
	if HasWarning(r, "while the GPU was idle") {
		t.Errorf("an idle-GPU warning although a head run kept the GPU 35%% busy: %q", r.Warnings)
	}
}

func TestTelemetryOfNamesTheCommandAndTheDevice(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"process":                           "",
		"process/gpu=1":                     " (gpu=1)",
		"process/benchmark=prove":           " of prove",
		"process/benchmark=prove-gpu/gpu=0": " of prove-gpu (gpu=0)",
	} {
		if got := telemetryOf(in); got != want {
			t.Errorf("telemetryOf(%q) = %q, want %q", in, got, want)
		}
	}
}
