package groth16

import (
	"errors"
	"fmt"
	"io"
	"math/big"
	"sync"

	"github.com/consensys/gnark-crypto/ecc"
	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/perfbot/perfbot/prover/r1cs"
)

// DomainSize returns the evaluation domain size n for cs: the smallest power
// of two ≥ its constraints plus one row per input (at least 2).
func DomainSize(cs *r1cs.System) int {
	return domainSize(cs.NumConstraints(), cs.NumInputs())
}

func domainSize(constraints, inputs int) int {
	return max(2, int(ecc.NextPowerOfTwo(uint64(constraints+inputs))))
}

// Setup runs a Groth16 trusted setup for cs, a Setup-mode system, drawing
// the toxic waste (τ, α, β, γ, δ) from rng; it keeps none of it (though Go
// gives no guarantee that the memory is wiped). Use crypto/rand.Reader
// unless the keys are for tests.
func Setup(cs *r1cs.System, rng io.Reader) (*ProvingKey, *VerifyingKey, error) {
	if cs.Mode()&r1cs.Setup == 0 {
		return nil, nil, errors.New("groth16 setup: need a Setup-mode r1cs system (it has no constraint matrices)")
	}
	var waste [4]fr.Element // α, β, γ, δ
	for i := range waste {
		s, err := randomScalar(rng)
		if err != nil {
			return nil, nil, fmt.Errorf("groth16 setup: %w", err)
		}
		waste[i] = s
	}
	alpha, beta, gamma, delta := waste[0], waste[1], waste[2], waste[3]
	q, err := evalQAPRandom(cs, rng)
	if err != nil {
		return nil, nil, fmt.Errorf("groth16 setup: %w", err)
	}
	pk, vk := keyShells(cs, q)
	ni, na, n := pk.NumInputs, pk.NumAux, pk.DomainSize

	var gammaInv, deltaInv fr.Element
	gammaInv.Inverse(&gamma)
	deltaInv.Inverse(&delta)

	// Every G1 scalar in one slice, so one table serves them all:
	// A | B1 | L | H | IC | α β δ.
	nA, nB := len(pk.A), len(pk.B1)
	g1 := make([]fr.Element, 0, nA+nB+na+(n-1)+ni+3)
	g2 := make([]fr.Element, 0, nB+3)
	for j := range q.u {
		if pk.ADensity[j] {
			g1 = append(g1, q.u[j])
		}
	}
	for j := range q.v {
		if pk.BDensity[j] {
			g1 = append(g1, q.v[j])
			g2 = append(g2, q.v[j])
		}
	}
	lc := func(j int, inv *fr.Element) fr.Element {
		var s, t fr.Element
		s.Mul(&beta, &q.u[j])
		t.Mul(&alpha, &q.v[j])
		s.Add(&s, &t).Add(&s, &q.w[j]).Mul(&s, inv)
		return s
	}
	for j := ni; j < ni+na; j++ {
		g1 = append(g1, lc(j, &deltaInv))
	}
	var hs fr.Element // τ^i·Z(τ)/δ
	hs.Mul(&q.zt, &deltaInv)
	for i := 0; i < n-1; i++ {
		g1 = append(g1, hs)
		hs.Mul(&hs, &q.tau)
	}
	for k := 0; k < ni; k++ {
		g1 = append(g1, lc(k, &gammaInv))
	}
	g1 = append(g1, alpha, beta, delta)
	g2 = append(g2, beta, gamma, delta)

	_, _, gen1, gen2 := bls12381.Generators()
	var p1 []bls12381.G1Affine
	var p2 []bls12381.G2Affine
	// G2 is ~3× the work per point of G1; both use all cores inside.
	p1 = fixedBaseG1(&gen1, g1)
	p2 = fixedBaseG2(&gen2, g2)

	off := 0
	take := func(k int) []bls12381.G1Affine {
		s := p1[off : off+k : off+k]
		off += k
		return s
	}
	pk.A, pk.B1, pk.L, pk.H, vk.IC = take(nA), take(nB), take(na), take(n-1), take(ni)
	pk.Alpha1, pk.Beta1, pk.Delta1 = p1[off], p1[off+1], p1[off+2]
	vk.Alpha1 = pk.Alpha1
	pk.B2 = p2[:nB:nB]
	pk.Beta2, vk.Gamma2, pk.Delta2 = p2[nB], p2[nB+1], p2[nB+2]
	vk.Beta2, vk.Delta2 = pk.Beta2, pk.Delta2
	return pk, vk, nil
}

