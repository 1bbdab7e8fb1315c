package analysis

import (
	"fmt"
	"io"
	"testing"
)

// benchInput is a comparison of 10 phases (9 and total) × 20 runs a side
// with a regression in one phase.
func benchInput() Input {
	g := newSynth(7, 0.005)
	return Input{
		BaseRev: baseRev, HeadRev: headRev,
		Base: g.runs(baseRev, 20, nil),
		Head: g.runs(headRev, 20, map[string]float64{"msm_h": 1.1}),
	}
}

func BenchmarkCompare(b *testing.B) {
	in := benchInput()
	b.Run(fmt.Sprintf("phases=%d/runs=%d", len(provePhases)+1, len(in.Base)), func(b *testing.B) {
		for b.Loop() {
			Compare(in, DefaultOptions())
		}
	})
}

// BenchmarkRenderMarkdown measures the whole path to a PR comment:
// comparing and rendering.
func BenchmarkRenderMarkdown(b *testing.B) {
	in := benchInput()
	b.Run(fmt.Sprintf("phases=%d/runs=%d", len(provePhases)+1, len(in.Base)), func(b *testing.B) {
		for b.Loop() {
			if err := RenderMarkdown(io.Discard, Compare(in, DefaultOptions()), RenderContext{}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
