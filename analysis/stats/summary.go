package stats

import (
	"math"
	"slices"

	"golang.org/x/perf/benchmath"
)

// FisherExact returns the two-sided p-value of Fisher's exact test that
// a of n and b of m are draws of one share: the sum of the probabilities
// of every table with the same margins no likelier than the one seen.
func FisherExact(a, n, b, m int) float64 {
	k := a + b // non-zero runs in all
	lchoose := func(n, r int) float64 {
		x, _ := math.Lgamma(float64(n + 1))
		y, _ := math.Lgamma(float64(r + 1))
		z, _ := math.Lgamma(float64(n - r + 1))
		return x - y - z
	}
	total := lchoose(n+m, k)
	prob := func(x int) float64 { return math.Exp(lchoose(n, x) + lchoose(m, k-x) - total) }
	seen := prob(a)
	p := 0.0
	for x := max(0, k-m); x <= min(k, n); x++ {
		if q := prob(x); q <= seen*(1+1e-7) {
			p += q
		}
	}
	return math.Min(1, p)
}

// SpreadP returns the p-value of a change of spread between bv and hv:
// Mann-Whitney U on each run's distance from its own side's median (a
// rank form of the Brown–Forsythe test).
func SpreadP(bv, hv []float64) float64 {
	dev := func(v []float64) []float64 {
		m := Median(slices.Sorted(slices.Values(v)))
		out := make([]float64, len(v))
		for i, x := range v {
			out[i] = math.Abs(x - m)
		}
		return out
	}
	th := benchmath.DefaultThresholds
	return benchmath.AssumeNothing.Compare(benchmath.NewSample(dev(bv), &th), benchmath.NewSample(dev(hv), &th)).P
}

// IQR returns the interquartile range of v.
func IQR(v []float64) float64 {
	s := slices.Sorted(slices.Values(v))
	q := func(f float64) float64 {
		x := f * float64(len(s)-1)
		i := int(x)
		if i+1 >= len(s) {
			return s[len(s)-1]
		}
		return s[i] + (x-float64(i))*(s[i+1]-s[i])
	}
	return q(0.75) - q(0.25)
}

// Quartiles returns Q1 and Q3 of xs (at least 2 values) as the medians of
// its lower and upper halves, excluding the middle value of an odd count.
// It sorts xs.
func Quartiles(xs []float64) (q1, q3 float64) {
	slices.Sort(xs)
	n := len(xs)
	half := n / 2
	return Median(xs[:half]), Median(xs[n-half:])
}

// Median returns the median of sorted xs (NaN when empty).
func Median(sorted []float64) float64 {
	n := len(sorted)
	switch {
	case n == 0:
		return math.NaN()
	case n%2 == 1:
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

func Finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// MedianOf returns the median of v, which it leaves unsorted.
func MedianOf(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return Median(s)
}

func MeanStddev(v []float64) (mean, sd float64) {
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	if len(v) < 2 {
		return mean, 0
	}
	for _, x := range v {
		sd += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(sd / float64(len(v)-1))
}

// NormalQuantile returns the standard normal quantile of p, 0 < p < 1.
func NormalQuantile(p float64) float64 { return math.Sqrt2 * math.Erfinv(2*p-1) }
