package execute

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/analysis"
)

func TestParseOutputCopiesWhatTheReaderReuses(t *testing.T) {
	t.Parallel()
	in := `goos: linux
cpu: First CPU
BenchmarkProve/x=1/phase=ntt-16 1 2000 ns/op 3 MB/s
BenchmarkProve/x=1/phase=ntt-16 1 4000 ns/op 5 MB/s
cpu: Second CPU
BenchmarkSum-8 100 50 ns/op 0 B/op 0 allocs/op
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
