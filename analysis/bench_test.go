package analysis

import (
	"fmt"
	"testing"
)

// BenchInput is a comparison of 10 phases (9 and total) × 20 runs a side
// with a regression in one phase.
func BenchInput() Input {
	g := NewSynth(7, 0.005)
	return Input{
		BaseRev: BaseRev, HeadRev: HeadRev,
		Base: g.Runs(BaseRev, 20, nil),
		Head: g.Runs(HeadRev, 20, map[string]float64{"msm_h": 1.1}),
	}
}

func BenchmarkCompare(b *testing.B) {
	in := BenchInput()
	b.Run(fmt.Sprintf("phases=%d/runs=%d", len(ProvePhases)+1, len(in.Base)), func(b *testing.B) {
		for b.Loop() {
			Compare(in, DefaultOptions())
		}
	})
}
