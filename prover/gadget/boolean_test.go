package gadget

import (
	"fmt"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/perfbot/perfbot/prover/r1cs"
)

// inputKinds are the ways a test builds a Boolean input.
var inputKinds = []string{"const", "alloc", "not"}

func makeBool(cs *r1cs.System, kind string, val bool) Boolean {
	switch kind {
	case "const":
		return ConstantBoolean(val)
	case "alloc":
		return AllocBoolean(cs, val)
	default:
		return AllocBoolean(cs, !val).Not()
	}
}

type boolOp struct {
	name  string
	arity int
	build func(cs *r1cs.System, in []Boolean) Boolean
	truth func(in []bool) bool
}

var boolOps = []boolOp{
	{"xor", 2, func(cs *r1cs.System, in []Boolean) Boolean { return Xor(cs, in[0], in[1]) },
		func(in []bool) bool { return in[0] != in[1] }},
	{"and", 2, func(cs *r1cs.System, in []Boolean) Boolean { return And(cs, in[0], in[1]) },
		func(in []bool) bool { return in[0] && in[1] }},
	{"or", 2, func(cs *r1cs.System, in []Boolean) Boolean { return Or(cs, in[0], in[1]) },
		func(in []bool) bool { return in[0] || in[1] }},
	{"xor3", 3, func(cs *r1cs.System, in []Boolean) Boolean { return Xor3(cs, in[0], in[1], in[2]) },
		func(in []bool) bool { return in[0] != in[1] != in[2] }},
	{"ch", 3, func(cs *r1cs.System, in []Boolean) Boolean { return Ch(cs, in[0], in[1], in[2]) },
		func(in []bool) bool { return in[0] && in[1] || !in[0] && in[2] }},
	{"maj", 3, func(cs *r1cs.System, in []Boolean) Boolean { return Maj(cs, in[0], in[1], in[2]) },
		func(in []bool) bool { return in[0] && in[1] || in[0] && in[2] || in[1] && in[2] }},
}

// forEachInput calls f for every combination of input kinds and values.
func forEachInput(arity int, f func(kinds []string, vals []bool)) {
	n := 1
	for range arity {
		n *= 2 * len(inputKinds)
	}
	for code := range n {
		kinds, vals := make([]string, arity), make([]bool, arity)
		c := code
		for i := range arity {
			vals[i] = c%2 == 1
			c /= 2
			kinds[i] = inputKinds[c%len(inputKinds)]
			c /= len(inputKinds)
		}
		f(kinds, vals)
	}
}

// TestBooleanOpsTruthTablesAndCosts checks every gadget on every
// combination of constant, allocated and negated inputs: the value, the
// witness, satisfiability, and the cost: nothing when constants decide,
// and at most one constraint otherwise.
func TestBooleanOpsTruthTablesAndCosts(t *testing.T) {
	t.Parallel()
	for _, op := range boolOps {
		forEachInput(op.arity, func(kinds []string, vals []bool) {
			name := fmt.Sprintf("%s%v%v", op.name, kinds, vals)
			cs := newSystem()
			in := make([]Boolean, op.arity)
			allConst := true
			for i := range in {
				in[i] = makeBool(cs, kinds[i], vals[i])
				allConst = allConst && kinds[i] == "const"
			}
			before := cs.NumConstraints()
			r := op.build(cs, in)
			cost := cs.NumConstraints() - before
			want := op.truth(vals)
			if r.Value() != want {
				t.Fatalf("%s: value %v, want %v", name, r.Value(), want)
			}
			if got := bitValue(t, cs, r); got != want {
				t.Fatalf("%s: witness %v, want %v", name, got, want)
			}
			checkSatisfied(t, cs)
			if cost > 1 {
				t.Fatalf("%s: %d constraints, want at most 1", name, cost)
			}
			if allConst && (cost != 0 || !r.IsConstant()) {
				t.Fatalf("%s: constant inputs cost %d constraints (constant result %v)", name, cost, r.IsConstant())
			}
		})
	}
}

