package stats

import (
	"math"
	"slices"
)

// This file is the paired analogue of shift.go: when base and head ran in
// rounds (one run of each, back to back, in random order), the change is
// estimated from each round's own ratio, head over base, so that what the
// machine did to both runs of a round cancels. The test is Wilcoxon's
// signed-rank test of the rounds' log ratios, the estimate their
// Hodges–Lehmann estimate (the median of the Walsh averages, every
// (dᵢ + dⱼ)/2 with i ≤ j), and the interval the set of shifts the test
// would not reject (Hollander and Wolfe, Nonparametric Statistical
// Methods, §3.2).

// A pairedShift is the result of the signed-rank analysis of n paired
// differences: the two-sided p-value of no shift, and the Hodges–Lehmann
// estimate with its interval, on the differences' own scale (for log
// ratios, logarithms: exp(Est) is the ratio).
type pairedShift struct {
	N            int // pairs with a non-zero difference
	P            float64
	Est, Lo, Hi  float64 // Lo and Hi are ±Inf when N is too small for an interval
	exact        bool    // P and the interval come from the exact null distribution
	sortedWalsh  []float64
	criticalLow  int // the interval's lower index into sortedWalsh; -1 for none
	criticalHigh int
}

// maxExactSignedRank bounds the pairs whose null distribution is computed
// exactly (O(n³) operations: 200 pairs are 2.7 million).
const maxExactSignedRank = 200

// signedRank returns the signed-rank analysis of the differences d at the
// given confidence. Zero differences carry no sign and are dropped
// (Wilcoxon's convention); tied magnitudes get their mean rank, and then
// the p-value comes from the normal approximation with the tie
// correction, as it does beyond maxExactSignedRank pairs. With no
// non-zero difference, P is 1 and the estimate 0 with no interval.
func signedRank(d []float64, confidence float64) pairedShift {
	var nz []float64
	for _, x := range d {
		if x != 0 && !math.IsNaN(x) {
			nz = append(nz, x)
		}
	}
	n := len(nz)
	r := pairedShift{N: n, P: 1, Lo: math.Inf(-1), Hi: math.Inf(1), criticalLow: -1}
	if n == 0 {
		return r
	}
	// Ranks of the magnitudes, ties at their mean rank.
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return CmpFloat(math.Abs(nz[a]), math.Abs(nz[b])) })
	rank := make([]float64, n)
	ties := false
	tieSum := 0.0 // Σ (t³ − t) over groups of tied magnitudes
	for i := 0; i < n; {
		j := i
		for j+1 < n && math.Abs(nz[idx[j+1]]) == math.Abs(nz[idx[i]]) {
			j++
		}
		mid := float64(i+j)/2 + 1
		for k := i; k <= j; k++ {
			rank[idx[k]] = mid
		}
		if t := float64(j - i + 1); t > 1 {
			ties = true
			tieSum += t*t*t - t
		}
		i = j + 1
	}
	wPlus := 0.0
	for i, x := range nz {
		if x > 0 {
			wPlus += rank[i]
		}
	}
	total := n * (n + 1) / 2
	mean := float64(total) / 2
	alphaHalf := (1 - confidence) / 2
	r.exact = !ties && n <= maxExactSignedRank
	if r.exact {
		cdf := signedRankCDF(n)
		// P(W ≤ w) and P(W ≥ w) = P(W ≤ total − w) by symmetry.
		w := int(math.Round(wPlus))
		lower := cdf[w]
		upper := cdf[total-w]
		r.P = math.Min(1, 2*math.Min(lower, upper))
		// The interval: the largest c with P(W ≤ c−1) ≤ α/2 gives
		// [A_(c), A_(total+1−c)] of the sorted Walsh averages (1-based).
		c := 0
		for c < len(cdf) && cdf[c] <= alphaHalf {
			c++
		}
		r.criticalLow, r.criticalHigh = c-1, total-c
	} else {
		variance := float64(n)*float64(n+1)*float64(2*n+1)/24 - tieSum/48
		sd := math.Sqrt(variance)
		if sd > 0 {
			z := (math.Abs(wPlus-mean) - 0.5) / sd
			r.P = math.Min(1, 2*normalSurvival(math.Max(z, 0)))
			c := int(math.Floor(mean - NormalQuantile(1-alphaHalf)*sd))
			r.criticalLow, r.criticalHigh = c-1, total-c
		}
	}
	walsh := make([]float64, 0, total)
	for i := range nz {
		for j := i; j < n; j++ {
			walsh = append(walsh, (nz[i]+nz[j])/2)
		}
	}
	slices.Sort(walsh)
	r.sortedWalsh = walsh
	r.Est = Median(walsh)
	if r.criticalLow >= 0 && r.criticalHigh < total && r.criticalLow <= r.criticalHigh {
		r.Lo, r.Hi = walsh[r.criticalLow], walsh[r.criticalHigh]
	} else {
		r.criticalLow = -1
	}
	return r
}

// signedRankCDF returns P(W ≤ w) for w = 0 … n(n+1)/2, W the signed-rank
// statistic of n pairs with no ties and no shift: each rank k joins the
// positive sum with probability ½, independently.
func signedRankCDF(n int) []float64 {
	total := n * (n + 1) / 2
	p := make([]float64, total+1)
	p[0] = 1
	top := 0
	for k := 1; k <= n; k++ {
		top += k
		for s := top; s >= 0; s-- {
			v := p[s]
			if s >= k {
				v += p[s-k]
			}
			p[s] = v / 2
		}
	}
	for s := 1; s <= total; s++ {
		p[s] += p[s-1]
	}
	return p
}

// PairedLogRatios returns log(head/base) for every round in which both
// sides have a value of a series, given each value's round (0: unknown,
// never paired); nil when any paired value is not positive (no ratio), or
// when the rounds are unknown.
func PairedLogRatios(base, head []float64, baseRounds, headRounds []int) []float64 {
	if len(baseRounds) != len(base) || len(headRounds) != len(head) {
		return nil
	}
	byRound := make(map[int]float64, len(base))
	for i, r := range baseRounds {
		if r > 0 {
			byRound[r] = base[i]
		}
	}
	var d []float64
	for i, r := range headRounds {
		b, ok := byRound[r]
		if r <= 0 || !ok {
			continue
		}
		if !(b > 0 && head[i] > 0) {
			return nil
		}
		d = append(d, math.Log(head[i]/b))
	}
	return d
}

// PairedShiftOf returns the Shift of the rounds' log ratios d: the
// Hodges–Lehmann estimate of the ratio and its signed-rank interval, in
// percent and, from the base's median, in the values' unit.
func PairedShiftOf(d []float64, baseMedian, confidence float64) Shift {
	r := signedRank(d, confidence)
	s := Shift{Log: true, base: baseMedian, d: slices.Clone(d), p: r.P}
	s.Pct, s.Lo, s.Hi = s.toPct(r.Est), math.Inf(-1), math.Inf(1)
	s.AbsLo, s.AbsHi = math.Inf(-1), math.Inf(1)
	if r.criticalLow >= 0 {
		s.Lo, s.Hi = s.toPct(r.Lo), s.toPct(r.Hi)
		s.AbsLo, s.AbsHi = s.toAbs(s.Lo), s.toAbs(s.Hi)
	}
	s.Abs = s.toAbs(s.Pct)
	return s
}
