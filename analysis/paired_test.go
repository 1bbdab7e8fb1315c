package analysis

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// pairedRuns makes rounds of one base and one head run of two phases on
// a machine that drifts round to round (AR(1), 3% a step, lag-1
// correlation 0.7), shared by both runs of a round; head's solve is
// shift slower.
func pairedRuns(seed uint64, rounds int, shift float64) (base, head []Run) {
	rng := rand.New(rand.NewPCG(seed, 1))
	m := 0.0
	for r := 1; r <= rounds; r++ {
		m = 0.7*m + 0.03*rng.NormFloat64()
		one := func(rev string, f float64) Run {
			parse := 0.020 * math.Exp(m+0.003*rng.NormFloat64())
			solve := 0.040 * f * math.Exp(m+0.003*rng.NormFloat64())
			return Run{Revision: rev, Status: StatusOK, Round: r, Samples: []Sample{
				{Key{"Work", "parse", "sec/op"}, parse},
				{Key{"Work", "solve", "sec/op"}, solve},
				{Key{"Work", "total", "sec/op"}, parse + solve},
			}}
		}
		base = append(base, one(baseRev, 1))
		head = append(head, one(headRev, 1+shift))
	}
	return base, head
}

// On a drifting machine a +3% change in one phase is found when the runs
// are paired by round, with an interval a fraction of the unpaired one's;
// the report says it is paired and keeps benchstat's p; runs without
// rounds are compared unpaired whatever the option says.
func TestPairedCompareFindsWhatDriftHides(t *testing.T) {
	base, head := pairedRuns(1, 20, 0.03)
	opts := DefaultOptions()
	opts.Alpha = 0.01
	unpaired := Compare(Input{BaseRev: baseRev, HeadRev: headRev, Base: base, Head: head}, opts)
	opts.Paired = true
	paired := Compare(Input{BaseRev: baseRev, HeadRev: headRev, Base: base, Head: head}, opts)
	u, p := find(unpaired, "solve"), find(paired, "solve")
	if u == nil || p == nil {
		t.Fatal("no solve row")
	}
	t.Logf("unpaired: %s %+.2f%% [%+.2f, %+.2f] p=%.3g; paired: %s %+.2f%% [%+.2f, %+.2f] p=%.3g",
		u.Verdict, u.Change(), u.DeltaLoPct, u.DeltaHiPct, u.PRaw, p.Verdict, p.Change(), p.DeltaLoPct, p.DeltaHiPct, p.PRaw)
	if !p.Paired || u.Paired || p.PUnpaired != u.PRaw {
		t.Errorf("paired row %+v: want Paired, with benchstat's p %g kept", p, u.PRaw)
	}
	if p.Verdict != VerdictRegression || p.Change() < 2 || p.Change() > 4 {
		t.Errorf("paired: solve %s %+.2f%%, want the planted +3%% found", p.Verdict, p.Change())
	}
	if u.Verdict == VerdictRegression {
		t.Logf("(the unpaired analysis found it too in this draw)")
	}
	if pw, uw := p.DeltaHiPct-p.DeltaLoPct, u.DeltaHiPct-u.DeltaLoPct; !(pw*3 < uw) {
		t.Errorf("paired interval %.2f pp wide, unpaired %.2f pp: pairing should narrow it at least threefold here", pw, uw)
	}
	if parse := find(paired, "parse"); parse.Verdict == VerdictRegression || parse.Verdict == VerdictImprovement {
		t.Errorf("parse %s %+.2f%%, want no change", parse.Verdict, parse.Change())
	}
	var text strings.Builder
	if err := RenderText(&text, paired); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(unwrapped(text.String()), "Paired by round") {
		t.Errorf("the report does not say it is paired:\n%s", text.String())
	}

	// An A/A on the same machine: nothing.
	b2, h2 := pairedRuns(2, 20, 0)
	if aa := Compare(Input{BaseRev: baseRev, HeadRev: headRev, Base: b2, Head: h2}, opts); aa.Verdict == VerdictRegression || aa.Verdict == VerdictImprovement {
		t.Errorf("paired A/A: %s", aa.Verdict)
	}

	// Runs that do not carry their round are not paired.
	for i := range base {
		base[i].Round, head[i].Round = 0, 0
	}
	if r := find(Compare(Input{BaseRev: baseRev, HeadRev: headRev, Base: base, Head: head}, opts), "solve"); r.Paired {
		t.Error("runs without rounds were paired")
	}
}
