package groth16

import (
	"fmt"
	"io"
	"math/big"
	"runtime"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/parallel"
)

// Fixed-base scalar multiplication for Setup. Every key point is s·G for the
// generator G of G1 or G2, so a table of j·2^{c·w}·G (w a c-bit window of the
// scalar, j = 1..2^c−1) turns each multiplication into ⌈255/c⌉ mixed
// additions and no doublings. On the 2-core development machine this is
// about 5× faster than gnark-crypto's BatchScalarMultiplicationG1, which
// doubles ~255 times per point (BenchmarkFixedBaseG1, 65536 points: 0.60 s
// against 3.27 s).

// fixedBaseBatch bounds the Jacobian scratch of one pass.
const fixedBaseBatch = 1 << 16

// fixedBaseWindow picks the window width c minimising table building plus
// per-scalar additions for n scalars, with c ≤ maxC.
func fixedBaseWindow(n, maxC int) int {
	best, bestCost := 2, -1
	for c := 2; c <= maxC; c++ {
		nw := (fr.Bits + c - 1) / c
		cost := nw*((1<<c)-1) + n*nw
		if bestCost < 0 || cost < bestCost {
			best, bestCost = c, cost
		}
	}
	return best
}

// window returns bits [c·w, c·w+c) of the regular-form scalar s.
func window(s *[4]uint64, w, c int) int {
	off := w * c
	limb, shift := off/64, uint(off%64)
	v := s[limb] >> shift
	if int(shift)+c > 64 && limb+1 < 4 {
		v |= s[limb+1] << (64 - shift)
	}
	return int(v & (1<<uint(c) - 1))
}

// fixedBaseG1 returns s_i·base for every scalar; a zero scalar gives the
// point at infinity.
func fixedBaseG1(base *bls12381.G1Affine, scalars []fr.Element) []bls12381.G1Affine {
	out := make([]bls12381.G1Affine, len(scalars))
	if len(scalars) == 0 {
		return out
	}
	c := fixedBaseWindow(len(scalars), 14)
	nw := (fr.Bits + c - 1) / c
	size := 1<<c - 1

	// Window bases 2^{c·w}·G, then every multiple 1..2^c−1 of each.
	bases := make([]bls12381.G1Jac, nw)
	bases[0].FromAffine(base)
	for w := 1; w < nw; w++ {
		bases[w] = bases[w-1]
		for range c {
			bases[w].DoubleAssign()
		}
	}
	basesAff := bls12381.BatchJacobianToAffineG1(bases)
	tabJac := make([]bls12381.G1Jac, nw*size)
	parallel.Execute(nw, func(lo, hi int) {
		for w := lo; w < hi; w++ {
			t := tabJac[w*size : (w+1)*size]
			t[0].FromAffine(&basesAff[w])
			for j := 1; j < size; j++ {
				t[j] = t[j-1]
				t[j].AddMixed(&basesAff[w])
			}
		}
	})
	table := bls12381.BatchJacobianToAffineG1(tabJac)
	tabJac = nil

	scratch := make([]bls12381.G1Jac, min(len(scalars), fixedBaseBatch))
	for start := 0; start < len(scalars); start += fixedBaseBatch {
		end := min(start+fixedBaseBatch, len(scalars))
		acc := scratch[:end-start]
		parallel.Execute(len(acc), func(lo, hi int) {
			for i := lo; i < hi; i++ {
				bits := scalars[start+i].Bits()
				var p bls12381.G1Jac
				p.X.SetOne()
				p.Y.SetOne() // Z = 0: infinity
				for w := 0; w < nw; w++ {
					if d := window(&bits, w, c); d != 0 {
						p.AddMixed(&table[w*size+d-1])
					}
				}
				acc[i] = p
			}
		})
		copy(out[start:end], bls12381.BatchJacobianToAffineG1(acc))
	}
	return out
}

// fixedBaseG2 is fixedBaseG1 for G2.
func fixedBaseG2(base *bls12381.G2Affine, scalars []fr.Element) []bls12381.G2Affine {
	out := make([]bls12381.G2Affine, len(scalars))
	if len(scalars) == 0 {
		return out
	}
	c := fixedBaseWindow(len(scalars), 13)
	nw := (fr.Bits + c - 1) / c
	size := 1<<c - 1

	bases := make([]bls12381.G2Jac, nw)
	bases[0].FromAffine(base)
	for w := 1; w < nw; w++ {
		bases[w] = bases[w-1]
		for range c {
			bases[w].DoubleAssign()
		}
	}
	basesAff := batchJacobianToAffineG2(bases)
	tabJac := make([]bls12381.G2Jac, nw*size)
	parallel.Execute(nw, func(lo, hi int) {
		for w := lo; w < hi; w++ {
			t := tabJac[w*size : (w+1)*size]
			t[0].FromAffine(&basesAff[w])
			for j := 1; j < size; j++ {
				t[j] = t[j-1]
				t[j].AddMixed(&basesAff[w])
			}
		}
	})
	table := batchJacobianToAffineG2(tabJac)
	tabJac = nil

	scratch := make([]bls12381.G2Jac, min(len(scalars), fixedBaseBatch))
	for start := 0; start < len(scalars); start += fixedBaseBatch {
		end := min(start+fixedBaseBatch, len(scalars))
		acc := scratch[:end-start]
		parallel.Execute(len(acc), func(lo, hi int) {
			for i := lo; i < hi; i++ {
				bits := scalars[start+i].Bits()
				var p bls12381.G2Jac
				p.X.SetOne()
				p.Y.SetOne()
				for w := 0; w < nw; w++ {
					if d := window(&bits, w, c); d != 0 {
						p.AddMixed(&table[w*size+d-1])
					}
				}
				acc[i] = p
			}
		})
		copy(out[start:end], batchJacobianToAffineG2(acc))
	}
	return out
}

