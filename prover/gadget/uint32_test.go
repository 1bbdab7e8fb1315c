package gadget

import (
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/perfbot/perfbot/prover/r1cs"
)

// checkWord fails unless u's value is want and every bit's witness agrees.
func checkWord(t *testing.T, cs *r1cs.System, u *UInt32, want uint32) {
	t.Helper()
	if u.Value() != want {
		t.Fatalf("value %#08x, want %#08x", u.Value(), want)
	}
	for i := range 32 {
		if got := bitValue(t, cs, u.Bit(i)); got != (want>>i&1 == 1) {
			t.Fatalf("bit %d of %#08x is %v", i, want, got)
		}
	}
}

// randWord returns x as a constant, an allocated word, or a word with
// some constant and some negated bits, at random.
func randWord(cs *r1cs.System, rng *rand.Rand, x uint32) UInt32 {
	switch rng.IntN(3) {
	case 0:
		return ConstantUInt32(x)
	case 1:
		return AllocUInt32(cs, x)
	}
	var b [32]Boolean
	for i := range b {
		bit := x>>i&1 == 1
		switch rng.IntN(3) {
		case 0:
			b[i] = ConstantBoolean(bit)
		case 1:
			b[i] = AllocBoolean(cs, bit)
		default:
			b[i] = AllocBoolean(cs, !bit).Not()
		}
	}
	return UInt32FromBits(b)
}

func TestUInt32RotRShR(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	for range 50 {
		cs := newSystem()
		x := rng.Uint32()
		u := AllocUInt32(cs, x)
		for n := range 32 {
			r := u.RotR(n)
			checkWord(t, cs, &r, bits.RotateLeft32(x, -n))
			s := u.ShR(n)
			checkWord(t, cs, &s, x>>n)
			for i := 32 - n; i < 32; i++ {
				if b := s.Bit(i); !b.IsConstant() || b.Value() {
					t.Fatalf("ShR(%d) bit %d is not the constant false", n, i)
				}
			}
		}
		if cs.NumConstraints() != 32 {
			t.Fatalf("rotations and shifts cost %d constraints, want only AllocUInt32's 32", cs.NumConstraints())
		}
	}
}

func TestUInt32BitwiseOps(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		cs := newSystem()
		x, y, z := rng.Uint32(), rng.Uint32(), rng.Uint32()
		a, b, c := randWord(cs, rng, x), randWord(cs, rng, y), randWord(cs, rng, z)
		r := a.Xor(cs, &b)
		checkWord(t, cs, &r, x^y)
		r = a.Xor3(cs, &b, &c)
		checkWord(t, cs, &r, x^y^z)
		r = a.Ch(cs, &b, &c)
		checkWord(t, cs, &r, x&y|^x&z)
		r = a.Maj(cs, &b, &c)
		checkWord(t, cs, &r, x&y|x&z|y&z)
		checkSatisfied(t, cs)
	}
}

func TestUInt32BitwiseOpsCostOnePerBit(t *testing.T) {
	t.Parallel()
	cs := newSystem()
	a, b, c := AllocUInt32(cs, 1), AllocUInt32(cs, 2), AllocUInt32(cs, 3)
	s := c.ShR(10)
	for _, tc := range []struct {
		name string
		op   func() UInt32
		want int
	}{
		{"xor", func() UInt32 { return a.Xor(cs, &b) }, 32},
		{"xor3", func() UInt32 { return a.Xor3(cs, &b, &c) }, 32},
		{"xor3 with a shift", func() UInt32 { return a.Xor3(cs, &b, &s) }, 32},
		{"xor with a shift", func() UInt32 { return a.Xor(cs, &s) }, 22},
		{"ch", func() UInt32 { return a.Ch(cs, &b, &c) }, 32},
		{"maj", func() UInt32 { return a.Maj(cs, &b, &c) }, 32},
	} {
		before := cs.NumConstraints()
		tc.op()
		if got := cs.NumConstraints() - before; got != tc.want {
			t.Errorf("%s: %d constraints, want %d", tc.name, got, tc.want)
		}
	}
	checkSatisfied(t, cs)
}

