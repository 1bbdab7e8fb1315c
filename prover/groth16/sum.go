package groth16

import (
	"runtime"
	"sync"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fp"
)

// Summing the points whose scalar is one. A tree of affine additions with
// one batched inversion per level and worker (Montgomery's trick) costs
// about 5M+1S per addition against 7M+4S for a mixed Jacobian addition; on
// the 2-core development machine it halves the time of the sum, which is
// most of an MSM over a bit-valued assignment (BenchmarkSumG1, 4 runs:
// 65536 points 11.2 ms against 21.5 ms, 16384 points 3.0 ms against
// 4.9 ms, 4096 points 0.92 ms against 1.1 ms).

// batchSumMin: below this many points a Jacobian chain is as fast.
const batchSumMin = 256

// sumG1 returns Σ points[idx[k]].
func sumG1(points []bls12381.G1Affine, idx []int32) bls12381.G1Jac {
	var total bls12381.G1Jac
	total.X.SetOne()
	total.Y.SetOne()
	if len(idx) < batchSumMin {
		for _, i := range idx {
			total.AddMixed(&points[i])
		}
		return total
	}
	src := make([]bls12381.G1Affine, len(idx))
	dst := make([]bls12381.G1Affine, (len(idx)+1)/2)
	for k, i := range idx {
		src[k] = points[i]
	}
	workers := runtime.GOMAXPROCS(0)
	side := make([]bls12381.G1Jac, workers) // pairs the affine formula cannot add
	for k := range side {
		side[k].X.SetOne()
		side[k].Y.SetOne()
	}
	scratch := make([]fp.Element, len(dst))
	for len(src) >= batchSumMin {
		pairs := len(src) / 2
		out := dst[:pairs+len(src)%2]
		var wg sync.WaitGroup
		for w := 0; w < workers; w++ {
			lo, hi := w*pairs/workers, (w+1)*pairs/workers
			wg.Go(func() { addPairsG1(src, out, scratch, lo, hi, &side[w]) })
		}
		wg.Wait()
		if len(src)%2 == 1 {
			out[pairs] = src[len(src)-1]
		}
		src, dst = out, src[:cap(src)]
	}
	for i := range src {
		total.AddMixed(&src[i])
	}
	for k := range side {
		total.AddAssign(&side[k])
	}
	return total
}

// addPairsG1 sets out[i] = src[2i] + src[2i+1] for i in [lo, hi) with one
// field inversion. A pair with a point at infinity passes the other point
// on; a pair with equal x (P+P or P−P) is added into side and leaves
// infinity in out.
func addPairsG1(src, out []bls12381.G1Affine, inv []fp.Element, lo, hi int, side *bls12381.G1Jac) {
	const (
		regular = iota
		takeA
		takeB
		special
	)
	var acc fp.Element
	acc.SetOne()
	kinds := make([]uint8, hi-lo)
	// Forward: inv[i] = product of the denominators before i.
	for i := lo; i < hi; i++ {
		a, b := &src[2*i], &src[2*i+1]
		switch {
		case b.IsInfinity():
			kinds[i-lo] = takeA
			continue
		case a.IsInfinity():
			kinds[i-lo] = takeB
			continue
		case a.X.Equal(&b.X):
			kinds[i-lo] = special
			continue
		}
		inv[i] = acc
		var d fp.Element
		d.Sub(&b.X, &a.X)
		acc.Mul(&acc, &d)
	}
	acc.Inverse(&acc)
	// Backward: inv[i] = 1/(x_b − x_a), then the sum.
	for i := hi - 1; i >= lo; i-- {
		a, b := &src[2*i], &src[2*i+1]
		switch kinds[i-lo] {
		case takeA:
			out[i] = *a
			continue
		case takeB:
			out[i] = *b
			continue
		case special:
			side.AddMixed(a)
			side.AddMixed(b)
			out[i].SetInfinity()
			continue
		}
		var d, lambda, x3, y3 fp.Element
		d.Sub(&b.X, &a.X)
		inv[i].Mul(&inv[i], &acc)
		acc.Mul(&acc, &d)
		lambda.Sub(&b.Y, &a.Y).Mul(&lambda, &inv[i])
		x3.Square(&lambda).Sub(&x3, &a.X).Sub(&x3, &b.X)
		y3.Sub(&a.X, &x3).Mul(&y3, &lambda).Sub(&y3, &a.Y)
		out[i].X, out[i].Y = x3, y3
	}
}

