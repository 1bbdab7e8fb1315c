package groth16

import (
	"math/rand/v2"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/perfbot/perfbot/prover/r1cs"
)

// circuitSize says how many of each gadget the test circuit gets on top of
// x^3 + x + 5 = y.
type circuitSize struct {
	bits  int // boolean aux variables, each with b·(1−b) = 0
	xors  int // c = a XOR b over random earlier bits: (2a)·b = a + b − c
	words int // 32-bit packings of earlier bits: (Σ 2^k b_k)·1 = w
	muls  int // t = (c1·v1 + c2·v2 + c3)·(c4·v3) over random earlier variables
}

// small is the size most tests use: a few hundred constraints, mostly bits.
var small = circuitSize{bits: 160, xors: 120, words: 4, muls: 60}

// scaled returns a SHA-256-like mix (almost every aux value a bit) whose
// constraints plus inputs come to exactly total rows, a power of two.
func scaled(total int) circuitSize {
	rows := total - 3 - 3 - 1 // cubic part, public word, inputs
	s := circuitSize{words: rows / 256, muls: rows / 64}
	rest := rows - s.words - s.muls
	s.bits = rest / 2
	s.xors = rest - s.bits
	return s
}

// buildCircuit synthesizes the test circuit in the given mode. seed fixes the
// structure (which variables each constraint uses, coefficients); witness
// fixes the values (x and the bits), so two witness seeds give two
// assignments of one shape. Public inputs: y and the last word.
func buildCircuit(mode r1cs.Mode, seed, witness uint64, size circuitSize) *r1cs.System {
	return buildCircuitIn(mode, seed, witness, size, 0)
}

// buildCircuitIn is buildCircuit with room for a domain of domain
// entries in the evaluations (r1cs.Sizes.Domain; 0 for none).
func buildCircuitIn(mode r1cs.Mode, seed, witness uint64, size circuitSize, domain int) *r1cs.System {
	srng := rand.New(rand.NewPCG(seed, 1))
	wrng := rand.New(rand.NewPCG(witness, 2))
	cs := r1cs.NewSystem(mode, r1cs.Sizes{
		Constraints: 4 + size.bits + size.xors + size.words + size.muls,
		Inputs:      3,
		Aux:         3 + size.bits + size.xors + size.words + size.muls,
		Domain:      domain,
	})
	var one fr.Element
	one.SetOne()

	// x^3 + x + 5 = y
	var x, sq, cube, y, five fr.Element
	x.SetUint64(wrng.Uint64())
	sq.Square(&x)
	cube.Mul(&sq, &x)
	five.SetUint64(5)
	y.Add(&cube, &x).Add(&y, &five)
	vy := cs.AllocInput(&y)
	vx := cs.Alloc(&x)
	vsq := cs.Alloc(&sq)
	vcube := cs.Alloc(&cube)
	a, b, c := cs.Begin()
	a.AddVar(vx)
	b.AddVar(vx)
	c.AddVar(vsq)
	cs.Enforce("x*x", a, b, c)
	a, b, c = cs.Begin()
	a.AddVar(vsq)
	b.AddVar(vx)
	c.AddVar(vcube)
	cs.Enforce("sq*x", a, b, c)
	a, b, c = cs.Begin()
	a.AddVar(vcube)
	a.AddVar(vx)
	a.AddConst(&five)
	b.AddVar(r1cs.One)
	c.AddVar(vy)
	cs.Enforce("cube+x+5", a, b, c)

	// Bits with booleanity.
	bits := make([]r1cs.Variable, 0, size.bits+size.xors)
	for i := 0; i < size.bits; i++ {
		v := cs.AllocBit(wrng.IntN(2) == 1)
		a, b, c = cs.Begin()
		a.AddVar(v)
		b.AddVar(r1cs.One)
		b.SubVar(v)
		cs.Enforce("bool", a, b, c)
		bits = append(bits, v)
	}
	// XORs of earlier bits.
	var two fr.Element
	two.SetUint64(2)
	for i := 0; i < size.xors && len(bits) >= 2; i++ {
		p, q := bits[srng.IntN(len(bits))], bits[srng.IntN(len(bits))]
		for q == p {
			q = bits[srng.IntN(len(bits))]
		}
		pv, qv := cs.Value(p), cs.Value(q)
		var xv fr.Element
		if !pv.Equal(&qv) {
			xv.SetOne()
		}
		v := cs.Alloc(&xv)
		a, b, c = cs.Begin()
		a.Add(p, &two)
		b.AddVar(q)
		c.AddVar(p)
		c.AddVar(q)
		c.SubVar(v)
		cs.Enforce("xor", a, b, c)
		bits = append(bits, v)
	}
	// 32-bit words packed from earlier bits.
	var lastWord r1cs.Variable
	var lastValue fr.Element
	for i := 0; i < size.words && len(bits) >= 32; i++ {
		start := srng.IntN(len(bits) - 31)
		var w, coeff fr.Element
		coeff.SetOne()
		for k := 0; k < 32; k++ {
			if bv := cs.Value(bits[start+k]); !bv.IsZero() {
				w.Add(&w, &coeff)
			}
			coeff.Double(&coeff)
		}
		v := cs.Alloc(&w)
		a, b, c = cs.Begin()
		coeff.SetOne()
		for k := 0; k < 32; k++ {
			a.Add(bits[start+k], &coeff)
			coeff.Double(&coeff)
		}
		b.AddVar(r1cs.One)
		c.AddVar(v)
		cs.Enforce("pack", a, b, c)
		lastWord, lastValue = v, w
	}
	// General multiplications over earlier aux variables.
	pick := func() r1cs.Variable { return r1cs.AuxVariable(srng.IntN(cs.NumAux())) }
	coeff := func() fr.Element {
		var e fr.Element
		e.SetUint64(srng.Uint64())
		e.Mul(&e, new(fr.Element).SetUint64(srng.Uint64()|1))
		return e
	}
	for i := 0; i < size.muls; i++ {
		v1, v2, v3 := pick(), pick(), pick()
		c1, c2, c3, c4 := coeff(), coeff(), coeff(), coeff()
		var l, r, t, tmp fr.Element
		x1, x2, x3 := cs.Value(v1), cs.Value(v2), cs.Value(v3)
		l.Mul(&c1, &x1)
		tmp.Mul(&c2, &x2)
		l.Add(&l, &tmp).Add(&l, &c3)
		r.Mul(&c4, &x3)
		t.Mul(&l, &r)
		vt := cs.Alloc(&t)
		a, b, c = cs.Begin()
		a.Add(v1, &c1)
		a.Add(v2, &c2)
		a.AddConst(&c3)
		b.Add(v3, &c4)
		c.AddVar(vt)
		cs.Enforce("mul", a, b, c)
	}
	// The last word is public too.
	if size.words > 0 {
		vw := cs.AllocInput(&lastValue)
		a, b, c = cs.Begin()
		a.AddVar(lastWord)
		b.AddVar(r1cs.One)
		c.AddVar(vw)
		cs.Enforce("public word", a, b, c)
	}
	return cs
}

// publicInputs returns cs's inputs without One.
func publicInputs(cs *r1cs.System) []fr.Element {
	return append([]fr.Element(nil), cs.Inputs()[1:]...)
}
