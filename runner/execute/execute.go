package execute

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"golang.org/x/sys/unix"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/runner/readers"
)

// DefaultStderrTail is how many bytes from the end of standard error a
// Result keeps when the Spec does not say.
const DefaultStderrTail = 64 << 10

// DefaultMaxProfileBytes is the largest profile a Result keeps when the
// Spec does not say. perfbot prove's CPU profile at 2^16 constraints is
// about 11 KB; one of 64 MiB is a mistake, not a profile to store.
const DefaultMaxProfileBytes = 64 << 20

// ProcessBenchmark is the Key.Benchmark of the samples that describe the
// whole benchmark process rather than one of its benchmarks: wall time,
// peak RSS, the perf counters and the GPU telemetry. Their Phase is empty
// and their units end in "/run" (one value per process run), for example
// "task-clock-sec/run", "page-faults/run" or "gpu-energy-J/run". go test
// never prints this name: its benchmark names never start with a
// lower-case letter.
//
// On a machine with more than one GPU, each device's telemetry samples
// are named "process/gpu=N", N being NVML's device index (the order
// nvidia-smi shows, which may differ from CUDA's), so that devices never
// mix; with one GPU they are plain "process" samples. The GPU units are
// gpu-energy-J/run, gpu-power-mean-W/run, gpu-sm-clock-min-MHz/run,
// gpu-sm-clock-mean-MHz/run, gpu-mem-clock-min-MHz/run,
// gpu-temp-max-C/run, gpu-util-mean-pct/run, gpu-mem-util-mean-pct/run,
// gpu-mem-used-max-B/run and gpu-throttled-fraction/run: the share of
// readings whose clock event reasons include any but GPU idle and
// applications clocks setting (so SW power cap, HW slowdown, sync boost,
// SW and HW thermal slowdown, HW power brake, display clock setting,
// board limit and reliability all count). The clock minima and means
// cover the readings in which the GPU was busy, since an idle GPU lowers
// its clocks by design.
const ProcessBenchmark = "process"

// A Spec says how to run one benchmark process.
type Spec struct {
	// Args is the command line; Args[0] is the program. No shell is
	// involved. A program name without a slash is looked up in the PATH
	// of the benchmark's environment.
	Args []string
	// Dir is the working directory; "" is perfbot's.
	Dir string
	// Env is the benchmark's environment as KEY=VALUE entries. The
	// benchmark gets these and, unless Env sets them, only PATH, HOME,
	// TMPDIR, LANG and CUDA's device selection (CUDA_VISIBLE_DEVICES,
	// CUDA_DEVICE_ORDER) from perfbot's environment: never the rest of
	// it (tokens, database URLs). It also gets OwnerEnv, whatever Env
	// says.
	Env []string
	// Timeout limits the run's wall time; 0 means no limit but ctx's. At
	// the limit the whole process group is killed.
	Timeout time.Duration
	// CPUs, when set, pins the benchmark and every process it starts to
	// these CPUs (sched_setaffinity, inherited at fork).
	CPUs []int
	// StderrTail is how many bytes from the end of standard error to
	// keep; 0 means DefaultStderrTail.
	StderrTail int
	// Name, when set, names the benchmark command in its process samples:
	// their Key.Benchmark becomes "process/benchmark=NAME" (and
	// "process/benchmark=NAME/gpu=N" for a GPU's), so the process counters
	// of two commands never mix.
	Name string
	// TelemetryInterval is how often every GPU is sampled while the
	// process runs. 0 means Timeout/500 within [20ms, 500ms], or 100ms
	// without a Timeout; an explicit value must be at least 1ms.
	TelemetryInterval time.Duration
	// CPUProfileFlag, when set, asks the benchmark for a CPU profile: Run
	// appends two arguments to Args, the flag and the path of a file in a
	// new temporary directory (--cpuprofile /tmp/perfbot-profile-1234/cpu.pprof),
	// and after an ok run reads the file into Result.Run.Profiles as one
	// analysis.ProfileCPU profile of benchmark Name, which must be set. A
	// missing, empty or too large file is a warning, not a failure; a run
	// that did not end ok keeps no profile. The directory is removed
	// whatever happens.
	CPUProfileFlag string
	// MemProfileFlag, when set, asks the benchmark for a heap profile in
	// the same way: Run appends the flag and a path (mem.pprof in the
	// same directory, after the CPU profile's pair) and reads the file an
	// ok run wrote into one analysis.ProfileMem profile of benchmark Name,
	// with the same warnings.
	MemProfileFlag string
	// MaxProfileBytes caps the size of a profile kept; a larger one is a
	// warning and is not kept. 0 means DefaultMaxProfileBytes.
	MaxProfileBytes int64
	// Reader, when set, reads the benchmark's results from what it
	// printed (or wrote in Dir) in a format other than Go benchmark
	// format (see readers); nil reads Go benchmark format from stdout.
	// Output the reader cannot read is a no-output run with its reason.
	Reader readers.Reader
}

