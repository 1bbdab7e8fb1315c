package readers

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/perfbot/perfbot/analysis"
)

// The file testdata/gbench/repetitions.json is what testdata/gbench/bench.cc
// printed, built against Debian's libbenchmark-dev 1.7.1 and run with
// --benchmark_format=json --benchmark_repetitions=3 --benchmark_min_time=0.05.

func TestGbenchKeepsRepetitionsAndDropsAggregates(t *testing.T) {
	t.Parallel()
	stdout, err := os.ReadFile("testdata/gbench/repetitions.json")
	if err != nil {
		t.Fatal(err)
	}
	got := byKey(mustRead(t, mustNew(t, Config{Format: "gbench"}), Output{Stdout: stdout}))
	var want []string
	for _, b := range []string{"BM_Hash/arg0=1000", "BM_Hash/arg0=4000", "BM_Mix/n=1000/k=3", "BM_Plain"} {
		for _, u := range []string{"sec/op", "cpu-sec/op", "steps/op", "items/s", "B/s"} {
			want = append(want, b+" "+u)
		}
	}
	slices.Sort(want)
	if g := keys(got); !slices.Equal(g, want) {
		t.Fatalf("keys:\n%s\nwant:\n%s", strings.Join(g, "\n"), strings.Join(want, "\n"))
	}
	// Three repetitions each, not three plus the _mean, _median, _stddev
	// and _cv aggregates; time_unit us and ns converted to seconds.
	wantValues(t, got, "BM_Hash/arg0=1000 sec/op", 2.5159088062222996e-6, 2.4311915730167626e-6, 2.4194810201510593e-6)
	wantValues(t, got, "BM_Hash/arg0=1000 cpu-sec/op", 2.4259523676977146e-6, 2.4143082704150873e-6, 2.4154977906127137e-6)
	wantValues(t, got, "BM_Mix/n=1000/k=3 sec/op", 9604.945509907635e-9, 7246.024759048889e-9, 8016.087874185032e-9)
	wantValues(t, got, "BM_Mix/n=1000/k=3 steps/op", 3000, 3000, 3000)
	wantValues(t, got, "BM_Plain B/s", 3287511292.195015, 3274591792.519601, 3288877273.9279246)
	wantValues(t, got, "BM_Plain items/s", 410938911.52437687, 409323974.0649501, 411109659.2409906)
}

func TestGbenchConvertsEachTimeUnit(t *testing.T) {
	t.Parallel()
	stdout := []byte(`starting the benchmarks
{
  "context": {"library_version": "v1.8.3"},
  "benchmarks": [
    {"name": "BM_ns", "run_type": "iteration", "iterations": 9, "real_time": 1234, "cpu_time": 1000, "time_unit": "ns", "label": "x", "family_index": 0, "per_family_instance_index": 0, "repetitions": 1, "repetition_index": 0, "threads": 1},
    {"name": "BM_us", "run_type": "iteration", "iterations": 9, "real_time": 1234, "cpu_time": 1000, "time_unit": "us"},
    {"name": "BM_ms", "run_type": "iteration", "iterations": 9, "real_time": 1234, "cpu_time": 1000, "time_unit": "ms"},
    {"name": "BM_s", "iterations": 9, "real_time": 1234, "cpu_time": 1000, "time_unit": "s"},
    {"name": "BM_default", "iterations": 9, "real_time": 1234, "cpu_time": 1000},
    {"name": "BM_failed", "run_type": "iteration", "error_occurred": true, "error_message": "no GPU", "iterations": 0, "real_time": 0, "cpu_time": 0, "time_unit": "ns"},
    {"name": "BM_skipped", "run_type": "iteration", "skipped": "not today", "iterations": 0, "real_time": 0, "cpu_time": 0, "time_unit": "ns"},
    {"name": "BM_ns_BigO", "run_name": "BM_ns", "run_type": "aggregate", "aggregate_name": "BigO", "real_time": 1, "cpu_time": 1, "time_unit": "ns"}
  ]
}`)
	got := byKey(mustRead(t, mustNew(t, Config{Format: "gbench"}), Output{Stdout: stdout}))
	wantValues(t, got, "BM_ns sec/op", 1.234e-6)
	wantValues(t, got, "BM_ns cpu-sec/op", 1e-6)
	wantValues(t, got, "BM_us sec/op", 1.234e-3)
	wantValues(t, got, "BM_ms sec/op", 1.234)
	wantValues(t, got, "BM_s sec/op", 1234)
	wantValues(t, got, "BM_default sec/op", 1.234e-6)
	if len(got) != 10 {
		t.Fatalf("got %d keys %v, want sec/op and cpu-sec/op of 5 benchmarks: label, indices and threads are no counters; failed, skipped and BigO entries no values", len(got), keys(got))
	}
}