// RandomKeys returns keys of exactly the shapes and densities Setup would
// give for cs (a Setup-mode system), filled with random points made by
// additions rather than scalar multiplications, so they take a fraction of
// Setup's time. Proving with them costs what proving with real keys costs,
// but the proofs do not verify; both keys have Random set so callers can
// say so.
func RandomKeys(cs *r1cs.System, rng io.Reader) (*ProvingKey, *VerifyingKey, error) {
	if cs.Mode()&r1cs.Setup == 0 {
		return nil, nil, errors.New("groth16 random keys: need a Setup-mode r1cs system (it has no constraint matrices)")
	}
	// The densities are those of the QAP at a random τ, as in Setup.
	q, err := evalQAPRandom(cs, rng)
	if err != nil {
		return nil, nil, fmt.Errorf("groth16 random keys: %w", err)
	}
	pk, vk := keyShells(cs, q)
	pk.Random, vk.Random = true, true
	nA, nB, na, nh, ni := len(pk.A), len(pk.B1), pk.NumAux, pk.DomainSize-1, pk.NumInputs

	p1, err := randomPointsG1(rng, nA+nB+na+nh+ni+3)
	if err != nil {
		return nil, nil, fmt.Errorf("groth16 random keys: %w", err)
	}
	p2, err := randomPointsG2(rng, nB+3)
	if err != nil {
		return nil, nil, fmt.Errorf("groth16 random keys: %w", err)
	}
	off := 0
	take := func(k int) []bls12381.G1Affine {
		s := p1[off : off+k : off+k]
		off += k
		return s
	}
	pk.A, pk.B1, pk.L, pk.H, vk.IC = take(nA), take(nB), take(na), take(nh), take(ni)
	pk.Alpha1, pk.Beta1, pk.Delta1 = p1[off], p1[off+1], p1[off+2]
	vk.Alpha1 = pk.Alpha1
	pk.B2 = p2[:nB:nB]
	pk.Beta2, vk.Gamma2, pk.Delta2 = p2[nB], p2[nB+1], p2[nB+2]
	vk.Beta2, vk.Delta2 = pk.Beta2, pk.Delta2
	return pk, vk, nil
}

// keyShells returns keys with counts and densities filled in and the query
// slices sized (A and B1 by density) but not yet holding points.
func keyShells(cs *r1cs.System, q *qap) (*ProvingKey, *VerifyingKey) {
	nv := len(q.u)
	pk := &ProvingKey{
		Shape:          Shape(cs),
		NumInputs:      cs.NumInputs(),
		NumAux:         cs.NumAux(),
		NumConstraints: cs.NumConstraints(),
		DomainSize:     q.n,
		ADensity:       make([]bool, nv),
		BDensity:       make([]bool, nv),
	}
	nA, nB := 0, 0
	for j := 0; j < nv; j++ {
		if !q.u[j].IsZero() {
			pk.ADensity[j] = true
			nA++
		}
		if !q.v[j].IsZero() {
			pk.BDensity[j] = true
			nB++
		}
	}
	pk.A = make([]bls12381.G1Affine, nA)
	pk.B1 = make([]bls12381.G1Affine, nB)
	return pk, &VerifyingKey{}
}

// A qap holds every variable's QAP polynomials u_j, v_j, w_j evaluated at τ,
// variables numbered inputs then aux.
type qap struct {
	n       int
	tau     fr.Element
	zt      fr.Element // Z(τ) = τ^n − 1
	u, v, w []fr.Element
}