// A Result is what one benchmark process did.
type Result struct {
	// Run is the run's status, detail and, when the status is ok, its
	// samples: one per value on each benchmark line, then the process
	// samples (see ProcessBenchmark). Run.Revision is left for the
	// caller.
	Run analysis.Run `json:"run"`
	// Wall is the time from starting the process to its exit, whatever
	// the status.
	Wall time.Duration `json:"wall_ns"`
	// Config holds the benchmark output's file configuration lines
	// (goos, cpu, gpu, backend, …), the last value of each key.
	Config map[string]string `json:"config,omitempty"`
	// Warnings are caveats about an ok run: benchmark lines that did
	// not parse, counters that were multiplexed, processes left behind, a
	// CPU profile asked for but not written.
	Warnings []string `json:"warnings,omitempty"`
	// Unavailable maps each process measurement that could not be taken
	// to the reason: perf's event name ("instructions", "cache-misses",
	// …) for a counter the kernel refused, "peak-rss" for a peak RSS that
	// cannot be told apart from perfbot's own, "gpu-telemetry" when NVML
	// cannot be used at all (no NVIDIA driver, no GPU), and "gpu-FIELD"
	// for a GPU reading that NVML refused ("gpu-power", "gpu-sm-clock",
	// "gpu-mem-clock", "gpu-temp", "gpu-util", "gpu-mem-used",
	// "gpu-clock-reasons", "gpu-energy"), with the device's "/gpu=N"
	// suffix when there are several.
	Unavailable map[string]string `json:"unavailable,omitempty"`
	// StderrTail is the end of the process's standard error, cut at a
	// line boundary.
	StderrTail string `json:"stderr_tail,omitempty"`

	// lines are the benchmark lines of an ok run, in the order printed,
	// for RunCallgrind to pair with the spans it counted.
	lines []benchLine
}

// Run runs the benchmark process spec describes and waits for it.
//
// It starts the process in a new process group from a goroutine locked to
// its OS thread, after opening perf counters on that thread with Inherit
// set and, if spec.CPUs is set, pinning the thread: the process and all
// its descendants inherit both. When the process exits, any process left
// in its group is killed; when spec.Timeout passes or ctx ends, the whole
// group is killed; either way Run returns once no process of the group
// runs (at most 5 s after SIGKILL; a warning names those that still do).
// The process gets SIGKILL too when the thread that started it ends
// (Pdeathsig): that thread is locked until the process has been waited
// for, so it ends only with perfbot. What the process started, and
// everything else of its group, outlives a killed perfbot; those carry
// OwnerEnv, by which the next perfbot process ends them (EndLeftovers).
// From just before the start until the exit, another goroutine
// samples every GPU through NVML (see ProcessBenchmark); without NVML the
// run has no GPU samples and Result.Unavailable says why.
//
// With spec.CPUProfileFlag or spec.MemProfileFlag the program is also
// given a path to write a CPU or heap profile to, which an ok run's
// Result carries (see Spec).
//
// How the process ended is the Result's status: crashed for a non-zero
// exit or a signal, or a program that could not be started (not found,
// not executable), timed-out at the limit, no-output for an exit 0
// without a parsable benchmark line, ok otherwise. Run returns an error
// only when it could not measure at all: an invalid spec, perfbot's own
// failures (pinning, temporary files), or ctx ending before the process did (the partial
// result is then no measurement and is not returned).
func Run(ctx context.Context, spec Spec) (Result, error) {
	return run(ctx, spec, nvml.New())
}

