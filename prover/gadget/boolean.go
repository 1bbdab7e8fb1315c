package gadget

import (
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/perfbot/perfbot/prover/r1cs"
)

type boolKind uint8

const (
	kindConst boolKind = iota // no variable: the value is fixed
	kindIs                    // the Boolean is the variable v
	kindNot                   // the Boolean is 1 − v
)

// A Boolean is a bit of a circuit: a constant, an allocated variable
// constrained to 0 or 1, or the negation of one. It carries its value, so
// gadgets compute the witness as they build constraints. The zero value is
// the constant false.
type Boolean struct {
	v    r1cs.Variable
	kind boolKind
	val  bool // the value of the Boolean itself (negation applied)
}

// ConstantBoolean returns the constant b. It costs nothing.
func ConstantBoolean(b bool) Boolean { return Boolean{val: b} }

// AllocBoolean allocates an aux variable with the given value and constrains
// it to be boolean, which costs exactly one constraint: (1 − v)·v = 0.
func AllocBoolean(cs *r1cs.System, value bool) Boolean {
	v := cs.AllocBit(value)
	a, b, c := cs.Begin()
	a.AddVar(r1cs.One)
	a.SubVar(v)
	b.AddVar(v)
	cs.Enforce("boolean", a, b, c)
	return Boolean{v: v, kind: kindIs, val: value}
}

// Value returns the Boolean's value in the witness.
func (b Boolean) Value() bool { return b.val }

// IsConstant reports whether b is a constant.
func (b Boolean) IsConstant() bool { return b.kind == kindConst }

// Variable returns the variable behind b and whether b is its negation.
// ok is false for a constant.
func (b Boolean) Variable() (v r1cs.Variable, negated, ok bool) {
	return b.v, b.kind == kindNot, b.kind != kindConst
}

// Not returns ¬b. It costs nothing.
func (b Boolean) Not() Boolean {
	switch b.kind {
	case kindIs:
		b.kind = kindNot
	case kindNot:
		b.kind = kindIs
	}
	b.val = !b.val
	return b
}

// AddTo adds coeff·b to lc in place: nothing for false, coeff·One for
// true, coeff·v for a variable and coeff·One − coeff·v for a negation.
func (b Boolean) AddTo(lc *r1cs.LC, coeff *fr.Element) {
	switch b.kind {
	case kindConst:
		if b.val {
			lc.Add(r1cs.One, coeff)
		}
	case kindIs:
		lc.Add(b.v, coeff)
	case kindNot:
		var neg fr.Element
		neg.Neg(coeff)
		lc.Add(r1cs.One, coeff)
		lc.Add(b.v, &neg)
	}
}

// AddUnitTo adds b to lc in place (coefficient 1).
func (b Boolean) AddUnitTo(lc *r1cs.LC) {
	switch b.kind {
	case kindConst:
		if b.val {
			lc.AddVar(r1cs.One)
		}
	case kindIs:
		lc.AddVar(b.v)
	case kindNot:
		lc.AddVar(r1cs.One)
		lc.SubVar(b.v)
	}
}

// SubFrom subtracts b from lc in place (coefficient −1).
func (b Boolean) SubFrom(lc *r1cs.LC) {
	switch b.kind {
	case kindConst:
		if b.val {
			lc.SubVar(r1cs.One)
		}
	case kindIs:
		lc.SubVar(b.v)
	case kindNot:
		lc.SubVar(r1cs.One)
		lc.AddVar(b.v)
	}
}

// allocResult allocates the aux variable of a gadget's result. Its
// constraint, which the caller adds, pins it to one value, so it needs no
// boolean constraint of its own.
func allocResult(cs *r1cs.System, value bool) Boolean {
	return Boolean{v: cs.AllocBit(value), kind: kindIs, val: value}
}

