package prover

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/perfbot/perfbot/prover/circuit"
	"github.com/perfbot/perfbot/prover/groth16"
	"github.com/perfbot/perfbot/prover/r1cs"
)

// BenchmarkProve makes whole proofs of the sha256 chain circuit (synthesis
// included) with random keys of the real shapes, and reports each phase's
// time as its own metric (synthesis-ns/op, msm_h-ns/op, …) beside the
// whole proof's ns/op. Sizes 2^12..2^18 as requested; they round up to
// whole SHA-256 blocks (see circuit.BlocksFor), reported as constraints/op.
func BenchmarkProve(b *testing.B) {
	for _, lg := range []int{12, 15, 16, 17, 18} {
		if testing.Short() && lg > 15 {
			continue
		}
		n := 1 << lg
		b.Run(fmt.Sprintf("constraints=%d", n), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			circ := circuit.NewSHA256Chain(circuit.BlocksFor(n), rng)
			shape := r1cs.NewSystem(r1cs.Setup, r1cs.Sizes{})
			if err := circ.Synthesize(shape); err != nil {
				b.Fatal(err)
			}
			pk, vk, err := groth16.RandomKeys(shape, cryptoReader{rng})
			if err != nil {
				b.Fatal(err)
			}
			hint := circ.Sizes()
			cfg := Config{Phases: "all"}
			m := newMeter()
			sums := map[string]float64{}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				res, err := proveOnce(context.Background(), m, cfg, circ, &keyPair{pk: pk, vk: vk}, hint, rng, nil)
				if err != nil {
					b.Fatal(err)
				}
				for _, ms := range res.Measurements {
					sums[ms.Phase] += float64(ms.Elapsed.Nanoseconds())
				}
			}
			for phase, ns := range sums {
				if phase != PhaseTotal {
					b.ReportMetric(ns/float64(b.N), phase+"-ns/op")
				}
			}
			b.ReportMetric(float64(shape.NumConstraints()), "constraints/op")
		})
	}
}
