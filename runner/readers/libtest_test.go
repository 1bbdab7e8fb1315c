package readers

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/perfbot/perfbot/analysis"
)

// The file testdata/libtest/stdout.txt is what testdata/libtest/bench.rs
// printed when built with rustc 1.95 --test and run with --bench.

func TestLibtestReadsBenchLines(t *testing.T) {
	t.Parallel()
	stdout, err := os.ReadFile("testdata/libtest/stdout.txt")
	if err != nil {
		t.Fatal(err)
	}
	got := byKey(mustRead(t, mustNew(t, Config{Format: "libtest"}), Output{Stdout: stdout}))
	if len(got) != 3 {
		t.Fatalf("keys %v, want 3: ignored tests have no values", keys(got))
	}
	wantValues(t, got, "tests/mix_1000 sec/op", 2219.75e-9)
	wantValues(t, got, "tests/copy_4k sec/op", 70.56e-9)
	wantValues(t, got, "tests/copy_4k B/s", 58514e6)
}

func TestLibtestConvertsNanosecondsWithThousandsSeparators(t *testing.T) {
	t.Parallel()
	stdout := "running 2 tests\r\n" +
		"test bench::sort::1024 ... bench:       1,234 ns/iter (+/- 56)\r\n" +
		"test big                ... bench:   1_234_567 ns/iter (+/- 1,000) = 12 MB/s\n" +
		"test failed ... FAILED\n" +
		"test result: ok. 0 passed; 0 failed; 0 ignored; 2 measured; 0 filtered out\n"
	got := byKey(mustRead(t, mustNew(t, Config{Format: "libtest"}), Output{Stdout: []byte(stdout)}))
	wantValues(t, got, "bench/sort/arg0=1024 sec/op", 1.234e-6)
	wantValues(t, got, "big sec/op", 1.234567e-3)
	wantValues(t, got, "big B/s", 12e6)
	if len(got) != 3 {
		t.Fatalf("keys %v, want 3", keys(got))
	}
}

func TestLibtestRejectsOtherOutputSayingWhatItWants(t *testing.T) {
	t.Parallel()
	r := mustNew(t, Config{Format: "libtest"})
	for _, stdout := range []string{
		"",
		"running 1 test\ntest tests::it_works ... ok\n",
		"mix/steps/1000          time:   [2.2213 µs 2.2611 µs 2.3240 µs]\n",
	} {
		_, err := r.Read(Output{Stdout: []byte(stdout)})
		wantErr(t, err, "read libtest output", "no bench line", `"test NAME ... bench: N ns/iter (+/- D)"`)
	}
	_, err := r.Read(Output{Stdout: []byte("test x ... bench: 1,2,3.4.5 ns/iter (+/- 1)\n")})
	wantErr(t, err, "stdout:1", `"1,2,3.4.5" is not a number`)
}

// buildLibtest compiles testdata/libtest/bench.rs with rustc --test and
// returns the program's path.
func buildLibtest(t *testing.T) string {
	t.Helper()
	home, _ := os.UserHomeDir()
	rustc := lookTool(t, "rustc", "rustc", filepath.Join(home, ".cargo", "bin"))
	lookTool(t, "cc", "gcc") // rustc's linker
	bin := filepath.Join(t.TempDir(), "bench")
	runTool(t, ".", []string{"RUSTC_BOOTSTRAP=1"}, rustc, "-O", "--test", "-o", bin, "testdata/libtest/bench.rs")
	return bin
}

// Not parallel: it compares timings, which tests running beside it would disturb.
func TestLibtestReadsARealBenchRunAndItsPlantedSlowdown(t *testing.T) {
	bin := buildLibtest(t)
	r := mustNew(t, Config{Format: "libtest"})
	run := func(env ...string) []analysis.Sample {
		stdout, _ := runTool(t, t.TempDir(), env, bin, "--bench")
		return mustRead(t, r, Output{Stdout: stdout})
	}
	// Runs a side, alternating, each benchmark's fastest kept: a busy
	// machine (make test runs packages side by side) only ever adds time,
	// and one run's value moved by ×1.6 under such load. Three runs a side
	// first, then one more a side while the fastest have not settled, up
	// to ten: under a busy loop and a second test binary, three runs a
	// side once read the 47 ns copy_4k as ×3.2 and the doubled mix as ×1.46.
	var base, slow []analysis.Sample
	var changed map[string]float64
	for n := 1; n <= 10; n++ {
		base = append(base, run()...)
		slow = append(slow, run("PERFBOT_SLOW=mix_1000")...)
		if n < 3 {
			continue
		}
		fb, fs := fastest(base), fastest(slow)
		if k := keys(byKey(fb)); len(k) != 3 {
			t.Fatalf("keys %v, want tests/mix_1000 sec/op, tests/copy_4k sec/op and B/s", k)
		}
		changed = changedKeys(t, fb, fs, "sec/op", 1.5)
		// Twice the steps of mix read ×2 on a quiet machine and ×3.2 at
		// every one of ten runs a side beside a busy loop: the bound is
		// for a reader that got nothing or the units wrong (×1000).
		if r, ok := changed["tests/mix_1000 sec/op"]; ok && len(changed) == 1 && r >= 1.5 && r <= 4 {
			return
		}
		t.Logf("%d runs a side: changed beyond ×1.5 in %v; adding a run a side", n, changed)
	}
	t.Fatalf("sec/op changed beyond ×1.5 in %v after 10 runs a side, want tests/mix_1000 alone, ×1.5 to ×4", changed)
}

// fastest keeps the smallest value of each key.
func fastest(samples []analysis.Sample) []analysis.Sample {
	best := map[analysis.Key]int{}
	var out []analysis.Sample
	for _, s := range samples {
		if i, ok := best[s.Key]; !ok {
			best[s.Key] = len(out)
			out = append(out, s)
		} else if s.Value < out[i].Value {
			out[i] = s
		}
	}
	return out
}
