package prover

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/perfbot/perfbot/prover/r1cs"
)

// TestProofOfParallelSynthesisVerifies makes whole proofs of a two-block
// chain with real keys, synthesized on 1, 2 and 4 goroutines: every one
// verifies, and each reports the chain's constraints.
func TestProofOfParallelSynthesisVerifies(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(rand.Uint64(), 20))
	circ, keys := testChain(t, rng, 2, false)
	for _, threads := range []int{1, 2, 4} {
		cfg := Config{Phases: "all", Verify: true, Threads: threads}
		res, err := proveOnce(context.Background(), newMeter(), cfg, circ, keys, circ.Sizes(), rng, nil)
		if err != nil {
			t.Fatalf("%d threads: %v", threads, err)
		}
		if n, _ := res.Measurements[0].Metric("constraints/op"); n != float64(circ.NumConstraints()) {
			t.Errorf("%d threads: synthesis constraints/op %v, want %d", threads, n, circ.NumConstraints())
		}
	}
}

// TestProofsReuseTheLastProofsMemory: with a Pool in the sizes (as Run
// makes them) the first proof's synthesis allocates its witness and A, B
// and C over the domain, and the next ones write into that memory: their
// synthesis allocates less than one of those vectors. Every proof
// verifies.
func TestProofsReuseTheLastProofsMemory(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(rand.Uint64(), 21))
	circ, keys := testChain(t, rng, 4, false)
	hint := circ.Sizes()
	hint.Domain, hint.Pool = keys.pk.DomainSize, r1cs.NewPool()
	vector := float64(hint.Domain * fr.Bytes)
	cfg := Config{Phases: "all", Verify: true, Threads: 2}
	for i := range 3 {
		res, err := proveOnce(context.Background(), newMeter(), cfg, circ, keys, hint, rng, nil)
		if err != nil {
			t.Fatalf("proof %d: %v", i+1, err)
		}
		alloc, ok := res.Measurements[0].Metric("B/op")
		switch {
		case !ok:
			t.Fatalf("proof %d: synthesis has no B/op", i+1)
		case i == 0 && alloc < 3*vector:
			t.Errorf("proof 1: synthesis allocated %.0f B; want at least A, B and C over the domain (3 × %.0f B)", alloc, vector)
		case i > 0 && alloc > vector:
			t.Errorf("proof %d: synthesis allocated %.0f B; want under one domain vector (%.0f B): the last proof's memory reused", i+1, alloc, vector)
		}
		if hint.Pool.Len() != 1 {
			t.Errorf("after proof %d the pool holds %d sets; want 1", i+1, hint.Pool.Len())
		}
	}
}
