package stats

import "math"

// This file holds the exact tests of counts on which the profile and
// memory diffs list a function or an allocation site: Fisher's exact
// test of two proportions and the conditional binomial test of two
// Poisson rates. Both condition on the sum of the two counts, which
// leaves a null distribution free of the unknown share or rate, exact at
// any count (a normal approximation is not, at the few samples a noisy
// function has), and both are two-sided by the minimum-likelihood rule,
// as R's fisher.test and binom.test are: the p-value sums the
// probabilities of every outcome no more likely than the observed one.

// tieTolerance is the relative difference under which two probabilities
// of a null distribution count as equal when the two-sided p-value sums
// those no larger than the observed one's: without it, rounding could
// leave out the mirror image of a symmetric outcome. R uses the same.
const tieTolerance = 1e-7

// FisherExactP returns the two-sided p-value of Fisher's exact test that
// one item (a function) holds the same share of two sets of samples: k1
// of n1 samples on one side, k2 of n2 on the other. Given the k1+k2
// samples of the item in all, k2 is hypergeometric under the null: the
// number of them among n2 drawn from the n1+n2 without replacement. It
// returns 1 for counts that are no such table (a negative count, or a
// part larger than its whole).
func FisherExactP(k1, n1, k2, n2 int64) float64 {
	if k1 < 0 || k2 < 0 || k1 > n1 || k2 > n2 {
		return 1
	}
	n, k := n1+n2, k1+k2
	d := discrete{
		lo: max(0, k-n1),
		hi: min(k, n2),
		logP: func(y int64) float64 {
			return logChoose(k, y) + logChoose(n-k, n2-y) - logChoose(n, n2)
		},
		ratio: func(y int64) float64 {
			return float64(k-y) * float64(n2-y) / (float64(y+1) * float64(n1-k+y+1))
		},
	}
	d.mode = min(max((n2+1)*(k+1)/(n+2), d.lo), d.hi)
	return d.twoSidedP(k2)
}

// ConditionalBinomialP returns the two-sided p-value of the conditional
// binomial test that two Poisson counts have the same rate: k1 events in
// exposure w1 against k2 in w2 (the exposures are the number of runs of
// each side). Given k1+k2, k2 is binomial under the null, with k1+k2
// trials of probability w2/(w1+w2). It returns 1 for a negative count or
// an exposure that is not positive.
func ConditionalBinomialP(k1 int64, w1 float64, k2 int64, w2 float64) float64 {
	if k1 < 0 || k2 < 0 || !(w1 > 0) || !(w2 > 0) {
		return 1
	}
	k, pi := k1+k2, w2/(w1+w2)
	odds := pi / (1 - pi)
	d := discrete{
		lo: 0,
		hi: k,
		logP: func(y int64) float64 {
			return logChoose(k, y) + float64(y)*math.Log(pi) + float64(k-y)*math.Log1p(-pi)
		},
		ratio: func(y int64) float64 {
			return float64(k-y) / float64(y+1) * odds
		},
	}
	d.mode = min(max(int64(float64(k+1)*pi), 0), k)
	return d.twoSidedP(k2)
}

// logChoose returns the natural logarithm of the binomial coefficient
// n over k, for 0 ≤ k ≤ n.
func logChoose(n, k int64) float64 {
	return logFactorial(n) - logFactorial(k) - logFactorial(n-k)
}

// logFactorial returns ln(n!).
func logFactorial(n int64) float64 {
	v, _ := math.Lgamma(float64(n) + 1)
	return v
}

// A discrete is a distribution on the integers lo…hi that is unimodal
// (log-concave, in fact) around mode: the hypergeometric and binomial
// null distributions of the tests above. Its probabilities fall ever
// faster away from the mode, so a tail sum can stop once what is left
// is negligible, and the outcomes no more likely than a given one form
// the two tails beyond two bounds.
type discrete struct {
	lo, hi, mode int64
	// logP returns ln P(y), for lo ≤ y ≤ hi.
	logP func(y int64) float64
	// ratio returns P(y+1)/P(y), for lo ≤ y < hi.
	ratio func(y int64) float64
}

// twoSidedP returns the probability of the outcomes no more likely than
// x (within tieTolerance): the two tails from where the probabilities on
// either side of the mode fall to x's. When the mode itself is no more
// likely than x (x is a mode), every outcome counts and it returns 1.
func (d discrete) twoSidedP(x int64) float64 {
	if d.lo >= d.hi {
		return 1
	}
	limit := d.logP(x) + math.Log1p(tieTolerance)
	if d.logP(d.mode) <= limit {
		return 1
	}
	return min(1, d.lowerTail(d.lastBelowMode(limit))+d.upperTail(d.firstAboveMode(limit)))
}

// lastBelowMode returns the largest y below the mode with ln P(y) ≤
// limit, or lo−1 when there is none. Below the mode P rises, so a
// binary search finds it.
func (d discrete) lastBelowMode(limit float64) int64 {
	lo, hi := d.lo, d.mode // the answer is in [lo−1, mode−1]
	for lo < hi {
		mid := lo + (hi-lo)/2
		if d.logP(mid) <= limit {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo - 1
}

// firstAboveMode returns the smallest y above the mode with ln P(y) ≤
// limit, or hi+1 when there is none.
func (d discrete) firstAboveMode(limit float64) int64 {
	lo, hi := d.mode+1, d.hi+1 // the answer is in [mode+1, hi+1]
	for lo < hi {
		mid := lo + (hi-lo)/2
		if d.logP(mid) <= limit {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// tailPrecision is the relative size of the rest of a tail below which
// a tail sum stops.
const tailPrecision = 1e-15

// upperTail returns P(Y ≥ from), for from above the mode (0 beyond hi).
// It sums the probabilities relative to P(from), term by term through
// ratio, and stops when the rest, bounded by a geometric series because
// the ratio only falls, is negligible.
func (d discrete) upperTail(from int64) float64 {
	if from > d.hi {
		return 0
	}
	sum, term := 1.0, 1.0
	for y := from; y < d.hi; y++ {
		r := d.ratio(y)
		term *= r
		sum += term
		if r < 1 && term*r/(1-r) < tailPrecision*sum {
			break
		}
	}
	return math.Exp(d.logP(from)) * sum
}

// lowerTail returns P(Y ≤ from), for from below the mode (0 below lo),
// as upperTail does.
func (d discrete) lowerTail(from int64) float64 {
	if from < d.lo {
		return 0
	}
	sum, term := 1.0, 1.0
	for y := from; y > d.lo; y-- {
		r := 1 / d.ratio(y-1)
		term *= r
		sum += term
		if r < 1 && term*r/(1-r) < tailPrecision*sum {
			break
		}
	}
	return math.Exp(d.logP(from)) * sum
}
