package execute

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"golang.org/x/sys/unix"

	"github.com/perfbot/perfbot/analysis"
)

// The resident protocol keeps one benchmark process alive across many
// runs, so that what it does once (load keys, open the GPU, warm up) is
// not paid by every run. It is lines of text:
//
//	perfbot                        the program (started with PERFBOT_RESIDENT=1)
//	                               prepares: keys, device, warm-ups
//	                         <-    #perfbot ready
//	run                      ->
//	                         <-    the run's results, as a one-shot process
//	                               prints them (Go benchmark format)
//	                         <-    #perfbot done
//	run cpuprofile=PATH      ->    (a CPU profile of this run only, to PATH)
//	                         <-    …
//	                         <-    #perfbot failed REASON   (a run that failed;
//	                               the process serves the next one)
//	stdin closed             ->    exits with status 0
//
// Lines before "#perfbot ready" are ignored; any other line that begins
// "#perfbot " breaks the protocol. A process that exits, breaks the
// protocol or does not answer within the run's time limit fails that run
// (crashed or timed-out, with the reason and its stderr) and is not used
// again: the next run starts a new one. docs/resident.md has the whole
// contract.
const (
	// ResidentEnv is set to "1" in a resident benchmark's environment.
	ResidentEnv = "PERFBOT_RESIDENT"

	// ResidentReady, ResidentDone and ResidentFailed are the program's
	// protocol lines: ready to serve, a run's results are complete, and
	// (followed by a space and the reason) a run failed.
	ResidentReady  = residentPrefix + "ready"
	ResidentDone   = residentPrefix + "done"
	ResidentFailed = residentPrefix + "failed"

	residentPrefix = "#perfbot "
)

// maxResidentLine bounds one line of a resident process's stdout.
const maxResidentLine = 1 << 20

// A Resident is a benchmark process serving runs through the resident
// protocol. Its methods are not safe for concurrent use.
type Resident struct {
	spec   Spec
	name   string
	lib    nvml.Interface
	pid    int
	stdin  *os.File    // the write end of the process's stdin
	lines  chan string // stdout, line by line; closed at EOF
	stderr *os.File    // an unlinked temporary file
	exited chan struct{}
	state  *os.ProcessState // set when exited is closed
	broken string           // why the process cannot serve another run; "" while it can
}

// StartResident starts the benchmark process spec describes and waits for
// it to say "#perfbot ready", at most spec.Timeout. The process is pinned
// to spec.CPUs and gets spec.Env, as Run's would, and ResidentEnv=1. It
// returns the Resident, or a failed Result saying why the process cannot
// serve (it exited, broke the protocol, or was not ready in time), or an
// error when perfbot itself could not start it. A resident benchmark's
// results are Go benchmark format: spec.Reader must be nil, and so must
// spec.MemProfileFlag (a heap profile covers the whole process).
func StartResident(ctx context.Context, spec Spec) (*Resident, Result, error) {
	return startResident(ctx, spec, nvml.New())
}

