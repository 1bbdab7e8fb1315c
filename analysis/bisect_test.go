package analysis

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/analysis/stats"
)

// search runs a Bisection over n commits whose first bad one is
// firstBad, skipping the commits in skip, and returns it with the
// commits it probed in order.
func search(t *testing.T, n, firstBad int, skip ...int) (*Bisection, []int) {
	t.Helper()
	b := NewBisection(n)
	var probed []int
	for {
		i, ok := b.Next()
		if !ok {
			return b, probed
		}
		if slices.Contains(probed, i) {
			t.Fatalf("n=%d: commit %d probed twice", n, i)
		}
		probed = append(probed, i)
		c := ProbeGood
		switch {
		case slices.Contains(skip, i):
			c = ProbeSkipped
		case i >= firstBad:
			c = ProbeBad
		}
		if err := b.Mark(i, c); err != nil {
			t.Fatal(err)
		}
	}
}

func TestBisectionFindsEveryFirstBadCommitInCeilLog2Probes(t *testing.T) {
	t.Parallel()
	for n := 1; n <= 70; n++ {
		limit := int(math.Ceil(math.Log2(float64(n))))
		for fb := range n {
			b, probed := search(t, n, fb)
			if b.FirstBad() != fb || b.LastGood() != fb-1 || !slices.Equal(b.Candidates(), []int{fb}) {
				t.Fatalf("n=%d first bad %d: found %d after %d, candidates %v", n, fb, b.FirstBad(), b.LastGood(), b.Candidates())
			}
			if len(probed) > limit {
				t.Errorf("n=%d first bad %d: %d probes %v, more than ceil(log2 n) = %d", n, fb, len(probed), probed, limit)
			}
		}
	}
}

func TestBisectionStepsAroundSkippedCommits(t *testing.T) {
	t.Parallel()
	// 15 commits, the first bad at 8: the middle (6) is skipped and its
	// older neighbour probed; 8 itself is skipped, which leaves 8 and 9
	// as candidates.
	b, probed := search(t, 15, 8, 6, 8)
	if want := []int{6, 5, 9, 7, 8}; !slices.Equal(probed, want) {
		t.Errorf("probed %v, want %v", probed, want)
	}
	if b.LastGood() != 7 || b.FirstBad() != 9 || !slices.Equal(b.Candidates(), []int{8, 9}) {
		t.Errorf("last good %d, first bad %d, candidates %v; want 7, 9 and [8 9]", b.LastGood(), b.FirstBad(), b.Candidates())
	}
	// Skipping away from the first bad commit leaves it exact.
	b, _ = search(t, 15, 8, 6)
	if !slices.Equal(b.Candidates(), []int{8}) {
		t.Errorf("with only 6 skipped: candidates %v, want [8]", b.Candidates())
	}
	// Nothing measurable: every commit before the bad end is a candidate.
	b, probed = search(t, 5, 4, 0, 1, 2, 3)
	if len(probed) != 4 || b.LastGood() != -1 || !slices.Equal(b.Candidates(), []int{0, 1, 2, 3, 4}) {
		t.Errorf("all skipped: probed %v, last good %d, candidates %v", probed, b.LastGood(), b.Candidates())
	}
}

func TestBisectionMarkRefusesWhatIsNotAnOpenCommit(t *testing.T) {
	t.Parallel()
	b := NewBisection(10)
	if err := b.Mark(4, ProbeGood); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		i     int
		class ProbeClass
	}{{4, ProbeBad}, {2, ProbeBad}, {9, ProbeGood}, {12, ProbeGood}, {6, ProbeUnclear}, {6, ""}} {
		if err := b.Mark(c.i, c.class); err == nil {
			t.Errorf("Mark(%d, %q) succeeded; want an error", c.i, c.class)
		}
	}
}

// values returns n values around center with a relative spread.
func values(g *synth, center float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = center * g.jitter()
	}
	return out
}

