// Package changepoint finds where a series of measurements shifts, with
// E-Divisive means (Matteson and James, "A Nonparametric Approach for
// Multiple Change Point Analysis of Multivariate Data", 2014), the method
// MongoDB's and Apache Otava's performance-regression detectors use.
//
// A series (per-commit medians of one benchmark, phase and unit, in commit
// order) goes in; change points come out, each with the permutation test's
// p-value and the medians on either side. Detect never reads a clock, a
// file or a database, and its answer depends only on the series and the
// Options: the permutations come from a seeded generator.
//
// The method, as built here. For a segment z[s:e) and a split τ, with
// m = τ − s and n = e − τ points on the two sides,
//
//	Q(τ) = m·n/(m+n) · ( 2/(m·n)·Σ|x−y| − 2/(m(m−1))·Σ|x−x'| − 2/(n(n−1))·Σ|y−y'| )
//
// (x, x' from the left side, y, y' from the right; the energy distance
// with exponent 1, scaled by the sides' sizes). It is large when the two
// sides differ in distribution, not only in mean, and because it uses
// |·| rather than squares, one outlier moves it little. Each round takes
// the split with the largest Q over all current segments and keeps it only
// if a permutation test finds it significant: the segment's values are
// shuffled Permutations times and the largest Q of each shuffle is
// compared with the observed one. The first split that is not significant
// ends the search. A segment side is never shorter than MinSegment, so a
// lone spike cannot be cut out as a segment of its own, and a shuffle
// moves the spike about as freely as the split could, so it does not make
// a split significant either.
//
// Cost: O(L²) per candidate search on a segment of L points, and
// O(R·L²) for the test with R permutations (stopped early once the split
// can no longer be significant): about 0.1 s for R = 199 at L = 500.
package changepoint

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
)

// Options are the detector's parameters; the zero value means the
// defaults.
type Options struct {
	// Alpha is the significance level of each split (default 0.01: a
	// dashboard tests every benchmark, phase and unit, so a lower level
	// than compare's 0.05 keeps quiet series quiet).
	Alpha float64
	// Permutations is the number of shuffles in each test (default 199;
	// the smallest p-value it can give is 1/(Permutations+1)).
	Permutations int
	// MinSegment is the fewest points on each side of a split (default 5,
	// at least 2).
	MinSegment int
	// MinChange drops change points whose medians on either side differ by
	// less than this fraction (0.02: 2%); the segments around a dropped
	// point merge. Default 0: keep every significant point.
	MinChange float64
	// Seed seeds the permutations (default 1).
	Seed uint64
}

