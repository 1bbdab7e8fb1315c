package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/runner/workspace/workspacetest"
)

// printfProgram is a C prover stand-in that times its phases the way the
// first seed's engine did: printf lines of milliseconds per phase
// ("TIMING parse_ms=1.234"), on stderr, from the thread's CPU clock so
// that a busy neighbour does not look like a regression.
const printfProgram = `#include <stdio.h>
#include <time.h>

static volatile unsigned long long sink;

static double cpu_ms(void) {
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void spin(long n) {
	unsigned long long x = sink | 1;
	for (long i = 0; i < n; i++) x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	sink = x;
}

int main(void) {
	const char *phases[] = {"parse", "solve", "emit"};
	long loops[] = {%d, %d, %d};
	double start = cpu_ms();
	for (int i = 0; i < 3; i++) {
		double t = cpu_ms();
		spin(loops[i]);
		fprintf(stderr, "TIMING %%s_ms=%%.4f\n", phases[i], cpu_ms() - t);
	}
	fprintf(stderr, "TIMING total_ms=%%.4f\n", cpu_ms() - start);
	printf("done\n");
	return 0;
}
`

// printfConfig reads the program's timers with format lines.
const printfConfig = `build:
  - [cc, -O2, -o, "${PERFBOT_OUT}/work", work.c]
benchmarks:
  - name: work
    command: ["${PERFBOT_OUT}/work"]
    format: lines
    stream: stderr
    pattern: 'TIMING (?P<phase>\w+)_(?P<unit>ms)=(?P<value>[0-9.]+)'
count: 10
warmup: 1
max_count: 10
timeout: 1m
thresholds:
  alpha: 0.01
  min_change_pct: 5
`

