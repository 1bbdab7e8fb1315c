package prover

import (
	"context"
	"math/rand/v2"
	"testing"
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
