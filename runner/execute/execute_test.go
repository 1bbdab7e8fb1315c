package execute

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"golang.org/x/sys/unix"

	"github.com/perfbot/perfbot/analysis"
)

func TestMain(m *testing.M) {
	if name := os.Getenv(helperEnv); name != "" {
		h, ok := helpers[name]
		if !ok {
			fmt.Fprintf(os.Stderr, "no helper %q\n", name)
			os.Exit(2)
		}
		os.Exit(h())
	}
	// A secret only the test process has; TestRunGivesOnlyAllowedEnv
	// checks that no child sees it.
	os.Setenv(secretEnv, "hunter2")
	code := m.Run()
	// The spans program is built once for the whole package (spansBinary),
	// so no test's TempDir can hold it: its directory goes here.
	if spansBin != "" {
		os.RemoveAll(filepath.Dir(spansBin))
	}
	os.Exit(code)
}

// runHelper runs helper name through Run with a 20 s limit unless spec
// says otherwise, failing the test if Run returns an error.
func runHelper(t *testing.T, name string, spec Spec) Result {
	t.Helper()
	return runHelperNVML(t, name, spec, nvml.New())
}

// runHelperNVML is runHelper with the NVML library given.
func runHelperNVML(t *testing.T, name string, spec Spec, lib nvml.Interface) Result {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	spec.Args = []string{self}
	spec.Env = append(spec.Env, helperEnv+"="+name)
	spec.Env = append(spec.Env, coverEnv(t)...)
	if spec.Timeout == 0 {
		spec.Timeout = 20 * time.Second
	}
	res, err := run(context.Background(), spec, lib)
	if err != nil {
		t.Fatalf("Run(%s): %v", name, err)
	}
	return res
}

// coverEnv is the environment a helper child needs when this test binary
// was built with -cover: a GOCOVERDIR of its own, or the child adds Go's
// "GOCOVERDIR not set" warning to the stderr the tests compare. None
// otherwise.
func coverEnv(t *testing.T) []string {
	if testing.CoverMode() == "" {
		return nil
	}
	return []string{"GOCOVERDIR=" + t.TempDir()}
}

// processValue returns the process sample with unit, failing the test
// if there is not exactly one.
func processValue(t *testing.T, res Result, unit string) float64 {
	t.Helper()
	var vals []float64
	for _, s := range res.Run.Samples {
		if s.Benchmark == ProcessBenchmark && s.Unit == unit {
			vals = append(vals, s.Value)
		}
	}
	if len(vals) != 1 {
		t.Fatalf("process %s: got %d samples %v, want 1 (unavailable: %v)", unit, len(vals), vals, res.Unavailable)
	}
	return vals[0]
}

func wantStatus(t *testing.T, res Result, want analysis.Status) {
	t.Helper()
	if res.Run.Status != want {
		t.Fatalf("status %q, want %q; detail: %s; stderr: %s", res.Run.Status, want, res.Run.Detail, res.StderrTail)
	}
}

func TestRunParsesBenchmarkLinesIntoPhaseSamples(t *testing.T) {
	t.Parallel()
	res := runHelper(t, "bench", Spec{})
	wantStatus(t, res, analysis.StatusOK)
	bench := "Prove/circuit=sha256/backend=cpu"
	want := []analysis.Sample{
		{Key: analysis.Key{Benchmark: bench, Phase: "synthesis", Unit: "sec/op"}, Value: 0.812345678},
		{Key: analysis.Key{Benchmark: bench, Phase: "synthesis", Unit: "page-faults/op"}, Value: 41},
		{Key: analysis.Key{Benchmark: bench, Phase: "msm_h/step=sort", Unit: "sec/op"}, Value: 0.401234567},
		{Key: analysis.Key{Benchmark: bench, Phase: "total", Unit: "sec/op"}, Value: 2.345678901},
		{Key: analysis.Key{Benchmark: bench, Phase: "total", Unit: "B/op"}, Value: 1048576},
	}
	if len(res.Run.Samples) < len(want) {
		t.Fatalf("got %d samples, want at least %d: %v", len(res.Run.Samples), len(want), res.Run.Samples)
	}
	for i, w := range want {
		g := res.Run.Samples[i]
		if g.Key != w.Key || !near(g.Value, w.Value) {
			t.Errorf("sample %d = %v %v, want %v %v", i, g.Key, g.Value, w.Key, w.Value)
		}
	}
	for _, s := range res.Run.Samples[len(want):] {
		// A machine with several GPUs adds process/gpu=N samples.
		process := s.Benchmark == ProcessBenchmark || strings.HasPrefix(s.Benchmark, ProcessBenchmark+"/gpu=")
		if !process || s.Phase != "" || !strings.HasSuffix(s.Unit, "/run") {
			t.Errorf("extra sample %v is not a process sample", s)
		}
	}
	wantConfig := map[string]string{"goos": "linux", "goarch": "amd64", "cpu": "Test CPU @ 1GHz", "gpu": "none",
		"backend": "cpu", "pkg": "github.com/perfbot/perfbot/prover"}
	if fmt.Sprint(res.Config) != fmt.Sprint(wantConfig) {
		t.Errorf("config %v, want %v", res.Config, wantConfig)
	}
	if len(res.Warnings) != 0 {
		t.Errorf("warnings %q, want none", res.Warnings)
	}
	if res.Wall <= 0 || !near(processValue(t, res, "wall-sec/run"), res.Wall.Seconds()) {
		t.Errorf("wall %v, wall-sec/run %v", res.Wall, processValue(t, res, "wall-sec/run"))
	}
}

