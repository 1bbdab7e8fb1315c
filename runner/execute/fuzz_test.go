package execute

import (
	"math"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/analysis"
)

// FuzzParseOutput reads any standard output as a benchmark's: it never
// panics or fails; every sample it keeps is finite and has a benchmark and
// a unit; and a name is split the way analysis.SplitName splits it.
func FuzzParseOutput(f *testing.F) {
	for _, s := range []string{
		"BenchmarkProve/circuit=sha256/constraints=65536/backend=cpu/phase=synthesis 1 81234567 ns/op 12 B/op\n",
		"goos: linux\ncpu: AMD EPYC\nBenchmarkX-8 10 100 ns/op\nPASS\n",
		"BenchmarkX 1 NaN ns/op\nBenchmarkY 1 +Inf ns/op\n",
		"# perfbot-span Prove/phase=msm_h proof=0 start_ns=10 end_ns=20\nBenchmarkProve/phase=msm_h 1 10 ns/op\n",
		"BenchmarkBad one ns/op\nBenchmark\n",
		"not a benchmark at all",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, stdout string) {
		out, err := parseOutput(strings.NewReader(stdout))
		if err != nil {
			t.Fatalf("error %v; a string reader cannot fail", err)
		}
		for _, s := range out.samples {
			if s.Unit == "" || math.IsNaN(s.Value) || math.IsInf(s.Value, 0) {
				t.Fatalf("sample %+v kept", s)
			}
			if b, p := analysis.SplitName([]byte(s.Benchmark + phaseSuffix(s.Phase))); b != s.Benchmark || p != s.Phase {
				t.Fatalf("sample %+v: the name splits as %q, %q", s, b, p)
			}
		}
	})
}

func phaseSuffix(phase string) string {
	if phase == "" {
		return ""
	}
	return "/phase=" + phase
}
