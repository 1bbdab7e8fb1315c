package groth16

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"

	"github.com/perfbot/perfbot/prover/r1cs"
)

// A ProvingKey holds what Prove needs besides the witness. Variables are
// numbered inputs first (input 0 is One), then aux.
//
// A, B1 and B2 hold points only for the variables whose density flag is set
// (u_j(τ) ≠ 0 for A, v_j(τ) ≠ 0 for B), in variable order: Prove walks the
// density to pair points with assignment values and never touches a
// variable whose QAP polynomial is zero.
type ProvingKey struct {
	Shape          ShapeDigest // circuit shape the key was made for
	NumInputs      int         // inputs, One included
	NumAux         int
	NumConstraints int // constraints of the circuit, without the input rows
	DomainSize     int // n, a power of two ≥ NumConstraints + NumInputs

	Alpha1, Beta1, Delta1 bls12381.G1Affine
	Beta2, Delta2         bls12381.G2Affine

	ADensity []bool              // per variable: has a point in A
	BDensity []bool              // per variable: has points in B1 and B2
	A        []bls12381.G1Affine // u_j(τ)·G1
	B1       []bls12381.G1Affine // v_j(τ)·G1
	B2       []bls12381.G2Affine // v_j(τ)·G2
	L        []bls12381.G1Affine // (β·u_j(τ) + α·v_j(τ) + w_j(τ))/δ·G1, one per aux variable
	H        []bls12381.G1Affine // τ^i·Z(τ)/δ·G1 for i = 0..n−2

	// Random marks keys from RandomKeys: right shapes, random points.
	// Proofs made with them take realistic time but do not verify.
	Random bool
}

// A VerifyingKey checks proofs made with the matching ProvingKey.
type VerifyingKey struct {
	Alpha1                bls12381.G1Affine
	Beta2, Gamma2, Delta2 bls12381.G2Affine
	IC                    []bls12381.G1Affine // (β·u_k + α·v_k + w_k)/γ·G1 per input, One first

	// Random marks keys from RandomKeys; nothing verifies against them.
	Random bool
}

// NumVariables returns the number of variables, inputs and aux.
func (pk *ProvingKey) NumVariables() int { return pk.NumInputs + pk.NumAux }

// check verifies that pk's slices have the lengths its counts imply.
func (pk *ProvingKey) check() error {
	nv := pk.NumVariables()
	switch {
	case pk.NumInputs < 1:
		return fmt.Errorf("proving key has %d inputs, want at least 1 (One)", pk.NumInputs)
	case pk.DomainSize < 2 || pk.DomainSize&(pk.DomainSize-1) != 0:
		return fmt.Errorf("proving key domain size %d is not a power of two ≥ 2", pk.DomainSize)
	case pk.DomainSize < pk.NumConstraints+pk.NumInputs:
		return fmt.Errorf("proving key domain size %d < %d constraints + %d inputs", pk.DomainSize, pk.NumConstraints, pk.NumInputs)
	case len(pk.ADensity) != nv || len(pk.BDensity) != nv:
		return fmt.Errorf("proving key density has %d/%d entries, want %d", len(pk.ADensity), len(pk.BDensity), nv)
	case len(pk.A) != countTrue(pk.ADensity):
		return fmt.Errorf("proving key A query has %d points, density says %d", len(pk.A), countTrue(pk.ADensity))
	case len(pk.B1) != countTrue(pk.BDensity) || len(pk.B2) != len(pk.B1):
		return fmt.Errorf("proving key B query has %d/%d points, density says %d", len(pk.B1), len(pk.B2), countTrue(pk.BDensity))
	case len(pk.L) != pk.NumAux:
		return fmt.Errorf("proving key L query has %d points, want %d", len(pk.L), pk.NumAux)
	case len(pk.H) != pk.DomainSize-1:
		return fmt.Errorf("proving key H query has %d points, want %d", len(pk.H), pk.DomainSize-1)
	}
	return nil
}

func countTrue(b []bool) int {
	n := 0
	for _, x := range b {
		if x {
			n++
		}
	}
	return n
}

// A ShapeDigest identifies a circuit's shape: its counts and constraint
// matrices, not its witness.
type ShapeDigest [32]byte

// String returns the digest in hex.
func (d ShapeDigest) String() string { return hex.EncodeToString(d[:]) }

// Shape returns the SHA-256 digest of cs's input, aux and constraint counts
// and of its three constraint matrices (every row's terms: variable and
// canonical coefficient). cs must be a Setup-mode system; a system without
// matrices gets a digest that matches no Setup-mode one.
func Shape(cs *r1cs.System) ShapeDigest {
	h := sha256.New()
	buf := make([]byte, 0, 64<<10)
	flush := func() {
		h.Write(buf)
		buf = buf[:0]
	}
	buf = append(buf, "perfbot/groth16 shape v1\x00"...)
	buf = binary.BigEndian.AppendUint64(buf, uint64(cs.NumInputs()))
	buf = binary.BigEndian.AppendUint64(buf, uint64(cs.NumAux()))
	buf = binary.BigEndian.AppendUint64(buf, uint64(cs.NumConstraints()))
	hasMatrices := cs.Mode()&r1cs.Setup != 0
	if !hasMatrices {
		buf = append(buf, "no matrices"...)
	} else {
		ma, mb, mc := cs.Matrices()
		for _, m := range []*r1cs.Matrix{ma, mb, mc} {
			buf = binary.BigEndian.AppendUint64(buf, uint64(m.NumEntries()))
			for i := 0; i < cs.NumConstraints(); i++ {
				row := m.Row(i)
				buf = binary.BigEndian.AppendUint32(buf, uint32(len(row)))
				for _, e := range row {
					if len(buf)+40 > cap(buf) {
						flush()
					}
					buf = binary.BigEndian.AppendUint32(buf, uint32(e.Var))
					b := m.Coeff(e).Bytes()
					buf = append(buf, b[:]...)
				}
				if len(buf)+8 > cap(buf) {
					flush()
				}
			}
		}
	}
	flush()
	var d ShapeDigest
	h.Sum(d[:0])
	return d
}
