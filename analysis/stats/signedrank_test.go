package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// The exact p-value is the share of the 2ⁿ sign patterns, each equally
// likely under no shift, whose signed-rank sum lies at least as far from
// its mean as the data's: checked by enumerating them.
func TestSignedRankExactPMatchesEnumeration(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 1; n <= 12; n++ {
		for range 5 {
			d := make([]float64, n)
			for i := range d {
				d[i] = rng.NormFloat64() + 0.3
			}
			got := signedRank(d, 0.95)
			if !got.exact {
				t.Fatalf("n=%d: not exact", n)
			}
			// Ranks of |d| (no ties in continuous data).
			order := make([]int, n)
			for i := range order {
				order[i] = i
			}
			slices.SortFunc(order, func(a, b int) int { return CmpFloat(math.Abs(d[a]), math.Abs(d[b])) })
			rank := make([]float64, n)
			for r, i := range order {
				rank[i] = float64(r + 1)
			}
			w := 0.0
			for i := range d {
				if d[i] > 0 {
					w += rank[i]
				}
			}
			mean := float64(n*(n+1)) / 4
			far := 0
			for mask := 0; mask < 1<<n; mask++ {
				s := 0.0
				for i := range n {
					if mask&(1<<i) != 0 {
						s += rank[i]
					}
				}
				if math.Abs(s-mean) >= math.Abs(w-mean)-1e-9 {
					far++
				}
			}
			want := float64(far) / float64(int(1)<<n)
			if math.Abs(got.P-want) > 1e-12 {
				t.Errorf("n=%d d=%v: p %.15g, enumeration %.15g", n, d, got.P, want)
			}
		}
	}
}

// The interval is the set of shifts the test does not reject: moving
// every difference by an end of the interval puts the test at its edge,
// and by a little more inside, it no longer rejects; the estimate is the
// median of the Walsh averages.
func TestSignedRankIntervalIsTheTestInverted(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{8, 15, 30, 60} {
		d := make([]float64, n)
		for i := range d {
			d[i] = 0.05 + 0.02*rng.NormFloat64()
		}
		r := signedRank(d, 0.95)
		if !(r.Lo < r.Est && r.Est < r.Hi) {
			t.Fatalf("n=%d: estimate %g outside [%g, %g]", n, r.Est, r.Lo, r.Hi)
		}
		shifted := func(delta float64) float64 {
			e := make([]float64, n)
			for i := range d {
				e[i] = d[i] - delta
			}
			return signedRank(e, 0.95).P
		}
		eps := (r.Hi - r.Lo) * 1e-6
		for _, end := range []float64{r.Lo, r.Hi} {
			inside := end + eps
			if end == r.Hi {
				inside = end - eps
			}
			if p := shifted(inside); p < 0.05 {
				t.Errorf("n=%d: a shift of %g, just inside [%g, %g], is rejected (p=%g)", n, inside, r.Lo, r.Hi, p)
			}
			outside := end - (r.Hi-r.Lo)*0.01
			if end == r.Hi {
				outside = end + (r.Hi-r.Lo)*0.01
			}
			if p := shifted(outside); p > 0.05 {
				t.Errorf("n=%d: a shift of %g, outside [%g, %g], is not rejected (p=%g)", n, outside, r.Lo, r.Hi, p)
			}
		}
	}
}

// The 95% interval covers the true shift of symmetric differences about
// 95% of the time (the exact interval is conservative by a hair).
func TestSignedRankIntervalCoverage(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const sims, n, shift = 4000, 20, 0.1
	covered := 0
	for range sims {
		d := make([]float64, n)
		for i := range d {
			d[i] = shift + rng.NormFloat64()
		}
		if r := signedRank(d, 0.95); r.Lo <= shift && shift <= r.Hi {
			covered++
		}
	}
	if rate := float64(covered) / sims; rate < 0.94 || rate > 0.97 {
		t.Errorf("coverage %.3f over %d samples of %d, want about 0.95", rate, sims, n)
	}
}