// run is Run with the NVML library given.
func run(ctx context.Context, spec Spec, lib nvml.Interface) (Result, error) {
	if len(spec.Args) == 0 {
		return Result{}, errors.New("run benchmark: empty command line")
	}
	name := filepath.Base(spec.Args[0])
	if spec.TelemetryInterval < 0 || spec.TelemetryInterval > 0 && spec.TelemetryInterval < time.Millisecond {
		return Result{}, fmt.Errorf("run %s: telemetry interval %v: must be at least 1ms, or 0 for the default", name, spec.TelemetryInterval)
	}
	env, err := childEnv(spec.Env)
	if err != nil {
		return Result{}, fmt.Errorf("run %s: %w", name, err)
	}
	if spec.Dir != "" {
		// Checked here: the child's chdir fails as "fork/exec PROGRAM",
		// which would read as the program's fault.
		if fi, err := os.Stat(spec.Dir); err != nil || !fi.IsDir() {
			return Result{}, fmt.Errorf("run %s: working directory %s is not a directory (%v)", name, spec.Dir, err)
		}
	}
	path, err := lookPath(spec.Args[0], env)
	if err != nil {
		return notStarted(err), nil
	}
	var cpus unix.CPUSet
	if len(spec.CPUs) > 0 {
		if cpus, err = cpuSet(spec.CPUs); err != nil {
			return Result{}, fmt.Errorf("run %s: %w", name, err)
		}
	}
	if (spec.CPUProfileFlag != "" || spec.MemProfileFlag != "") && spec.Name == "" {
		return Result{}, fmt.Errorf("run %s: a profile needs the benchmark's Name, which names the profile", name)
	}
	if spec.MaxProfileBytes < 0 {
		return Result{}, fmt.Errorf("run %s: MaxProfileBytes %d is negative; use 0 for the default", name, spec.MaxProfileBytes)
	}
	if err := ctx.Err(); err != nil {
		return Result{}, fmt.Errorf("run %s: %w", name, err)
	}
	args := spec.Args
	var wanted []wantedProfile // the profiles asked for, with their paths
	if spec.CPUProfileFlag != "" || spec.MemProfileFlag != "" {
		dir, err := os.MkdirTemp("", "perfbot-profile-*")
		if err != nil {
			return Result{}, fmt.Errorf("run %s: create profile directory: %w", name, err)
		}
		defer os.RemoveAll(dir)
		args = slices.Clip(spec.Args)
		for _, w := range []wantedProfile{
			{analysis.ProfileCPU, "CPU profile", spec.CPUProfileFlag, filepath.Join(dir, "cpu.pprof")},
			{analysis.ProfileMem, "memory profile", spec.MemProfileFlag, filepath.Join(dir, "mem.pprof")},
		} {
			if w.flag != "" {
				args = append(args, w.flag, w.path)
				wanted = append(wanted, w)
			}
		}
	}
	stdout, err := unlinkedTemp("stdout")
	if err != nil {
		return Result{}, fmt.Errorf("run %s: %w", name, err)
	}
	defer stdout.Close()
	stderr, err := unlinkedTemp("stderr")
	if err != nil {
		return Result{}, fmt.Errorf("run %s: %w", name, err)
	}
	defer stderr.Close()

	cmd := &exec.Cmd{
		Path:   path,
		Args:   args,
		Dir:    spec.Dir,
		Env:    env,
		Stdout: stdout, // files, not pipes: Wait never waits on a
		Stderr: stderr, // descendant that keeps a pipe open
		SysProcAttr: &syscall.SysProcAttr{
			Setpgid: true,
			// Kill the benchmark if perfbot dies. The signal follows the
			// parent thread, which stays alive until Wait returns.
			Pdeathsig: syscall.SIGKILL,
		},
	}
	started := time.Now()
	done := make(chan process, 1)
	gpus := sampler{lib: lib, interval: spec.telemetryInterval(), vis: visibilityFromEnv()}
	go func() { done <- runLocked(ctx, cmd, spec.Timeout, spec.CPUs, cpus, gpus) }()
	p := <-done
	if p.err != nil {
		return Result{}, fmt.Errorf("run %s: %w", name, p.err)
	}
	if p.startErr != nil {
		return notStarted(p.startErr), nil
	}
	if p.stop == stopCanceled && !p.state.Success() {
		return Result{}, fmt.Errorf("run %s: %w", name, context.Cause(ctx))
	}

	res := Result{Wall: p.wall, Warnings: p.warnings, Unavailable: p.unavailable}
	tailSize := spec.StderrTail
	if tailSize <= 0 {
		tailSize = DefaultStderrTail
	}
	tail, cut, err := readTail(stderr, tailSize)
	if err != nil {
		res.Warnings = append(res.Warnings, fmt.Sprintf("read stderr: %v", err))
	}
	res.StderrTail = tail

	switch {
	case p.stop == stopTimedOut && !p.state.Success():
		res.Run.Status = analysis.StatusTimedOut
		res.Run.Detail = withStderr(fmt.Sprintf("killed after the %v time limit", spec.Timeout), tail, cut)
		return res, nil
	case !p.state.Success():
		res.Run.Status = analysis.StatusCrashed
		res.Run.Detail = withStderr(p.state.String(), tail, cut)
		return res, nil
	}

	if _, err := stdout.Seek(0, 0); err != nil {
		return Result{}, fmt.Errorf("run %s: rewind stdout: %w", name, err)
	}
	var out output
	if spec.Reader != nil {
		out, err = readOther(spec.Reader, stdout, stderr, spec.Dir, started)
	} else {
		out, err = parseOutput(stdout)
	}
	if err != nil {
		return Result{}, fmt.Errorf("run %s: %w", name, err)
	}
	res.Config = out.config
	res.lines = out.lines
	if len(out.samples) == 0 {
		res.Run.Status = analysis.StatusNoOutput
		res.Run.Detail = "exit status 0 but no benchmark line on stdout"
		if out.readerErr != "" {
			res.Run.Detail = "exit status 0 but " + out.readerErr
		}
		if len(out.syntaxErrors) > 0 {
			res.Run.Detail = "exit status 0 but no parsable benchmark line on stdout:\n" + strings.Join(out.syntaxErrors, "\n")
		}
		res.Warnings = append(res.Warnings, out.warnings...)
		return res, nil
	}
	res.Run.Status = analysis.StatusOK
	if spec.Name != "" {
		for i := range p.samples {
			// Keep a GPU's "/gpu=N" suffix.
			rest := strings.TrimPrefix(p.samples[i].Benchmark, ProcessBenchmark)
			p.samples[i].Benchmark = ProcessBenchmark + "/benchmark=" + spec.Name + rest
		}
	}
	res.Run.Samples = append(out.samples, p.samples...)
	res.Run.Spans = out.spans
	res.Warnings = append(append(out.syntaxErrors, out.warnings...), res.Warnings...)
	limit := cmp.Or(spec.MaxProfileBytes, DefaultMaxProfileBytes)
	for _, w := range wanted {
		data, warning := readProfile(w, limit)
		if warning != "" {
			res.Warnings = append(res.Warnings, warning)
		} else {
			res.Run.Profiles = append(res.Run.Profiles, analysis.Profile{Benchmark: spec.Name, Kind: w.kind, Data: data})
		}
	}
	return res, nil
}

