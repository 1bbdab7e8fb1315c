package analysis

import (
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// gpuProof lays out one proof the way the GPU backend runs it: the main
// lane's phases one after another, msm_b2 on lane host from 1 ms into
// msm_a for side seconds, and msm_b2_wait after msm_h until msm_b2 is
// done. It returns the run's samples (sec/op per phase, total) and spans.
func gpuProof(bench string, proof int, d map[string]float64, side float64) ([]Sample, []Span) {
	var samples []Sample
	var spans []Span
	at := 0.0
	add := func(phase string, start, end float64, lane, waits string) {
		samples = append(samples, Sample{Key: Key{Benchmark: bench, Phase: phase, Unit: "sec/op"}, Value: end - start})
		spans = append(spans, Span{Benchmark: bench, Phase: phase, Proof: proof, Start: start, End: end, Lane: lane, Waits: waits})
	}
	var sideStart float64
	for _, p := range []string{"synthesis", "ntt", "msm_a", "msm_b1", "msm_l", "msm_h"} {
		if p == "msm_a" {
			sideStart = at + 0.001
		}
		add(p, at, at+d[p], "", "")
		at += d[p]
	}
	sideEnd := sideStart + side
	add("msm_b2", sideStart, sideEnd, "host", "")
	waitEnd := math.Max(at, sideEnd) + 0.0001 // the hand-off itself
	add("msm_b2_wait", at, waitEnd, "", "msm_b2")
	at = waitEnd
	add("assemble", at, at+d["assemble"], "", "")
	at += d["assemble"]
	add("total", 0, at, "", "")
	return samples, spans
}

// GpuRunsOf makes n runs of rev, each of one proof whose phases last d
// (seconds) and msm_b2 side, every time scaled by its own noise of about
// ±0.5%.
func GpuRunsOf(rng *rand.Rand, rev string, n int, d map[string]float64, side float64) []Run {
	runs := make([]Run, n)
	for i := range runs {
		jit := make(map[string]float64, len(d))
		for _, p := range slices.Sorted(maps.Keys(d)) { // a seed repeats
			jit[p] = d[p] * (1 + 0.005*rng.NormFloat64())
		}
		samples, spans := gpuProof("Prove/backend=gpu", 0, jit, side*(1+0.005*rng.NormFloat64()))
		runs[i] = Run{Revision: rev, Status: StatusOK, Samples: samples, Spans: spans}
	}
	return runs
}

func GpuPhases(msmH float64) map[string]float64 {
	return map[string]float64{"synthesis": 0.100, "ntt": 0.050, "msm_a": 0.050, "msm_b1": 0.050, "msm_l": 0.050, "msm_h": msmH, "assemble": 0.002}
}

func phaseShare(t *testing.T, a Attribution, phase string) PhaseShare {
	t.Helper()
	for _, p := range a.Phases {
		if p.Phase == phase {
			return p
		}
	}
	t.Fatalf("no share for %s in %+v", phase, a.Phases)
	return PhaseShare{}
}

func rowOf(t *testing.T, r *Report, phase, unit string) Row {
	t.Helper()
	for _, row := range r.Phases {
		if row.Phase == phase && row.Unit == unit {
			return row
		}
	}
	t.Fatalf("no %s %s row", phase, unit)
	return Row{}
}

func TestShapleySplitsTheChangeOfTheLongerBranch(t *testing.T) {
	for _, c := range []struct {
		name                 string
		bb, bs, hb, hs       float64
		wantBranch, wantSide float64
	}{
		// The case: the branch grows past the side.
		{"branch overtakes", 0.300, 0.400, 0.470, 0.400, 0.070, 0},
		{"branch grows, still shorter", 0.300, 0.400, 0.380, 0.400, 0, 0},
		{"side grows on the path", 0.300, 0.400, 0.300, 0.440, 0, 0.040},
		{"side shrinks below the branch", 0.300, 0.400, 0.300, 0.200, 0, -0.100},
		// Both grow by 0.1 from a tie: each is charged half.
		{"both from a tie", 0.300, 0.300, 0.400, 0.400, 0.050, 0.050},
		// The branch, longer on both sides, shrinks below base's side:
		// the mixed order would charge the side, which was never on the
		// path (seen on an H100: a few µs charged to an off-path msm_b2).
		{"longer branch shrinks past base's side", 0.600, 0.500, 0.490, 0.480, -0.110, 0},
		{"longer side shrinks past base's branch", 0.500, 0.600, 0.480, 0.490, 0, -0.110},
	} {
		b, s := shapley(c.bb, c.bs, c.hb, c.hs)
		if math.Abs(b-c.wantBranch) > 1e-12 || math.Abs(s-c.wantSide) > 1e-12 {
			t.Errorf("%s: shapley = (%.4f, %.4f), want (%.4f, %.4f)", c.name, b, s, c.wantBranch, c.wantSide)
		}
		if got, want := b+s, math.Max(c.hb, c.hs)-math.Max(c.bb, c.bs); math.Abs(got-want) > 1e-12 {
			t.Errorf("%s: shares add to %.4f, the part changed by %.4f", c.name, got, want)
		}
	}
}

// The report: the head's msm_h got so much slower that the host's
// G2 MSM now finishes inside it. Total grew by what the G1 branch
// outgrew the G2 MSM; that is msm_h's, and the wait, which went to zero,
// is no improvement.
func TestCriticalPathChargesASlowerPhaseThatOvertookTheOtherBranch(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	base := GpuRunsOf(rng, "b", 20, GpuPhases(0.150), 0.400) // G1 branch 0.300 s < G2 0.401
	head := GpuRunsOf(rng, "h", 20, GpuPhases(0.320), 0.400) // G1 branch 0.470 s
	r := Compare(Input{Base: base, Head: head}, Options{})

	if got := rowOf(t, r, "msm_h", "sec/op"); got.Verdict != VerdictRegression {
		t.Errorf("msm_h verdict %s, want regression", got.Verdict)
	}
	wait := rowOf(t, r, "msm_b2_wait", "sec/op")
	if wait.Verdict != VerdictWait || wait.Waits != "msm_b2" || !math.IsNaN(wait.Threshold) {
		t.Errorf("msm_b2_wait: verdict %s, waits %q, threshold %v; want wait for msm_b2, untested", wait.Verdict, wait.Waits, wait.Threshold)
	}
	if r.Verdict != VerdictRegression {
		t.Errorf("verdict %s, want regression", r.Verdict)
	}
	if len(r.Attribution) != 1 {
		t.Fatalf("%d attributions", len(r.Attribution))
	}
	a := r.Attribution[0]
	if len(a.Overlaps) != 1 || a.Overlaps[0].Critical(false) != "side" || a.Overlaps[0].Critical(true) != "branch" {
		t.Fatalf("overlaps %+v: want one, critical through msm_b2 at base and through msm_a … msm_h at head", a.Overlaps)
	}
	if want := []string{"msm_a", "msm_b1", "msm_l", "msm_h"}; !slices.Equal(a.Overlaps[0].Branch, want) {
		t.Errorf("branch %v, want %v", a.Overlaps[0].Branch, want)
	}
	h := phaseShare(t, a, "msm_h")
	if h.SharePct < 95 || h.SharePct > 105 || h.OffCriticalPath {
		t.Errorf("msm_h share %.1f%% (off path %v), want ~100%%: total grew by %.4f s, all of it msm_h's", h.SharePct, h.OffCriticalPath, a.Delta)
	}
	for _, p := range a.Phases {
		if p.Phase != "msm_h" && math.Abs(p.SharePct) > 5 {
			t.Errorf("%s charged %.1f%% of total's change (Δ %.4f s); want about none", p.Phase, p.SharePct, p.Delta)
		}
	}
	if w := phaseShare(t, a, "msm_b2_wait"); w.Attributed != 0 || w.Waits != "msm_b2" || w.Delta > -0.09 {
		t.Errorf("msm_b2_wait share %+v: want Δ about −0.1 s, charged nothing, waiting for msm_b2", w)
	}
	if !slices.Equal(a.ExplainedBy, []string{"msm_h"}) {
		t.Errorf("explained by %v, want [msm_h]", a.ExplainedBy)
	}
}

// A phase beside a longer one gets slower: it is reported as slower, and
// charged nothing of total's change, which did not happen.
func TestCriticalPathChargesNothingToASlowerPhaseOffIt(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	base := GpuRunsOf(rng, "b", 20, GpuPhases(0.150), 1.000) // G2 far longer than the G1 branch
	head := GpuRunsOf(rng, "h", 20, GpuPhases(0.225), 1.000) // msm_h +50%, still hidden
	r := Compare(Input{Base: base, Head: head}, Options{})

	if got := rowOf(t, r, "msm_h", "sec/op"); got.Verdict != VerdictRegression || got.Change() < 45 {
		t.Errorf("msm_h %s %+.1f%%, want a regression of about +50%%", got.Verdict, got.Change())
	}
	if got := rowOf(t, r, "total", "sec/op"); got.Verdict == VerdictRegression || math.Abs(got.Change()) > 1 {
		t.Errorf("total %s %+.2f%%; it waits for msm_b2, which did not change", got.Verdict, got.Change())
	}
	a := r.Attribution[0]
	h := phaseShare(t, a, "msm_h")
	if !h.OffCriticalPath || h.Attributed != 0 {
		t.Errorf("msm_h share %+v: want off the critical path, charged 0", h)
	}
	if slices.Contains(a.ExplainedBy, "msm_h") {
		t.Errorf("explained by %v: msm_h did not move total", a.ExplainedBy)
	}
	if w := rowOf(t, r, "msm_b2_wait", "sec/op"); w.Verdict != VerdictWait {
		t.Errorf("msm_b2_wait verdict %s, want wait (it shrank by msm_h's growth)", w.Verdict)
	}
}

// The side branch is the critical one and gets slower: total's change is
// msm_b2's.
func TestCriticalPathChargesTheSideBranchOnIt(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	base := GpuRunsOf(rng, "b", 20, GpuPhases(0.150), 0.400)
	head := GpuRunsOf(rng, "h", 20, GpuPhases(0.150), 0.440)
	r := Compare(Input{Base: base, Head: head}, Options{})
	a := r.Attribution[0]
	b2 := phaseShare(t, a, "msm_b2")
	if b2.SharePct < 95 || b2.SharePct > 105 || b2.OffCriticalPath {
		t.Errorf("msm_b2 share %.1f%% (off path %v), want ~100%%", b2.SharePct, b2.OffCriticalPath)
	}
	if !slices.Equal(a.ExplainedBy, []string{"msm_b2"}) {
		t.Errorf("explained by %v, want [msm_b2]", a.ExplainedBy)
	}
}

// Without spans (a CPU run, or another program's output), phases add up
// as before: each is charged its own change.
func TestAttributionWithoutSpansChargesEachPhaseItsChange(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	strip := func(runs []Run) []Run {
		for i := range runs {
			runs[i].Spans = nil
			var kept []Sample
			for _, s := range runs[i].Samples {
				if s.Phase != "msm_b2_wait" {
					kept = append(kept, s)
				}
			}
			runs[i].Samples = kept
		}
		return runs
	}
	base := strip(GpuRunsOf(rng, "b", 12, GpuPhases(0.150), 0.010))
	head := strip(GpuRunsOf(rng, "h", 12, GpuPhases(0.180), 0.010))
	r := Compare(Input{Base: base, Head: head}, Options{})
	a := r.Attribution[0]
	if len(a.Overlaps) != 0 {
		t.Errorf("overlaps %+v without spans", a.Overlaps)
	}
	for _, p := range a.Phases {
		if p.Attributed != p.Delta {
			t.Errorf("%s attributed %v, want its Δ %v", p.Phase, p.Attributed, p.Delta)
		}
	}
}
