package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/runner/execute"
	"github.com/perfbot/perfbot/runner/workspace/workspacetest"
)

// needValgrind skips a test when valgrind is missing, unless
// PERFBOT_REQUIRE_VALGRIND is set (make test sets it: the project's CI
// machines have valgrind), when it fails instead.
func needValgrind(t *testing.T) {
	t.Helper()
	if _, err := execute.LookValgrind(nil); err != nil {
		if os.Getenv("PERFBOT_REQUIRE_VALGRIND") != "" {
			t.Fatalf("PERFBOT_REQUIRE_VALGRIND is set: %v", err)
		}
		t.Skipf("no valgrind: %v", err)
	}
}

// markedProgram has two phases, each a span marked for callgrind the
// way perfbot prove marks its own (perfbotSpanBegin, perfbotSpanEnd),
// inside a marked total, and prints their thread CPU time. The head
// commit plants an extra loop in solve.
const markedProgram = `package main

import (
	"fmt"
	"runtime"
	"syscall"
	"unsafe"
)

//go:noinline
func perfbotSpanBegin() {}

//go:noinline
func perfbotSpanEnd() {}

var sink uint64

//go:noinline
func steadyWork(n int) {
	x := sink | 1
	for i := 0; i < n; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	sink = x
}

//go:noinline
func plantedLoop(n int) {
	x := sink | 3
	for i := 0; i < n; i++ {
		x = x*2862933555777941757 + 3037000493
	}
	sink = x
}

func threadCPU() int64 {
	var ts syscall.Timespec
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 3, uintptr(unsafe.Pointer(&ts)), 0)
	return ts.Nano()
}

func main() {
	runtime.LockOSThread()
	var lines []string
	phase := func(name string, work func()) {
		t := threadCPU()
		perfbotSpanBegin()
		work()
		perfbotSpanEnd()
		lines = append(lines, fmt.Sprintf("BenchmarkMarked/phase=%%s 1 %%d ns/op", name, threadCPU()-t))
	}
	start := threadCPU()
	perfbotSpanBegin()
	phase("parse", func() { steadyWork(%d) })
	phase("solve", func() { steadyWork(%d); %s })
	perfbotSpanEnd()
	lines = append(lines, fmt.Sprintf("BenchmarkMarked/phase=total 1 %%d ns/op", threadCPU()-start))
	for _, l := range lines {
		fmt.Println(l)
	}
}
`

// TestCompareCallgrindCountsAPlantedLoopInItsPhaseOnly is the issue's
// proof for simulated counts, through perfbot compare end to end
// (config, build, timed runs, one callgrind run a side, the store, the
// analysis and the report): a loop planted in solve changes solve's
// simulated count by the loop's instructions, and parse's not at all.
func TestCompareCallgrindCountsAPlantedLoopInItsPhaseOnly(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program, runs it 18 times and twice under callgrind: skipped in -short mode")
	}
	needValgrind(t)
	t.Parallel()
	const n = 10_000_000 // about 10 ms of CPU, 70 million instructions
	config := `build:
  - [go, build, -o, "${PERFBOT_OUT}/marked", .]
benchmarks:
  - name: marked
    command: ["${PERFBOT_OUT}/marked"]
    callgrind: true
count: 8
warmup: 1
max_count: 8
timeout: 1m
thresholds:
  alpha: 0.01
  min_change_pct: 5
`
	r := workspacetest.New(t)
	base := r.Commit(t, "two marked phases", map[string]string{
		"go.mod":       "module example.com/marked\n\ngo 1.26\n",
		"main.go":      fmt.Sprintf(markedProgram, n, 2*n, ""),
		".perfbot.yml": config,
	})
	head := r.Commit(t, "solve: a planted loop", map[string]string{
		"main.go": fmt.Sprintf(markedProgram, n, 2*n, fmt.Sprintf("plantedLoop(%d)", n/2)),
	})
	env := newRunEnv(t)
	rep, errOut, code := compareJSON(t, "--repo", r.Dir, "--base", base, "--head", head, "--db", env.db, "--data-dir", env.data)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if rep.Runs.Base.Total != 8 || rep.Runs.Head.Total != 8 {
		t.Errorf("runs %+v; want 8 timed runs a side, the callgrind runs apart", rep.Runs)
	}
	sim := map[string]*analysis.Row{}
	for i := range rep.Phases {
		if row := &rep.Phases[i]; row.Unit == analysis.SimInstructionsUnit && row.Benchmark == "Marked" {
			sim[row.Phase] = row
		}
	}
	parse, solve, total := sim["parse"], sim["solve"], sim["total"]
	if parse == nil || solve == nil || total == nil {
		t.Fatalf("simulated rows %v; want parse, solve and total (warnings %q)", sim, rep.Warnings)
	}
	t.Logf("parse %.0f → %.0f, solve %.0f → %.0f, total %.0f → %.0f", parse.Base.Median, parse.Head.Median,
		solve.Base.Median, solve.Head.Median, total.Base.Median, total.Head.Median)
	if d := parse.Head.Median - parse.Base.Median; d != 0 || parse.Verdict != analysis.VerdictNoChange {
		t.Errorf("parse changed by %.0f instructions (%s); the planted loop is in solve", d, parse.Verdict)
	}
	// The planted loop: n/2 iterations of a few instructions each, as
	// many a loop as solve's own 2n iterations (the same loop shape).
	perIter := (solve.Base.Median) / (2 * n)
	d := solve.Head.Median - solve.Base.Median
	if math.Abs(d-perIter*n/2) > 0.001*d || solve.Verdict != analysis.VerdictRegression || !solve.Simulated {
		t.Errorf("solve grew by %.0f instructions (%s), want the planted loop's %.0f", d, solve.Verdict, perIter*n/2)
	}
	// total also counts the program's own work between the phases
	// (reading the clock, formatting the lines it prints, whose digits
	// differ run to run): a CI run saw 19 instructions of it. So total
	// grows by solve's growth within the simulated floor, 1,000.
	if dt := total.Head.Median - total.Base.Median; math.Abs(dt-d) > analysis.SimFloorInstructions {
		t.Errorf("total grew by %.0f instructions, solve by %.0f; want the same within %d", dt, d, analysis.SimFloorInstructions)
	}
	if len(rep.Simulations) != 1 || !(rep.Simulations[0].Base.Slowdown > 1) || !(rep.Simulations[0].Head.Slowdown > 1) {
		t.Errorf("simulations %+v; want the callgrind run slower than the timed ones on both sides", rep.Simulations)
	} else {
		t.Logf("slowdown: base %.1f×, head %.1f×", rep.Simulations[0].Base.Slowdown, rep.Simulations[0].Head.Slowdown)
	}

	// The markdown marks them as simulated and explains solve by its
	// exact count when its time regressed.
	md, _, _ := perfbot(t, env.args("compare", "--repo", r.Dir, "--base", base, "--head", head, "--format", "markdown")...)
	if !strings.Contains(md, "simulated by callgrind: exact, one run a side") || !strings.Contains(md, "Simulated instruction counts (callgrind") {
		t.Errorf("markdown does not show the simulated counts:\n%s", md)
	}
	for _, row := range rep.Phases {
		if row.Phase == "solve" && row.Unit == "sec/op" && row.Verdict == analysis.VerdictRegression &&
			!strings.Contains(md, "**solve** +") {
			t.Errorf("solve regressed but has no explanation line:\n%s", md)
		}
	}
	if strings.Contains(md, "**solve** +") && !strings.Contains(md, "sim-instructions +") {
		t.Errorf("solve's explanation lacks its simulated count:\n%s", md)
	}
}