func TestAddManySumsModulo2To32(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	for range 200 {
		cs := newSystem()
		n := 1 + rng.IntN(8)
		ops := make([]UInt32, n)
		var sum, max uint64
		constant := true
		for i := range ops {
			x := rng.Uint32()
			if rng.IntN(4) == 0 {
				x >>= rng.IntN(32) // small operands shrink the sum's width
			}
			ops[i] = randWord(cs, rng, x)
			sum += uint64(x)
			for j := range 32 {
				if b := ops[i].Bit(j); !b.IsConstant() || b.Value() {
					max += 1 << j
				}
			}
			constant = constant && ops[i].IsConstant()
		}
		before := cs.NumConstraints()
		r := AddMany(cs, ops)
		checkWord(t, cs, &r, uint32(sum))
		checkSatisfied(t, cs)
		want := bits.Len64(max) + 1
		if constant {
			want = 0
		}
		if got := cs.NumConstraints() - before; got != want {
			t.Fatalf("%d operands, max %d: %d constraints, want %d", n, max, got, want)
		}
	}
}

// TestAddManyConstantsCountByValue: a constant addend widens the sum by its
// value, not by 2^32 − 1, and constants alone cost nothing.
func TestAddManyConstantsCountByValue(t *testing.T) {
	t.Parallel()
	cs := newSystem()
	x := AllocUInt32(cs, 0xffffffff)
	ops := []UInt32{x, ConstantUInt32(1)}
	before := cs.NumConstraints()
	r := AddMany(cs, ops)
	// 0xffffffff + 1 needs 33 bits: 33 booleans and the equality.
	if got := cs.NumConstraints() - before; got != 34 {
		t.Fatalf("x + 1 costs %d constraints, want 34", got)
	}
	checkWord(t, cs, &r, 0)

	y7 := AllocUInt32(cs, 7<<29)
	y := y7.ShR(29) // 3 variable bits
	ops = []UInt32{y, ConstantUInt32(2)}
	before = cs.NumConstraints()
	r = AddMany(cs, ops)
	if got := cs.NumConstraints() - before; got != 5 { // max 9: 4 bits + equality
		t.Fatalf("3-bit y + 2 costs %d constraints, want 5", got)
	}
	checkWord(t, cs, &r, 9)

	before = cs.NumConstraints()
	ops = []UInt32{ConstantUInt32(0xfffffff0), ConstantUInt32(0x20), ConstantUInt32(5)}
	r = AddMany(cs, ops)
	if cs.NumConstraints() != before || !r.IsConstant() || r.Value() != 0x15 {
		t.Fatalf("constant sum: %d constraints, constant %v, value %#x", cs.NumConstraints()-before, r.IsConstant(), r.Value())
	}
	checkSatisfied(t, cs)
}

// TestAddManyRejectsWrongSum flips a low bit and a carry bit of the sum:
// the equality (or the carry's boolean constraint) fails.
func TestAddManyRejectsWrongSum(t *testing.T) {
	t.Parallel()
	for _, bit := range []int{0, 17, 32, 33} {
		cs := newSystem()
		ops := []UInt32{AllocUInt32(cs, 0xdeadbeef), AllocUInt32(cs, 0xfeedface), ConstantUInt32(0x80000000)}
		AddMany(cs, ops)
		checkSatisfied(t, cs)
		sumIndex := cs.NumConstraints() - 1 // the equality is AddMany's last constraint
		v := r1cs.AuxVariable(cs.NumAux() - 34 + bit)
		x := cs.Value(v)
		if x.IsZero() {
			x.SetOne()
		} else {
			x.SetZero()
		}
		setAux(cs, v, &x)
		if got := unsatIndex(t, cs); got != sumIndex {
			t.Errorf("flipped sum bit %d: first unsatisfied constraint %d, want the equality %d", bit, got, sumIndex)
		}
	}
}

// TestUInt32FromVariablesIsTheAllocatedWord: a word rebuilt from the
// variables of an allocated one is the same word, costs nothing, and
// takes part in gadgets as the original does.
func TestUInt32FromVariablesIsTheAllocatedWord(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(rand.Uint64(), 3))
	cs := newSystem()
	x, y := rng.Uint32(), rng.Uint32()
	u, w := AllocUInt32(cs, x), AllocUInt32(cs, y)
	var vars [32]r1cs.Variable
	for i := range vars {
		vars[i], _, _ = u.bits[i].Variable()
	}
	n := cs.NumConstraints()
	v := UInt32FromVariables(&vars, x)
	if cs.NumConstraints() != n || v != u {
		t.Fatalf("rebuilt word %+v differs from %+v, or cost %d constraints", v, u, cs.NumConstraints()-n)
	}
	z := v.Xor(cs, &w)
	checkWord(t, cs, &z, x^y)
	checkSatisfied(t, cs)
}
