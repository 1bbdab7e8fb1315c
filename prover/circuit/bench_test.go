package circuit

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/perfbot/perfbot/prover/r1cs"
)

// BenchmarkSynthesis measures Prove-mode synthesis of the sha256 chain: the
// requested size rounds up to whole blocks, and constraints/op says how
// many constraints that is. Synthesis is single-threaded; run it with
// -cpu 1.
func BenchmarkSynthesis(b *testing.B) {
	for e := 12; e <= 18; e++ {
		b.Run(fmt.Sprintf("constraints=%d", 1<<e), func(b *testing.B) {
			c := newChain(BlocksFor(1<<e), 1)
			sizes := c.Sizes()
			b.ReportAllocs()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for b.Loop() {
				cs := r1cs.NewSystem(r1cs.Prove, sizes)
				if err := c.Synthesize(cs); err != nil {
					b.Fatal(err)
				}
				if err := cs.Err(); err != nil {
					b.Fatal(err)
				}
			}
			runtime.ReadMemStats(&after)
			n := float64(sizes.Constraints)
			b.ReportMetric(n, "constraints/op")
			b.ReportMetric(n*float64(b.N)/b.Elapsed().Seconds(), "constraints/s")
			b.ReportMetric(float64(after.Mallocs-before.Mallocs)/(n*float64(b.N)), "allocs/constraint")
		})
	}
}