func (o Options) withDefaults() Options {
	if o.Alpha == 0 {
		o.Alpha = 0.01
	}
	if o.Permutations == 0 {
		o.Permutations = 199
	}
	if o.MinSegment == 0 {
		o.MinSegment = 5
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	return o
}

func (o Options) check() error {
	switch {
	case !(o.Alpha > 0 && o.Alpha < 1):
		return fmt.Errorf("alpha %v: want a significance level between 0 and 1, such as 0.01", o.Alpha)
	case o.Permutations < 1:
		return fmt.Errorf("permutations %d: want at least 1 (199 gives p-values down to 0.005)", o.Permutations)
	case o.MinSegment < 2:
		return fmt.Errorf("minimum segment %d: want at least 2 points a side", o.MinSegment)
	case o.MinChange < 0 || math.IsNaN(o.MinChange):
		return fmt.Errorf("minimum change %v: want a fraction of 0 or more, such as 0.02", o.MinChange)
	case 1/float64(o.Permutations+1) > o.Alpha:
		return fmt.Errorf("%d permutations cannot reach alpha %v (the smallest p-value is 1/%d): use at least %d",
			o.Permutations, o.Alpha, o.Permutations+1, int(math.Ceil(1/o.Alpha))-1)
	}
	return nil
}

// A Point is a change point: the series' values from Index on belong to a
// new segment.
type Point struct {
	Index int     // the first index after the change
	P     float64 // the permutation test's p-value when the split was made
	Q     float64 // the divergence statistic of the split
	// Before and After are the medians of the final segments that end and
	// start at Index; Change is After/Before − 1 (±Inf when Before is 0
	// and After is not).
	Before, After, Change float64
}

// ErrBadValue is wrapped by Detect's error for a NaN or infinite value.
var ErrBadValue = errors.New("not a finite number")

// Detect returns the change points of series, in index order.
func Detect(series []float64, opt Options) ([]Point, error) {
	opt = opt.withDefaults()
	if err := opt.check(); err != nil {
		return nil, fmt.Errorf("change points: %w", err)
	}
	for i, v := range series {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("change points: value %d is %v: %w", i, v, ErrBadValue)
		}
	}
	d := detector{opt: opt, rng: rand.New(rand.NewPCG(opt.Seed, 0x9e3779b97f4a7c15))}
	type segment struct {
		s, e  int
		tau   int // best split, or −1 when the segment is too short
		q     float64
		known bool
	}
	segs := []segment{{s: 0, e: len(series)}}
	var points []Point
	for {
		best := -1
		for i := range segs {
			g := &segs[i]
			if !g.known {
				g.tau, g.q = d.bestSplit(series[g.s:g.e])
				g.known = true
			}
			if g.tau >= 0 && (best < 0 || g.q > segs[best].q) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		g := segs[best]
		p := d.pValue(series[g.s:g.e], g.q)
		if p > opt.Alpha {
			break
		}
		at := g.s + g.tau
		points = append(points, Point{Index: at, P: p, Q: g.q})
		segs = slices.Replace(segs, best, best+1, segment{s: g.s, e: at}, segment{s: at, e: g.e})
	}
	sort.Slice(points, func(i, j int) bool { return points[i].Index < points[j].Index })
	points = describe(series, points)
	if opt.MinChange > 0 {
		// Drop the smallest change below the threshold, merge, and look
		// again: merging changes the medians on both sides of its
		// neighbours.
		for {
			worst := -1
			for i, pt := range points {
				if math.Abs(pt.Change) < opt.MinChange && (worst < 0 || math.Abs(pt.Change) < math.Abs(points[worst].Change)) {
					worst = i
				}
			}
			if worst < 0 {
				break
			}
			points = describe(series, slices.Delete(points, worst, worst+1))
		}
	}
	return points, nil
}

// describe fills each point's medians from the segments the points make.
func describe(series []float64, points []Point) []Point {
	bounds := make([]int, 0, len(points)+2)
	bounds = append(bounds, 0)
	for _, p := range points {
		bounds = append(bounds, p.Index)
	}
	bounds = append(bounds, len(series))
	for i := range points {
		b := median(series[bounds[i]:bounds[i+1]])
		a := median(series[bounds[i+1]:bounds[i+2]])
		points[i].Before, points[i].After = b, a
		switch {
		case b != 0:
			points[i].Change = a/b - 1
		case a == 0:
			points[i].Change = 0
		default:
			points[i].Change = math.Inf(int(math.Copysign(1, a)))
		}
	}
	return points
}

func median(x []float64) float64 {
	s := slices.Clone(x)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

type detector struct {
	opt     Options
	rng     *rand.Rand
	scratch []float64
}

// bestSplit returns the split of z with the largest Q, as an index into z,
// or −1 when z is too short to split.
func (d *detector) bestSplit(z []float64) (int, float64) {
	k := d.opt.MinSegment
	L := len(z)
	if L < 2*k {
		return -1, 0
	}
	// Move z[τ] from the right side to the left, τ = 0, 1, …, keeping
	// A = Σ within left, B = Σ within right, W = Σ between (over pairs).
	var a, b, w float64
	for i := 0; i < L; i++ {
		for j := i + 1; j < L; j++ {
			b += math.Abs(z[i] - z[j])
		}
	}
	best, bestQ := -1, math.Inf(-1)
	for tau := 1; tau <= L-k; tau++ {
		x := z[tau-1] // moves left
		var toLeft, toRight float64
		for i := 0; i < tau-1; i++ {
			toLeft += math.Abs(z[i] - x)
		}
		for j := tau; j < L; j++ {
			toRight += math.Abs(x - z[j])
		}
		a += toLeft
		b -= toRight
		w += toRight - toLeft
		if tau < k {
			continue
		}
		m, n := float64(tau), float64(L-tau)
		e := 2*w/(m*n) - 2*a/(m*(m-1)) - 2*b/(n*(n-1))
		if q := m * n / (m + n) * e; q > bestQ {
			best, bestQ = tau, q
		}
	}
	return best, bestQ
}

// pValue is the permutation test of a split of z with statistic q: the
// share of shuffles of z whose best split scores at least q, counting the
// observed one. It stops once the answer can no longer be ≤ Alpha.
func (d *detector) pValue(z []float64, q float64) float64 {
	r := d.opt.Permutations
	limit := int(math.Floor(d.opt.Alpha * float64(r+1))) // at most limit−1 shuffles may reach q
	d.scratch = append(d.scratch[:0], z...)
	atLeast := 0
	for i := 0; i < r; i++ {
		d.rng.Shuffle(len(d.scratch), func(a, b int) { d.scratch[a], d.scratch[b] = d.scratch[b], d.scratch[a] })
		if _, qp := d.bestSplit(d.scratch); qp >= q {
			atLeast++
			if atLeast >= limit {
				return float64(atLeast+1) / float64(i+2) // not significant; an estimate from the shuffles so far
			}
		}
	}
	return float64(atLeast+1) / float64(r+1)
}