// A C program that prints its phase timers with printf, measured with
// format lines from a --config: the phase made 30% slower is the
// regression, and the other phases are not; export prints the runs in Go
// benchmark format with the phase as a name part.
func TestCompareReadsPrintfPhaseTimersWithFormatLines(t *testing.T) {
	if _, err := exec.LookPath("cc"); err != nil {
		t.Skip("no C compiler (cc) here: the printf program is C")
	}
	t.Parallel()
	r := workspacetest.New(t)
	const n = 20_000_000
	base := r.Commit(t, "work: three phases", map[string]string{"work.c": fmt.Sprintf(printfProgram, n, 2*n, n)})
	head := r.Commit(t, "solve: 30% more work", map[string]string{"work.c": fmt.Sprintf(printfProgram, n, 2*n*13/10, n)})
	data := t.TempDir()
	db := filepath.Join(data, "perfbot.db")
	cfg := filepath.Join(t.TempDir(), "printf.yml")
	if err := os.WriteFile(cfg, []byte(printfConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, _, _ := compareJSON(t, "--repo", r.Dir, "--base", base, "--head", head, "--db", db, "--data-dir", data, "--config", cfg)
	byPhase := map[string]analysis.Row{}
	for _, row := range rep.Phases {
		if row.Unit == "sec/op" && !strings.HasPrefix(row.Benchmark, "process") {
			byPhase[row.Phase] = row
		}
	}
	if len(byPhase) != 4 {
		t.Fatalf("sec/op rows %v; want parse, solve, emit and total read from the TIMING lines", byPhase)
	}
	if s := byPhase["solve"]; s.Verdict != analysis.VerdictRegression || s.Change() < 20 || s.Change() > 45 {
		t.Errorf("solve %s %+.1f%%, want the planted +30%% regression", s.Verdict, s.Change())
	}
	for _, ph := range []string{"parse", "emit"} {
		if v := byPhase[ph].Verdict; v == analysis.VerdictRegression || v == analysis.VerdictImprovement {
			t.Errorf("%s %s %+.1f%%, want no change", ph, v, byPhase[ph].Change())
		}
	}
	// ms were read as seconds: solve's base value is tens of ms, not tens
	// of seconds.
	if b := byPhase["solve"].BaseValue; !(b > 1e-3 && b < 1) {
		t.Errorf("solve's base %g s: the ms unit was not converted", b)
	}
	// total's change is solve's.
	if len(rep.Attribution) != 1 || len(rep.Attribution[0].ExplainedBy) != 1 || rep.Attribution[0].ExplainedBy[0] != "solve" {
		t.Errorf("attribution %+v, want total's change explained by solve", rep.Attribution)
	}
	out, errOut, code := perfbot(t, "export", "--repo", r.Dir, "--rev", head, "--kind", "compare", "--db", db, "--data-dir", data, "--quiet")
	if code != 0 || !strings.Contains(out, "/phase=solve") || !strings.Contains(out, " sec/op") {
		t.Errorf("export: exit %d, %s\n%s", code, errOut, out)
	}
	checkBenchstat(t, r.Dir, db, data, base, head, benchstatRow{filter: ".unit:sec/op", row: "/phase", label: "solve", want: byPhase["solve"]})
	aa, _, _ := compareJSON(t, "--repo", r.Dir, "--base", head, "--head", head, "--db", db, "--data-dir", data, "--config", cfg)
	if aa.Verdict == analysis.VerdictRegression || aa.Verdict == analysis.VerdictImprovement {
		t.Errorf("A/A: %s", aa.Verdict)
	}
}

// A program whose output the configured reader cannot read is a failed
// run with the reader's reason, never a change.
func TestCompareReportsUnreadableOutputAsAFailedRun(t *testing.T) {
	if _, err := exec.LookPath("cc"); err != nil {
		t.Skip("no C compiler (cc) here: the printf program is C")
	}
	t.Parallel()
	r := workspacetest.New(t)
	sha := r.Commit(t, "work", map[string]string{"work.c": fmt.Sprintf(printfProgram, 1000, 1000, 1000)})
	data := t.TempDir()
	cfg := filepath.Join(t.TempDir(), "wrong.yml")
	wrong := strings.Replace(printfConfig, "stream: stderr", "stream: stdout", 1)
	if err := os.WriteFile(cfg, []byte(wrong), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := perfbot(t, "compare", "--repo", r.Dir, "--base", sha, "--head", sha, "--db", filepath.Join(data, "perfbot.db"),
		"--data-dir", data, "--config", cfg, "--quiet", "--count", "2", "--max-count", "2", "--format", "json")
	if code != exitRunsFailed {
		t.Fatalf("exit %d, want %d (runs failed)\n%s", code, exitRunsFailed, errOut)
	}
	if !strings.Contains(out, `"no-output"`) || !strings.Contains(out, "exit status 0 but") || !strings.Contains(out, "TIMING") && !strings.Contains(out, "pattern") {
		t.Errorf("the failure does not say why the output could not be read:\n%s", out)
	}
}

// gbenchConfig builds a Google Benchmark program and reads its JSON.
const gbenchConfig = `build:
  - [g++, -O2, -o, "${PERFBOT_OUT}/bench", bench.cc, -lbenchmark, -lpthread]
benchmarks:
  - name: gbench
    command: ["${PERFBOT_OUT}/bench", --benchmark_format=json, --benchmark_repetitions=3, --benchmark_min_time=0.02]
    format: gbench
# Google Benchmark's cpu_time decides: the test shares two cores with the
# rest of the suite, and a busy neighbour must not look like a change.
primary_units: [cpu-sec/op]
count: 10
warmup: 1
max_count: 10
timeout: 1m
thresholds:
  alpha: 0.01
  min_change_pct: 5
`

// A C++ program linked with the real Google Benchmark library, compared
// through --config and format gbench with its CPU time deciding: the
// function made to do twice the work is the regression, by its time and by
// its own work counter; the others are not; export prints it in Go
// benchmark format.
func TestCompareReadsGoogleBenchmarkJSON(t *testing.T) {
	_, err := exec.LookPath("g++")
	if err == nil {
		_, err = os.Stat("/usr/include/benchmark/benchmark.h")
	}
	if err != nil {
		if os.Getenv("PERFBOT_REQUIRE_READER_TOOLS") == "1" {
			t.Fatalf("g++ and Google Benchmark are required (apt-get install g++ libbenchmark-dev): %v", err)
		}
		t.Skipf("no g++ or Google Benchmark here (apt-get install g++ libbenchmark-dev): %v", err)
	}
	t.Parallel()
	src, err := os.ReadFile(filepath.Join("..", "..", "runner", "readers", "testdata", "gbench", "bench.cc"))
	if err != nil {
		t.Fatal(err)
	}
	// Head doubles BM_Mix's work: the program's own switch, made the
	// default in the head commit.
	slow := strings.Replace(string(src), `std::getenv("PERFBOT_SLOW")`, `"BM_Mix"`, 1)
	if slow == string(src) {
		t.Fatal("bench.cc no longer reads PERFBOT_SLOW: update this test")
	}
	r := workspacetest.New(t)
	base := r.Commit(t, "bench", map[string]string{"bench.cc": string(src)})
	head := r.Commit(t, "BM_Mix: twice the work", map[string]string{"bench.cc": slow})
	data := t.TempDir()
	db := filepath.Join(data, "perfbot.db")
	cfg := filepath.Join(t.TempDir(), "gbench.yml")
	if err := os.WriteFile(cfg, []byte(gbenchConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, _, _ := compareJSON(t, "--repo", r.Dir, "--base", base, "--head", head, "--db", db, "--data-dir", data, "--config", cfg)
	var mix, steps analysis.Row
	others := 0
	for _, row := range rep.Phases {
		switch {
		case row.Benchmark == "BM_Mix/n=1000/k=3" && row.Unit == "cpu-sec/op":
			mix = row
		case row.Benchmark == "BM_Mix/n=1000/k=3" && row.Unit == "steps/op":
			steps = row
		case strings.HasPrefix(row.Benchmark, "BM_") && row.Unit == "cpu-sec/op":
			others++
			if row.Verdict == analysis.VerdictRegression || row.Verdict == analysis.VerdictImprovement {
				t.Errorf("%s %s %+.1f%%, want no change", row.Benchmark, row.Verdict, row.Change())
			}
		}
	}
	if mix.Verdict != analysis.VerdictRegression || mix.Change() < 50 {
		t.Errorf("BM_Mix %s %+.1f%%, want the doubled work as a regression", mix.Verdict, mix.Change())
	}
	if d := steps.Change() - 100; d > 1e-9 || d < -1e-9 || !steps.Exact() {
		t.Errorf("BM_Mix steps/op %+.1f%%, want exactly +100%% (a constant counter)", steps.Change())
	}
	if others != 3 {
		t.Errorf("%d other benchmarks, want BM_Hash/arg0=1000, BM_Hash/arg0=4000 and BM_Plain", others)
	}
	out, errOut, code := perfbot(t, "export", "--repo", r.Dir, "--rev", head, "--kind", "compare", "--db", db, "--data-dir", data, "--quiet")
	if code != 0 || !strings.Contains(out, "BenchmarkBM_Mix/n=1000/k=3 ") {
		t.Errorf("export: exit %d, %s\n%s", code, errOut, out)
	}
	// Three repetitions a run: benchstat reads each run's median.
	checkBenchstat(t, r.Dir, db, data, base, head, benchstatRow{filter: ".unit:cpu-sec/op", row: ".fullname", label: "BM_Mix/n=1000/k=3", perRun: true, want: mix})
	aa, _, _ := compareJSON(t, "--repo", r.Dir, "--base", head, "--head", head, "--db", db, "--data-dir", data, "--config", cfg)
	if aa.Verdict == analysis.VerdictRegression || aa.Verdict == analysis.VerdictImprovement {
		t.Errorf("A/A: %s", aa.Verdict)
	}
}

// hyperfineConfig times the printf program as a whole command with
// hyperfine, five runs a perfbot run.
const hyperfineConfig = `build:
  - [cc, -O2, -o, "${PERFBOT_OUT}/work", work.c]
benchmarks:
  - name: whole
    command: [hyperfine, --runs, "5", --warmup, "1", --style, none, --export-json, hyperfine.json, "${PERFBOT_OUT}/work"]
    format: hyperfine
    path: hyperfine.json
count: 10
warmup: 1
max_count: 10
timeout: 1m
thresholds:
  alpha: 0.01
  min_change_pct: 5
`

// A whole command timed by the real hyperfine, compared through --config
// and format hyperfine: a program made several times slower in one phase
// is slower as a whole; the same revision against itself is not.
func TestCompareReadsHyperfineExports(t *testing.T) {
	for _, tool := range []string{"cc", "hyperfine"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("PERFBOT_REQUIRE_READER_TOOLS") == "1" {
				t.Fatalf("%s is required (apt-get install hyperfine gcc): %v", tool, err)
			}
			t.Skipf("no %s here (apt-get install hyperfine gcc)", tool)
		}
	}
	t.Parallel()
	r := workspacetest.New(t)
	const n = 10_000_000
	base := r.Commit(t, "work", map[string]string{"work.c": fmt.Sprintf(printfProgram, n, 2*n, n)})
	// hyperfine times the wall clock, which the rest of the suite
	// stretches: the plant is large (the whole program about 5x).
	head := r.Commit(t, "solve: ten times the work", map[string]string{"work.c": fmt.Sprintf(printfProgram, n, 20*n, n)})
	data := t.TempDir()
	db := filepath.Join(data, "perfbot.db")
	cfg := filepath.Join(t.TempDir(), "hyperfine.yml")
	if err := os.WriteFile(cfg, []byte(hyperfineConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, _, _ := compareJSON(t, "--repo", r.Dir, "--base", base, "--head", head, "--db", db, "--data-dir", data, "--config", cfg)
	var whole *analysis.Row
	for i, row := range rep.Phases {
		if row.Unit == "sec/op" && !strings.HasPrefix(row.Benchmark, "process") {
			if whole != nil {
				t.Fatalf("two hyperfine series: %s and %s", whole.Benchmark, row.Benchmark)
			}
			whole = &rep.Phases[i]
		}
	}
	if whole == nil || whole.Verdict != analysis.VerdictRegression || whole.Change() < 100 {
		t.Fatalf("the timed command: %+v; want a regression of several times", whole)
	}
	// Five timed runs a perfbot run: benchstat reads each run's median.
	checkBenchstat(t, r.Dir, db, data, base, head, benchstatRow{filter: ".unit:sec/op", row: ".fullname", label: whole.Benchmark, perRun: true, want: *whole})
	aa, _, _ := compareJSON(t, "--repo", r.Dir, "--base", head, "--head", head, "--db", db, "--data-dir", data, "--config", cfg)
	if aa.Verdict == analysis.VerdictRegression || aa.Verdict == analysis.VerdictImprovement {
		t.Errorf("A/A: %s", aa.Verdict)
	}
}