// sumG2 returns Σ points[idx[k]]; see sumG1.
func sumG2(points []bls12381.G2Affine, idx []int32) bls12381.G2Jac {
	var total bls12381.G2Jac
	total.X.SetOne()
	total.Y.SetOne()
	if len(idx) < batchSumMin {
		for _, i := range idx {
			total.AddMixed(&points[i])
		}
		return total
	}
	src := make([]bls12381.G2Affine, len(idx))
	dst := make([]bls12381.G2Affine, (len(idx)+1)/2)
	for k, i := range idx {
		src[k] = points[i]
	}
	workers := runtime.GOMAXPROCS(0)
	side := make([]bls12381.G2Jac, workers)
	for k := range side {
		side[k].X.SetOne()
		side[k].Y.SetOne()
	}
	scratch := make([]bls12381.E2, len(dst))
	for len(src) >= batchSumMin {
		pairs := len(src) / 2
		out := dst[:pairs+len(src)%2]
		var wg sync.WaitGroup
		for w := 0; w < workers; w++ {
			lo, hi := w*pairs/workers, (w+1)*pairs/workers
			wg.Go(func() { addPairsG2(src, out, scratch, lo, hi, &side[w]) })
		}
		wg.Wait()
		if len(src)%2 == 1 {
			out[pairs] = src[len(src)-1]
		}
		src, dst = out, src[:cap(src)]
	}
	for i := range src {
		total.AddMixed(&src[i])
	}
	for k := range side {
		total.AddAssign(&side[k])
	}
	return total
}

// addPairsG2 is addPairsG1 for G2.
func addPairsG2(src, out []bls12381.G2Affine, inv []bls12381.E2, lo, hi int, side *bls12381.G2Jac) {
	const (
		regular = iota
		takeA
		takeB
		special
	)
	var acc bls12381.E2
	acc.SetOne()
	kinds := make([]uint8, hi-lo)
	for i := lo; i < hi; i++ {
		a, b := &src[2*i], &src[2*i+1]
		switch {
		case b.IsInfinity():
			kinds[i-lo] = takeA
			continue
		case a.IsInfinity():
			kinds[i-lo] = takeB
			continue
		case a.X.Equal(&b.X):
			kinds[i-lo] = special
			continue
		}
		inv[i] = acc
		var d bls12381.E2
		d.Sub(&b.X, &a.X)
		acc.Mul(&acc, &d)
	}
	acc.Inverse(&acc)
	for i := hi - 1; i >= lo; i-- {
		a, b := &src[2*i], &src[2*i+1]
		switch kinds[i-lo] {
		case takeA:
			out[i] = *a
			continue
		case takeB:
			out[i] = *b
			continue
		case special:
			side.AddMixed(a)
			side.AddMixed(b)
			out[i].SetInfinity()
			continue
		}
		var d, lambda, x3, y3 bls12381.E2
		d.Sub(&b.X, &a.X)
		inv[i].Mul(&inv[i], &acc)
		acc.Mul(&acc, &d)
		lambda.Sub(&b.Y, &a.Y).Mul(&lambda, &inv[i])
		x3.Square(&lambda).Sub(&x3, &a.X).Sub(&x3, &b.X)
		y3.Sub(&a.X, &x3).Mul(&y3, &lambda).Sub(&y3, &a.Y)
		out[i].X, out[i].Y = x3, y3
	}
}
