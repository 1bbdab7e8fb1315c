package gadget

import (
	"math/bits"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/perfbot/perfbot/prover/r1cs"
)

// A UInt32 is a 32-bit word of a circuit: 32 Booleans, least significant
// first, and the word's value. The zero value is the constant 0.
type UInt32 struct {
	bits  [32]Boolean
	value uint32
}

// ConstantUInt32 returns the constant x. It costs nothing.
func ConstantUInt32(x uint32) UInt32 {
	var u UInt32
	for i := range u.bits {
		u.bits[i].val = x>>i&1 == 1
	}
	u.value = x
	return u
}

// AllocUInt32 allocates x as 32 boolean aux variables: 32 constraints.
func AllocUInt32(cs *r1cs.System, x uint32) UInt32 {
	var u UInt32
	for i := range u.bits {
		cs.Push("bit", i)
		u.bits[i] = AllocBoolean(cs, x>>i&1 == 1)
		cs.Pop()
	}
	u.value = x
	return u
}

// UInt32FromBits returns the word whose bits, least significant first, are
// bits. It costs nothing.
func UInt32FromBits(bits [32]Boolean) UInt32 {
	u := UInt32{bits: bits}
	for i := range bits {
		if bits[i].val {
			u.value |= 1 << i
		}
	}
	return u
}

// UInt32FromVariables returns the word x whose bit i, least significant
// first, is the variable vars[i]. It costs nothing and constrains nothing:
// the caller vouches that every variable is constrained to be boolean
// elsewhere and holds its bit of x, as a shard's imports of a word
// another shard allocated do (see r1cs.System.Shards).
func UInt32FromVariables(vars *[32]r1cs.Variable, x uint32) UInt32 {
	var u UInt32
	for i := range u.bits {
		u.bits[i] = Boolean{v: vars[i], kind: kindIs, val: x>>i&1 == 1}
	}
	u.value = x
	return u
}

// Value returns the word's value in the witness.
func (x *UInt32) Value() uint32 { return x.value }

// Bit returns bit i, 0 being the least significant.
func (x *UInt32) Bit(i int) Boolean { return x.bits[i] }

// Bits returns the 32 bits, least significant first.
func (x *UInt32) Bits() [32]Boolean { return x.bits }

// IsConstant reports whether every bit is a constant.
func (x *UInt32) IsConstant() bool {
	for i := range x.bits {
		if x.bits[i].kind != kindConst {
			return false
		}
	}
	return true
}

// RotR returns x rotated right by n bits. It costs nothing.
func (x *UInt32) RotR(n int) UInt32 {
	n &= 31
	var u UInt32
	for i := range u.bits {
		u.bits[i] = x.bits[(i+n)&31]
	}
	u.value = bits.RotateLeft32(x.value, -n)
	return u
}

// ShR returns x shifted right by n bits: the top n bits are the constant
// false, so operations on them fold. It costs nothing.
func (x *UInt32) ShR(n int) UInt32 {
	var u UInt32
	if n >= 32 {
		return u
	}
	copy(u.bits[:32-n], x.bits[n:])
	u.value = x.value >> n
	return u
}

// Xor returns x ⊕ y, one constraint per bit where both bits are variables.
func (x *UInt32) Xor(cs *r1cs.System, y *UInt32) UInt32 {
	var u UInt32
	for i := range u.bits {
		cs.Push("bit", i)
		u.bits[i] = Xor(cs, x.bits[i], y.bits[i])
		cs.Pop()
	}
	u.value = x.value ^ y.value
	return u
}

// Xor3 returns x ⊕ y ⊕ z, one constraint per bit where at least two bits
// are variables (see the Boolean Xor3).
func (x *UInt32) Xor3(cs *r1cs.System, y, z *UInt32) UInt32 {
	var u UInt32
	for i := range u.bits {
		cs.Push("bit", i)
		u.bits[i] = Xor3(cs, x.bits[i], y.bits[i], z.bits[i])
		cs.Pop()
	}
	u.value = x.value ^ y.value ^ z.value
	return u
}

// Ch returns SHA-256's choice (x ∧ y) ⊕ (¬x ∧ z) bit by bit: at most one
// constraint per bit (see the Boolean Ch).
func (x *UInt32) Ch(cs *r1cs.System, y, z *UInt32) UInt32 {
	var u UInt32
	for i := range u.bits {
		cs.Push("bit", i)
		u.bits[i] = Ch(cs, x.bits[i], y.bits[i], z.bits[i])
		cs.Pop()
	}
	u.value = x.value&y.value ^ ^x.value&z.value
	return u
}

