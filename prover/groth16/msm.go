package groth16

import (
	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// MSMStats gives the real sizes of one multi-scalar multiplication of a
// proof. Points = Zeros + Infinity + Ones + MultiExp.
type MSMStats struct {
	Points   int // points in the query (variables without a point are never considered)
	Zeros    int // dropped: scalar 0
	Infinity int // dropped: point at infinity (nonzero scalar)
	Ones     int // summed with plain additions: scalar 1
	MultiExp int // handed to the Engine's MultiExp
}

// Why split off the zeros and ones: in a SHA-256-like circuit almost every
// aux value is a bit, so the A, B and L queries see mostly 0 and 1 scalars.
// gnark-crypto's MultiExp skips zero digits but still sizes its windows
// (and so its per-window bucket reduction, ~2^c additions per window) by
// the full point count, and reads every scalar's digits in every window.
// Dropping zeros and adding the scalar-one points directly leaves a much
// smaller MultiExp, so the split is kept. Measured on the 2-core development
// machine (medians of 6 interleaved runs, ±8–44% run-to-run noise there),
// scalars 50% zero, 49% one, 1% uniform (dist=bits) or all uniform:
//
//	                       split      plain MultiExp
//	G1 bits    2^12       2.4 ms        3.9 ms
//	G1 bits    2^16      15.5 ms       46.6 ms
//	G1 bits    2^18      58.1 ms      181.9 ms
//	G2 bits    2^16      36.8 ms      121.9 ms
//	G1 random  2^16     285 ms        267 ms     (not significant, p=0.70)
//	G1 random  2^18     989 ms        990 ms
//	G2 random  2^16     728 ms        695 ms     (not significant, p=0.82)
//
// On uniform scalars the split is one scan and then the same MultiExp on
// the caller's slices (nothing is copied when there is nothing to split).
// Whole proofs of the SHA-256-like test circuit: 2^16 rows 387 ms against
// 496 ms, 2^18 rows 1.51 s against 1.78 s (BenchmarkProve vs
// BenchmarkProveReference).

// msmG1 computes Σ scalars[i]·points[i], dropping zero scalars and points at
// infinity, summing scalar-one points with batched affine additions (sumG1)
// and giving the rest to e.MultiExpG1. With plain set it hands everything
// to the Engine.
func msmG1(e Engine, points []bls12381.G1Affine, scalars []fr.Element, plain bool) (bls12381.G1Jac, MSMStats, error) {
	st := MSMStats{Points: len(points)}
	if plain {
		st.MultiExp = len(points)
		p, err := e.MultiExpG1(points, scalars)
		return p, st, err
	}
	classify(&st, len(points), func(i int) (bool, bool, bool) {
		return scalars[i].IsZero(), points[i].IsInfinity(), scalars[i].IsOne()
	})
	if st.MultiExp == len(points) {
		p, err := e.MultiExpG1(points, scalars)
		return p, st, err
	}
	ones := make([]int32, 0, st.Ones)
	ps := make([]bls12381.G1Affine, 0, st.MultiExp)
	ss := make([]fr.Element, 0, st.MultiExp)
	for i := range points {
		s, p := &scalars[i], &points[i]
		switch {
		case s.IsZero() || p.IsInfinity():
		case s.IsOne():
			ones = append(ones, int32(i))
		default:
			ps = append(ps, *p)
			ss = append(ss, *s)
		}
	}
	sum := sumG1(points, ones)
	p, err := e.MultiExpG1(ps, ss)
	if err != nil {
		return p, st, err
	}
	p.AddAssign(&sum)
	return p, st, nil
}

// msmG2 is msmG1 for G2.
func msmG2(e Engine, points []bls12381.G2Affine, scalars []fr.Element, plain bool) (bls12381.G2Jac, MSMStats, error) {
	st := MSMStats{Points: len(points)}
	if plain {
		st.MultiExp = len(points)
		p, err := e.MultiExpG2(points, scalars)
		return p, st, err
	}
	classify(&st, len(points), func(i int) (bool, bool, bool) {
		return scalars[i].IsZero(), points[i].IsInfinity(), scalars[i].IsOne()
	})
	if st.MultiExp == len(points) {
		p, err := e.MultiExpG2(points, scalars)
		return p, st, err
	}
	ones := make([]int32, 0, st.Ones)
	ps := make([]bls12381.G2Affine, 0, st.MultiExp)
	ss := make([]fr.Element, 0, st.MultiExp)
	for i := range points {
		s, p := &scalars[i], &points[i]
		switch {
		case s.IsZero() || p.IsInfinity():
		case s.IsOne():
			ones = append(ones, int32(i))
		default:
			ps = append(ps, *p)
			ss = append(ss, *s)
		}
	}
	sum := sumG2(points, ones)
	p, err := e.MultiExpG2(ps, ss)
	if err != nil {
		return p, st, err
	}
	p.AddAssign(&sum)
	return p, st, nil
}

// classify counts zeros, infinities, ones and the rest into st.
func classify(st *MSMStats, n int, at func(int) (zero, inf, one bool)) {
	for i := 0; i < n; i++ {
		zero, inf, one := at(i)
		switch {
		case zero:
			st.Zeros++
		case inf:
			st.Infinity++
		case one:
			st.Ones++
		default:
			st.MultiExp++
		}
	}
}
