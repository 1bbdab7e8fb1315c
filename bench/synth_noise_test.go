package bench

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestSynthNoiseRunsEveryPlacementEveryRound runs bench/synth-noise.sh with
// the real BenchmarkSynthesis binary: two rounds make two lines in each
// arm's file, each a 2^18 synthesis with a positive time.
func TestSynthNoiseRunsEveryPlacementEveryRound(t *testing.T) {
	if testing.Short() {
		t.Skip("builds prover/circuit's test binary and runs six syntheses of 2^18: skipped in -short mode")
	}
	if _, err := exec.LookPath("taskset"); err != nil {
		t.Skip("no taskset (util-linux) here: the script pins with it")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "circuit.test")
	if out, err := exec.Command("go", "test", "-c", "-o", bin, "../prover/circuit").CombinedOutput(); err != nil {
		t.Fatalf("go test -c: %v\n%s", err, out)
	}
	out := filepath.Join(dir, "out")
	cmd := exec.Command("bash", "synth-noise.sh", out)
	cmd.Env = append(os.Environ(), "BIN="+bin, "ROUNDS=2", "COUNT=1")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("synth-noise.sh: %v\n%s", err, b)
	}
	for _, arm := range []string{"pin1", "all1", "all15"} {
		b, err := os.ReadFile(filepath.Join(out, arm+".txt"))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		if len(lines) != 2 {
			t.Fatalf("%s: %d lines, want one a round (2):\n%s", arm, len(lines), b)
		}
		for _, l := range lines {
			f := strings.Fields(l)
			if len(f) < 4 || !strings.HasPrefix(f[0], "BenchmarkSynthesis/constraints=262144") || f[1] != "1" || f[3] != "ns/op" {
				t.Fatalf("%s: line %q; want one 2^18 synthesis in ns/op", arm, l)
			}
			if ns, err := strconv.ParseFloat(f[2], 64); err != nil || ns <= 0 {
				t.Errorf("%s: time %q", arm, f[2])
			}
		}
	}
}

func TestSynthNoiseSaysHowToBuildAMissingBinary(t *testing.T) {
	cmd := exec.Command("bash", "synth-noise.sh", t.TempDir())
	cmd.Env = append(os.Environ(), "BIN=/nonexistent/circuit.test")
	b, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(b), "go test -c -o /nonexistent/circuit.test ./prover/circuit") {
		t.Errorf("exit %v, output %q; want exit 2 and the build command", err, b)
	}
}