// With ties the normal approximation takes over; zeros are dropped; no
// non-zero difference is no evidence of anything.
func TestSignedRankTiesZerosAndNothing(t *testing.T) {
	r := signedRank([]float64{0, 0, 0}, 0.95)
	if r.N != 0 || r.P != 1 || r.Est != 0 || !math.IsInf(r.Lo, -1) {
		t.Errorf("all zeros: %+v", r)
	}
	r = signedRank([]float64{1, 1, 1, 2, 2, 3, 3, 3, 3, 0, 4, 5, 5, 6, 7, 8, 9, 9, 10, 11}, 0.95)
	if r.exact || r.N != 19 || r.P > 0.001 || r.Lo <= 0 {
		t.Errorf("all-positive tied differences: %+v, want a normal-approximation p < 0.001 and an interval above 0", r)
	}
	// The normal approximation agrees with the exact distribution on
	// untied data of 60 pairs, to 0.005 in p.
	rng := rand.New(rand.NewPCG(7, 8))
	d := make([]float64, 60)
	for i := range d {
		d[i] = 0.3 + rng.NormFloat64()
	}
	exact := signedRank(d, 0.95)
	d[0], d[1] = 5, -5 // a tie of magnitudes forces the approximation
	approx := signedRank(d, 0.95)
	if !exact.exact || approx.exact {
		t.Fatalf("exact %v, approx %v", exact.exact, approx.exact)
	}
	d2 := slices.Clone(d)
	d2[1] = -5.0000001
	exact2 := signedRank(d2, 0.95)
	if math.Abs(exact2.P-approx.P) > 0.005 {
		t.Errorf("normal approximation p %.4f, exact %.4f", approx.P, exact2.P)
	}
}

// Pairing by round removes what a round's machine state does to both of
// its runs. Runs that drift (an AR(1) machine factor, lag-1
// autocorrelation 0.5, shared by the two runs of a round) and their own
// noise: with no change, the paired test rejects at α = 0.01 no more often
// than α allows; with a change, its interval is narrower than the
// unpaired Hodges–Lehmann interval of the same runs.
func TestPairingByRoundNarrowsTheIntervalAndKeepsAlpha(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	const sims, rounds, alpha = 3000, 20, 0.01
	world := func(shift float64) (base, head []float64) {
		m := 0.0
		for range rounds {
			m = 0.5*m + 0.03*rng.NormFloat64() // the machine, per round
			base = append(base, math.Exp(m+0.01*rng.NormFloat64()))
			head = append(head, math.Exp(m+shift+0.01*rng.NormFloat64()))
		}
		return base, head
	}
	ratios := func(b, h []float64) []float64 {
		d := make([]float64, len(b))
		for i := range b {
			d[i] = math.Log(h[i] / b[i])
		}
		return d
	}
	rejected := 0
	var pairedW, unpairedW []float64
	for range sims {
		b, h := world(0)
		if signedRank(ratios(b, h), 0.95).P < alpha {
			rejected++
		}
		b, h = world(0.02)
		p := signedRank(ratios(b, h), 0.95)
		u := HodgesLehmann(b, h, 0.95)
		pairedW = append(pairedW, math.Expm1(p.Hi)*100-math.Expm1(p.Lo)*100)
		unpairedW = append(unpairedW, u.Hi-u.Lo)
	}
	lo, hi := ClopperPearson(rejected, sims, 0.95)
	t.Logf("no change: %d of %d rejected at α = %v (95%% CI %.4f–%.4f)", rejected, sims, alpha, lo, hi)
	if lo > alpha {
		t.Errorf("paired test rejects %d of %d with no change: above α = %v", rejected, sims, alpha)
	}
	slices.Sort(pairedW)
	slices.Sort(unpairedW)
	mp, mu := pairedW[sims/2], unpairedW[sims/2]
	t.Logf("+2%%, %d rounds: median 95%% interval width paired %.2f pp, unpaired %.2f pp (×%.1f narrower)", rounds, mp, mu, mu/mp)
	if !(mp*2 < mu) {
		t.Errorf("paired interval %.2f pp, unpaired %.2f pp: pairing should at least halve it in this world", mp, mu)
	}
}