func startResident(ctx context.Context, spec Spec, lib nvml.Interface) (*Resident, Result, error) {
	if len(spec.Args) == 0 {
		return nil, Result{}, errors.New("start resident benchmark: empty command line")
	}
	name := filepath.Base(spec.Args[0])
	switch {
	case spec.Reader != nil:
		return nil, Result{}, fmt.Errorf("start %s: a resident benchmark prints Go benchmark format; it cannot have a reader", name)
	case spec.MemProfileFlag != "":
		return nil, Result{}, fmt.Errorf("start %s: a resident benchmark cannot write heap profiles (they cover the whole process)", name)
	case spec.CPUProfileFlag != "" && spec.Name == "":
		return nil, Result{}, fmt.Errorf("start %s: a profile needs the benchmark's Name, which names the profile", name)
	case spec.TelemetryInterval < 0 || spec.TelemetryInterval > 0 && spec.TelemetryInterval < time.Millisecond:
		return nil, Result{}, fmt.Errorf("start %s: telemetry interval %v: must be at least 1ms, or 0 for the default", name, spec.TelemetryInterval)
	}
	env, err := childEnv(append(spec.Env, ResidentEnv+"=1"))
	if err != nil {
		return nil, Result{}, fmt.Errorf("start %s: %w", name, err)
	}
	if spec.Dir != "" {
		if fi, err := os.Stat(spec.Dir); err != nil || !fi.IsDir() {
			return nil, Result{}, fmt.Errorf("start %s: working directory %s is not a directory (%v)", name, spec.Dir, err)
		}
	}
	path, err := lookPath(spec.Args[0], env)
	if err != nil {
		return nil, notStarted(err), nil
	}
	var cpus unix.CPUSet
	if len(spec.CPUs) > 0 {
		if cpus, err = cpuSet(spec.CPUs); err != nil {
			return nil, Result{}, fmt.Errorf("start %s: %w", name, err)
		}
	}
	stderr, err := unlinkedTemp("stderr")
	if err != nil {
		return nil, Result{}, fmt.Errorf("start %s: %w", name, err)
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		stderr.Close()
		return nil, Result{}, fmt.Errorf("start %s: %w", name, err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		stderr.Close()
		inR.Close()
		inW.Close()
		return nil, Result{}, fmt.Errorf("start %s: %w", name, err)
	}
	cmd := &exec.Cmd{
		Path: path, Args: spec.Args, Dir: spec.Dir, Env: env,
		Stdin: inR, Stdout: outW, Stderr: stderr,
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL},
	}
	r := &Resident{spec: spec, name: name, lib: lib, stdin: inW, lines: make(chan string, 256), stderr: stderr, exited: make(chan struct{})}
	started := make(chan error, 1)
	// The process is started and waited for on one locked OS thread: its
	// CPU affinity passes to the process, and Pdeathsig follows that
	// thread, which must live as long as the process does. The goroutine
	// never unlocks it, so the thread ends with the goroutine.
	go func() {
		runtime.LockOSThread()
		if len(spec.CPUs) > 0 {
			if err := pinThread(spec.CPUs, cpus); err != nil {
				started <- err
				return
			}
		}
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		_ = cmd.Wait()
		r.state = cmd.ProcessState
		// What the program left running in its group goes with it,
		// before the process counts as exited.
		killGroup(cmd.Process.Pid)
		close(r.exited)
	}()
	err = <-started
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		stderr.Close()
		if pe, ok := errors.AsType[*os.PathError](err); ok && pe.Op == "fork/exec" {
			return nil, notStarted(err), nil
		}
		return nil, Result{}, fmt.Errorf("start %s: %w", name, err)
	}
	r.pid = cmd.Process.Pid
	go func() {
		defer close(r.lines)
		defer outR.Close()
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 64<<10), maxResidentLine)
		for sc.Scan() {
			r.lines <- sc.Text()
		}
		if err := sc.Err(); err != nil {
			r.lines <- residentPrefix + "stdout unreadable: " + err.Error()
		}
	}()

	timer := limitTimer(spec.Timeout)
	defer timer.Stop()
	for {
		select {
		case line, ok := <-r.lines:
			switch {
			case !ok:
				return nil, r.fail(analysis.StatusCrashed, "exited before it said \"#perfbot ready\": its benchmark has resident: true, "+
					"but does the program implement the resident protocol (docs/resident.md)?"), nil
			case line == ResidentReady:
				return r, Result{}, nil
			case strings.HasPrefix(line, residentPrefix):
				return nil, r.fail(analysis.StatusCrashed, fmt.Sprintf("broke the resident protocol: %q before \"#perfbot ready\"", line)), nil
			}
		case <-timer.C:
			return nil, r.fail(analysis.StatusTimedOut, fmt.Sprintf("did not say \"#perfbot ready\" within the %v time limit", spec.Timeout)), nil
		case <-ctx.Done():
			r.kill()
			r.release()
			return nil, Result{}, fmt.Errorf("start %s: %w", name, context.Cause(ctx))
		}
	}
}