func TestClassifyAgainstBothEnds(t *testing.T) {
	t.Parallel()
	g := NewSynth(7, 0.005)
	k := Key{Benchmark: "Work", Phase: "total", Unit: "sec/op"}
	good, bad := values(g, 1.0, 8), values(g, 1.3, 8)
	floor := Floor{Pct: 2, Source: FloorMinimum}
	for _, tc := range []struct {
		name           string
		probe          []float64
		class, nearer  ProbeClass
		needMoreRuns   bool
		vsGood, vsBad  Verdict
		higherIsBetter bool
	}{
		{"like good", values(g, 1.0, 8), ProbeGood, ProbeGood, false, VerdictNoChange, VerdictImprovement, false},
		{"like bad", values(g, 1.3, 8), ProbeBad, ProbeBad, false, VerdictRegression, VerdictNoChange, false},
		{"between, nearer bad", values(g, 1.2, 8), ProbeUnclear, ProbeBad, false, VerdictRegression, VerdictImprovement, false},
		{"beyond bad", values(g, 1.6, 8), ProbeUnclear, ProbeBad, false, VerdictRegression, VerdictRegression, false},
		{"too few runs", values(g, 1.0, 3), ProbeUnclear, ProbeGood, true, VerdictInconclusive, VerdictInconclusive, false},
	} {
		c := Classify(k, good, bad, tc.probe, floor, Options{Alpha: 0.01}, stats.Looks{})
		if c.Class != tc.class || c.Nearer != tc.nearer || c.NeedMoreRuns != tc.needMoreRuns ||
			c.VsGood.Verdict != tc.vsGood || c.VsBad.Verdict != tc.vsBad {
			t.Errorf("%s: class %s nearer %s more runs %v, vs good %s (%s), vs bad %s (%s); want %s, %s, %v, %s, %s",
				tc.name, c.Class, c.Nearer, c.NeedMoreRuns, c.VsGood.Verdict, c.VsGood.Reason, c.VsBad.Verdict, c.VsBad.Reason,
				tc.class, tc.nearer, tc.needMoreRuns, tc.vsGood, tc.vsBad)
		}
		if c.VsGood.Base.Median != CompareSeries(k, good, good, floor, Options{}, stats.Looks{}).Base.Median || c.VsGood.Head.N != len(tc.probe) {
			t.Errorf("%s: vs good compares %v against the good end %v", tc.name, c.VsGood.Head, c.VsGood.Base)
		}
	}
}

// TestCompareSeriesIsCompareOfOneSeries: the row CompareSeries makes is
// the row Compare makes when the series is the only one.
func TestCompareSeriesIsCompareOfOneSeries(t *testing.T) {
	t.Parallel()
	g := NewSynth(11, 0.01)
	k := Key{Benchmark: "Work", Phase: "total", Unit: "sec/op"}
	for _, tc := range []struct{ base, head []float64 }{
		{values(g, 1, 10), values(g, 1.05, 10)},
		{values(g, 1, 10), values(g, 1.001, 10)},
		{values(g, 1, 4), values(g, 1.5, 4)},
	} {
		var base, head []Run
		for _, v := range tc.base {
			base = append(base, Run{Status: StatusOK, Samples: []Sample{{k, v}}})
		}
		for _, v := range tc.head {
			head = append(head, Run{Status: StatusOK, Samples: []Sample{{k, v}}})
		}
		rep := Compare(Input{Base: base, Head: head}, Options{})
		want := rep.Phases[0]
		got := CompareSeries(k, tc.base, tc.head, NoiseFloor(nil, Options{}), Options{}, stats.Looks{})
		// JSON, since an untested row's NaN fields are never DeepEqual.
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		if string(g) != string(w) {
			t.Errorf("CompareSeries = %s\nCompare's row = %s", g, w)
		}
	}
}

