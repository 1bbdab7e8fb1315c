package analysis

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/analysis/stats"
)

// seriesRuns returns one ok run per value, each carrying the value as
// key's sample.
func seriesRuns(rev string, key Key, values []float64) []Run {
	runs := make([]Run, len(values))
	for i, v := range values {
		runs[i] = Run{Revision: rev, Status: StatusOK, Samples: []Sample{{key, v}}}
	}
	return runs
}

// repeatValues returns n values: v where pick(i) and else w.
func repeatValues(n int, pick func(i int) bool, v, w float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = w
		if pick(i) {
			out[i] = v
		}
	}
	return out
}

// A phase that is usually 0 and became non-zero in 19 of 48 runs rather
// than 4 of 48: most head/base pairs are 0 against 0, so the shift is 0,
// and the share of non-zero runs decides, in the row's verdict.
func TestZeroInflatedGrowthIsARegressionOfTheShareOfNonZeroRuns(t *testing.T) {
	t.Parallel()
	key := Key{Benchmark: "Prove", Phase: "retry", Unit: "sec/op"}
	rng := rand.New(rand.NewPCG(1, 2))
	vals := func(nonZero int) []float64 {
		v := make([]float64, 48)
		for i := range nonZero {
			v[i] = 0.002 + 0.001*rng.Float64()
		}
		rng.Shuffle(len(v), func(i, j int) { v[i], v[j] = v[j], v[i] })
		return v
	}
	r := Compare(Input{BaseRev: baseRev, HeadRev: headRev, Base: seriesRuns(baseRev, key, vals(4)), Head: seriesRuns(headRev, key, vals(19))}, DefaultOptions())
	row := find(r, "retry")
	if row.Shift != 0 {
		t.Fatalf("shift %v: the fixture must be one the shift cannot see", row.Shift)
	}
	d := row.Distribution
	if row.Verdict != VerdictRegression || d == nil || d.Kind != ReasonNonZero || d.BaseNonZero != 4 || d.HeadNonZero != 19 || d.BaseN != 48 || d.HeadN != 48 {
		t.Fatalf("verdict %s (%s), distribution %+v; want a regression of the share of non-zero runs, 4 → 19 of 48", row.Verdict, row.Reason, d)
	}
	// Fisher's exact test of 4/48 against 19/48.
	if want := stats.FisherExact(4, 48, 19, 48); math.Abs(d.P-want) > 1e-12 || want > 0.001 || want < 0.0001 {
		t.Errorf("p %v, Fisher's exact %v", d.P, want)
	}
	if r.Verdict != VerdictRegression {
		t.Errorf("report verdict %s: the one series is the headline", r.Verdict)
	}
	var text strings.Builder
	if err := RenderText(&text, r); err != nil {
		t.Fatal(err)
	}
	if flat := unwrapped(text.String()); !strings.Contains(flat, "regression: non-zero in 19 of 48 runs (was 4 of 48)") ||
		!strings.Contains(flat, "A verdict that names a share of non-zero runs") {
		t.Errorf("the report does not say what changed:\n%s", text.String())
	}
	// The same share on both sides is not a change.
	same := Compare(Input{Base: seriesRuns(baseRev, key, vals(4)), Head: seriesRuns(headRev, key, vals(5))}, DefaultOptions())
	if row := find(same, "retry"); row.Distribution != nil || row.Changed() {
		t.Errorf("4 against 5 of 48: %s, %+v", row.Verdict, row.Distribution)
	}
}

// Fisher's exact test against values worked by hand: 1 of 4 against 3 of
// 4 has tables x = 0…4 with probabilities 1, 16, 36, 16, 1 over 70; the
// seen table (x = 1, 16/70) and every one no likelier sum to 34/70.
func TestFisherExact(t *testing.T) {
	if got := stats.FisherExact(1, 4, 3, 4); math.Abs(got-34.0/70) > 1e-12 {
		t.Errorf("fisherExact(1, 4, 3, 4) = %v, want 34/70", got)
	}
	if got := stats.FisherExact(2, 4, 2, 4); math.Abs(got-1) > 1e-9 {
		t.Errorf("equal shares: %v, want 1", got)
	}
	if got := stats.FisherExact(0, 5, 5, 5); math.Abs(got-2.0/252) > 1e-12 {
		t.Errorf("0 of 5 against 5 of 5: %v, want 2/C(10,5)", got)
	}
}

