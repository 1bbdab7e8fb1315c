package analysis_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/analysis/render"
)

func TestReportsSayWhereTheCriticalPathWent(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	base := analysis.GpuRunsOf(rng, "b", 20, analysis.GpuPhases(0.150), 0.400)
	head := analysis.GpuRunsOf(rng, "h", 20, analysis.GpuPhases(0.320), 0.400)
	r := analysis.Compare(analysis.Input{Base: base, Head: head}, analysis.Options{})
	var text, md strings.Builder
	if err := render.RenderText(&text, r); err != nil {
		t.Fatal(err)
	}
	if err := render.RenderMarkdown(&md, r, render.RenderContext{}); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"text": text.String(), "markdown": strings.ReplaceAll(md.String(), `\_`, "_")} {
		for _, want := range []string{
			"msm_b2 ran beside msm_a, msm_b1, msm_l, msm_h, and msm_b2_wait waited for it; the critical path went through msm_b2 (40",
			"at base and through msm_a … msm_h (47",
			"wait for msm_b2",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("%s report lacks %q:\n%s", name, want, out)
			}
		}
		if strings.Contains(out, "improvement") {
			t.Errorf("%s report calls something an improvement:\n%s", name, out)
		}
	}
}