// GoldenBisect is a fixed bisection of 15 commits: the ends, five probes
// (one skipped) and the comparison of the first bad commit against the
// last good one, which confirms it.
func GoldenBisect() *BisectReport {
	g := NewSynth(3, 0.004)
	g.Uniform = true
	k := Key{Benchmark: ProveBench, Phase: "total", Unit: "sec/op"}
	floor := Floor{Pct: 1, Source: FloorMinimum}
	good, bad := values(g, 2.45, 10), values(g, 2.55, 10)
	change := CompareSeries(k, good, bad, floor, Options{}, stats.Looks{})
	sha := func(c byte) string { return strings.Repeat(string(c), 40) }
	commit := func(c byte, subject string) BisectCommit { return BisectCommit{SHA: sha(c), Subject: subject} }
	probe := func(step, pos int, c BisectCommit, vals []float64, reused int) Probe {
		cl := Classify(k, good, bad, vals, floor, Options{}, stats.Looks{})
		p := Probe{Step: step, Position: pos, Commit: c, Class: cl.Class, Runs: len(vals), Reused: reused, Measured: len(vals) - reused,
			VsGood: &cl.VsGood, VsBad: &cl.VsBad, Median: cl.VsGood.Head.Median}
		if cl.Class == ProbeUnclear {
			p.Class, p.Uncertain = cl.Nearer, true
			p.Reason = "at 10 runs, against good regression, against bad improvement; its median is nearer the bad end's"
		}
		return p
	}
	rep := &BisectReport{
		Repo: "https://github.com/acme/prover.git", Key: k, Order: BisectFirstParent,
		Good: commit('a', "v1.4.0"), Bad: commit('b', "main: release prep"), Commits: 15, Change: change,
		FirstBad: commit('5', "msm: window size from the point count | tuned"), LastGood: commit('4', "ntt: inline the twiddles"),
		Probes: []Probe{
			{End: "good", Commit: commit('a', "v1.4.0"), Class: ProbeGood, Median: change.Base.Median, Runs: 10, Reused: 10},
			{End: "bad", Position: 15, Commit: commit('b', "main: release prep"), Class: ProbeBad, Median: change.Head.Median, Runs: 10, Measured: 10},
			probe(1, 8, commit('8', "docs: the MSM notes"), values(g, 2.55, 6), 0),
			{Step: 2, Position: 4, Commit: commit('3', "build: bump gnark-crypto"), Class: ProbeSkipped, Reason: "build failed: exit status 1"},
			probe(3, 3, commit('2', "synthesis: fewer allocations"), values(g, 2.45, 6), 6),
			probe(4, 6, commit('6', "msm: more buckets"), values(g, 2.552, 10), 0),
			probe(5, 5, commit('5', "msm: window size from the point count | tuned"), values(g, 2.549, 6), 0),
		},
		Reproduce: []string{
			"perfbot compare --repo https://github.com/acme/prover.git --base " + sha('4') + " --head " + sha('5') + " --count 10",
			"perfbot bisect --repo https://github.com/acme/prover.git --good " + sha('a') + " --bad " + sha('b') +
				" --benchmark Prove/circuit=sha256/constraints=65536/backend=cpu --phase total --unit sec/op",
		},
		Warnings: []string{"1 commit was skipped, as git bisect skips (a build failed, or no run measured the series): 333333333333"},
	}
	rep.Comparison = Compare(Input{
		BaseRev: sha('4'), HeadRev: sha('5'),
		Base: g.Runs(sha('4'), 10, nil), Head: g.Runs(sha('5'), 10, map[string]float64{"msm_h": 1.25}),
	}, Options{})
	for _, row := range rep.Comparison.Phases {
		if row.Key == k {
			rep.Confirmation = &row
		}
	}
	rep.Confirmed = rep.Confirmation != nil && rep.Confirmation.Verdict == change.Verdict
	return rep
}

// A probe's looks tighten its tests: the values that settle a probe as
// bad at its only look leave it unclear at the first look of a design
// that may add runs up to five times as many, because that look may spend
// only a sliver of α.
func TestClassifyAtAnEarlyLookIsStricter(t *testing.T) {
	t.Parallel()
	g := NewSynth(21, 0.03)
	k := Key{Benchmark: "Work", Phase: "total", Unit: "sec/op"}
	floor := Floor{Pct: 1, Source: FloorMinimum}
	good, bad := values(g, 1, 30), values(g, 1.05, 30)
	probe := values(g, 1.05, 8)
	fixed := Classify(k, good, bad, probe, floor, Options{}, stats.Looks{})
	early := Classify(k, good, bad, probe, floor, Options{}, stats.Looks{Runs: []int{8}, Max: 40})
	if fixed.Class != ProbeBad {
		t.Fatalf("at its only look the probe is %s (vs good %s p=%.2g), want bad", fixed.Class, fixed.VsGood.Verdict, fixed.VsGood.PValue)
	}
	if early.Class != ProbeUnclear || !early.NeedMoreRuns || !(early.VsGood.Threshold < fixed.VsGood.Threshold/10) {
		t.Errorf("at the first of up to 40 runs: %s (need more %v), threshold %.3g against %.3g at one look; want unclear with a far stricter threshold",
			early.Class, early.NeedMoreRuns, early.VsGood.Threshold, fixed.VsGood.Threshold)
	}
}
