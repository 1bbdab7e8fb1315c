package analysis_test

import (
	"fmt"
	"io"
	"testing"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/analysis/render"
)

// BenchmarkRenderMarkdown measures the whole path to a PR comment:
// comparing and rendering.
func BenchmarkRenderMarkdown(b *testing.B) {
	in := analysis.BenchInput()
	b.Run(fmt.Sprintf("phases=%d/runs=%d", len(analysis.ProvePhases)+1, len(in.Base)), func(b *testing.B) {
		for b.Loop() {
			if err := render.RenderMarkdown(io.Discard, analysis.Compare(in, analysis.DefaultOptions()), render.RenderContext{}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