func near(a, b float64) bool { return a == b || (a-b)/b < 1e-9 && (b-a)/b < 1e-9 }

func TestRunSilentProcessIsNoOutput(t *testing.T) {
	t.Parallel()
	res := runHelper(t, "silent", Spec{})
	wantStatus(t, res, analysis.StatusNoOutput)
	if len(res.Run.Samples) != 0 {
		t.Errorf("no-output run has samples %v", res.Run.Samples)
	}
	if res.Run.Detail != "exit status 0 but no benchmark line on stdout" {
		t.Errorf("detail %q", res.Run.Detail)
	}
}

func TestRunGarbageIsNoOutputWithSyntaxErrors(t *testing.T) {
	t.Parallel()
	res := runHelper(t, "garbage", Spec{})
	wantStatus(t, res, analysis.StatusNoOutput)
	for _, want := range []string{"stdout:2: parsing iteration count", "stdout:3: missing units"} {
		if !strings.Contains(res.Run.Detail, want) {
			t.Errorf("detail %q lacks %q", res.Run.Detail, want)
		}
	}
}

func TestRunKeepsResultsAndWarnsOfSyntaxErrors(t *testing.T) {
	t.Parallel()
	res := runHelper(t, "mixed", Spec{})
	wantStatus(t, res, analysis.StatusOK)
	k := analysis.Key{Benchmark: "Prove", Phase: "ntt", Unit: "sec/op"}
	if s := res.Run.Samples[0]; s.Key != k || !near(s.Value, 5e-6) {
		t.Errorf("first sample %v, want %v 5e-6", s, k)
	}
	if len(res.Warnings) != 2 || !strings.HasPrefix(res.Warnings[0], "stdout:1: ") || !strings.HasPrefix(res.Warnings[1], "stdout:3: ") {
		t.Errorf("warnings %q, want the syntax errors of lines 1 and 3", res.Warnings)
	}
}

func TestRunNonZeroExitIsCrashedWithStderr(t *testing.T) {
	t.Parallel()
	res := runHelper(t, "exit3", Spec{})
	wantStatus(t, res, analysis.StatusCrashed)
	want := "exit status 3\nstderr:\nprove: constraint 17 is not satisfied\n"
	if res.Run.Detail != want {
		t.Errorf("detail %q, want %q", res.Run.Detail, want)
	}
	if len(res.Run.Samples) != 0 {
		t.Errorf("crashed run has samples %v", res.Run.Samples)
	}
	if res.StderrTail != "prove: constraint 17 is not satisfied\n" {
		t.Errorf("stderr tail %q", res.StderrTail)
	}
}

func TestRunSignalIsCrashed(t *testing.T) {
	t.Parallel()
	res := runHelper(t, "killself", Spec{})
	wantStatus(t, res, analysis.StatusCrashed)
	if res.Run.Detail != "signal: killed; stderr was empty" {
		t.Errorf("detail %q", res.Run.Detail)
	}
}