// Xor returns a ⊕ b. Constants and negations fold; two variables cost one
// constraint: (2a)·b = a + b − r.
func Xor(cs *r1cs.System, a, b Boolean) Boolean {
	switch {
	case a.kind == kindConst:
		if a.val {
			return b.Not()
		}
		return b
	case b.kind == kindConst:
		if b.val {
			return a.Not()
		}
		return a
	}
	// a ⊕ ¬b = ¬(a ⊕ b): work on the variables, negate the result.
	flip := (a.kind == kindNot) != (b.kind == kindNot)
	if a.v == b.v {
		return ConstantBoolean(flip)
	}
	r := allocResult(cs, a.val != b.val != flip)
	la, lb, lc := cs.Begin()
	addTerm(la, a.v, &frTwo)
	lb.AddVar(b.v)
	lc.AddVar(a.v)
	lc.AddVar(b.v)
	lc.SubVar(r.v)
	cs.Enforce("xor", la, lb, lc)
	if flip {
		return r.Not()
	}
	return r
}

// Xor3 returns a ⊕ b ⊕ c in one constraint when all three are variables.
// With s = a + b + c (0 to 3), the parity r is the only solution of
//
//	s·(s − 2r) = 2s − 3r
//
// because (3 − 2s)·r = 2s − s² has a nonzero factor 3 − 2s for s in 0…3,
// and r = s mod 2 solves it. A constant input reduces it to Xor.
func Xor3(cs *r1cs.System, a, b, c Boolean) Boolean {
	switch {
	case a.kind == kindConst:
		return xorConst(Xor(cs, b, c), a.val)
	case b.kind == kindConst:
		return xorConst(Xor(cs, a, c), b.val)
	case c.kind == kindConst:
		return xorConst(Xor(cs, a, b), c.val)
	case a.v == b.v:
		return xorConst(c, a.kind != b.kind)
	case a.v == c.v:
		return xorConst(b, a.kind != c.kind)
	case b.v == c.v:
		return xorConst(a, b.kind != c.kind)
	}
	flip := (a.kind == kindNot) != (b.kind == kindNot) != (c.kind == kindNot)
	r := allocResult(cs, a.val != b.val != c.val != flip)
	la, lb, lc := cs.Begin()
	la.AddVar(a.v)
	la.AddVar(b.v)
	la.AddVar(c.v)
	lb.AddVar(a.v)
	lb.AddVar(b.v)
	lb.AddVar(c.v)
	addTerm(lb, r.v, &frMinusTwo)
	addTerm(lc, a.v, &frTwo)
	addTerm(lc, b.v, &frTwo)
	addTerm(lc, c.v, &frTwo)
	addTerm(lc, r.v, &frMinusThree)
	cs.Enforce("xor3", la, lb, lc)
	if flip {
		return r.Not()
	}
	return r
}

func xorConst(b Boolean, k bool) Boolean {
	if k {
		return b.Not()
	}
	return b
}

// And returns a ∧ b. Constants fold; otherwise one constraint a·b = r, with
// negated inputs entering as 1 − v.
func And(cs *r1cs.System, a, b Boolean) Boolean {
	switch {
	case a.kind == kindConst:
		if a.val {
			return b
		}
		return ConstantBoolean(false)
	case b.kind == kindConst:
		if b.val {
			return a
		}
		return ConstantBoolean(false)
	case a.v == b.v:
		if a.kind == b.kind {
			return a
		}
		return ConstantBoolean(false)
	}
	r := allocResult(cs, a.val && b.val)
	la, lb, lc := cs.Begin()
	a.AddUnitTo(la)
	b.AddUnitTo(lb)
	lc.AddVar(r.v)
	cs.Enforce("and", la, lb, lc)
	return r
}

// Or returns a ∨ b = ¬(¬a ∧ ¬b), at the cost of And.
func Or(cs *r1cs.System, a, b Boolean) Boolean {
	return And(cs, a.Not(), b.Not()).Not()
}

