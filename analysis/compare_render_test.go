package analysis_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/analysis/internal/fmtx"
	"github.com/perfbot/perfbot/analysis/render"
)

func TestCompareWideIntervalsAreTooNoisy(t *testing.T) {
	t.Parallel()
	g := analysis.NewSynth(7, 0.08) // 8% noise, as on the 2-core machine
	r := analysis.Compare(analysis.Input{Base: g.Runs(analysis.BaseRev, 6, nil), Head: g.Runs(analysis.HeadRev, 6, nil)}, analysis.DefaultOptions())
	row := analysis.Find(r, "synthesis")
	if row.Verdict != analysis.VerdictInconclusive || row.Reason != analysis.ReasonTooNoisy {
		t.Fatalf("synthesis: %s (%s), CI %s / %s; want inconclusive (too noisy)", row.Verdict, row.Reason, render.FormatCI(row.Base), render.FormatCI(row.Head))
	}
	if !(row.DeltaLoPct < row.Floor.Pct && row.DeltaHiPct > -row.Floor.Pct) || (row.DeltaLoPct >= -row.Floor.Pct && row.DeltaHiPct <= row.Floor.Pct) {
		t.Errorf("too noisy, but the change's interval [%v, %v] does not straddle the %v%% floor", row.DeltaLoPct, row.DeltaHiPct, row.Floor.Pct)
	}
	if !(row.MDEPct > row.Floor.Pct) {
		t.Errorf("too noisy with an MDE of %v%%, not above the %v%% floor", row.MDEPct, row.Floor.Pct)
	}
	if !r.NeedMoreRuns() || r.Verdict != analysis.VerdictInconclusive {
		t.Errorf("verdict %s, NeedMoreRuns %v; want inconclusive and true", r.Verdict, r.NeedMoreRuns())
	}
	if !analysis.HasWarning(r, "too noisy", "synthesis ("+fmtx.FormatPct(row.Change())+" [") {
		t.Errorf("no too-noisy warning in %q", r.Warnings)
	}
}

func TestCompareLeavesItsInputUntouched(t *testing.T) {
	t.Parallel()
	// benchmath.NewSample sorts its slice in place; Compare must sort
	// copies.
	in := analysis.GoldenInput()
	before := fmt.Sprintf("%v", in) // fmt prints maps sorted by key
	analysis.Compare(in, analysis.DefaultOptions())
	if after := fmt.Sprintf("%v", in); after != before {
		t.Error("Compare modified its input")
	}
}

// A change that made one phase faster and another slower is judged by
// its headline series, total: no slower overall is never a regression by
// default, and the first sentence names the trade. fail_on: any-phase
// fails the check on it.
func TestTradeOffIsJudgedByTheHeadlineAndNamed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		factor   map[string]float64
		verdict  analysis.Verdict
		sentence string
	}{
		// msm_h −5%, msm_b1 +10%: total about −0.04%.
		{"no slower overall", map[string]float64{"msm_h": 0.95, "msm_b1": 1.10}, analysis.VerdictNoChange, "No slower overall: total "},
		// msm_h −20%, msm_b1 +10%: total about −2.5%.
		{"faster overall", map[string]float64{"msm_h": 0.80, "msm_b1": 1.10}, analysis.VerdictImprovement, "Head is better than base in total -"},
	} {
		g := analysis.NewSynth(7, 0.005)
		r := analysis.Compare(analysis.Input{BaseRev: analysis.BaseRev, HeadRev: analysis.HeadRev,
			Base: g.Runs(analysis.BaseRev, 20, nil), Head: g.Runs(analysis.HeadRev, 20, tc.factor)}, analysis.DefaultOptions())
		if r.Verdict != tc.verdict || analysis.Find(r, "msm_b1").Verdict != analysis.VerdictRegression || analysis.Find(r, "msm_h").Verdict != analysis.VerdictImprovement {
			t.Fatalf("%s: verdict %s, msm_b1 %s, msm_h %s; want %s, regression, improvement",
				tc.name, r.Verdict, analysis.Find(r, "msm_b1").Verdict, analysis.Find(r, "msm_h").Verdict, tc.verdict)
		}
		if !analysis.Find(r, "total").Headline || analysis.Find(r, "msm_b1").Headline {
			t.Errorf("%s: headline rows are not total alone", tc.name)
		}
		trade := r.TradeOff()
		if len(trade) != 2 || trade[0].Phase != "msm_b1" || trade[1].Phase != "msm_h" {
			t.Errorf("%s: TradeOff() = %v, want msm_b1 (worse) then msm_h (better)", tc.name, trade)
		}
		h := render.Headline(r)
		for _, want := range []string{tc.sentence, "a trade-off: msm_b1 +", "% worse, msm_h -", "% better; it fails no check (fail_on: headline)."} {
			if !strings.Contains(h, want) {
				t.Errorf("%s: headline %q lacks %q", tc.name, h, want)
			}
		}
		if r.Fails() {
			t.Errorf("%s: fails a check by default", tc.name)
		}
		opts := analysis.DefaultOptions()
		opts.FailOn = analysis.FailOnAnyPhase
		g = analysis.NewSynth(7, 0.005)
		strict := analysis.Compare(analysis.Input{BaseRev: analysis.BaseRev, HeadRev: analysis.HeadRev,
			Base: g.Runs(analysis.BaseRev, 20, nil), Head: g.Runs(analysis.HeadRev, 20, tc.factor)}, opts)
		if strict.Verdict != tc.verdict || !strict.Fails() {
			t.Errorf("%s with fail_on: any-phase: verdict %s, fails %v; want %s and failing", tc.name, strict.Verdict, strict.Fails(), tc.verdict)
		}
	}
}