func TestRunKeepsTheLastLinesOfStderr(t *testing.T) {
	t.Parallel()
	res := runHelper(t, "noisy", Spec{StderrTail: 1000})
	wantStatus(t, res, analysis.StatusCrashed)
	tail := res.StderrTail
	if len(tail) > 1000 || len(tail) < 900 {
		t.Errorf("tail is %d bytes, want 900–1000", len(tail))
	}
	if !strings.HasPrefix(tail, "line ") || !strings.HasSuffix(tail, "line 04999 xxxxxxxxx\n") {
		t.Errorf("tail does not hold whole last lines: %q", tail)
	}
	if !strings.HasPrefix(res.Run.Detail, "exit status 1\nstderr (last lines):\nline ") {
		t.Errorf("detail starts %q", res.Run.Detail[:min(60, len(res.Run.Detail))])
	}

	res = runHelper(t, "noisy", Spec{})
	if len(res.StderrTail) > DefaultStderrTail || len(res.StderrTail) < DefaultStderrTail-100 {
		t.Errorf("default tail is %d bytes, want about %d", len(res.StderrTail), DefaultStderrTail)
	}
}

// gone reports whether pid has exited (a zombie counts: it runs no more).
func gone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	// Field 3, after the parenthesised command name, is the state.
	rest := stat[strings.LastIndexByte(string(stat), ')')+1:]
	f := strings.Fields(string(rest))
	return len(f) > 0 && (f[0] == "Z" || f[0] == "X")
}

// waitGone waits up to 5 s for pid to exit.
func waitGone(pid int) bool {
	for range 500 {
		if gone(pid) {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

func readPid(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("grandchild never wrote its pid: %v", err)
	}
	pid, err := strconv.Atoi(string(b))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

func TestRunTimeoutKillsTheWholeProcessGroup(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "pid")
	start := time.Now()
	res := runHelper(t, "sleeptree", Spec{Timeout: 1500 * time.Millisecond, Env: []string{pidFileEnv + "=" + pidFile}})
	elapsed := time.Since(start)
	wantStatus(t, res, analysis.StatusTimedOut)
	if want := "killed after the 1.5s time limit\nstderr:\nsleeping\n"; res.Run.Detail != want {
		t.Errorf("detail %q, want %q", res.Run.Detail, want)
	}
	if elapsed > 10*time.Second {
		t.Errorf("Run took %v with a 1.5 s limit", elapsed)
	}
	if res.Wall < 1500*time.Millisecond {
		t.Errorf("wall %v is shorter than the limit", res.Wall)
	}
	pid := readPid(t, pidFile)
	if !waitGone(pid) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("grandchild %d still runs after the timeout", pid)
	}
}

func TestRunKillsProcessesLeftBehind(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "pid")
	res := runHelper(t, "leavebehind", Spec{Env: []string{pidFileEnv + "=" + pidFile}})
	wantStatus(t, res, analysis.StatusOK)
	pid := readPid(t, pidFile)
	if !waitGone(pid) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("grandchild %d still runs after Run returned", pid)
	}
	want := "killed processes the benchmark left running in its process group"
	if len(res.Warnings) != 1 || res.Warnings[0] != want {
		t.Errorf("warnings %q, want [%q]", res.Warnings, want)
	}
}

