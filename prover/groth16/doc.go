// Package groth16 is a Groth16 prover and verifier over BLS12-381, built on
// gnark-crypto in the bellman/bellperson construction.
//
// In flows an r1cs.System: a Setup-mode system for Setup, RandomKeys and
// Shape (the constraint matrices), a Prove-mode system for Prove (the
// assignment and A, B, C evaluated at the witness per constraint). Out flow
// keys (ProvingKey, VerifyingKey), proofs, per-phase Stats of a proof and a
// verdict from Verify.
//
// Like bellman, the QAP gets one extra constraint per input, input_k · 0 = 0
// at row m+k (m constraints), so that the input polynomials are linearly
// independent; the evaluation domain has n = 2^k ≥ m + inputs points and the
// H query has n−1 points, τ^i·Z(τ)/δ for i = 0..n−2, because
// h = (A·B−C)/Z has degree at most n−2.
//
// Prove runs its work as named phases (ntt, msm_a, msm_b1, msm_b2, msm_l,
// msm_h, assemble) through a caller-supplied PhaseFunc so that a caller can
// time and label each one; the heavy arithmetic goes through an Engine,
// the seam for a GPU backend (CPU, over gnark-crypto, is the default).
//
// Keys can be cached on disk (WriteKeys, ReadKeys, LoadOrSetup) in a
// versioned, checksummed binary format bound to the circuit's shape.
// RandomKeys makes keys of the right shapes and densities quickly for
// timing runs; proofs made with them do not verify.
package groth16