// A wantedProfile is a profile a run asks its benchmark for.
type wantedProfile struct {
	kind, what string // analysis.Profile's Kind; "CPU profile"
	flag, path string // given to the benchmark
}

// readProfile reads the profile a benchmark wrote to w.path, given to it
// after w.flag. A file that is missing, empty or larger than limit gives
// no data but a warning that says why and what to check.
func readProfile(w wantedProfile, limit int64) (data []byte, warning string) {
	f, err := os.Open(w.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Sprintf("no %s: the benchmark wrote no file at the path perfbot gave after %s; "+
			"check that the program takes %s FILE and writes the profile there before it exits", w.what, w.flag, w.flag)
	}
	if err != nil {
		return nil, fmt.Sprintf("no %s: %v", w.what, err)
	}
	defer f.Close()
	// Read one byte past the limit rather than trust a size read first.
	data, err = io.ReadAll(io.LimitReader(f, limit+1))
	switch {
	case err != nil:
		return nil, fmt.Sprintf("no %s: read %s: %v", w.what, w.path, err)
	case len(data) == 0:
		hint := "check that it stops profiling (pprof.StopCPUProfile) before it exits"
		if w.kind == analysis.ProfileMem {
			hint = "check that it writes the profile (pprof.Lookup(\"allocs\").WriteTo) before it exits"
		}
		return nil, fmt.Sprintf("no %s: the file the benchmark got after %s is empty; %s", w.what, w.flag, hint)
	case int64(len(data)) > limit:
		size := "larger"
		if fi, err := f.Stat(); err == nil {
			size = fmt.Sprintf("%d bytes", fi.Size())
		}
		return nil, fmt.Sprintf("%s not stored: it is %s, over the limit of %d bytes; profile a shorter run", capitalize(w.what), size, limit)
	}
	return data, ""
}