// A count that sat at 79 and is 19 in 28 of 48 head runs: the head/base
// differences are −60 or 0, so the shift's interval at the look's level
// runs from −60 to 0 and cannot call it, while Mann-Whitney, which counts
// the ties, finds it. The report shows both medians and says
// the runs are multi-modal.
func TestBimodalCountShowsBothMediansWhenTheShiftIsZero(t *testing.T) {
	t.Parallel()
	key := Key{Benchmark: "Prove", Phase: "ntt", Unit: "allocs/op"}
	base := repeatValues(48, func(int) bool { return false }, 19, 79)
	head := repeatValues(48, func(i int) bool { return i%2 == 0 || i%12 == 1 }, 19, 79) // 28 of 48 at 19
	r := Compare(Input{Base: seriesRuns(baseRev, key, base), Head: seriesRuns(headRev, key, head)}, DefaultOptions())
	row := findUnit(r, "ntt", "allocs/op")
	d := row.Distribution
	if d == nil || d.Kind != ReasonModes || d.BaseMedian != 79 || d.HeadMedian != 19 || row.Verdict != VerdictImprovement {
		t.Fatalf("shift %v, verdict %s (%s), distribution %+v; want an improvement, medians 79 → 19, multi-modal", row.Shift, row.Verdict, row.Reason, d)
	}
	if got := rowVerdict(*row); got != "improvement: median 79.00 → 19.00, the runs are multi-modal" {
		t.Errorf("verdict cell %q", got)
	}
}

// A phase whose runs spread 13 times as widely at head, around the same
// centre: not settled, and the report says the spread changed rather
// than asking to quiet the machine.
func TestSpreadOnlyChangeIsNamedNotBlamedOnTheMachine(t *testing.T) {
	t.Parallel()
	key := Key{Benchmark: "Prove", Phase: "synthesis", Unit: "sec/op"}
	rng := rand.New(rand.NewPCG(3, 4))
	draw := func(sd float64) []float64 {
		v := make([]float64, 40)
		for i := range v {
			v[i] = 0.1 * (1 + sd*rng.NormFloat64())
		}
		return v
	}
	r := Compare(Input{Base: seriesRuns(baseRev, key, draw(0.004)), Head: seriesRuns(headRev, key, draw(0.052))}, DefaultOptions())
	row := find(r, "synthesis")
	if row.Verdict != VerdictInconclusive || row.Reason != ReasonSpread || !(row.SpreadRatio > 6 && row.SpreadRatio < 30) {
		t.Fatalf("verdict %s (%s), spread ×%v; want inconclusive with the spread ×13 or so named", row.Verdict, row.Reason, row.SpreadRatio)
	}
	if !hasWarning(r, "spread changed: synthesis (head's runs spread ×", "not the machine's") || hasWarning(r, "too noisy") {
		t.Errorf("warnings %q: want the spread named, not noise", r.Warnings)
	}
	if !strings.HasPrefix(rowVerdict(*row), "inconclusive: spread ×") {
		t.Errorf("verdict cell %q", rowVerdict(*row))
	}
}

// A phase that is 0 at base has no change in percent: the attribution
// table says "from 0" beside its change in seconds, never "n/a".
func TestAttributionOfAPhaseFromZeroSaysSo(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	runs := func(rev string, retry float64) []Run {
		out := make([]Run, 30)
		for i := range out {
			work := 0.100 * (1 + 0.01*rng.NormFloat64())
			r := retry * (1 + 0.01*rng.NormFloat64())
			out[i] = Run{Revision: rev, Status: StatusOK, Samples: []Sample{
				{Key{Benchmark: "Prove", Phase: "work", Unit: "sec/op"}, work},
				{Key{Benchmark: "Prove", Phase: "retry", Unit: "sec/op"}, r},
				{Key{Benchmark: "Prove", Phase: "total", Unit: "sec/op"}, work + r},
			}}
		}
		return out
	}
	r := Compare(Input{Base: runs("b", 0), Head: runs("h", 0.020)}, Options{})
	if len(r.Attribution) != 1 {
		t.Fatalf("%d attributions; want 1", len(r.Attribution))
	}
	var text, md strings.Builder
	if err := RenderText(&text, r); err != nil {
		t.Fatal(err)
	}
	if err := RenderMarkdown(&md, r, RenderContext{}); err != nil {
		t.Fatal(err)
	}
	view := NewView(r, Formatter{})
	var retry *ViewShare
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
