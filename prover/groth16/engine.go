package groth16

import (
	"fmt"
	"math/big"

	"github.com/consensys/gnark-crypto/ecc"
	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr/fft"
	"github.com/consensys/gnark-crypto/parallel"
	"github.com/consensys/gnark-crypto/utils"
)

// An Engine does the heavy arithmetic of a proof: the multi-scalar
// multiplications and the number-theoretic transforms of the H polynomial.
// It is the seam for a GPU backend; CPU is the gnark-crypto implementation.
//
// Prove calls an Engine from one goroutine, one call at a time, and has
// already dropped zero scalars and points at infinity and summed the points
// whose scalar is one (see MSMStats), so an Engine sees only the remainder.
type Engine interface {
	// MultiExpG1 returns Σ scalars[i]·points[i].
	MultiExpG1(points []bls12381.G1Affine, scalars []fr.Element) (bls12381.G1Jac, error)
	// MultiExpG2 returns Σ scalars[i]·points[i].
	MultiExpG2(points []bls12381.G2Affine, scalars []fr.Element) (bls12381.G2Jac, error)
	// QuotientH takes A, B and C evaluated on the domain of n = len(a)
	// points (a power of two; ω = fr.Generator(n)) and overwrites a with the
	// n coefficients, lowest first, of h = (A·B − C)/Z, Z = x^n − 1. It may
	// overwrite b and c.
	QuotientH(a, b, c []fr.Element) error
}

// Offloader is implemented by an Engine whose G1 multi-exponentiations run
// on another device. When OffloadsG1 says so, Prove hands that engine every
// term of the G1 MSMs (the device handles zero and one scalars itself, far
// faster than the host's 0/1 split: msm.go) and computes the G2 MSM on the
// host's cores while the device works, as supraseal does.
type Offloader interface {
	OffloadsG1() bool
}

// G2Offloader is implemented by an Engine that may run the G2 MSM on its
// device too. When OffloadsG2 says so, msm_b2 hands that engine every term
// of the G2 MSM, as OffloadsG1 does for G1 (the device sorts zero and one
// scalars into its buckets; the host's 0/1 split and its sum of the
// scalar-one points would cost more than the device's whole MSM).
type G2Offloader interface {
	OffloadsG2() bool
}

// offloadsG2 reports whether e is a G2Offloader that offloads.
func offloadsG2(e Engine) bool {
	o, ok := e.(G2Offloader)
	return ok && o.OffloadsG2()
}

// A Keeper is an offloading Engine that can keep G1 points on its device
// across calls, so that a G1 MSM on them copies only its scalars. Before
// each G1 MSM, Prove asks it to keep that MSM's points, a proving key's
// query, which never changes; the first proof copies the points, later
// proofs with the same key do not. Keeping is best effort: an engine
// without room keeps nothing and copies the points for each MSM.
type Keeper interface {
	KeepG1(points []bls12381.G1Affine)
}

// A KeeperG2 is a Keeper for the G2 MSM's points (the B query's G2
// part), used when the engine also offloads G2 (OffloadsG2).
type KeeperG2 interface {
	KeepG2(points []bls12381.G2Affine)
}

// offloads reports whether e is an Offloader that offloads.
func offloads(e Engine) bool {
	o, ok := e.(Offloader)
	return ok && o.OffloadsG1()
}

// CPU is the Engine over gnark-crypto: MultiExp on all cores, and
// fft.Domain transforms with the coset of the multiplicative generator.
// Domains are cached by gnark-crypto (weakly, so the GC can drop them).
type CPU struct{}

var _ Engine = CPU{}

// MultiExpG1 returns Σ scalars[i]·points[i] with gnark-crypto's MultiExp.
func (CPU) MultiExpG1(points []bls12381.G1Affine, scalars []fr.Element) (bls12381.G1Jac, error) {
	var p bls12381.G1Jac
	if len(points) != len(scalars) {
		return p, fmt.Errorf("multiexp g1: %d points, %d scalars", len(points), len(scalars))
	}
	if len(points) == 0 {
		p.X.SetOne()
		p.Y.SetOne()
		return p, nil
	}
	if _, err := p.MultiExp(points, scalars, ecc.MultiExpConfig{}); err != nil {
		return p, fmt.Errorf("multiexp g1: %w", err)
	}
	return p, nil
}

// MultiExpG2 returns Σ scalars[i]·points[i] with gnark-crypto's MultiExp.
func (CPU) MultiExpG2(points []bls12381.G2Affine, scalars []fr.Element) (bls12381.G2Jac, error) {
	var p bls12381.G2Jac
	if len(points) != len(scalars) {
		return p, fmt.Errorf("multiexp g2: %d points, %d scalars", len(points), len(scalars))
	}
	if len(points) == 0 {
		p.X.SetOne()
		p.Y.SetOne()
		return p, nil
	}
	if _, err := p.MultiExp(points, scalars, ecc.MultiExpConfig{}); err != nil {
		return p, fmt.Errorf("multiexp g2: %w", err)
	}
	return p, nil
}

// QuotientH interpolates A, B and C (inverse FFT), evaluates them on the
// coset g·⟨ω⟩ (g = 7, the generator of Fr*), where Z = g^n − 1 is a
// constant, forms (A·B − C)/Z there and interpolates back (inverse coset
// FFT).
func (CPU) QuotientH(a, b, c []fr.Element) error {
	n := len(a)
	if n < 2 || n&(n-1) != 0 || len(b) != n || len(c) != n {
		return fmt.Errorf("quotient h: lengths %d, %d, %d; want equal powers of two ≥ 2", len(a), len(b), len(c))
	}
	d := fft.NewDomain(uint64(n), fft.WithCache())
	for _, p := range [][]fr.Element{a, b, c} {
		d.FFTInverse(p, fft.DIF)         // coefficients, bit-reversed
		d.FFT(p, fft.DIT, fft.OnCoset()) // coset evaluations, natural order
	}
	var zInv fr.Element
	zInv.Exp(d.FrMultiplicativeGen, big.NewInt(int64(n)))
	zInv.Sub(&zInv, new(fr.Element).SetOne())
	zInv.Inverse(&zInv)
	parallel.Execute(n, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			a[i].Mul(&a[i], &b[i]).Sub(&a[i], &c[i]).Mul(&a[i], &zInv)
		}
	})
	d.FFTInverse(a, fft.DIF, fft.OnCoset()) // coefficients, bit-reversed
	utils.BitReverse(a)
	return nil
}
