package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// bruteDifferences returns every h − b, sorted.
func bruteDifferences(b, h []float64) []float64 {
	var d []float64
	for _, x := range b {
		for _, y := range h {
			d = append(d, y-x)
		}
	}
	slices.Sort(d)
	return d
}

func TestKthDifferenceMatchesSortedDifferences(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 200 {
		m, n := 1+rng.IntN(12), 1+rng.IntN(12)
		b, h := make([]float64, m), make([]float64, n)
		for i := range b {
			b[i] = math.Round(rng.NormFloat64()*4) / 2 // ties on purpose
		}
		for i := range h {
			h[i] = math.Round(rng.NormFloat64()*4)/2 + float64(trial%3) - 1
		}
		slices.Sort(b)
		slices.Sort(h)
		want := bruteDifferences(b, h)
		for k := 1; k <= m*n; k++ {
			if got := kthDifference(b, h, k); got != want[k-1] {
				t.Fatalf("b %v h %v: %d-th difference %v, want %v", b, h, k, got, want[k-1])
			}
		}
	}
}

// The critical values of the two-sided Mann-Whitney test at 0.05, as the
// printed tables give them (reject when U ≤ the value): n = 6 → 5,
// 8 → 13, 10 → 23, 20 → 127; and 5 and 7 values → 5.
func TestULowerCriticalMatchesTables(t *testing.T) {
	for _, tc := range []struct{ m, n, crit int }{{6, 6, 5}, {8, 8, 13}, {10, 10, 23}, {20, 20, 127}, {5, 7, 5}} {
		if k := uLowerCritical(tc.m, tc.n, 0.025); k != tc.crit+1 {
			t.Errorf("m=%d n=%d: k %d, want %d", tc.m, tc.n, k, tc.crit+1)
		}
	}
	if k := uLowerCritical(2, 2, 0.025); k != 0 {
		t.Errorf("2 and 2 values: k %d, want 0 (no interval)", k)
	}
	// The normal approximation takes over above uExactLimit and agrees
	// with the exact value at its edge within one.
	exact := uLowerCritical(50, 50, 0.025)
	mn := 2500.0
	approx := int(math.Floor(mn/2 + 0.5 + NormalQuantile(0.025)*math.Sqrt(mn*101/12)))
	if d := exact - approx; d < -1 || d > 1 {
		t.Errorf("50 and 50 values: exact k %d, normal approximation %d", exact, approx)
	}
}

func TestUDistributionSumsToOneAndIsSymmetric(t *testing.T) {
	for _, mn := range [][2]int{{1, 1}, {3, 5}, {7, 7}, {12, 9}} {
		d := uDistribution(mn[0], mn[1])
		sum := 0.0
		for u, p := range d {
			sum += p
			if math.Abs(p-d[len(d)-1-u]) > 1e-12 {
				t.Errorf("%v: P(U=%d) %v but P(U=%d) %v", mn, u, p, len(d)-1-u, d[len(d)-1-u])
			}
		}
		if math.Abs(sum-1) > 1e-12 || len(d) != mn[0]*mn[1]+1 {
			t.Errorf("%v: %d values summing to %v", mn, len(d), sum)
		}
	}
}

// The Hodges–Lehmann estimate is the median of every ratio head/base
// (positive values) or of every difference over the base median; a
// known 10% slowdown of the same values is found exactly.
func TestHodgesLehmannEstimate(t *testing.T) {
	base := []float64{10, 11, 9.5, 10.2, 10.8, 9.9, 10.1}
	head := make([]float64, len(base))
	for i, v := range base {
		head[i] = v * 1.1
	}
	s := HodgesLehmann(base, head, 0.95)
	if !s.Log || math.Abs(s.Pct-10) > 1e-9 {
		t.Errorf("10%% slower: shift %+v", s)
	}
	if !(s.Lo < s.Pct && s.Pct < s.Hi) || s.Lo < 0 {
		t.Errorf("10%% slower: interval [%v, %v] around %v", s.Lo, s.Hi, s.Pct)
	}
	// With a zero value the shift is a difference over the base median.
	s = HodgesLehmann([]float64{0, 1, 2}, []float64{1, 2, 3}, 0.95)
	if s.Log || math.Abs(s.Pct-100) > 1e-9 || !math.IsInf(s.Lo, -1) {
		t.Errorf("difference shift of 1 on a base median of 1: %+v (want +100%%, no interval at 3 values)", s)
	}
}

// The interval covers the true shift at its confidence: 4,000 pairs of
// skewed samples with a planted 3% slowdown.
func TestHodgesLehmannIntervalCoverage(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const trials = 4000
	covered := 0
	for range trials {
		b, h := make([]float64, 15), make([]float64, 12)
		for i := range b {
			b[i] = math.Exp(0.05 * rng.NormFloat64())
		}
		for i := range h {
			h[i] = 1.03 * math.Exp(0.05*rng.NormFloat64())
		}
		s := HodgesLehmann(b, h, 0.95)
		if s.Lo <= 3 && 3 <= s.Hi {
			covered++
		}
	}
	rate := float64(covered) / trials
	// Distribution-free: at least 95% by construction (discreteness makes
	// it a little more); well within ±1.5 points of it.
	if rate < 0.94 || rate > 0.975 {
		t.Errorf("95%% interval covered the planted shift in %.3f of %d trials", rate, trials)
	}
}