// Maj returns SHA-256's majority (x ∧ y) ⊕ (x ∧ z) ⊕ (y ∧ z) bit by bit:
// at most one constraint per bit (see the Boolean Maj).
func (x *UInt32) Maj(cs *r1cs.System, y, z *UInt32) UInt32 {
	var u UInt32
	for i := range u.bits {
		cs.Push("bit", i)
		u.bits[i] = Maj(cs, x.bits[i], y.bits[i], z.bits[i])
		cs.Pop()
	}
	u.value = x.value&y.value ^ x.value&z.value ^ y.value&z.value
	return u
}

// addPacked adds Σ 2^(shift+i)·bit_i over the variable bits to lc and
// returns the constant part Σ 2^i over true constants and negations (each
// negation 1 − v contributes 2^i·1), unshifted, which the caller adds.
func (x *UInt32) addPacked(lc *r1cs.LC, shift int) (constant uint32) {
	for i := range x.bits {
		b := &x.bits[i]
		switch b.kind {
		case kindConst:
			if b.val {
				constant |= 1 << i
			}
		case kindIs:
			addPow2(lc, b.v, shift+i, false)
		case kindNot:
			constant |= 1 << i
			addPow2(lc, b.v, shift+i, true)
		}
	}
	return constant
}

// maxValue returns the largest value x can take: its constant bits count
// by value, its variable bits as 1.
func (x *UInt32) maxValue() uint64 {
	var m uint32
	for i := range x.bits {
		if x.bits[i].kind != kindConst || x.bits[i].val {
			m |= 1 << i
		}
	}
	return uint64(m)
}

// AddTo adds 2^shift·x, that is Σ 2^(shift+i)·bit_i, to lc in place; shift
// is at most 96, so the packed number fits a 128-bit range.
func (x *UInt32) AddTo(lc *r1cs.LC, shift int) {
	if shift < 0 || shift > maxPackBits-32 {
		panic("gadget: UInt32.AddTo shift out of range")
	}
	if k := x.addPacked(lc, shift); k != 0 {
		var c fr.Element
		c.SetUint64(uint64(k))
		c.Mul(&c, &pow2[shift])
		lc.AddConst(&c)
	}
}

// maxAddMany bounds the number of AddMany operands so the sum stays far
// below 2^64 and the field's modulus.
const maxAddMany = 1 << 16

// AddMany returns the sum of operands modulo 2^32. It allocates the bits
// of the whole sum, as many as its largest possible value needs (a constant
// operand counts by its value, a variable bit as 1), at one constraint
// each, and enforces one packed equality
//
//	(Σ_k Σ_i 2^i·operand_k bit_i) · 1 = Σ_j 2^j·sum bit_j
//
// then keeps the low 32 sum bits. An all-constant sum is a constant and
// costs nothing. It panics on no operands or more than 65,536.
func AddMany(cs *r1cs.System, operands []UInt32) UInt32 {
	if len(operands) == 0 || len(operands) > maxAddMany {
		panic("gadget: AddMany needs 1 to 65536 operands")
	}
	var sum, max uint64
	constant := true
	for k := range operands {
		op := &operands[k]
		sum += uint64(op.value)
		max += op.maxValue()
		if constant && !op.IsConstant() {
			constant = false
		}
	}
	if constant {
		return ConstantUInt32(uint32(sum))
	}

	// Allocate the sum's bits first: AllocBoolean uses the scratch
	// combinations that the equality is built in.
	n := bits.Len64(max)
	var out [64]r1cs.Variable
	var u UInt32
	for j := 0; j < n; j++ {
		cs.Push("bit", j)
		b := AllocBoolean(cs, sum>>j&1 == 1)
		cs.Pop()
		out[j] = b.v
		if j < 32 {
			u.bits[j] = b
		}
	}
	u.value = uint32(sum)

	la, lb, lc := cs.Begin()
	var k uint64
	for i := range operands {
		k += uint64(operands[i].addPacked(la, 0))
	}
	addConst(la, k)
	lb.AddVar(r1cs.One)
	for j := 0; j < n; j++ {
		addPow2(lc, out[j], j, false)
	}
	cs.Enforce("sum", la, lb, lc)
	return u
}