// capitalize returns s with its first letter in upper case.
func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// A stopReason says why the watcher of a process stopped.
type stopReason int

const (
	stopExited   stopReason = iota // the process exited by itself
	stopTimedOut                   // the watcher killed it at the time limit
	stopCanceled                   // the watcher killed it when ctx ended
)

// process is what runLocked saw of one benchmark process.
type process struct {
	state       *os.ProcessState
	wall        time.Duration
	stop        stopReason
	samples     []analysis.Sample // process samples
	warnings    []string
	unavailable map[string]string
	err         error
	// startErr is why the program could not be started (exec failed):
	// the commit's fault, not perfbot's.
	startErr error
}

// notStarted is the Result of a program that could not be started (not
// found, not executable, not a program): a crashed run, since it is the
// commit's doing (its config names the command, its build makes it),
// with the reason and what to check.
func notStarted(err error) Result {
	return Result{Run: analysis.Run{Status: analysis.StatusCrashed,
		Detail: fmt.Sprintf("could not start: %v (check the benchmark's command in .perfbot.yml, and that the build makes it)", err)}}
}

// runLocked starts cmd and waits for it on one locked OS thread, so the
// perf events opened on that thread and its CPU affinity pass to the
// process tree. It never unlocks the thread: when the goroutine returns,
// the runtime ends the thread, so a thread with a changed affinity is never
// handed to other goroutines. gpus samples the GPUs from just before the
// start until the exit, on goroutines of their own.
func runLocked(ctx context.Context, cmd *exec.Cmd, limit time.Duration, cpuList []int, cpus unix.CPUSet, gpus sampler) (p process) {
	runtime.LockOSThread()
	if len(cpuList) > 0 {
		if err := pinThread(cpuList, cpus); err != nil {
			p.err = err
			return p
		}
	}
	// Start the GPU sampling first: waiting for NVML to initialize must
	// count neither in the counters nor in perfbot's peak RSS before the
	// run (NVML's library grows it).
	gpu := gpus.start()
	ctrs := openCounters()
	defer ctrs.close()
	ctrs.start()
	resetOwnPeakRSS()
	ownBefore, ownErr := ownPeakRSS()

	start := time.Now()
	if err := cmd.Start(); err != nil {
		gpu.stop()
		// exec failing is the program's doing (the working directory
		// was checked before); any other failure to start is perfbot's.
		if pe, ok := errors.AsType[*fs.PathError](err); ok && pe.Op == "fork/exec" {
			p.startErr = err
		} else {
			p.err = err
		}
		return p
	}
	pid := cmd.Process.Pid
	exited := make(chan struct{})
	stopped := make(chan stopReason, 1)
	go watch(ctx, limit, pid, exited, stopped)
	waitErr := cmd.Wait()
	p.wall = time.Since(start)
	close(exited)
	p.stop = <-stopped
	ctrs.stop()
	gpuSamples, gpuWarnings, gpuUnavailable := gpu.stop()

	if cmd.ProcessState == nil {
		p.err = fmt.Errorf("wait: %w", waitErr)
		return p
	}
	p.state = cmd.ProcessState
	// Processes the benchmark left behind would run on into the next
	// run: they are killed, and the run ends once they are gone.
	if found, left := killGroup(pid); len(left) > 0 {
		p.warnings = append(p.warnings, fmt.Sprintf("processes the benchmark left in its process group still ran %v after SIGKILL: pids %v", groupGrace, left))
	} else if found {
		p.warnings = append(p.warnings, "killed processes the benchmark left running in its process group")
	}

	samples, warnings := ctrs.read()
	p.samples = samples
	p.warnings = append(p.warnings, warnings...)
	p.samples = append(p.samples, analysis.Sample{
		Key:   analysis.Key{Benchmark: ProcessBenchmark, Unit: "wall-sec/run"},
		Value: p.wall.Seconds(),
	})
	if ru, ok := p.state.SysUsage().(*syscall.Rusage); ok {
		ownAfter, err := ownPeakRSS()
		// Linux reports ru_maxrss in KiB.
		rss, why := peakRSS(uint64(ru.Maxrss)<<10, ownBefore, ownAfter, errors.Join(ownErr, err))
		if why == "" {
			p.samples = append(p.samples, analysis.Sample{
				Key:   analysis.Key{Benchmark: ProcessBenchmark, Unit: "peak-rss-B/run"},
				Value: float64(rss),
			})
		} else {
			ctrs.unavailable["peak-rss"] = why
		}
	} else {
		ctrs.unavailable["peak-rss"] = "no rusage from wait"
	}
	p.samples = append(p.samples, gpuSamples...)
	p.warnings = append(p.warnings, gpuWarnings...)
	for k, v := range gpuUnavailable {
		ctrs.unavailable[k] = v
	}
	p.unavailable = ctrs.unavailable
	return p
}

