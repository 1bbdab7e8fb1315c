package r1cs

import (
	"errors"
	"fmt"
	"slices"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// A ShardSpec is what one shard of a Prove-mode System will add (see
// Shards): exact counts, since the shard writes into a window of its
// parent's slices that is sized to them.
type ShardSpec struct {
	// Constraints and Aux are the exact numbers of constraints and aux
	// variables the shard adds.
	Constraints, Aux int
	// Imports is how many values the shard is expected to Import, a
	// capacity hint: more may be imported.
	Imports int
}

// Shards splits the rest of a Prove-mode synthesis into parts that can be
// synthesized at the same time, each on its own goroutine. It reserves,
// after the constraints and aux variables cs holds now, those of every
// spec in order, and returns one System per spec that writes its aux
// values and its evaluations of A, B and C straight into its window of
// cs's slices: nothing is copied, and with cs's Sizes exact (the windows
// fit the capacity NewSystem gave) nothing is allocated but the shards
// themselves. cs counts the reserved constraints and aux variables at
// once; whatever cs adds itself from now on comes after them.
//
// A shard is a System of its own for the gadgets that fill it, with its
// own scratch combinations and namespace path (empty: a shard names its
// constraints as cs would if it pushes the same namespaces). Its variable
// numbering is its own too, which Prove mode allows because it records
// no combination, only their values: its aux variables count from 0 in
// its window; it sees cs's inputs as they are when Shards is called, and
// a value it uses but does not own — one of cs's aux variables, or another
// shard's — through Import, as an input of its own. It must neither
// allocate inputs (AllocInput) nor be split again.
//
// An unsatisfied constraint in a shard is reported with its index in cs,
// and with the annotation of the shard's path. Join, once every shard is
// done, checks that each added exactly what it reserved, and makes cs.Err
// the first unsatisfied constraint by index, as one goroutine adding the
// same constraints in order would have reported it. cs must not be read
// while shards run.
//
// Setup mode is not sharded: the matrices are built once, for the keys, on
// one goroutine, in order. Shards fails on a System that records them and
// on a shard.
func (cs *System) Shards(specs []ShardSpec) ([]*System, error) {
	if cs.mode != Prove {
		return nil, fmt.Errorf("r1cs: shards need a Prove-only system (mode %d): Setup mode builds its matrices in order", cs.mode)
	}
	if cs.parent != nil {
		return nil, errors.New("r1cs: a shard cannot be split into shards")
	}
	var nc, na int
	for i, s := range specs {
		if s.Constraints < 0 || s.Aux < 0 || s.Imports < 0 {
			return nil, fmt.Errorf("r1cs: shard %d: negative size %+v", i, s)
		}
		nc += s.Constraints
		na += s.Aux
	}
	c, a := cs.n, len(cs.aux)
	cs.a, cs.b, cs.c = extend(cs.a, nc), extend(cs.b, nc), extend(cs.c, nc)
	cs.aux = extend(cs.aux, na)
	cs.n += nc

	shards := make([]*System, len(specs))
	for i, s := range specs {
		sh := &System{mode: Prove, storage: cs.storage, parent: cs, first: c, spec: s}
		sh.inputs = make([]fr.Element, len(cs.inputs), len(cs.inputs)+s.Imports)
		copy(sh.inputs, cs.inputs)
		// Full slice expressions: a shard that added more than it
		// reserved would grow a copy of its own, never overwrite its
		// neighbour's window, and Join would say so.
		sh.aux = cs.aux[a : a : a+s.Aux]
		sh.a = cs.a[c : c : c+s.Constraints]
		sh.b = cs.b[c : c : c+s.Constraints]
		sh.c = cs.c[c : c : c+s.Constraints]
		shards[i] = sh
		c += s.Constraints
		a += s.Aux
	}
	return shards, nil
}

// extend returns s lengthened by n elements, in place when its capacity
// allows.
func extend(s []fr.Element, n int) []fr.Element {
	s = slices.Grow(s, n)
	return s[:len(s)+n]
}

// Import makes a value the shard does not own readable in it: the value of
// a variable of its parent or of another shard, known before synthesis.
// It returns the shard's variable for it, an input of the shard's own
// numbering (see Shards), and adds no constraint: whoever owns the
// variable constrains it. Import panics on a System that is not a shard,
// where the variable would be a new public input.
func (cs *System) Import(value *fr.Element) Variable {
	if cs.parent == nil {
		panic("r1cs: Import on a system that is not a shard")
	}
	cs.inputs = append(cs.inputs, *value)
	return InputVariable(len(cs.inputs) - 1)
}

// Join ends the shards of cs, which must all be done: it checks that each
// added exactly the constraints and aux variables it reserved, and makes
// the first unsatisfied constraint by index, among cs's own and the
// shards', the one cs.Err reports. The shards are not to be used after.
func (cs *System) Join(shards []*System) error {
	for i, sh := range shards {
		if sh.parent != cs {
			return fmt.Errorf("r1cs: join: shard %d is not a shard of this system", i)
		}
		if sh.n != sh.spec.Constraints || len(sh.aux) != sh.spec.Aux {
			return fmt.Errorf("r1cs: join: shard %d (constraints from %d) added %d constraints and %d aux variables; it reserved %d and %d",
				i, sh.first, sh.n, len(sh.aux), sh.spec.Constraints, sh.spec.Aux)
		}
		if sh.unsat != nil && (cs.unsat == nil || sh.unsat.Index < cs.unsat.Index) {
			cs.unsat = sh.unsat
		}
	}
	return nil
}
