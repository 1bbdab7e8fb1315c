package analysis_test

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/analysis/render"
	"github.com/perfbot/perfbot/analysis/stats"
)

// A phase that is usually 0 and became non-zero in 19 of 48 runs rather
// than 4 of 48: most head/base pairs are 0 against 0, so the shift is 0,
// and the share of non-zero runs decides, in the row's verdict.
func TestZeroInflatedGrowthIsARegressionOfTheShareOfNonZeroRuns(t *testing.T) {
	t.Parallel()
	key := analysis.Key{Benchmark: "Prove", Phase: "retry", Unit: "sec/op"}
	rng := rand.New(rand.NewPCG(1, 2))
	vals := func(nonZero int) []float64 {
		v := make([]float64, 48)
		for i := range nonZero {
			v[i] = 0.002 + 0.001*rng.Float64()
		}
		rng.Shuffle(len(v), func(i, j int) { v[i], v[j] = v[j], v[i] })
		return v
	}
	r := analysis.Compare(analysis.Input{BaseRev: analysis.BaseRev, HeadRev: analysis.HeadRev, Base: analysis.SeriesRuns(analysis.BaseRev, key, vals(4)), Head: analysis.SeriesRuns(analysis.HeadRev, key, vals(19))}, analysis.DefaultOptions())
	row := analysis.Find(r, "retry")
	if row.Shift != 0 {
		t.Fatalf("shift %v: the fixture must be one the shift cannot see", row.Shift)
	}
	d := row.Distribution
	if row.Verdict != analysis.VerdictRegression || d == nil || d.Kind != analysis.ReasonNonZero || d.BaseNonZero != 4 || d.HeadNonZero != 19 || d.BaseN != 48 || d.HeadN != 48 {
		t.Fatalf("verdict %s (%s), distribution %+v; want a regression of the share of non-zero runs, 4 → 19 of 48", row.Verdict, row.Reason, d)
	}
	// Fisher's exact test of 4/48 against 19/48.
	if want := stats.FisherExact(4, 48, 19, 48); math.Abs(d.P-want) > 1e-12 || want > 0.001 || want < 0.0001 {
		t.Errorf("p %v, Fisher's exact %v", d.P, want)
	}
	if r.Verdict != analysis.VerdictRegression {
		t.Errorf("report verdict %s: the one series is the headline", r.Verdict)
	}
	var text strings.Builder
	if err := render.RenderText(&text, r); err != nil {
		t.Fatal(err)
	}
	if flat := unwrapped(text.String()); !strings.Contains(flat, "regression: non-zero in 19 of 48 runs (was 4 of 48)") ||
		!strings.Contains(flat, "A verdict that names a share of non-zero runs") {
		t.Errorf("the report does not say what changed:\n%s", text.String())
	}
	// The same share on both sides is not a change.
	same := analysis.Compare(analysis.Input{Base: analysis.SeriesRuns(analysis.BaseRev, key, vals(4)), Head: analysis.SeriesRuns(analysis.HeadRev, key, vals(5))}, analysis.DefaultOptions())
	if row := analysis.Find(same, "retry"); row.Distribution != nil || row.Changed() {
		t.Errorf("4 against 5 of 48: %s, %+v", row.Verdict, row.Distribution)
	}
}

// A count that sat at 79 and is 19 in 28 of 48 head runs: the head/base
// differences are −60 or 0, so the shift's interval at the look's level
// runs from −60 to 0 and cannot call it, while Mann-Whitney, which counts
// the ties, finds it. The report shows both medians and says
// the runs are multi-modal.
func TestBimodalCountShowsBothMediansWhenTheShiftIsZero(t *testing.T) {
	t.Parallel()
	key := analysis.Key{Benchmark: "Prove", Phase: "ntt", Unit: "allocs/op"}
	base := analysis.RepeatValues(48, func(int) bool { return false }, 19, 79)
	head := analysis.RepeatValues(48, func(i int) bool { return i%2 == 0 || i%12 == 1 }, 19, 79) // 28 of 48 at 19
	r := analysis.Compare(analysis.Input{Base: analysis.SeriesRuns(analysis.BaseRev, key, base), Head: analysis.SeriesRuns(analysis.HeadRev, key, head)}, analysis.DefaultOptions())
	row := analysis.FindUnit(r, "ntt", "allocs/op")
	d := row.Distribution
	if d == nil || d.Kind != analysis.ReasonModes || d.BaseMedian != 79 || d.HeadMedian != 19 || row.Verdict != analysis.VerdictImprovement {
		t.Fatalf("shift %v, verdict %s (%s), distribution %+v; want an improvement, medians 79 → 19, multi-modal", row.Shift, row.Verdict, row.Reason, d)
	}
	if got := render.RowVerdict(*row); got != "improvement: median 79.00 → 19.00, the runs are multi-modal" {
		t.Errorf("verdict cell %q", got)
	}
}