// Ch returns SHA-256's choice, (a ∧ b) ⊕ (¬a ∧ c): b where a is true, c
// where it is false. Constants reduce it to And, Or or nothing; with three
// variables it costs one constraint: a·(b − c) = r − c.
func Ch(cs *r1cs.System, a, b, c Boolean) Boolean {
	switch {
	case a.kind == kindConst:
		if a.val {
			return b
		}
		return c
	case b.kind == kindConst && c.kind == kindConst:
		switch {
		case b.val == c.val:
			return b
		case b.val:
			return a
		default:
			return a.Not()
		}
	case b.kind == kindConst:
		if b.val {
			return Or(cs, a, c)
		}
		return And(cs, a.Not(), c)
	case c.kind == kindConst:
		if c.val {
			return Or(cs, a.Not(), b)
		}
		return And(cs, a, b)
	case b == c:
		return b
	}
	if a.kind == kindNot {
		// ch(¬a, b, c) = ch(a, c, b)
		a, b, c = a.Not(), c, b
	}
	r := allocResult(cs, chValue(a.val, b.val, c.val))
	la, lb, lc := cs.Begin()
	lb.AddVar(a.v)
	b.AddUnitTo(la)
	c.SubFrom(la)
	lc.AddVar(r.v)
	c.SubFrom(lc)
	cs.Enforce("ch", la, lb, lc)
	return r
}

func chValue(a, b, c bool) bool {
	if a {
		return b
	}
	return c
}

// Maj returns SHA-256's majority, (a ∧ b) ⊕ (a ∧ c) ⊕ (b ∧ c). Constants
// reduce it to And, Or or nothing; with three variables it costs one
// constraint. With s = a + b + c (0 to 3), the majority m is the only
// solution of
//
//	(s − 4m)·s = s − 6m
//
// because (6 − 4s)·m = s − s² has a nonzero factor 6 − 4s for s in 0…3,
// and m = ⌊s/2⌋ solves it.
func Maj(cs *r1cs.System, a, b, c Boolean) Boolean {
	switch {
	case a.kind == kindConst:
		return majConst(cs, a.val, b, c)
	case b.kind == kindConst:
		return majConst(cs, b.val, a, c)
	case c.kind == kindConst:
		return majConst(cs, c.val, a, b)
	case a.v == b.v:
		return majSame(a, b, c)
	case a.v == c.v:
		return majSame(a, c, b)
	case b.v == c.v:
		return majSame(b, c, a)
	}
	if a.kind == kindNot && b.kind == kindNot && c.kind == kindNot {
		// The majority is self-dual: maj(¬a, ¬b, ¬c) = ¬maj(a, b, c).
		return Maj(cs, a.Not(), b.Not(), c.Not()).Not()
	}
	r := allocResult(cs, majValue(a.val, b.val, c.val))
	la, lb, lc := cs.Begin()
	a.AddUnitTo(la)
	b.AddUnitTo(la)
	c.AddUnitTo(la)
	addTerm(la, r.v, &frMinusFour)
	a.AddUnitTo(lb)
	b.AddUnitTo(lb)
	c.AddUnitTo(lb)
	a.AddUnitTo(lc)
	b.AddUnitTo(lc)
	c.AddUnitTo(lc)
	addTerm(lc, r.v, &frMinusSix)
	cs.Enforce("maj", la, lb, lc)
	return r
}

// majConst is maj(k, x, y) for a constant k: x ∧ y if k is false, x ∨ y
// if it is true (and simply k or the other input when x or y is constant
// too, which And and Or fold).
func majConst(cs *r1cs.System, k bool, x, y Boolean) Boolean {
	if k {
		return Or(cs, x, y)
	}
	return And(cs, x, y)
}

// majSame is maj(x, y, z) where x and y are the same variable: x if they
// agree, z if one is the negation of the other.
func majSame(x, y, z Boolean) Boolean {
	if x.kind == y.kind {
		return x
	}
	return z
}

func majValue(a, b, c bool) bool {
	return (a && b) || (a && c) || (b && c)
}
