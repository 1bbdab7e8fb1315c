package execute

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/prover"
)

func TestParseOutputCopiesWhatTheReaderReuses(t *testing.T) {
	t.Parallel()
	in := `goos: linux
cpu: First CPU
BenchmarkProve/x=1/phase=ntt-16 1 2000 ns/op 3 MB/s
BenchmarkProve/x=1/phase=ntt-16 1 4000 ns/op 5 MB/s
cpu: Second CPU
BenchmarkSum-8 100 50 ns/op 0 B/op 0 allocs/op
BenchmarkProve/x=1/phase=retry-16 1 0 ns/op 0 MB/s
`
	out, err := parseOutput(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	ntt := "Prove/x=1"
	want := []analysis.Sample{
		{Key: analysis.Key{Benchmark: ntt, Phase: "ntt", Unit: "sec/op"}, Value: 2e-6},
		{Key: analysis.Key{Benchmark: ntt, Phase: "ntt", Unit: "B/s"}, Value: 3e6},
		{Key: analysis.Key{Benchmark: ntt, Phase: "ntt", Unit: "sec/op"}, Value: 4e-6},
		{Key: analysis.Key{Benchmark: ntt, Phase: "ntt", Unit: "B/s"}, Value: 5e6},
		{Key: analysis.Key{Benchmark: "Sum", Unit: "sec/op"}, Value: 50e-9},
		{Key: analysis.Key{Benchmark: "Sum", Unit: "B/op"}, Value: 0},
		{Key: analysis.Key{Benchmark: "Sum", Unit: "allocs/op"}, Value: 0},
		// A phase that did nothing is 0 sec/op, not a series in ns/op
		// (benchfmt leaves the unit of a 0 untidied).
		{Key: analysis.Key{Benchmark: ntt, Phase: "retry", Unit: "sec/op"}, Value: 0},
		{Key: analysis.Key{Benchmark: ntt, Phase: "retry", Unit: "B/s"}, Value: 0},
	}
	if fmt.Sprint(out.samples) != fmt.Sprint(want) {
		t.Errorf("samples\n%v\nwant\n%v", out.samples, want)
	}
	if out.config["cpu"] != "Second CPU" || out.config["goos"] != "linux" || len(out.config) != 2 {
		t.Errorf("config %v, want the last cpu and goos", out.config)
	}
}

func TestParseOutputCapsSyntaxErrorsAndDropsNonFiniteValues(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for range 15 {
		b.WriteString("BenchmarkBad 1\n")
	}
	b.WriteString("BenchmarkOdd 1 NaN ns/op 7 widgets/op\n")
	out, err := parseOutput(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if len(out.syntaxErrors) != maxSyntaxErrors+1 || out.syntaxErrors[maxSyntaxErrors] != "and 5 more syntax errors" {
		t.Errorf("syntax errors %q", out.syntaxErrors)
	}
	if out.syntaxErrors[0] != "stdout:1: missing measurements" {
		t.Errorf("first syntax error %q", out.syntaxErrors[0])
	}
	want := analysis.Sample{Key: analysis.Key{Benchmark: "Odd", Unit: "widgets/op"}, Value: 7}
	if len(out.samples) != 1 || out.samples[0] != want {
		t.Errorf("samples %v, want [%v]", out.samples, want)
	}
	if len(out.warnings) != 1 || !strings.Contains(out.warnings[0], "stdout:16: dropped non-finite value NaN sec/op") {
		t.Errorf("warnings %q", out.warnings)
	}
}

func TestReadTailCutsAtALineBoundary(t *testing.T) {
	t.Parallel()
	f, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString("first line\nsecond line\nthird\n"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		n    int
		want string
		cut  bool
	}{
		{100, "first line\nsecond line\nthird\n", false},
		{29, "first line\nsecond line\nthird\n", false},
		{28, "second line\nthird\n", true},
		{18, "second line\nthird\n", true}, // the tail starts a line
		{17, "third\n", true},
		{3, "rd\n", true}, // a line longer than the tail keeps its end
	} {
		got, cut, err := readTail(f, tc.n)
		if err != nil || got != tc.want || cut != tc.cut {
			t.Errorf("readTail(%d) = %q, %v, %v; want %q, %v", tc.n, got, cut, err, tc.want, tc.cut)
		}
	}
}

func TestParseOutputKeepsSpanLines(t *testing.T) {
	t.Parallel()
	in := `BenchmarkProve/backend=gpu/phase=msm_h 1 300000000 ns/op
BenchmarkProve/backend=gpu/phase=msm_b2 1 400000000 ns/op
# perfbot-span Prove/backend=gpu/phase=msm_h proof=0 start_ns=200000000 end_ns=500000000
# perfbot-span Prove/backend=gpu/phase=msm_b2 proof=0 start_ns=101000000 end_ns=501000000 lane=host future=1
# perfbot-span Prove/backend=gpu/phase=msm_b2_wait proof=0 start_ns=500000000 end_ns=501000000 waits=msm_b2
# perfbot-span Prove/backend=gpu/phase=msm_l proof=0 start_ns=9 end_ns=3
# perfbot-span Prove/backend=gpu/phase=msm_l proof=x start_ns=1 end_ns=3
# perfbot-span Prove/backend=gpu proof=0 start_ns=1 end_ns=3
# perfbot-span Prove/backend=gpu/phase=msm_l proof=0 start_ns=-1 end_ns=3
# perfbot-span Prove/backend=gpu/phase=msm_l proof=1 end_ns=3
# perfbot-span Prove/backend=gpu/phase=total proof=1 start_ns=0 end_ns=7`
	out, err := parseOutput(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	b := "Prove/backend=gpu"
	want := []analysis.Span{
		{Benchmark: b, Phase: "msm_h", Start: 0.2, End: 0.5},
		{Benchmark: b, Phase: "msm_b2", Start: 0.101, End: 0.501, Lane: "host"},
		{Benchmark: b, Phase: "msm_b2_wait", Start: 0.5, End: 0.501, Waits: "msm_b2"},
		{Benchmark: b, Phase: "total", Proof: 1, Start: 0, End: 7e-9}, // the last line, without a newline
	}
	if fmt.Sprint(out.spans) != fmt.Sprint(want) {
		t.Errorf("spans\n%v\nwant\n%v", out.spans, want)
	}
	wantWarnings := []string{
		"stdout:6: span line dropped: Prove/backend=gpu/phase=msm_l: ends (3 ns) before it starts (9 ns)",
		"stdout:7: span line dropped: proof=x is not a whole number ≥ 0",
		"stdout:8: span line dropped: Prove/backend=gpu has no phase=… part",
		"stdout:9: span line dropped: start_ns=-1 is not a whole number ≥ 0",
		"stdout:10: span line dropped: Prove/backend=gpu/phase=msm_l: proof, start_ns and end_ns are all needed",
	}
	if strings.Join(out.warnings, "\n") != strings.Join(wantWarnings, "\n") {
		t.Errorf("warnings\n%s\nwant\n%s", strings.Join(out.warnings, "\n"), strings.Join(wantWarnings, "\n"))
	}
	if len(out.samples) != 2 || len(out.syntaxErrors) != 0 {
		t.Errorf("samples %v, syntax errors %v: the span lines are not benchmark lines", out.samples, out.syntaxErrors)
	}
}

// The prover prints what the runner reads: one span per phase line, on
// the prover's own clock.
func TestParseOutputReadsTheProversSpanLines(t *testing.T) {
	t.Parallel()
	if SpanPrefix != prover.SpanPrefix {
		t.Fatalf("SpanPrefix %q, the prover prints %q", SpanPrefix, prover.SpanPrefix)
	}
	t0 := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	ms := []prover.Measurement{
		{Phase: "msm_h", Start: t0.Add(10 * time.Millisecond), Elapsed: 300 * time.Millisecond},
		{Phase: "msm_b2", Start: t0.Add(5 * time.Millisecond), Elapsed: 400 * time.Millisecond, Lane: prover.LaneHost},
		{Phase: "msm_b2_wait", Start: t0.Add(310 * time.Millisecond), Elapsed: 95 * time.Millisecond, Waits: "msm_b2"},
		{Phase: "total", Start: t0, Elapsed: 405 * time.Millisecond},
	}
	var sb strings.Builder
	if err := prover.WriteProof(&sb, "sha256", 1024, "gpu", 2, ms); err != nil {
		t.Fatal(err)
	}
	out, err := parseOutput(strings.NewReader(sb.String()))
	if err != nil {
		t.Fatal(err)
	}
	if len(out.spans) != len(ms) || len(out.warnings) != 0 {
		t.Fatalf("spans %v, warnings %v from\n%s", out.spans, out.warnings, sb.String())
	}
	for i, sp := range out.spans {
		m := ms[i]
		bench, phase := analysis.SplitName([]byte(prover.BenchName("sha256", 1024, "gpu", m.Phase)))
		if sp.Benchmark != bench || sp.Phase != phase || sp.Proof != 2 || sp.Lane != m.Lane || sp.Waits != m.Waits ||
			math.Abs(sp.Start-m.Start.Sub(t0).Seconds()) > 1e-12 || math.Abs(sp.End-m.End().Sub(t0).Seconds()) > 1e-12 {
			t.Errorf("span %d %+v, from measurement %+v", i, sp, m)
		}
	}
}
