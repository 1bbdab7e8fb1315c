package prover

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/perfbot/perfbot/prover/circuit"
	"github.com/perfbot/perfbot/prover/groth16"
	"github.com/perfbot/perfbot/prover/r1cs"
)

// TestProofOfParallelSynthesisVerifies makes whole proofs of a two-block
// chain with real keys, synthesized on 1, 2 and 4 goroutines: every one
// verifies, and each reports the chain's constraints.
func TestProofOfParallelSynthesisVerifies(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(rand.Uint64(), 20))
	circ := circuit.NewSHA256Chain(2, rng)
	shape := r1cs.NewSystem(r1cs.Setup, r1cs.Sizes{})
	if err := circ.Synthesize(shape); err != nil {
		t.Fatal(err)
	}
	pk, vk, err := groth16.Setup(shape, cryptoReader{rng})
	if err != nil {
		t.Fatal(err)
	}
	for _, threads := range []int{1, 2, 4} {
		cfg := Config{Phases: "all", Verify: true, Threads: threads}
		res, err := proveOnce(context.Background(), newMeter(), cfg, circ, &keyPair{pk: pk, vk: vk}, circ.Sizes(), rng, nil)
		if err != nil {
			t.Fatalf("%d threads: %v", threads, err)
		}
		if n, _ := res.Measurements[0].Metric("constraints/op"); n != float64(circ.NumConstraints()) {
			t.Errorf("%d threads: synthesis constraints/op %v, want %d", threads, n, circ.NumConstraints())
		}
	}
}
