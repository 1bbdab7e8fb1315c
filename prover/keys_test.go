package prover

import (
	"math/rand/v2"
	"testing"

	"github.com/perfbot/perfbot/prover/circuit"
	"github.com/perfbot/perfbot/prover/groth16"
	"github.com/perfbot/perfbot/prover/r1cs"
)

// testChain makes a SHA-256 chain of blocks blocks and its keys from rng:
// a real setup (proofs verify) or, with random, random points of the
// right shapes (fast; proofs do not verify).
func testChain(t testing.TB, rng *rand.Rand, blocks int, random bool) (*circuit.SHA256Chain, *keyPair) {
	t.Helper()
	circ := circuit.NewSHA256Chain(blocks, rng)
	shape := r1cs.NewSystem(r1cs.Setup, r1cs.Sizes{})
	if err := circ.Synthesize(shape); err != nil {
		t.Fatal(err)
	}
	keys := groth16.Setup
	if random {
		keys = groth16.RandomKeys
	}
	pk, vk, err := keys(shape, cryptoReader{rng})
	if err != nil {
		t.Fatal(err)
	}
	return circ, &keyPair{pk: pk, vk: vk}
}
