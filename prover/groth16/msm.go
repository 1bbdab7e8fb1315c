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
	st := MSMStats{Points: len(points), MultiExp: len(points)}
	ps, ss, ones := points, scalars, []int32(nil)
	if !plain {
		ps, ss, ones = split(points, scalars, &st)
	}
	p, err := e.MultiExpG1(ps, ss)
	if err != nil || len(ones) == 0 {
		return p, st, err
	}
	sum := sumG1(points, ones)
	p.AddAssign(&sum)
	return p, st, nil
}

// msmG2 is msmG1 for G2, except that an engine whose G2 MSM runs on its
// device (OffloadsG2) gets every term, as if plain were set.
func msmG2(e Engine, points []bls12381.G2Affine, scalars []fr.Element, plain bool) (bls12381.G2Jac, MSMStats, error) {
	plain = plain || offloadsG2(e)
	st := MSMStats{Points: len(points), MultiExp: len(points)}
	ps, ss, ones := points, scalars, []int32(nil)
	if !plain {
		ps, ss, ones = split(points, scalars, &st)
	}
	p, err := e.MultiExpG2(ps, ss)
	if err != nil || len(ones) == 0 {
		return p, st, err
	}
	sum := sumG2(points, ones)
	p.AddAssign(&sum)
	return p, st, nil
}

// affinePoint is a pointer to an affine curve point of either group.
type affinePoint[P any] interface {
	*P
	IsInfinity() bool
}

// split sorts the terms of Σ scalars[i]·points[i] and counts them into st:
// zero scalars and points at infinity are dropped, scalar-one points are
// returned by index (to be summed), and the rest are returned for the
// MultiExp. When every term needs the MultiExp it copies nothing and
// returns the inputs.
func split[P any, PP affinePoint[P]](points []P, scalars []fr.Element, st *MSMStats) (ps []P, ss []fr.Element, ones []int32) {
	st.MultiExp = 0
	for i := range points {
		switch s := &scalars[i]; {
		case s.IsZero():
			st.Zeros++
		case PP(&points[i]).IsInfinity():
			st.Infinity++
		case s.IsOne():
			st.Ones++
		default:
			st.MultiExp++
		}
	}
	if st.MultiExp == len(points) {
		return points, scalars, nil
	}
	ones = make([]int32, 0, st.Ones)
	ps = make([]P, 0, st.MultiExp)
	ss = make([]fr.Element, 0, st.MultiExp)
	for i := range points {
		switch s := &scalars[i]; {
		case s.IsZero() || PP(&points[i]).IsInfinity():
		case s.IsOne():
			ones = append(ones, int32(i))
		default:
			ps = append(ps, points[i])
			ss = append(ss, *s)
		}
	}
	return ps, ss, ones
}
