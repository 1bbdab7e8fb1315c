package gadget

import (
	"errors"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/perfbot/perfbot/prover/r1cs"
)

// newSystem returns a System that both checks each constraint as it goes
// (Prove) and records the matrices (Setup), so a test can check both.
func newSystem() *r1cs.System { return r1cs.NewSystem(r1cs.Prove|r1cs.Setup, r1cs.Sizes{}) }

// checkSatisfied fails the test unless cs is satisfied in both modes.
func checkSatisfied(t *testing.T, cs *r1cs.System) {
	t.Helper()
	if err := cs.Err(); err != nil {
		t.Fatalf("prove mode: %v", err)
	}
	if err := cs.IsSatisfied(); err != nil {
		t.Fatalf("setup mode: %v", err)
	}
}

// unsatIndex returns the index of the first unsatisfied constraint in
// Setup mode, or −1.
func unsatIndex(t *testing.T, cs *r1cs.System) int {
	t.Helper()
	err := cs.IsSatisfied()
	if err == nil {
		return -1
	}
	var ue *r1cs.UnsatError
	if !errors.As(err, &ue) {
		t.Fatalf("IsSatisfied: %v is not an *r1cs.UnsatError", err)
	}
	return ue.Index
}

// bitValue returns the witness value of b as the field sees it (1 − v for
// a negation), checking that it is 0 or 1.
func bitValue(t *testing.T, cs *r1cs.System, b Boolean) bool {
	t.Helper()
	v, neg, ok := b.Variable()
	if !ok {
		return b.Value()
	}
	x := cs.Value(v)
	var bit bool
	switch {
	case x.IsZero():
	case x.IsOne():
		bit = true
	default:
		t.Fatalf("variable %v has value %s, not a bit", v, x.String())
	}
	return bit != neg
}

// setAux sets aux variable v to x.
func setAux(cs *r1cs.System, v r1cs.Variable, x *fr.Element) { cs.Aux()[v.Index()] = *x }
