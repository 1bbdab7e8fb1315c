package stats

import "math"

// ClopperPearson returns the exact two-sided binomial interval of k
// successes in n trials at the given confidence.
func ClopperPearson(k, n int, confidence float64) (lo, hi float64) {
	a := (1 - confidence) / 2
	// Bisection on the binomial tail, which is monotone in p.
	tail := func(p float64, atLeast int) float64 { // P(X ≥ atLeast)
		sum := 0.0
		for x := atLeast; x <= n; x++ {
			lg, _ := math.Lgamma(float64(n + 1))
			l1, _ := math.Lgamma(float64(x + 1))
			l2, _ := math.Lgamma(float64(n - x + 1))
			sum += math.Exp(lg - l1 - l2 + float64(x)*math.Log(p) + float64(n-x)*math.Log1p(-p))
		}
		return sum
	}
	solve := func(f func(p float64) bool) float64 {
		l, h := 0.0, 1.0
		for range 60 {
			m := (l + h) / 2
			if f(m) {
				h = m
			} else {
				l = m
			}
		}
		return (l + h) / 2
	}
	if k > 0 {
		lo = solve(func(p float64) bool { return tail(p, k) >= a })
	}
	hi = 1
	if k < n {
		hi = solve(func(p float64) bool { return 1-tail(p, k+1) <= a })
	}
	return lo, hi
}
