package stats

import (
	"math"
	"slices"
	"sync"
)

// This file estimates the change itself: the Hodges–Lehmann shift
// between two samples (the median of every head − base difference, the
// estimator that goes with Mann-Whitney U) and its distribution-free
// confidence interval, which is the set of shifts the U test would not
// reject (Hollander and Wolfe, Nonparametric Statistical Methods, §4.3).

// A Shift is the change between two samples, in percent of the base.
type Shift struct {
	// Pct is the Hodges–Lehmann estimate; Lo and Hi bound its confidence
	// interval (infinite when the samples are too small for one).
	Pct, Lo, Hi float64
	// Abs is the same estimate in the values' own unit, and AbsLo and
	// AbsHi its interval: the change a reader sees between the values
	// shown beside it (Row.BaseValue and Row.HeadValue). For a base whose
	// median is 0, where no percentage exists, Pct, Lo and Hi are NaN and
	// ±Inf but Abs is still the shift of the raw values.
	Abs, AbsLo, AbsHi float64
	// Log says the shift was estimated on the logarithms of the values
	// (a ratio, which is how a change of speed behaves); otherwise, for
	// samples with zero or negative values, as a difference over the base
	// median.
	Log bool
	// base is the base values' median, from which Abs is measured.
	base float64
	// b and h are the sorted values the shift was estimated on
	// (logarithms, or values over the base median's magnitude), for
	// intervals at other levels (Shift.At).
	b, h []float64
	// d are a paired shift's rounds' log ratios (PairedShiftOf), for its
	// intervals at other levels; nil for an unpaired one. p is its
	// signed-rank p-value.
	d []float64
	p float64
	// raw says b and h are the raw values of a base whose median is 0
	// (no percentage): At moves only AbsLo and AbsHi.
	raw bool
}

// PairedP is a paired shift's signed-rank p-value (PairedShiftOf); 0 for
// an unpaired one.
func (s Shift) PairedP() float64 { return s.p }

// At returns the shift with its interval at another confidence: the
// same estimate, from the same values, so that an interval at a look's
// level (a repeated confidence interval) and the one at
// Options.Confidence are of one construction.
func (s Shift) At(confidence float64) Shift {
	out := s
	out.Lo, out.Hi, out.AbsLo, out.AbsHi = math.Inf(-1), math.Inf(1), math.Inf(-1), math.Inf(1)
	switch {
	case s.Pct == 0 && s.Lo == 0 && s.Hi == 0:
		// Every value of both sides equal: no change at any level.
		return s
	case s.d != nil:
		r := signedRank(s.d, confidence)
		if r.criticalLow >= 0 {
			out.Lo, out.Hi = s.toPct(r.Lo), s.toPct(r.Hi)
			out.AbsLo, out.AbsHi = s.toAbs(out.Lo), s.toAbs(out.Hi)
		}
		return out
	case len(s.b) == 0 || len(s.h) == 0:
		return out
	}
	m, n := len(s.b), len(s.h)
	k := uLowerCritical(m, n, (1-confidence)/2)
	if k < 1 {
		return out
	}
	lo, hi := kthDifference(s.b, s.h, k), kthDifference(s.b, s.h, m*n+1-k)
	if s.raw {
		out.AbsLo, out.AbsHi = lo, hi
		return out
	}
	out.Lo, out.Hi = s.toPct(lo), s.toPct(hi)
	out.AbsLo, out.AbsHi = s.toAbs(out.Lo), s.toAbs(out.Hi)
	return out
}