func TestRunCanceledContextIsAnError(t *testing.T) {
	t.Parallel()
	self, _ := os.Executable()
	pidFile := filepath.Join(t.TempDir(), "pid")
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(500*time.Millisecond, cancel)
	_, err := Run(ctx, Spec{
		Args: []string{self},
		Env:  []string{helperEnv + "=sleeptree", pidFileEnv + "=" + pidFile},
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run after cancel: %v, want context.Canceled", err)
	}
	if _, err := os.Stat(pidFile); err == nil {
		if pid := readPid(t, pidFile); !waitGone(pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("grandchild %d still runs after cancel", pid)
		}
	}
}

func TestRunCountsPageFaults(t *testing.T) {
	t.Parallel()
	const pages = 20000 // 78 MiB with 4 KiB pages
	res := runHelper(t, "pages", Spec{Env: []string{fmt.Sprintf("%s=%d", pagesEnv, pages)}})
	wantStatus(t, res, analysis.StatusOK)
	pf := processValue(t, res, "page-faults/run")
	// The Go runtime's start-up and exit add a few hundred faults.
	if pf < pages || pf > pages+10000 {
		t.Errorf("page-faults/run = %v, want %d to %d", pf, pages, pages+10000)
	}
	wantPeakRSS(t, res, pages*os.Getpagesize())
	t.Logf("page-faults/run %v", pf)
}

// wantPeakRSS checks that the run's peak RSS is at least lo and not more
// than 200 MiB above it, or, when this test process is itself larger (as
// under the race detector), that Run declined to report it.
func wantPeakRSS(t *testing.T, res Result, lo int) {
	t.Helper()
	for _, s := range res.Run.Samples {
		if s.Benchmark == ProcessBenchmark && s.Unit == "peak-rss-B/run" {
			if s.Value < float64(lo) || s.Value > float64(lo+200<<20) {
				t.Errorf("peak-rss-B/run = %v, want %d to %d", s.Value, lo, lo+200<<20)
			}
			t.Logf("peak-rss-B/run %v", s.Value)
			return
		}
	}
	why := res.Unavailable["peak-rss"]
	if own, err := ownPeakRSS(); err != nil || own < uint64(lo) || !strings.Contains(why, "perfbot's own peak RSS") {
		t.Errorf("no peak-rss-B/run (%q) though this process's peak RSS is %d bytes (%v)", why, own, err)
	}
	t.Logf("peak-rss unavailable: %s", why)
}

func TestRunCountsTheWholeProcessTree(t *testing.T) {
	t.Parallel()
	const pages = 20000
	res := runHelper(t, "pagestree", Spec{Env: []string{fmt.Sprintf("%s=%d", pagesEnv, pages)}})
	wantStatus(t, res, analysis.StatusOK)
	// The child touches no pages of its own: the faults are the
	// grandchild's, counted because the events are inherited.
	pf := processValue(t, res, "page-faults/run")
	if pf < pages || pf > pages+20000 {
		t.Errorf("page-faults/run = %v, want %d to %d", pf, pages, pages+20000)
	}
	t.Logf("page-faults/run %v", pf)
}

func TestRunCountsTaskClock(t *testing.T) {
	t.Parallel()
	res := runHelper(t, "burn", Spec{})
	wantStatus(t, res, analysis.StatusOK)
	// The helper spins until its own CPU time reaches 200 ms.
	tc := processValue(t, res, "task-clock-sec/run")
	if tc < 0.15 || tc > 1.5 {
		t.Errorf("task-clock-sec/run = %v, want 0.15–1.5", tc)
	}
	if wall := processValue(t, res, "wall-sec/run"); wall < 0.15 {
		t.Errorf("wall-sec/run = %v, want ≥ 0.15", wall)
	}
	for _, unit := range []string{"context-switches/run", "cpu-migrations/run"} {
		if v := processValue(t, res, unit); v < 0 {
			t.Errorf("%s = %v", unit, v)
		}
	}
	t.Logf("task-clock-sec/run %v", tc)
}

func TestRunReportsRefusedHardwareCountersAndStaysOK(t *testing.T) {
	t.Parallel()
	res := runHelper(t, "bench", Spec{})
	wantStatus(t, res, analysis.StatusOK)
	for _, def := range counterDefs {
		var n int
		for _, s := range res.Run.Samples {
			if s.Benchmark == ProcessBenchmark && s.Unit == def.unit {
				n++
			}
		}
		reason, refused := res.Unavailable[def.name]
		switch {
		case refused && (n != 0 || reason == ""):
			t.Errorf("%s: unavailable (%q) but %d samples", def.name, reason, n)
		case !refused && n != 1:
			t.Errorf("%s: available but %d samples", def.name, n)
		case refused:
			t.Logf("%s unavailable: %s", def.name, reason)
		}
		if def.typ == unix.PERF_TYPE_HARDWARE && refused && !strings.HasPrefix(reason, "perf_event_open: ") {
			t.Errorf("%s: reason %q does not name perf_event_open", def.name, reason)
		}
	}
	for _, sw := range []string{"task-clock", "page-faults", "context-switches", "cpu-migrations"} {
		if r, ok := res.Unavailable[sw]; ok {
			t.Errorf("software counter %s unavailable: %s", sw, r)
		}
	}
}

func TestRunPinsTheProcessToCPUs(t *testing.T) {
	t.Parallel()
	sets := [][]int{{0}}
	if runtime.NumCPU() > 1 {
		sets = append(sets, []int{1}, []int{0, 1})
	}
	for _, cpus := range sets {
		res := runHelper(t, "affinity", Spec{CPUs: cpus})
		wantStatus(t, res, analysis.StatusOK)
		want := strings.Trim(strings.Join(strings.Fields(fmt.Sprint(cpus)), ","), "[]")
		if got := res.Config["affinity"]; got != want {
			t.Errorf("CPUs %v: the child runs on %q, want %q", cpus, got, want)
		}
	}
	// Without CPUs the child gets what this process has, not a set left
	// over from an earlier pinned run.
	res := runHelper(t, "affinity", Spec{})
	if got := strings.Count(res.Config["affinity"], ",") + 1; got != runtime.NumCPU() {
		t.Errorf("unpinned child runs on %q, want %d CPUs", res.Config["affinity"], runtime.NumCPU())
	}
}

func TestRunRefusesCPUsItCannotPinTo(t *testing.T) {
	t.Parallel()
	for _, cpus := range [][]int{{-1}, {1 << 20}, {1000}} {
		_, err := Run(context.Background(), Spec{Args: []string{"/bin/true"}, CPUs: cpus})
		if err == nil {
			t.Errorf("CPUs %v: no error", cpus)
		}
	}
}

func TestRunGivesOnlyAllowedEnv(t *testing.T) {
	t.Parallel()
	if os.Getenv(secretEnv) == "" {
		t.Fatal("TestMain did not set the secret")
	}
	res := runHelper(t, "env", Spec{Env: []string{givenEnv + "=given-value"}})
	wantStatus(t, res, analysis.StatusOK)
	if res.Config["secret"] != "" {
		t.Errorf("the child sees the parent's secret %q", res.Config["secret"])
	}
	if res.Config["given"] != "given-value" {
		t.Errorf("the child sees given=%q, want given-value", res.Config["given"])
	}
	allowed := map[string]bool{"PATH": true, "HOME": true, "TMPDIR": true, "LANG": true, helperEnv: true, givenEnv: true, OwnerEnv: true,
		EnvVisibleDevices: true, EnvDeviceOrder: true, "GOCOVERDIR": testing.CoverMode() != ""}
	for name := range strings.SplitSeq(res.Config["envnames"], ",") {
		if !allowed[name] {
			t.Errorf("the child has variable %s, which nobody gave it", name)
		}
	}
}

func TestRunLooksUpTheProgramInTheChildsPATH(t *testing.T) {
	t.Parallel()
	truePath, err := exec.LookPath("true")
	if err != nil {
		t.Skip("no true(1) on this machine")
	}
	res, err := Run(context.Background(), Spec{Args: []string{"true"}, Env: []string{"PATH=" + t.TempDir()}})
	if err != nil || res.Run.Status != analysis.StatusCrashed || !strings.Contains(res.Run.Detail, "could not start: true: "+exec.ErrNotFound.Error()) {
		t.Errorf("true with an empty PATH: %+v, %v; want a crashed run that could not start: not found", res.Run, err)
	}
	res, err = Run(context.Background(), Spec{Args: []string{"true"}, Env: []string{"PATH=" + filepath.Dir(truePath)}})
	if err != nil {
		t.Fatal(err)
	}
	wantStatus(t, res, analysis.StatusNoOutput)
}

func TestRunRejectsBadSpecs(t *testing.T) {
	t.Parallel()
	for name, spec := range map[string]Spec{
		"no args":       {},
		"bad env":       {Args: []string{"/bin/true"}, Env: []string{"NOEQUALS"}},
		"dir not found": {Args: []string{"/bin/true"}, Dir: "/nonexistent"},
	} {
		if _, err := Run(context.Background(), spec); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// A program that cannot be started is the commit's failure, not
// perfbot's: a crashed run whose detail says why and what to check, as a
// program that exits 7 is, so that compare stores it and exits 3 rather
// than stopping with an error.
func TestRunOfAProgramThatCannotStartIsACrashedRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	notExec := filepath.Join(dir, "bench.sh")
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\necho BenchmarkX 1 1 ns/op\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	garbage := filepath.Join(dir, "garbage")
	if err := os.WriteFile(garbage, []byte("\x00\x01 not a program"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, why string }{
		{"/nonexistent/bench", "no such file or directory"},
		{notExec, "permission denied"},
		{garbage, "exec format error"},
	} {
		res, err := Run(context.Background(), Spec{Args: []string{c.path}})
		if err != nil {
			t.Errorf("%s: error %v; want a crashed run", c.path, err)
			continue
		}
		want := "could not start: fork/exec " + c.path + ": " + c.why + " (check the benchmark's command in .perfbot.yml, and that the build makes it)"
		if res.Run.Status != analysis.StatusCrashed || res.Run.Detail != want {
			t.Errorf("%s: %s %q; want crashed %q", c.path, res.Run.Status, res.Run.Detail, want)
		}
	}
}

// TestRunPeakRSSIsNeverPerfbots runs alone (not parallel): it grows this
// process's RSS, which a vfork'ed child's rusage would report as its own.
func TestRunPeakRSSIsNeverPerfbots(t *testing.T) {
	const pages = 20000 // 78 MiB
	env := []string{fmt.Sprintf("%s=%d", pagesEnv, pages)}
	ballast := make([]byte, 256<<20)
	for i := 0; i < len(ballast); i += os.Getpagesize() {
		ballast[i] = 1
	}
	res := runHelper(t, "pages", Spec{Env: env})
	wantStatus(t, res, analysis.StatusOK)
	runtime.KeepAlive(ballast)
	for _, s := range res.Run.Samples {
		if s.Unit == "peak-rss-B/run" {
			t.Errorf("peak-rss-B/run = %v while perfbot's own RSS is larger: it is perfbot's, not the benchmark's", s.Value)
		}
	}
	if why := res.Unavailable["peak-rss"]; !strings.Contains(why, "perfbot's own peak RSS") {
		t.Errorf("peak-rss unavailable because %q", why)
	}

	// Once the ballast is gone, Run resets perfbot's high-water mark and
	// the benchmark's peak shows again.
	ballast = nil
	debug.FreeOSMemory()
	res = runHelper(t, "pages", Spec{Env: env})
	wantPeakRSS(t, res, pages*os.Getpagesize())
}

// TestRunCountsNothingOfPerfbotsOtherThreads runs alone (not parallel):
// while a napping child runs, this process burns CPU on every core and
// makes the runtime start threads; none of it may reach the counts.
func TestRunCountsNothingOfPerfbotsOtherThreads(t *testing.T) {
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			x := 1.0
			for {
				select {
				case <-stop:
					runtime.KeepAlive(x)
					return
				default:
				}
				for range 10000 {
					x = x*1.0000001 + 1e-9
				}
			}
		})
	}
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				// A blocking syscall: the runtime hands the P to another
				// thread, starting one if it must.
				ts := unix.NsecToTimespec(int64(20 * time.Millisecond))
				_ = unix.Nanosleep(&ts, nil)
			}
		})
	}
	res := runHelper(t, "nap", Spec{})
	close(stop)
	wg.Wait()
	wantStatus(t, res, analysis.StatusOK)
	tc := processValue(t, res, "task-clock-sec/run")
	if tc > 0.1 {
		t.Errorf("task-clock-sec/run = %v for a child that naps 300 ms: perfbot's own threads were counted", tc)
	}
	t.Logf("task-clock-sec/run %v", tc)
	if wall := processValue(t, res, "wall-sec/run"); wall < 0.3 {
		t.Errorf("wall-sec/run = %v, want ≥ 0.3", wall)
	}
}

func TestRunNamesProcessSamplesAfterTheSpec(t *testing.T) {
	t.Parallel()
	res := runHelper(t, "bench", Spec{Name: "prove"})
	wantStatus(t, res, analysis.StatusOK)
	var process, phases int
	for _, s := range res.Run.Samples {
		switch {
		case s.Benchmark == "process/benchmark=prove":
			process++
		case s.Benchmark == ProcessBenchmark:
			t.Errorf("sample %v keeps the unnamed process benchmark", s.Key)
		case s.Benchmark == "Prove/circuit=sha256/backend=cpu":
			phases++
		}
	}
	// wall-sec/run and task-clock-sec/run at least; the benchmark's own
	// five samples keep their names.
	if process < 2 || phases != 5 {
		t.Errorf("%d named process samples, %d phase samples; want ≥ 2 and 5: %v", process, phases, res.Run.Samples)
	}
}
