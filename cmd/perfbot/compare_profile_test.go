package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/runner/workspace/workspacetest"
)

// profiledProgram has two phases under pprof labels, as perfbot prove
// labels its own, and writes a CPU profile where -cpuprofile says. The
// head commit makes solve call plantedSlowdown, a function base never
// calls, for half as much work again in that phase: some 40 profiler
// samples over 8 runs, well above the profile diff's minimum of 10 (a
// quarter more gave about 20, near it on a fast machine).
const profiledProgram = `package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"syscall"
	"unsafe"
)

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
func plantedSlowdown(n int) {
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
	profile := flag.String("cpuprofile", "", "write a CPU profile here")
	flag.Parse()
	if *profile != "" {
		f, err := os.Create(*profile)
		if err != nil {
			panic(err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			panic(err)
		}
		defer pprof.StopCPUProfile()
	}
	runtime.LockOSThread()
	start := threadCPU()
	phase := func(name string, work func()) {
		t := threadCPU()
		pprof.Do(context.Background(), pprof.Labels("phase", name), func(context.Context) { work() })
		fmt.Printf("BenchmarkProf/phase=%%s 1 %%d ns/op\n", name, threadCPU()-t)
	}
	phase("parse", func() { steadyWork(%d) })
	phase("solve", func() { steadyWork(%d); %s })
	fmt.Printf("BenchmarkProf/phase=total 1 %%d ns/op\n", threadCPU()-start)
}
`

// TestCompareExplainsARegressedPhaseByTheFunctionThatGrew is the issue's
// proof for profiles: a slowdown planted in one named function shows up
// as that function at the top of its phase's profile diff, through
// perfbot compare end to end (build, runs with -cpuprofile, the store,
// the analysis and the report).
func TestCompareExplainsARegressedPhaseByTheFunctionThatGrew(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a profiled program 18 times: skipped in -short mode")
	}
	const n = 40_000_000 // about 40 ms of CPU
	config := `build:
  - [go, build, -o, "${PERFBOT_OUT}/prof", .]
benchmarks:
  - name: prof
    command: ["${PERFBOT_OUT}/prof"]
    cpuprofile: -cpuprofile
count: 8
warmup: 1
max_count: 8
timeout: 1m
thresholds:
  alpha: 0.01
  min_change_pct: 5
`
	r := workspacetest.New(t)
	base := r.Commit(t, "two phases, profiled", map[string]string{
		"go.mod":       "module example.com/prof\n\ngo 1.26\n",
		"main.go":      fmt.Sprintf(profiledProgram, n, 2*n, ""),
		".perfbot.yml": config,
	})
	head := r.Commit(t, "solve: a planted slowdown", map[string]string{
		"main.go": fmt.Sprintf(profiledProgram, n, 2*n, fmt.Sprintf("plantedSlowdown(%d)", n)),
	})
	env := newRunEnv(t)
	rep, errOut, code := compareJSON(t, "--repo", r.Dir, "--base", base, "--head", head,
		"--db", env.db, "--data-dir", env.data)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var solve *analysis.Row
	for i := range rep.Phases {
		if row := &rep.Phases[i]; row.Benchmark == "Prof" && row.Phase == "solve" && row.Unit == "sec/op" {
			solve = row
		}
	}
	if solve == nil || solve.Verdict != analysis.VerdictRegression {
		t.Fatalf("solve row %+v; want a regression (warnings %v)", solve, rep.Warnings)
	}
	var diff *analysis.ProfileDiff
	for i := range rep.ProfileDiffs {
		if d := &rep.ProfileDiffs[i]; d.Phase == "solve" {
			diff = d
		}
		if d := rep.ProfileDiffs[i]; d.Phase == "parse" {
			t.Errorf("parse did not regress but has a profile diff: %+v", d)
		}
	}
	if diff == nil {
		t.Fatalf("no profile diff for solve; diffs %+v, warnings %v", rep.ProfileDiffs, rep.Warnings)
	}
	t.Logf("solve: base %d samples, head %d; flat %+v", diff.BaseSamples, diff.HeadSamples, diff.Flat)
	if diff.BaseProfiles != 8 || diff.HeadProfiles != 8 {
		t.Errorf("diff merged %d base and %d head profiles; want the 8 runs of each side", diff.BaseProfiles, diff.HeadProfiles)
	}
	if len(diff.Flat) == 0 || !strings.HasSuffix(diff.Flat[0].Name, ".plantedSlowdown") || diff.Flat[0].Delta < 5 {
		t.Fatalf("top of solve's flat diff: %+v; want main.plantedSlowdown, grown by at least 5 pp", diff.Flat)
	}
	if diff.Flat[0].Base != 0 {
		t.Errorf("plantedSlowdown had %.1f%% of base's solve samples; base never calls it", diff.Flat[0].Base)
	}
	// The markdown names it on the phase's explanation line.
	md, _, _ := perfbot(t, env.args("compare", "--repo", r.Dir, "--base", base, "--head", head, "--format", "markdown")...)
	if !strings.Contains(md, "grew most: `main.plantedSlowdown`") {
		t.Errorf("markdown does not explain solve by main.plantedSlowdown:\n%s", md)
	}
}
