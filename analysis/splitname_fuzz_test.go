package analysis

import (
	"strings"
	"testing"
)

// FuzzSplitName: any bytes split without a panic into a benchmark that
// holds no "/phase=" and a phase such that the benchmark, "/phase=" and
// the phase spell the name again, less at most a -GOMAXPROCS suffix of
// digits.
func FuzzSplitName(f *testing.F) {
	for _, s := range []string{
		"Prove/circuit=sha256/constraints=65536/backend=cpu/phase=msm_h-8",
		"Prove/x=1/phase=msm_h/step=sort", "Work/size=small", "phase=x", "/phase=", "/phase=-1",
		"a-1-2", "-", "x-", "a/phase=b/phase=c-16", "BenchmarkX-", "a/b-3/c",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, name []byte) {
		bench, phase := SplitName(name)
		if strings.Contains(bench, "/phase=") {
			t.Fatalf("SplitName(%q) = %q, %q: the benchmark holds /phase=", name, bench, phase)
		}
		whole := bench
		if phase != "" || strings.HasPrefix(string(name), bench+"/phase=") {
			whole = bench + "/phase=" + phase
		}
		rest, ok := strings.CutPrefix(string(name), whole)
		if !ok {
			t.Fatalf("SplitName(%q) = %q, %q: %q is not how the name begins", name, bench, phase, whole)
		}
		if rest != "" {
			digits := strings.TrimLeft(rest[1:], "0123456789")
			if rest[0] != '-' || len(rest) < 2 || digits != "" {
				t.Fatalf("SplitName(%q) = %q, %q: dropped %q, which is not a -N suffix", name, bench, phase, rest)
			}
		}
	})
}
