package groth16

import (
	"errors"
	"fmt"

	"github.com/consensys/gnark-crypto/ecc"
	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// ErrInvalidProof is returned by Verify when the pairing check fails or a
// proof point is not a valid group element.
var ErrInvalidProof = errors.New("groth16: invalid proof")

// Verify checks proof against vk and the public inputs (One excluded, so
// len(publicInputs) = len(vk.IC) − 1) with one pairing check:
//
//	e(A, B) = e(α, β) · e(Σ x_k·IC_k, γ) · e(C, δ)
//
// It returns nil for a valid proof and an error wrapping ErrInvalidProof
// for an invalid one. A proof made with random keys never verifies.
func Verify(vk *VerifyingKey, proof *Proof, publicInputs []fr.Element) error {
	if len(vk.IC) == 0 {
		return errors.New("groth16 verify: verifying key has no IC points")
	}
	if len(publicInputs) != len(vk.IC)-1 {
		return fmt.Errorf("groth16 verify: got %d public inputs, the verifying key takes %d (One excluded)",
			len(publicInputs), len(vk.IC)-1)
	}
	if !validG1(&proof.A) || !validG1(&proof.C) || proof.B.IsInfinity() || !proof.B.IsInSubGroup() {
		return fmt.Errorf("%w: a proof point is not in its group", ErrInvalidProof)
	}

	var ic bls12381.G1Jac
	ic.FromAffine(&vk.IC[0])
	if len(publicInputs) > 0 {
		var t bls12381.G1Jac
		if _, err := t.MultiExp(vk.IC[1:], publicInputs, ecc.MultiExpConfig{}); err != nil {
			return fmt.Errorf("groth16 verify: %w", err)
		}
		ic.AddAssign(&t)
	}
	var icAff, negAlpha, negIC, negC bls12381.G1Affine
	icAff.FromJacobian(&ic)
	negAlpha.Neg(&vk.Alpha1)
	negIC.Neg(&icAff)
	negC.Neg(&proof.C)

	ok, err := bls12381.PairingCheck(
		[]bls12381.G1Affine{proof.A, negAlpha, negIC, negC},
		[]bls12381.G2Affine{proof.B, vk.Beta2, vk.Gamma2, vk.Delta2},
	)
	if err != nil {
		return fmt.Errorf("groth16 verify: pairing: %w", err)
	}
	if !ok {
		return ErrInvalidProof
	}
	return nil
}

// validG1 reports whether p is a non-infinity point of the G1 subgroup.
func validG1(p *bls12381.G1Affine) bool {
	return !p.IsInfinity() && p.IsInSubGroup()
}