// watch kills the process group pid when limit passes or ctx ends before
// exited is closed, and then reports why it stopped.
func watch(ctx context.Context, limit time.Duration, pid int, exited <-chan struct{}, stopped chan<- stopReason) {
	var expired <-chan time.Time
	if limit > 0 {
		t := time.NewTimer(limit)
		defer t.Stop()
		expired = t.C
	}
	why := stopExited
	select {
	case <-exited:
	case <-expired:
		why = stopTimedOut
	case <-ctx.Done():
		why = stopCanceled
	}
	if why != stopExited {
		_ = syscall.Kill(-pid, syscall.SIGKILL) // ESRCH: it has just exited
	}
	stopped <- why
}

// cpuSet validates cpus and returns them as a set.
func cpuSet(cpus []int) (unix.CPUSet, error) {
	var set unix.CPUSet
	limit := len(set) * 64
	for _, c := range cpus {
		if c < 0 || c >= limit {
			return set, fmt.Errorf("CPU %d out of range [0, %d)", c, limit)
		}
		set.Set(c)
	}
	return set, nil
}

// pinThread sets the calling thread's affinity to cpus and checks that
// the kernel kept all of them.
func pinThread(list []int, cpus unix.CPUSet) error {
	if err := unix.SchedSetaffinity(0, &cpus); err != nil {
		return fmt.Errorf("set CPU affinity %v: %w", list, err)
	}
	var got unix.CPUSet
	if err := unix.SchedGetaffinity(0, &got); err != nil {
		return fmt.Errorf("get CPU affinity: %w", err)
	}
	if got != cpus {
		return fmt.Errorf("set CPU affinity %v: the kernel allowed only %v", list, cpuList(got))
	}
	return nil
}

// cpuList lists the CPUs in set in increasing order.
func cpuList(set unix.CPUSet) []int {
	var list []int
	for c := range len(set) * 64 {
		if set.IsSet(c) {
			list = append(list, c)
		}
	}
	return list
}

// unlinkedTemp creates a temporary file and removes its name at once, so
// nothing is left behind whatever happens to perfbot.
func unlinkedTemp(what string) (*os.File, error) {
	f, err := os.CreateTemp("", "perfbot-"+what+"-*")
	if err != nil {
		return nil, fmt.Errorf("create %s file: %w", what, err)
	}
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return nil, fmt.Errorf("create %s file: %w", what, err)
	}
	return f, nil
}

// withStderr appends the stderr tail to a failure detail.
func withStderr(detail, tail string, cut bool) string {
	switch {
	case tail == "":
		return detail + "; stderr was empty"
	case cut:
		return detail + "\nstderr (last lines):\n" + tail
	default:
		return detail + "\nstderr:\n" + tail
	}
}