// evalQAPRandom evaluates the QAP at a random τ outside the domain.
func evalQAPRandom(cs *r1cs.System, rng io.Reader) (*qap, error) {
	for {
		tau, err := randomScalar(rng)
		if err != nil {
			return nil, err
		}
		q, err := evalQAP(cs, tau)
		if errors.Is(err, errTauInDomain) {
			continue
		}
		return q, err
	}
}

var errTauInDomain = errors.New("τ is in the evaluation domain")

// evalQAP scatters the constraint matrices, weighted by the Lagrange basis
// at τ, into per-variable sums: u_j(τ) = Σ_i A_ij·L_i(τ), and likewise v
// from B and w from C. Input k also gets L_{m+k}(τ) in u (row m+k is
// input_k · 0 = 0).
func evalQAP(cs *r1cs.System, tau fr.Element) (*qap, error) {
	m, ni, na := cs.NumConstraints(), cs.NumInputs(), cs.NumAux()
	n := domainSize(m, ni)
	lag, zt, err := lagrangeAt(tau, n)
	if err != nil {
		return nil, err
	}
	nv := ni + na
	q := &qap{n: n, tau: tau, zt: zt,
		u: make([]fr.Element, nv), v: make([]fr.Element, nv), w: make([]fr.Element, nv)}

	ma, mb, mc := cs.Matrices()
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for k, job := range []struct {
		m   *r1cs.Matrix
		dst []fr.Element
	}{{ma, q.u}, {mb, q.v}, {mc, q.w}} {
		wg.Go(func() { errs[k] = scatter(job.m, m, ni, na, lag, job.dst) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for k := 0; k < ni; k++ {
		q.u[k].Add(&q.u[k], &lag[m+k])
	}
	return q, nil
}

func scatter(mat *r1cs.Matrix, rows, ni, na int, lag, dst []fr.Element) error {
	if len(mat.RowStart) != rows+1 {
		return fmt.Errorf("matrix has %d rows, want %d", len(mat.RowStart)-1, rows)
	}
	var t fr.Element
	for i := 0; i < rows; i++ {
		li := &lag[i]
		for _, term := range mat.Row(i) {
			j := term.Var.Index()
			if term.Var.IsInput() {
				if j >= ni {
					return fmt.Errorf("constraint %d uses %v, but there are %d inputs", i, term.Var, ni)
				}
			} else {
				if j >= na {
					return fmt.Errorf("constraint %d uses %v, but there are %d aux variables", i, term.Var, na)
				}
				j += ni
			}
			switch mat.Kind(term) {
			case r1cs.CoeffOne:
				dst[j].Add(&dst[j], li)
			case r1cs.CoeffMinusOne:
				dst[j].Sub(&dst[j], li)
			default:
				t.Mul(mat.Coeff(term), li)
				dst[j].Add(&dst[j], &t)
			}
		}
	}
	return nil
}

// lagrangeAt returns L_i(τ) = (τ^n−1)/n · ω^i/(τ−ω^i) for i = 0..n−1 and
// Z(τ) = τ^n − 1, with ω the domain's generator (as fft.NewDomain uses).
func lagrangeAt(tau fr.Element, n int) ([]fr.Element, fr.Element, error) {
	omega, err := fr.Generator(uint64(n))
	if err != nil {
		return nil, fr.Element{}, err
	}
	pow := make([]fr.Element, n) // ω^i
	den := make([]fr.Element, n) // τ − ω^i
	pow[0].SetOne()
	for i := 0; i < n; i++ {
		if i > 0 {
			pow[i].Mul(&pow[i-1], &omega)
		}
		den[i].Sub(&tau, &pow[i])
		if den[i].IsZero() {
			return nil, fr.Element{}, errTauInDomain
		}
	}
	inv := fr.BatchInvert(den)
	var zt, c, nInv fr.Element
	zt.Exp(tau, big.NewInt(int64(n)))
	zt.Sub(&zt, new(fr.Element).SetOne())
	nInv.SetUint64(uint64(n)).Inverse(&nInv)
	c.Mul(&zt, &nInv)
	for i := range inv {
		inv[i].Mul(&inv[i], &pow[i]).Mul(&inv[i], &c)
	}
	return inv, zt, nil
}
