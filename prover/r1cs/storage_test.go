package r1cs_test

import (
	"math/rand/v2"
	"testing"

	"github.com/perfbot/perfbot/prover/circuit"
	"github.com/perfbot/perfbot/prover/r1cs"
)

// TestLCStoragesSynthesizeTheSameSHA256Chain synthesizes the workload
// circuit, whose packed word sums spill out of the inline array, with each
// storage: constraint system and witness must be identical, and satisfied.
func TestLCStoragesSynthesizeTheSameSHA256Chain(t *testing.T) {
	t.Parallel()
	blocks := 2
	if testing.Short() {
		blocks = 1
	}
	synth := func(storage r1cs.LCStorage) *r1cs.System {
		rng := rand.New(rand.NewPCG(5, 5))
		c := circuit.NewSHA256Chain(blocks, rng)
		hint := c.Sizes()
		hint.LCStorage = storage
		cs := r1cs.NewSystem(r1cs.Prove|r1cs.Setup, hint)
		if err := c.Synthesize(cs); err != nil {
			t.Fatalf("%s: synthesize: %v", storage, err)
		}
		if err := cs.Err(); err != nil {
			t.Fatalf("%s: %v", storage, err)
		}
		if err := cs.IsSatisfied(); err != nil {
			t.Fatalf("%s: recorded matrices: %v", storage, err)
		}
		return cs
	}
	heap, inline := synth(r1cs.LCHeap), synth(r1cs.LCInline)
	if heap.NumConstraints() == 0 {
		t.Fatal("no constraints synthesized")
	}
	longest := 0
	a, b, c := heap.Matrices()
	for _, m := range []*r1cs.Matrix{a, b, c} {
		for i := range heap.NumConstraints() {
			longest = max(longest, len(m.Row(i)))
		}
	}
	if longest <= r1cs.InlineTerms {
		t.Errorf("longest combination has %d terms: the circuit no longer spills out of %d inline terms, so this test no longer covers spilling",
			longest, r1cs.InlineTerms)
	}
	if err := r1cs.SameSystem(heap, inline); err != nil {
		t.Fatalf("heap and inline storages differ: %v", err)
	}
}
