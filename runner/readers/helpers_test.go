package readers

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/analysis"
)

// requireTools is the environment variable that turns a missing tool from
// a skip into a failure (CI sets it).
const requireTools = "PERFBOT_REQUIRE_READER_TOOLS"

// missingTool skips t because a tool it needs is missing, or fails it when
// PERFBOT_REQUIRE_READER_TOOLS=1.
func missingTool(t *testing.T, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv(requireTools) == "1" {
		t.Fatalf("%s=1: %s", requireTools, msg)
	}
	t.Skip(msg)
}

// lookTool returns the path of the program name, looking in PATH and then
// in dirs, or skips t (see missingTool) naming the package that has it.
func lookTool(t *testing.T, name, pkg string, dirs ...string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	for _, d := range dirs {
		if p := filepath.Join(d, name); isExecutable(p) {
			return p
		}
	}
	missingTool(t, "no %s in PATH: install %s (apt-get install %s)", name, pkg, pkg)
	return ""
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// runTool runs a program in dir with env added to the test's environment
// and returns its standard output and error; a failure fails t.
func runTool(t *testing.T, dir string, env []string, name string, args ...string) (stdout, stderr []byte) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\nstderr:\n%s", name, strings.Join(args, " "), err, tail(errb.String(), 4000))
	}
	return []byte(out.String()), []byte(errb.String())
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// mustRead returns the samples r reads from o, failing t on an error.
func mustRead(t *testing.T, r Reader, o Output) []analysis.Sample {
	t.Helper()
	s, err := r.Read(o)
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	checkSamples(t, s)
	return s
}

// mustNew returns New(c), failing t on an error.
func mustNew(t testing.TB, c Config) Reader {
	t.Helper()
	r, err := New(c)
	if err != nil {
		t.Fatalf("New(%+v): %v", c, err)
	}
	return r
}

// checkSamples fails t unless every sample keeps the package's promises:
// a finite value; a unit; a benchmark name without spaces, empty parts or
// a phase= part, which analysis.SplitName gives back unchanged together
// with the phase.
func checkSamples(t testing.TB, samples []analysis.Sample) {
	t.Helper()
	for _, s := range samples {
		switch {
		case math.IsNaN(s.Value) || math.IsInf(s.Value, 0):
			t.Fatalf("sample %+v: value not finite", s)
		case s.Unit == "" || strings.ContainsAny(s.Unit, " \t\n"):
			t.Fatalf("sample %+v: bad unit", s)
		case s.Benchmark == "" || strings.ContainsAny(s.Benchmark, " \t\n\r") || strings.Contains(s.Benchmark, "//") ||
			strings.HasPrefix(s.Benchmark, "/") || strings.HasSuffix(s.Benchmark, "/"):
			t.Fatalf("sample %+v: bad benchmark name", s)
		case strings.Contains("/"+s.Benchmark, "/phase="):
			t.Fatalf("sample %+v: the benchmark name holds a phase= part", s)
		}
		name := s.Benchmark
		if s.Phase != "" {
			name += "/phase=" + s.Phase
		}
		if b, p := analysis.SplitName([]byte(name)); b != s.Benchmark || p != s.Phase {
			t.Fatalf("sample %+v: %q splits as %q, %q", s, name, b, p)
		}
	}
}

// byKey groups values by "benchmark[/phase=P] unit" (analysis.Key.String).
func byKey(samples []analysis.Sample) map[string][]float64 {
	m := map[string][]float64{}
	for _, s := range samples {
		m[s.Key.String()] = append(m[s.Key.String()], s.Value)
	}
	return m
}

// keys returns m's keys, sorted.
func keys[V any](m map[string]V) []string {
	k := make([]string, 0, len(m))
	for s := range m {
		k = append(k, s)
	}
	sort.Strings(k)
	return k
}

// median returns the median of v (not empty).
func median(v []float64) float64 {
	v = slices.Clone(v)
	sort.Float64s(v)
	if n := len(v); n%2 == 1 {
		return v[n/2]
	} else {
		return (v[n/2-1] + v[n/2]) / 2
	}
}

// changedKeys returns the keys of unit whose median moved by more than
// tolerance (as a ratio either way) from run a to run b, with their
// ratios; every key of a must be in b.
func changedKeys(t *testing.T, a, b []analysis.Sample, unit string, tolerance float64) map[string]float64 {
	t.Helper()
	ma, mb := byKey(a), byKey(b)
	changed := map[string]float64{}
	for _, k := range keys(ma) {
		if !strings.HasSuffix(k, " "+unit) {
			continue
		}
		vb, ok := mb[k]
		if !ok {
			t.Fatalf("%s is in the first run only", k)
		}
		r := median(vb) / median(ma[k])
		t.Logf("%s: %.4g → %.4g (×%.2f)", k, median(ma[k]), median(vb), r)
		if r > tolerance || r < 1/tolerance {
			changed[k] = r
		}
	}
	return changed
}

// near reports whether a and b agree to 1e-12 relative.
func near(a, b float64) bool {
	return math.Abs(a-b) <= 1e-12*math.Max(math.Abs(a), math.Abs(b))
}

// wantValues fails t unless got's values of key are want, in order.
func wantValues(t *testing.T, got map[string][]float64, key string, want ...float64) {
	t.Helper()
	g := got[key]
	if len(g) != len(want) {
		t.Fatalf("%s: %d values %v, want %d %v", key, len(g), g, len(want), want)
	}
	for i := range want {
		if !near(g[i], want[i]) {
			t.Fatalf("%s: value %d is %.17g, want %.17g", key, i, g[i], want[i])
		}
	}
}

// wantErr fails t unless err is an error holding every one of parts.
func wantErr(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one holding %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Fatalf("error %q does not hold %q", err, p)
		}
	}
}