// HodgesLehmann returns the shift of head against base at the given
// confidence. Both must hold at least one value; neither is modified.
func HodgesLehmann(base, head []float64, confidence float64) Shift {
	b, h := slices.Clone(base), slices.Clone(head)
	positive := true
	for _, v := range slices.Concat(b, h) {
		if !(v > 0) {
			positive = false
			break
		}
	}
	s := Shift{Pct: math.NaN(), Lo: math.Inf(-1), Hi: math.Inf(1), AbsLo: math.Inf(-1), AbsHi: math.Inf(1), Log: positive}
	scale := 1.0
	s.base = Median(slices.Sorted(slices.Values(base)))
	if positive {
		for i := range b {
			b[i] = math.Log(b[i])
		}
		for i := range h {
			h[i] = math.Log(h[i])
		}
	}
	slices.Sort(b)
	slices.Sort(h)
	if !positive {
		scale = math.Abs(Median(b))
		if scale == 0 {
			// No percentage of a zero median, except for no change at
			// all: every value equal, as a counter that stays at 0. The
			// change in the values' unit still exists: the shift of the
			// raw values, which a count from 0 to 3 is.
			if b[0] == b[len(b)-1] && h[0] == h[len(h)-1] && b[0] == h[0] {
				s.Pct, s.Lo, s.Hi = 0, 0, 0
			}
			s.Abs, s.AbsLo, s.AbsHi = rawShift(b, h, confidence)
			s.b, s.h, s.raw = b, h, true
			return s
		}
	}
	if !positive {
		for i := range b {
			b[i] /= scale
		}
		for i := range h {
			h[i] /= scale
		}
	}
	s.b, s.h = b, h
	m, n := len(b), len(h)
	total := m * n
	// The median of the m·n differences: the mean of the two middle
	// order statistics when their count is even.
	est := kthDifference(b, h, (total+1)/2)
	if total%2 == 0 {
		est = (est + kthDifference(b, h, total/2+1)) / 2
	}
	s.Pct = s.toPct(est)
	s.Abs = s.toAbs(s.Pct)
	// The interval is [D_(k), D_(mn+1−k)], k the largest with
	// P(U ≤ k−1) ≤ (1−confidence)/2 under no shift.
	k := uLowerCritical(m, n, (1-confidence)/2)
	if k < 1 {
		return s
	}
	s.Lo, s.Hi = s.toPct(kthDifference(b, h, k)), s.toPct(kthDifference(b, h, total+1-k))
	s.AbsLo, s.AbsHi = s.toAbs(s.Lo), s.toAbs(s.Hi)
	return s
}

// rawShift returns the Hodges–Lehmann shift of the raw values h against
// b (both sorted) and its interval, in their own unit.
func rawShift(b, h []float64, confidence float64) (est, lo, hi float64) {
	m, n := len(b), len(h)
	total := m * n
	est = kthDifference(b, h, (total+1)/2)
	if total%2 == 0 {
		est = (est + kthDifference(b, h, total/2+1)) / 2
	}
	k := uLowerCritical(m, n, (1-confidence)/2)
	if k < 1 {
		return est, math.Inf(-1), math.Inf(1)
	}
	return est, kthDifference(b, h, k), kthDifference(b, h, total+1-k)
}

// toAbs turns a change in percent of the base into the values' unit: a
// share of the base's median.
func (s Shift) toAbs(pct float64) float64 {
	return pct / 100 * math.Abs(s.base)
}

// toPct turns a shift on s's scale into percent of the base.
func (s Shift) toPct(d float64) float64 {
	if s.Log {
		return math.Expm1(d) * 100
	}
	return d * 100
}