// batchJacobianToAffineG2 converts with one field inversion (Montgomery's
// trick); infinity (Z = 0) becomes (0, 0). gnark-crypto has this for G1 only.
func batchJacobianToAffineG2(points []bls12381.G2Jac) []bls12381.G2Affine {
	out := make([]bls12381.G2Affine, len(points))
	var acc bls12381.E2
	acc.SetOne()
	// out[i].X temporarily holds the product of the Z before i.
	for i := range points {
		if points[i].Z.IsZero() {
			continue
		}
		out[i].X = acc
		acc.Mul(&acc, &points[i].Z)
	}
	acc.Inverse(&acc)
	for i := len(points) - 1; i >= 0; i-- {
		if points[i].Z.IsZero() {
			continue
		}
		out[i].X.Mul(&out[i].X, &acc) // 1/Z_i
		acc.Mul(&acc, &points[i].Z)
	}
	parallel.Execute(len(points), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			if points[i].Z.IsZero() {
				continue
			}
			zi := out[i].X
			var zi2 bls12381.E2
			zi2.Square(&zi)
			out[i].X.Mul(&points[i].X, &zi2)
			out[i].Y.Mul(&points[i].Y, &zi2).Mul(&out[i].Y, &zi)
		}
	})
	return out
}

// randomScalar draws a uniform non-zero field element from rng (64 bytes
// reduced mod r, bias < 2^-250).
func randomScalar(rng io.Reader) (fr.Element, error) {
	var buf [64]byte
	for {
		if _, err := io.ReadFull(rng, buf[:]); err != nil {
			return fr.Element{}, fmt.Errorf("read randomness: %w", err)
		}
		var s fr.Element
		s.SetBigInt(new(big.Int).SetBytes(buf[:]))
		if !s.IsZero() {
			return s, nil
		}
	}
}

// randomPointsG1 returns n random-looking G1 points cheaply: each worker
// starts from its own random point P and walks P, P+R, P+2R, … with mixed
// additions in Jacobian coordinates, converted to affine by batch
// normalisation a chunk (walkChunk points) at a time, so that the walk
// never holds more than a chunk per worker in Jacobian coordinates (at
// 2^24 constraints, about 67 M points: 9.7 GB of Jacobian points were
// held at once before, beside the 6.4 GB of affine ones). The points are
// distinct and not at infinity (with overwhelming probability), which is
// all a timing run needs.
func randomPointsG1(rng io.Reader, n int) ([]bls12381.G1Affine, error) {
	if n == 0 {
		return nil, nil
	}
	workers := min(runtime.GOMAXPROCS(0)*4, max(1, n/1024))
	starts, step, err := randomBasesG1(rng, workers)
	if err != nil {
		return nil, err
	}
	out := make([]bls12381.G1Affine, n)
	parallel.Execute(workers, func(lo, hi int) {
		jac := make([]bls12381.G1Jac, 0, walkChunk)
		for k := lo; k < hi; k++ {
			from, to := k*n/workers, (k+1)*n/workers
			var p bls12381.G1Jac
			p.FromAffine(&starts[k])
			for i := from; i < to; i += walkChunk {
				jac = jac[:0]
				for range min(walkChunk, to-i) {
					jac = append(jac, p)
					p.AddMixed(&step)
				}
				copy(out[i:], bls12381.BatchJacobianToAffineG1(jac))
			}
		}
	})
	return out, nil
}

// walkChunk is how many points of a random walk are converted to affine
// at a time (one inversion each chunk: 1 in 4,096 is noise).
const walkChunk = 4096

func randomBasesG1(rng io.Reader, k int) ([]bls12381.G1Affine, bls12381.G1Affine, error) {
	scalars := make([]fr.Element, k+1)
	for i := range scalars {
		s, err := randomScalar(rng)
		if err != nil {
			return nil, bls12381.G1Affine{}, err
		}
		scalars[i] = s
	}
	_, _, g1, _ := bls12381.Generators()
	pts := bls12381.BatchScalarMultiplicationG1(&g1, scalars)
	return pts[:k], pts[k], nil
}

// randomPointsG2 is randomPointsG1 for G2.
func randomPointsG2(rng io.Reader, n int) ([]bls12381.G2Affine, error) {
	if n == 0 {
		return nil, nil
	}
	workers := min(runtime.GOMAXPROCS(0)*4, max(1, n/1024))
	scalars := make([]fr.Element, workers+1)
	for i := range scalars {
		s, err := randomScalar(rng)
		if err != nil {
			return nil, err
		}
		scalars[i] = s
	}
	_, _, _, g2 := bls12381.Generators()
	bases := bls12381.BatchScalarMultiplicationG2(&g2, scalars)
	step := bases[workers]
	out := make([]bls12381.G2Affine, n)
	parallel.Execute(workers, func(lo, hi int) {
		jac := make([]bls12381.G2Jac, 0, walkChunk)
		for k := lo; k < hi; k++ {
			from, to := k*n/workers, (k+1)*n/workers
			var p bls12381.G2Jac
			p.FromAffine(&bases[k])
			for i := from; i < to; i += walkChunk {
				jac = jac[:0]
				for range min(walkChunk, to-i) {
					jac = append(jac, p)
					p.AddMixed(&step)
				}
				copy(out[i:], batchJacobianToAffineG2(jac))
			}
		}
	})
	return out, nil
}