// A phase whose runs spread 13 times as widely at head, around the same
// centre: not settled, and the report says the spread changed rather
// than asking to quiet the machine.
func TestSpreadOnlyChangeIsNamedNotBlamedOnTheMachine(t *testing.T) {
	t.Parallel()
	key := analysis.Key{Benchmark: "Prove", Phase: "synthesis", Unit: "sec/op"}
	rng := rand.New(rand.NewPCG(3, 4))
	draw := func(sd float64) []float64 {
		v := make([]float64, 40)
		for i := range v {
			v[i] = 0.1 * (1 + sd*rng.NormFloat64())
		}
		return v
	}
	r := analysis.Compare(analysis.Input{Base: analysis.SeriesRuns(analysis.BaseRev, key, draw(0.004)), Head: analysis.SeriesRuns(analysis.HeadRev, key, draw(0.052))}, analysis.DefaultOptions())
	row := analysis.Find(r, "synthesis")
	if row.Verdict != analysis.VerdictInconclusive || row.Reason != analysis.ReasonSpread || !(row.SpreadRatio > 6 && row.SpreadRatio < 30) {
		t.Fatalf("verdict %s (%s), spread ×%v; want inconclusive with the spread ×13 or so named", row.Verdict, row.Reason, row.SpreadRatio)
	}
	if !analysis.HasWarning(r, "spread changed: synthesis (head's runs spread ×", "not the machine's") || analysis.HasWarning(r, "too noisy") {
		t.Errorf("warnings %q: want the spread named, not noise", r.Warnings)
	}
	if !strings.HasPrefix(render.RowVerdict(*row), "inconclusive: spread ×") {
		t.Errorf("verdict cell %q", render.RowVerdict(*row))
	}
}

// A phase that is 0 at base has no change in percent: the attribution
// table says "from 0" beside its change in seconds, never "n/a".
func TestAttributionOfAPhaseFromZeroSaysSo(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	runs := func(rev string, retry float64) []analysis.Run {
		out := make([]analysis.Run, 30)
		for i := range out {
			work := 0.100 * (1 + 0.01*rng.NormFloat64())
			r := retry * (1 + 0.01*rng.NormFloat64())
			out[i] = analysis.Run{Revision: rev, Status: analysis.StatusOK, Samples: []analysis.Sample{
				{analysis.Key{Benchmark: "Prove", Phase: "work", Unit: "sec/op"}, work},
				{analysis.Key{Benchmark: "Prove", Phase: "retry", Unit: "sec/op"}, r},
				{analysis.Key{Benchmark: "Prove", Phase: "total", Unit: "sec/op"}, work + r},
			}}
		}
		return out
	}
	r := analysis.Compare(analysis.Input{Base: runs("b", 0), Head: runs("h", 0.020)}, analysis.Options{})
	if len(r.Attribution) != 1 {
		t.Fatalf("%d attributions; want 1", len(r.Attribution))
	}
	var text, md strings.Builder
	if err := render.RenderText(&text, r); err != nil {
		t.Fatal(err)
	}
	if err := render.RenderMarkdown(&md, r, render.RenderContext{}); err != nil {
		t.Fatal(err)
	}
	view := render.NewView(r, render.Formatter{})
	var retry *render.ViewShare
	for i, p := range view.Attribution[0].Parts {
		if p.Phase == "retry" {
			retry = &view.Attribution[0].Parts[i]
		}
	}
	if retry == nil || retry.DeltaPct != "from 0" || !strings.HasPrefix(retry.Delta, "+19.9") && !strings.HasPrefix(retry.Delta, "+20.0") {
		t.Errorf("view's retry part %+v; want Δ +20ms (±0.1) and Δ%% from 0", retry)
	}
	for name, out := range map[string]string{"text": text.String(), "markdown": md.String()} {
		if !strings.Contains(out, "from 0") || strings.Contains(out, "n/a") {
			t.Errorf("%s attribution does not say the retry phase grew from 0, or says n/a:\n%s", name, out)
		}
	}
}
