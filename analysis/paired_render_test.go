package analysis_test

import (
	"strings"
	"testing"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/analysis/render"
)

// On a drifting machine a +3% change in one phase is found when the runs
// are paired by round, with an interval a fraction of the unpaired one's;
// the report says it is paired and keeps benchstat's p; runs without
// rounds are compared unpaired whatever the option says.
func TestPairedCompareFindsWhatDriftHides(t *testing.T) {
	base, head := analysis.PairedRuns(1, 20, 0.03)
	opts := analysis.DefaultOptions()
	opts.Alpha = 0.01
	unpaired := analysis.Compare(analysis.Input{BaseRev: analysis.BaseRev, HeadRev: analysis.HeadRev, Base: base, Head: head}, opts)
	opts.Paired = true
	paired := analysis.Compare(analysis.Input{BaseRev: analysis.BaseRev, HeadRev: analysis.HeadRev, Base: base, Head: head}, opts)
	u, p := analysis.Find(unpaired, "solve"), analysis.Find(paired, "solve")
	if u == nil || p == nil {
		t.Fatal("no solve row")
	}
	t.Logf("unpaired: %s %+.2f%% [%+.2f, %+.2f] p=%.3g; paired: %s %+.2f%% [%+.2f, %+.2f] p=%.3g",
		u.Verdict, u.Change(), u.DeltaLoPct, u.DeltaHiPct, u.PRaw, p.Verdict, p.Change(), p.DeltaLoPct, p.DeltaHiPct, p.PRaw)
	if !p.Paired || u.Paired || p.PUnpaired != u.PRaw {
		t.Errorf("paired row %+v: want Paired, with benchstat's p %g kept", p, u.PRaw)
	}
	if p.Verdict != analysis.VerdictRegression || p.Change() < 2 || p.Change() > 4 {
		t.Errorf("paired: solve %s %+.2f%%, want the planted +3%% found", p.Verdict, p.Change())
	}
	if u.Verdict == analysis.VerdictRegression {
		t.Logf("(the unpaired analysis found it too in this draw)")
	}
	if pw, uw := p.DeltaHiPct-p.DeltaLoPct, u.DeltaHiPct-u.DeltaLoPct; !(pw*3 < uw) {
		t.Errorf("paired interval %.2f pp wide, unpaired %.2f pp: pairing should narrow it at least threefold here", pw, uw)
	}
	if parse := analysis.Find(paired, "parse"); parse.Verdict == analysis.VerdictRegression || parse.Verdict == analysis.VerdictImprovement {
		t.Errorf("parse %s %+.2f%%, want no change", parse.Verdict, parse.Change())
	}
	var text strings.Builder
	if err := render.RenderText(&text, paired); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(unwrapped(text.String()), "Paired by round") {
		t.Errorf("the report does not say it is paired:\n%s", text.String())
	}

	// An A/A on the same machine: nothing.
	b2, h2 := analysis.PairedRuns(2, 20, 0)
	if aa := analysis.Compare(analysis.Input{BaseRev: analysis.BaseRev, HeadRev: analysis.HeadRev, Base: b2, Head: h2}, opts); aa.Verdict == analysis.VerdictRegression || aa.Verdict == analysis.VerdictImprovement {
		t.Errorf("paired A/A: %s", aa.Verdict)
	}

	// Runs that do not carry their round are not paired.
	for i := range base {
		base[i].Round, head[i].Round = 0, 0
	}
	if r := analysis.Find(analysis.Compare(analysis.Input{BaseRev: analysis.BaseRev, HeadRev: analysis.HeadRev, Base: base, Head: head}, opts), "solve"); r.Paired {
		t.Error("runs without rounds were paired")
	}
}
