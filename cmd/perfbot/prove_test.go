package main

import (
	"strings"
	"testing"
)

// TestProveThreadsMustBePositive: --threads 0 or below exits 2 and says
// what to give instead.
func TestProveThreadsMustBePositive(t *testing.T) {
	t.Parallel()
	for _, n := range []string{"0", "-1"} {
		_, errOut, code := perfbot(t, "prove", "--threads", n, "--phases", "synthesis", "--constraints", "1")
		if code != exitUsage {
			t.Errorf("--threads %s: exit %d, want %d", n, code, exitUsage)
		}
		if want := "--threads " + n + ": give 1 or more synthesis goroutines"; !strings.Contains(errOut, want) {
			t.Errorf("--threads %s: stderr %q does not say %q", n, errOut, want)
		}
	}
}

// TestProveWithParallelSynthesisVerifies proves a two-block chain with
// real keys, synthesized on 4 goroutines and on 1: the proofs verify.
func TestProveWithParallelSynthesisVerifies(t *testing.T) {
	t.Parallel()
	keys := t.TempDir()
	for _, threads := range []string{"4", "1"} {
		_, errOut, code := perfbot(t, "prove", "--constraints", "2^15", "--threads", threads, "--count", "1", "--warmup", "0",
			"--verify", "--key-dir", keys, "--counters", "off")
		if code != 0 {
			t.Fatalf("--threads %s: exit %d: %s", threads, code, errOut)
		}
		if !strings.Contains(errOut, "synthesis_threads="+threads) {
			t.Errorf("--threads %s: stderr does not log synthesis_threads=%s:\n%s", threads, threads, errOut)
		}
	}
}