// kthDifference returns the k-th smallest (from 1) of the differences
// h[j] − b[i], b and h sorted ascending, without making them: it bisects
// on the bits of a float64 for the smallest d with at least k
// differences ≤ d, counting them in one merge-like pass (O((m+n)·64)).
func kthDifference(b, h []float64, k int) float64 {
	lo, hi := h[0]-b[len(b)-1], h[len(h)-1]-b[0]
	if k <= 1 {
		return lo
	}
	if k >= len(b)*len(h) {
		return hi
	}
	// countAtMost returns #{(i, j): h[j] − b[i] ≤ d}.
	countAtMost := func(d float64) int {
		// From the largest h down, h[j] − d falls, so b[i:], the base
		// values ≥ h[j] − d, only grows.
		n, i := 0, len(b)
		for j := len(h) - 1; j >= 0; j-- {
			hj := h[j]
			for i > 0 && hj-b[i-1] <= d {
				i--
			}
			n += len(b) - i
		}
		return n
	}
	// Bisect on the ordered bit patterns of lo … hi: every float64 lies
	// between, and after at most 64 halvings the two meet.
	for range 200 {
		if lo == hi {
			break
		}
		mid := midFloat(lo, hi)
		if mid == hi || mid == lo {
			if countAtMost(lo) >= k {
				return lo
			}
			return hi
		}
		if countAtMost(mid) >= k {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// midFloat returns a float64 halfway between a < b in the order of
// their bit patterns, so that bisection ends in at most 64 steps.
func midFloat(a, b float64) float64 {
	ka, kb := orderedBits(a), orderedBits(b)
	return fromOrderedBits(ka + int64((uint64(kb)-uint64(ka))/2))
}

func orderedBits(x float64) int64 {
	u := int64(math.Float64bits(x))
	if u < 0 {
		return math.MinInt64 - u
	}
	return u
}

func fromOrderedBits(k int64) float64 {
	if k < 0 {
		k = math.MinInt64 - k
	}
	return math.Float64frombits(uint64(k))
}

// uExactLimit is the largest m·n for which uLowerCritical uses the exact
// distribution of U; above it the normal approximation is within one of
// the exact critical value.
const uExactLimit = 2500

type uKey struct {
	m, n  int
	alpha float64
}

var uCriticalCache sync.Map // uKey → int

// uLowerCritical returns the largest k ≥ 0 with P(U ≤ k−1) ≤ alpha, U the
// Mann-Whitney statistic of samples of m and n values with no shift and
// no ties: the number of differences to cut from each end of the sorted
// differences for a two-sided interval at confidence 1 − 2·alpha. It is 0
// when the samples are too small for any interval.
func uLowerCritical(m, n int, alpha float64) int {
	key := uKey{m, n, alpha}
	if v, ok := uCriticalCache.Load(key); ok {
		return v.(int)
	}
	var k int
	if m*n <= uExactLimit {
		cdf := 0.0
		for _, p := range uDistributionCached(m, n) {
			if cdf+p > alpha*(1+1e-12) {
				break
			}
			cdf += p
			k++
		}
	} else {
		mn := float64(m * n)
		sd := math.Sqrt(mn * float64(m+n+1) / 12)
		// P(U ≤ k−1) ≈ Φ((k − 1 + 0.5 − mn/2)/sd) ≤ alpha.
		k = int(math.Floor(mn/2 + 0.5 + NormalQuantile(alpha)*sd))
		k = max(k, 0)
	}
	uCriticalCache.Store(key, k)
	return k
}

var uDistCache sync.Map // [2]int{m, n} → []float64

// uDistributionCached is uDistribution, computed once per (m, n): the
// intervals at each look's level ask for new critical values of the same
// sample sizes at every threshold.
func uDistributionCached(m, n int) []float64 {
	key := [2]int{m, n}
	if v, ok := uDistCache.Load(key); ok {
		return v.([]float64)
	}
	d := uDistribution(m, n)
	uDistCache.Store(key, d)
	return d
}

// uDistribution returns P(U = u) for u = 0 … m·n: U counts the pairs with
// the head value below the base value among m base and n head values,
// all orders equally likely. It uses the recursion on the largest value:
// it is a base value with probability m/(m+n), and then adds n to U.
func uDistribution(m, n int) []float64 {
	// prev[j] is the distribution for i−1 base values and j head values.
	prev := make([][]float64, n+1)
	for j := range prev {
		prev[j] = []float64{1}
	}
	for i := 1; i <= m; i++ {
		cur := make([][]float64, n+1)
		cur[0] = []float64{1}
		for j := 1; j <= n; j++ {
			d := make([]float64, i*j+1)
			pb := float64(i) / float64(i+j)
			// Largest is a base value: U grows by j (it is above every head value).
			for u, p := range prev[j] {
				d[u+j] += pb * p
			}
			for u, p := range cur[j-1] {
				d[u] += (1 - pb) * p
			}
			cur[j] = d
		}
		prev = cur
	}
	return prev[n]
}

// SmallestUP returns the smallest two-sided p-value Mann-Whitney U can
// give m and n untied values: 2/C(m+n, m), when the two samples do not
// overlap at all.
func SmallestUP(m, n int) float64 {
	if m < 1 || n < 1 {
		return 1
	}
	lc, _ := math.Lgamma(float64(m + n + 1))
	lm, _ := math.Lgamma(float64(m + 1))
	ln, _ := math.Lgamma(float64(n + 1))
	return math.Min(1, 2*math.Exp(lm+ln-lc))
}

// RunsToReach returns the fewest runs a side, at least from, with which
// Mann-Whitney U can give a p-value below threshold.
func RunsToReach(threshold float64, from int) int {
	n := max(from, 1)
	for SmallestUP(n, n) >= threshold && n < 1<<20 {
		n++
	}
	return n
}