func TestGbenchCounterUnits(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"bytes_per_second": "B/s", "items_per_second": "items/s", "allocs_per_iter": "allocs/op",
		"max_bytes_used": "max_bytes_used/op", "steps": "steps/op", "proofs/s": "proofs/s", "_per_second": "_per_second/op",
	} {
		if got := counterUnit(in); got != want {
			t.Errorf("counterUnit(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestGbenchRejectsOtherOutputSayingWhatItWants(t *testing.T) {
	t.Parallel()
	r := mustNew(t, Config{Format: "gbench"})
	for name, stdout := range map[string]string{
		"empty":           "",
		"console":         "BM_Sort/64   0.289 us   0.288 us   46771\n",
		"broken":          `{"benchmarks": [{"name": "BM_x", "real_time": 1`,
		"none":            `{"context": {}, "benchmarks": []}`,
		"aggregates only": `{"benchmarks": [{"name": "BM_x_mean", "run_name": "BM_x", "run_type": "aggregate", "aggregate_name": "mean", "real_time": 1, "cpu_time": 1, "time_unit": "ns"}]}`,
		"errors only":     `{"benchmarks": [{"name": "BM_x", "run_type": "iteration", "error_occurred": true, "real_time": 0, "time_unit": "ns"}]}`,
	} {
		_, err := r.Read(Output{Stdout: []byte(stdout)})
		wantErr(t, err, "read gbench JSON from stdout", "--benchmark_format=json")
		t.Logf("%s: %v", name, err)
	}
	_, err := r.Read(Output{Stdout: []byte(`{"benchmarks": [{"name": "BM_x", "real_time": 1, "time_unit": "min"}]}`)})
	wantErr(t, err, `time_unit "min"`, "ns, us, ms, s")
	_, err = r.Read(Output{Stdout: []byte(`{"benchmarks": [{"name": "BM_x", "cpu_time": 1, "time_unit": "ns"}]}`)})
	wantErr(t, err, "BM_x", "no real_time")
	_, err = mustNew(t, Config{Format: "gbench", Path: "out.json"}).Read(Output{Dir: t.TempDir()})
	wantErr(t, err, "open gbench --benchmark_out file out.json", "no such file")
}

// buildGbench compiles testdata/gbench/bench.cc against Google Benchmark
// into a temporary directory and returns the program's path.
func buildGbench(t *testing.T) string {
	t.Helper()
	gxx := lookTool(t, "g++", "g++")
	src, err := filepath.Abs("testdata/gbench/bench.cc")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "bench")
	out, err := exec.Command(gxx, "-O2", "-o", bin, src, "-lbenchmark", "-lpthread").CombinedOutput()
	if err != nil {
		if s := string(out); strings.Contains(s, "benchmark/benchmark.h") || strings.Contains(s, "-lbenchmark") {
			missingTool(t, "Google Benchmark is not installed (apt-get install libbenchmark-dev): %s", strings.TrimSpace(s))
		}
		t.Fatalf("g++: %v\n%s", err, out)
	}
	return bin
}

// gbenchArgs are the flags the tests run the Google Benchmark program
// with.
var gbenchArgs = []string{"--benchmark_format=json", "--benchmark_repetitions=3", "--benchmark_min_time=0.05"}

func TestGbenchReadsARealGoogleBenchmarkRun(t *testing.T) {
	t.Parallel()
	bin := buildGbench(t)
	dir := t.TempDir()
	start := time.Now()
	// Once as JSON on stdout, once as a --benchmark_out file beside the
	// console table on stdout.
	stdout, stderr := runTool(t, dir, nil, bin, gbenchArgs...)
	if err := os.Mkdir(filepath.Join(dir, "out"), 0o755); err != nil {
		t.Fatal(err)
	}
	fromStdout := byKey(mustRead(t, mustNew(t, Config{Format: "gbench"}), Output{Stdout: stdout, Stderr: stderr, Dir: dir, Start: start}))
	stdout, stderr = runTool(t, dir, nil, bin, append(gbenchArgs[1:], "--benchmark_out=out/gbench.json", "--benchmark_out_format=json")...)
	o := Output{Stdout: stdout, Stderr: stderr, Dir: dir, Start: start}
	fromFile := byKey(mustRead(t, mustNew(t, Config{Format: "gbench", Path: "out/gbench.json"}), o))
	for _, got := range []map[string][]float64{fromStdout, fromFile} {
		if len(got) != 20 {
			t.Fatalf("got %d keys %v, want 4 benchmarks × 5 units", len(got), keys(got))
		}
		for k, v := range got {
			if len(v) != 3 {
				t.Errorf("%s: %d values %v, want one per repetition (3)", k, len(v), v)
			}
		}
		wantValues(t, got, "BM_Mix/n=1000/k=3 steps/op", 3000, 3000, 3000)
		for _, k := range []string{"BM_Hash/arg0=1000 sec/op", "BM_Hash/arg0=4000 sec/op"} {
			// 1000 xorshift steps take about 2.4 µs on the 2.1 GHz machine
			// the testdata comes from: allow any machine within 100×.
			if m := median(got[k]); m < 1e-8 || m > 1e-3 {
				t.Errorf("%s: median %g, not a time in seconds", k, m)
			}
		}
	}
	// A file left by an earlier run is not taken for this run's.
	_, err := mustNew(t, Config{Format: "gbench", Path: "out/gbench.json"}).Read(Output{Dir: dir, Start: time.Now().Add(time.Minute)})
	wantErr(t, err, "out/gbench.json", "before the run started")
}

// Not parallel: it compares timings, which tests running beside it would disturb.
func TestGbenchPlantedSlowdownShowsInThatBenchmarkOnly(t *testing.T) {
	bin := buildGbench(t)
	r := mustNew(t, Config{Format: "gbench"})
	run := func(env ...string) []analysis.Sample {
		stdout, _ := runTool(t, t.TempDir(), env, bin, gbenchArgs...)
		return mustRead(t, r, Output{Stdout: stdout})
	}
	base, slow := run(), run("PERFBOT_SLOW=BM_Mix")
	// The work counter is exact: it doubles for BM_Mix alone.
	changed := changedKeys(t, base, slow, "steps/op", 1.0000001)
	if len(changed) != 1 || changed["BM_Mix/n=1000/k=3 steps/op"] != 2 {
		t.Fatalf("steps/op changed in %v, want BM_Mix's alone, ×2", changed)
	}
	// CPU time follows, within what a busy machine adds: while it has not
	// settled, one more run a side, up to five, judged on the medians of
	// all of them.
	for n := 1; ; n++ {
		changed = changedKeys(t, base, slow, "cpu-sec/op", 1.4)
		if r, ok := changed["BM_Mix/n=1000/k=3 cpu-sec/op"]; len(changed) == 1 && ok && r >= 1.5 && r <= 2.7 {
			return
		}
		if n == 5 {
			t.Fatalf("cpu-sec/op changed beyond ×1.4 in %v after %d runs a side, want in BM_Mix alone, about ×2", changed, n)
		}
		t.Logf("%d runs a side: cpu-sec/op changed beyond ×1.4 in %v; adding a run a side", n, changed)
		base, slow = append(base, run()...), append(slow, run("PERFBOT_SLOW=BM_Mix")...)
	}
}