// Run has the process make one run and returns its Result as Run would a
// one-shot process's: the benchmark lines it printed between the request
// and "#perfbot done" and, as process samples, the run's wall time
// (wall-sec/run), the CPU time of the process's threads in that time
// (cpu-sec/run, from /proc at 10 ms resolution) and the GPU telemetry of
// that time. perf counters and peak RSS count whole processes, so a
// resident run has none (Result.Unavailable says so). After a run that
// did not end with "#perfbot done" or "#perfbot failed" the process is
// stopped, and Broken says why; Run must not be called again.
func (r *Resident) Run(ctx context.Context) (Result, error) {
	if r.broken != "" {
		return Result{}, fmt.Errorf("run %s: the resident process cannot serve: %s", r.name, r.broken)
	}
	request := "run"
	var wanted []wantedProfile
	if r.spec.CPUProfileFlag != "" {
		dir, err := os.MkdirTemp("", "perfbot-profile-*")
		if err != nil {
			return Result{}, fmt.Errorf("run %s: create profile directory: %w", r.name, err)
		}
		defer os.RemoveAll(dir)
		w := wantedProfile{analysis.ProfileCPU, "CPU profile", r.spec.CPUProfileFlag, filepath.Join(dir, "cpu.pprof")}
		request += " cpuprofile=" + w.path
		wanted = append(wanted, w)
	}
	gpus := sampler{lib: r.lib, interval: r.spec.telemetryInterval(), vis: visibilityFromEnv()}
	g := gpus.start()
	cpu0, cpuErr := procCPU(r.pid)
	start := time.Now()
	var (
		body   strings.Builder
		status analysis.Status
		detail string
	)
	if _, err := io.WriteString(r.stdin, request+"\n"); err != nil {
		r.broken = fmt.Sprintf("could not be asked for a run (%v): it closed its stdin or exited", err)
		status, detail = analysis.StatusCrashed, r.broken
	} else {
		status, detail = r.collect(ctx, &body)
	}
	wall := time.Since(start)
	cpu1, err := procCPU(r.pid)
	cpuErr = errors.Join(cpuErr, err)
	gpuSamples, gpuWarnings, gpuUnavailable := g.stop()
	if status == "" && ctx.Err() != nil {
		r.kill()
		r.release()
		return Result{}, fmt.Errorf("run %s: %w", r.name, context.Cause(ctx))
	}

	res := Result{Wall: wall, Warnings: gpuWarnings, Unavailable: map[string]string{
		"perf-counters": "a resident process's perf counters count its whole life, not one run: the program's own per-phase counters remain",
		"peak-rss":      "a resident process's peak RSS covers its whole life, not one run",
	}}
	for k, v := range gpuUnavailable {
		res.Unavailable[k] = v
	}
	if status != analysis.StatusOK {
		if r.broken != "" {
			r.kill()
		}
		tail, cut, _ := readTail(r.stderr, cmp.Or(r.spec.StderrTail, DefaultStderrTail))
		if r.broken != "" {
			r.release()
		}
		res.StderrTail = tail
		res.Run.Status, res.Run.Detail = status, withStderr(detail, tail, cut)
		return res, nil
	}
	out, err := parseOutput(strings.NewReader(body.String()))
	if err != nil {
		return Result{}, fmt.Errorf("run %s: %w", r.name, err)
	}
	res.Config, res.lines = out.config, out.lines
	if len(out.samples) == 0 {
		res.Run.Status = analysis.StatusNoOutput
		res.Run.Detail = "said \"#perfbot done\" but printed no benchmark line for the run"
		if len(out.syntaxErrors) > 0 {
			res.Run.Detail = "said \"#perfbot done\" but printed no parsable benchmark line:\n" + strings.Join(out.syntaxErrors, "\n")
		}
		res.Warnings = append(res.Warnings, out.warnings...)
		return res, nil
	}
	process := []analysis.Sample{{Key: analysis.Key{Benchmark: ProcessBenchmark, Unit: "wall-sec/run"}, Value: wall.Seconds()}}
	if cpuErr == nil {
		process = append(process, analysis.Sample{Key: analysis.Key{Benchmark: ProcessBenchmark, Unit: "cpu-sec/run"}, Value: cpu1 - cpu0})
	} else {
		res.Unavailable["cpu-time"] = cpuErr.Error()
	}
	process = append(process, gpuSamples...)
	if r.spec.Name != "" {
		for i := range process {
			rest := strings.TrimPrefix(process[i].Benchmark, ProcessBenchmark)
			process[i].Benchmark = ProcessBenchmark + "/benchmark=" + r.spec.Name + rest
		}
	}
	res.Run.Status = analysis.StatusOK
	res.Run.Samples = append(out.samples, process...)
	res.Run.Spans = out.spans
	res.Warnings = append(append(out.syntaxErrors, out.warnings...), res.Warnings...)
	limit := cmp.Or(r.spec.MaxProfileBytes, DefaultMaxProfileBytes)
	for _, w := range wanted {
		data, warning := readProfile(w, limit)
		if warning != "" {
			res.Warnings = append(res.Warnings, warning)
		} else {
			res.Run.Profiles = append(res.Run.Profiles, analysis.Profile{Benchmark: r.spec.Name, Kind: w.kind, Data: data})
		}
	}
	return res, nil
}