// TestBooleanOpsCostOneWithAllocatedInputs pins the headline costs: each
// gadget costs exactly one constraint on allocated inputs.
func TestBooleanOpsCostOneWithAllocatedInputs(t *testing.T) {
	t.Parallel()
	for _, op := range boolOps {
		cs := newSystem()
		in := []Boolean{AllocBoolean(cs, true), AllocBoolean(cs, false), AllocBoolean(cs, true)}
		if n := cs.NumConstraints(); n != 3 {
			t.Fatalf("3 AllocBoolean cost %d constraints, want 3", n)
		}
		op.build(cs, in[:op.arity])
		if n := cs.NumConstraints() - 3; n != 1 {
			t.Errorf("%s: %d constraints, want 1", op.name, n)
		}
	}
}

// TestBooleanResultIsUnique shows the one-constraint gadgets are sound: for
// every input, the result variable admits no value but the right one (its
// negation, 2, −1, 1/2 and a random element all fail).
func TestBooleanResultIsUnique(t *testing.T) {
	t.Parallel()
	var wrong [5]fr.Element
	wrong[1].SetUint64(2)
	wrong[2].SetInt64(-1)
	wrong[3].SetUint64(2)
	wrong[3].Inverse(&wrong[3])
	if _, err := wrong[4].SetRandom(); err != nil {
		t.Fatal(err)
	}
	for _, op := range boolOps {
		checked := 0
		forEachInput(op.arity, func(kinds []string, vals []bool) {
			cs := newSystem()
			in := make([]Boolean, op.arity)
			for i := range in {
				in[i] = makeBool(cs, kinds[i], vals[i])
			}
			before := cs.NumConstraints()
			r := op.build(cs, in)
			v, _, ok := r.Variable()
			if !ok || cs.NumConstraints() == before || v.Index() < cs.NumAux()-1 {
				return // the result is a constant or an input, not a new variable
			}
			right := cs.Value(v)
			wrong[0].SetOne()
			wrong[0].Sub(&wrong[0], &right) // the negated bit
			for i := range wrong {
				setAux(cs, v, &wrong[i])
				if unsatIndex(t, cs) != before {
					t.Fatalf("%s%v%v: result %s satisfies the constraint", op.name, kinds, vals, wrong[i].String())
				}
			}
			setAux(cs, v, &right)
			checkSatisfied(t, cs)
			checked++
		})
		// Variable inputs in every kind and value: at least 2^arity cases
		// must have built a constraint.
		if checked < 1<<op.arity {
			t.Errorf("%s: only %d cases built a result variable", op.name, checked)
		}
	}
}

func TestAllocBooleanRejectsNonBit(t *testing.T) {
	t.Parallel()
	cs := newSystem()
	AllocBoolean(cs, false)
	b := AllocBoolean(cs, true)
	checkSatisfied(t, cs)
	v, _, _ := b.Variable()
	var two fr.Element
	two.SetUint64(2)
	setAux(cs, v, &two)
	if got := unsatIndex(t, cs); got != 1 {
		t.Fatalf("first unsatisfied constraint %d, want 1 (the second boolean)", got)
	}
}

// TestBooleanAddTo checks the in-place helpers against the Boolean's value
// for every kind: coeff·b evaluates to coeff or 0.
func TestBooleanAddTo(t *testing.T) {
	t.Parallel()
	var coeff fr.Element
	coeff.SetUint64(12345)
	for _, kind := range inputKinds {
		for _, val := range []bool{false, true} {
			cs := newSystem()
			b := makeBool(cs, kind, val)
			var want, wantNeg fr.Element
			if val {
				want.Set(&coeff)
				wantNeg.SetInt64(-1)
			}
			var lc, unit, sub r1cs.LC
			b.AddTo(&lc, &coeff)
			b.AddUnitTo(&unit)
			b.SubFrom(&sub)
			if got := lc.Eval(cs.Inputs(), cs.Aux()); !got.Equal(&want) {
				t.Errorf("%s %v: AddTo gives %s, want %s", kind, val, got.String(), want.String())
			}
			got := unit.Eval(cs.Inputs(), cs.Aux())
			if got.IsOne() != val || !(got.IsOne() || got.IsZero()) {
				t.Errorf("%s %v: AddUnitTo gives %s", kind, val, got.String())
			}
			if got := sub.Eval(cs.Inputs(), cs.Aux()); !got.Equal(&wantNeg) {
				t.Errorf("%s %v: SubFrom gives %s, want %s", kind, val, got.String(), wantNeg.String())
			}
			if kind == "const" && (lc.Len() > 1 || unit.Len() > 1) {
				t.Errorf("constant %v adds %d terms", val, lc.Len())
			}
		}
	}
}
