package circuit

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/perfbot/perfbot/prover/r1cs"
)

// BenchmarkSynthesis measures Prove-mode synthesis of the sha256 chain on
// one goroutine (Synthesize): the requested size rounds up to whole
// blocks, and constraints/op says how many constraints that is. Run it
// with -cpu 1. bench/synth-noise.sh runs it by name; the thread-count
// dimension is BenchmarkSynthesizeParallel's.
func BenchmarkSynthesis(b *testing.B) {
	for e := 12; e <= 18; e++ {
		b.Run(fmt.Sprintf("constraints=%d", 1<<e), func(b *testing.B) {
			benchSynthesis(b, newChain(BlocksFor(1<<e), 1), 1)
		})
	}
}

// BenchmarkSynthesizeParallel measures SynthesizeParallel at thread counts
// 1, 2, 4, … up to GOMAXPROCS (and GOMAXPROCS itself): threads=1 is the
// sequential synthesis, as BenchmarkSynthesis, so benchstat -col /threads
// shows the speed-up. 2^24 constraints, the size, needs about
// 2 GiB a System and is left out under -short.
func BenchmarkSynthesizeParallel(b *testing.B) {
	procs := runtime.GOMAXPROCS(0)
	var threads []int
	for t := 1; t < procs; t *= 2 {
		threads = append(threads, t)
	}
	threads = append(threads, procs)
	for _, e := range []int{16, 18, 20, 24} {
		if e > 20 && testing.Short() {
			continue
		}
		c := newChain(BlocksFor(1<<e), 1)
		for _, t := range threads {
			b.Run(fmt.Sprintf("constraints=%d/threads=%d", 1<<e, t), func(b *testing.B) {
				benchSynthesis(b, c, t)
			})
		}
	}
}

// benchSynthesis synthesizes c on threads goroutines b.N times, into a
// fresh System of exact sizes each time, and reports constraints/op,
// constraints/s and allocs/constraint.
func benchSynthesis(b *testing.B, c *SHA256Chain, threads int) {
	sizes := c.Sizes()
	sizes.Threads = threads
	b.ReportAllocs()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for b.Loop() {
		cs := r1cs.NewSystem(r1cs.Prove, sizes)
		if err := c.SynthesizeParallel(cs, threads); err != nil {
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
}