// collect reads one run's output into body until "#perfbot done" (status
// ok), "#perfbot failed" (crashed, the process serves on), the process's
// end, a protocol error or the time limit (which stop it: r.broken says
// why). It returns "" when ctx ended first.
func (r *Resident) collect(ctx context.Context, body *strings.Builder) (analysis.Status, string) {
	timer := limitTimer(r.spec.Timeout)
	defer timer.Stop()
	for {
		select {
		case line, ok := <-r.lines:
			switch {
			case !ok:
				<-r.exited
				r.broken = fmt.Sprintf("exited (%s) during a run, before \"#perfbot done\"", r.state)
				return analysis.StatusCrashed, r.broken
			case line == ResidentDone:
				return analysis.StatusOK, ""
			case line == ResidentFailed || strings.HasPrefix(line, ResidentFailed+" "):
				reason := strings.TrimSpace(strings.TrimPrefix(line, ResidentFailed))
				return analysis.StatusCrashed, "the program reported that the run failed: " + cmp.Or(reason, "(no reason given)")
			case strings.HasPrefix(line, residentPrefix):
				r.broken = fmt.Sprintf("broke the resident protocol: %q during a run (want benchmark lines, then \"#perfbot done\" or \"#perfbot failed REASON\")", line)
				return analysis.StatusCrashed, r.broken
			}
			body.WriteString(line)
			body.WriteByte('\n')
		case <-timer.C:
			r.broken = fmt.Sprintf("did not say \"#perfbot done\" within the %v time limit", r.spec.Timeout)
			return analysis.StatusTimedOut, r.broken
		case <-ctx.Done():
			return "", ""
		}
	}
}

// Broken says why the process can serve no more runs; "" while it can.
func (r *Resident) Broken() string { return r.broken }

// Close ends the process: it closes its stdin, which asks it to exit,
// waits for that at most grace, then kills its process group. It returns
// a warning when the process had to be killed or did not exit with
// status 0, "" otherwise.
func (r *Resident) Close(grace time.Duration) string {
	if r.broken != "" {
		return ""
	}
	r.broken = "closed"
	r.stdin.Close()
	t := time.NewTimer(grace)
	defer t.Stop()
	warning := ""
	select {
	case <-r.exited:
		if !r.state.Success() {
			warning = fmt.Sprintf("resident %s exited with %s when asked to end", r.name, r.state)
		}
	case <-t.C:
		r.kill()
		warning = fmt.Sprintf("resident %s did not exit within %v of its stdin closing: killed", r.name, grace)
	}
	r.release()
	return warning
}

// fail stops a process that cannot serve and returns the failed Result
// of the run it was started for.
func (r *Resident) fail(status analysis.Status, why string) Result {
	r.broken = why
	r.kill()
	<-r.exited
	tail, cut, _ := readTail(r.stderr, cmp.Or(r.spec.StderrTail, DefaultStderrTail))
	r.release()
	detail := why
	if r.state != nil && status != analysis.StatusTimedOut {
		// A timed-out process was killed by perfbot: its state says
		// nothing the reason does not.
		detail = fmt.Sprintf("%s (%s)", why, r.state)
	}
	return Result{Run: analysis.Run{Status: status, Detail: withStderr(detail, tail, cut)}, StderrTail: tail}
}

// kill kills the process group and waits for the process.
func (r *Resident) kill() {
	_ = syscall.Kill(-r.pid, syscall.SIGKILL)
	<-r.exited
}

// release closes perfbot's ends of the process's files.
func (r *Resident) release() {
	r.stdin.Close()
	r.stderr.Close()
	// Drain stdout so the reading goroutine ends.
	go func() {
		for range r.lines {
		}
	}()
}

// clockTicks is the unit of /proc's CPU times (USER_HZ, 100 on Linux).
const clockTicks = 100

// procCPU returns the CPU time, user and system, of every thread of
// process pid, alive or ended, in seconds, from /proc/PID/stat.
func procCPU(pid int) (float64, error) {
	f, err := statFields(pid)
	if err != nil {
		return 0, fmt.Errorf("cpu time: %w", err)
	}
	utime, err1 := strconv.ParseUint(f[11], 10, 64) // field 14
	stime, err2 := strconv.ParseUint(f[12], 10, 64) // field 15
	if err := errors.Join(err1, err2); err != nil {
		return 0, fmt.Errorf("cpu time: /proc/%d/stat: %w", pid, err)
	}
	return float64(utime+stime) / clockTicks, nil
}

// limitTimer fires after the benchmark's time limit d, or never when it
// has none (d is 0).
func limitTimer(d time.Duration) *time.Timer {
	return time.NewTimer(cmp.Or(d, time.Duration(1<<62)))
}