// TestCallgrindCountsOfTheProverRepeat runs perfbot prove's smallest
// proof twice under callgrind, as a benchmark with callgrind: true runs:
// the same binary and inputs must count the same per phase, up to the
// few hundred instructions the Go scheduler's preemption checks add
// (they follow wall time). It also records the slowdown against a timed
// run of the same proof.
func TestCallgrindCountsOfTheProverRepeat(t *testing.T) {
	if testing.Short() {
		t.Skip("builds perfbot and proves twice under callgrind (about 25 s): skipped in -short mode")
	}
	needValgrind(t)
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "perfbot")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/perfbot/perfbot/cmd/perfbot").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	args := []string{bin, "prove", "--constraints", "2^10", "--srs", "random", "--count", "1", "--warmup", "0", "--quiet",
		"--key-dir", t.TempDir()}
	timed, err := execute.Run(context.Background(), execute.Spec{Args: args, Timeout: time.Minute, Name: "prove"})
	if err != nil || timed.Run.Status != analysis.StatusOK {
		t.Fatalf("timed run: %v %s", err, timed.Run.Detail)
	}
	counts := make([]map[string]float64, 2)
	for i := range counts {
		res, err := execute.RunCallgrind(context.Background(), execute.Spec{Args: args, Timeout: 5 * time.Minute, Name: "prove"})
		if err != nil || res.Run.Status != analysis.StatusOK {
			t.Fatalf("callgrind run %d: %v %s", i+1, err, res.Run.Detail)
		}
		if len(res.Warnings) > 0 {
			t.Errorf("callgrind run %d: warnings %q", i+1, res.Warnings)
		}
		counts[i] = map[string]float64{}
		for _, s := range res.Run.Samples {
			if s.Unit == analysis.SimInstructionsUnit {
				counts[i][s.Phase] = s.Value
			}
		}
		t.Logf("run %d: %.1f s under callgrind, %.1f× the timed run's %.2f s", i+1, res.Wall.Seconds(),
			res.Wall.Seconds()/timed.Wall.Seconds(), timed.Wall.Seconds())
	}
	if len(counts[0]) != 9 {
		t.Fatalf("phases counted: %v; want the 9 lines of a proof", counts[0])
	}
	// Warm-up proofs mark nothing: one span per printed line still.
	warm := []string{bin, "prove", "--constraints", "2^10", "--phases", "synthesis", "--count", "1", "--warmup", "1", "--quiet"}
	res, err := execute.RunCallgrind(context.Background(), execute.Spec{Args: warm, Timeout: 5 * time.Minute, Name: "prove"})
	if err != nil || res.Run.Status != analysis.StatusOK || len(res.Warnings) > 0 {
		t.Errorf("with a warm-up proof: %v %s, warnings %q", err, res.Run.Detail, res.Warnings)
	} else if n := len(res.Run.Samples); n != 4 {
		t.Errorf("with a warm-up proof: %d samples %v, want synthesis, total and the process's two", n, res.Run.Samples)
	}
	for phase, a := range counts[0] {
		b := counts[1][phase]
		t.Logf("%-9s %14.0f %14.0f  Δ %+.0f (%.6f%%)", phase, a, b, b-a, (b-a)/a*100)
		if math.Abs(b-a) > 1e-4*a {
			t.Errorf("%s: %.0f then %.0f instructions, %.4f%% apart; want within 0.01%% (the floor is %.1f%%)",
				phase, a, b, math.Abs(b-a)/a*100, analysis.SimFloorPct)
		}
	}
}
