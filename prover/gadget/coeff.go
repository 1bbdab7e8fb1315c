package gadget

import (
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/perfbot/perfbot/prover/r1cs"
)

// Field constants used as coefficients; never written after
// initialization.
var (
	frTwo        = small(2)
	frMinusTwo   = small(-2)
	frMinusThree = small(-3)
	frMinusFour  = small(-4)
	frMinusSix   = small(-6)

	// pow2[i] = 2^i and negPow2[i] = −2^i, for packing bits into numbers.
	pow2, negPow2 = powersOfTwo()
)

// maxPackBits is the widest number packed from bits in one combination.
const maxPackBits = 128

func small(x int64) fr.Element {
	var e fr.Element
	e.SetInt64(x)
	return e
}

func powersOfTwo() (pos, neg [maxPackBits]fr.Element) {
	pos[0].SetOne()
	for i := 1; i < maxPackBits; i++ {
		pos[i].Double(&pos[i-1])
	}
	for i := range pos {
		neg[i].Neg(&pos[i])
	}
	return pos, neg
}

// addTerm appends coeff·v to lc. coeff must not be 1 or −1 (those have their
// own kinds, see r1cs.LC.AddVar and SubVar): skipping the kind test is the
// point of this helper.
func addTerm(lc *r1cs.LC, v r1cs.Variable, coeff *fr.Element) {
	lc.Terms = append(lc.Terms, r1cs.Term{Coeff: *coeff, Var: v, Kind: r1cs.CoeffGeneral})
}

// addPow2 appends ±2^i·v to lc with the right coefficient kind.
func addPow2(lc *r1cs.LC, v r1cs.Variable, i int, neg bool) {
	switch {
	case i == 0 && neg:
		lc.SubVar(v)
	case i == 0:
		lc.AddVar(v)
	case neg:
		addTerm(lc, v, &negPow2[i])
	default:
		addTerm(lc, v, &pow2[i])
	}
}

// addConst appends c·One to lc; c = 0 adds nothing.
func addConst(lc *r1cs.LC, c uint64) {
	switch c {
	case 0:
	case 1:
		lc.AddVar(r1cs.One)
	default:
		var e fr.Element
		e.SetUint64(c)
		addTerm(lc, r1cs.One, &e)
	}
}
