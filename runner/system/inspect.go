package system

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// DefaultInterval is how long Inspect samples the CPU use of processes
// when Options.Interval is 0.
const DefaultInterval = time.Second

// The thresholds of the findings.
const (
	// MaxLoad1 is the highest 1-minute load average that is ok. The
	// load is the number of tasks running or waiting to run (or in
	// uninterruptible sleep), averaged; an idle runner sits near 0,
	// and above 0.5 something kept at least half a CPU busy on average
	// over the last minute. The bound does not grow with the number of
	// CPUs: one busy task can land on the CPU a benchmark runs on
	// unless benchmarks are pinned away from it.
	MaxLoad1 = 0.5
	// MaxOtherCPUPct is the most CPU, in percent of one CPU, that one
	// other process may use over the sampling interval before it is a
	// warning.
	MaxOtherCPUPct = 20.0
)

// topProcesses is how many processes a Report or Usage names (a
// variable so that tests on a busy machine can list them all).
var topProcesses = 5

// Options say what Inspect reads.
type Options struct {
	// Root is the directory below which /proc and /sys are read; "" is
	// "/". Tests point it at a fixture tree.
	Root string
	// NVML is the library asked about GPUs; nil is nvml.New(). Nothing
	// but Init is called unless Init succeeds.
	NVML nvml.Interface
	// Interval is how long the CPU use of processes is sampled; 0 is
	// DefaultInterval.
	Interval time.Duration
	// Exclude are the processes that, with their descendants, are not
	// "other" processes: perfbot itself (os.Getpid()).
	Exclude []int
	// LookPath finds the build tools (toolchain-*); nil is exec.LookPath.
	LookPath func(string) (string, error)
}

// nvmlTimeout is how long Inspect waits for NVML, which can take seconds
// on a GPU in a bad state and hang on a broken driver.
const nvmlTimeout = 20 * time.Second

// Inspect reads every source of noise it knows and returns what it found.
// It never fails: what it cannot read is a finding with status Unknown
// that says why. It takes about opts.Interval, unless ctx ends first;
// NVML is asked in parallel with the sampling.
func Inspect(ctx context.Context, opts Options) Report {
	in := inspector{
		fs:   fsys{root: cmp.Or(opts.Root, "/")},
		euid: os.Geteuid(),
	}
	interval := opts.Interval
	if interval <= 0 {
		interval = DefaultInterval
	}
	lib := opts.NVML
	if lib == nil {
		lib = nvml.New()
	}

	r := Report{Time: time.Now().UTC()}
	before, snapErr := in.fs.snapshot()
	begun := time.Now()
	exclude := slices.Clone(opts.Exclude)
	gpuc := make(chan nvmlResult, 1)
	go func() {
		// A process on a GPU is ours if it is excluded or descends from
		// one that is, by what /proc says when NVML has listed them.
		var ours func(int) bool
		gpuc <- inspectNVML(lib, in.fs, func(pid int) bool {
			if ours == nil {
				now, _ := in.fs.snapshot()
				ours = inTree(exclude, before, now)
			}
			return ours(pid)
		})
	}()

	r.Hostname, _ = os.Hostname()
	r.Kernel, _ = in.fs.read("/proc/sys/kernel/osrelease")
	cpus := in.onlineCPUs()
	r.CPUs = len(cpus)
	r.Findings = append(r.Findings,
		in.governor(cpus),
		in.boost(),
		in.smt(),
		in.isolated(cpus),
		in.aslr(),
		in.load(r.CPUs),
	)
	busyAt := len(r.Findings)
	r.Findings = append(r.Findings,
		Finding{}, // busy-processes, once sampled
		in.perfParanoid(),
		in.swap(),
		in.thp("thp", "enabled"),
		in.thp("thp-defrag", "defrag"),
	)
	lookPath := opts.LookPath
	if lookPath == nil {
		lookPath = exec.LookPath
	}
	r.Findings = append(r.Findings, toolchain(ctx, in.fs.root, lookPath)...)

	var busy Finding
	t := time.NewTimer(time.Until(begun.Add(interval)))
	select {
	case <-t.C:
		after, err := in.fs.snapshot()
		r.Interval = time.Since(begun).Round(time.Millisecond)
		busy, r.Processes = in.busy(before, after, cmp.Or(snapErr, err), r.Interval, exclude)
	case <-ctx.Done():
		t.Stop()
		busy = Finding{Name: "busy-processes", Status: Unknown, Source: "/proc/[pid]/stat",
			State: "not sampled: " + context.Cause(ctx).Error()}
	}
	r.Findings[busyAt] = busy

	nt := time.NewTimer(nvmlTimeout)
	defer nt.Stop()
	select {
	case g := <-gpuc:
		r.NVML, r.GPUs = g.nvml, g.gpus
	case <-nt.C:
		r.NVML = Finding{Name: "nvml", Status: Unknown, Source: "nvml",
			State: fmt.Sprintf("nvml did not answer within %v", nvmlTimeout)}
	case <-ctx.Done():
		r.NVML = Finding{Name: "nvml", Status: Unknown, Source: "nvml", State: "nvml: " + context.Cause(ctx).Error()}
	}
	if r.Processes == nil {
		r.Processes = []Process{}
	}
	if r.GPUs == nil {
		r.GPUs = []GPU{}
	}
	return r
}

// An inspector reads the findings of one machine.
type inspector struct {
	fs   fsys
	euid int // perfbot's effective user: 0 opens every perf counter
}

func unknown(name, source string, err error) Finding {
	return Finding{Name: name, State: err.Error(), Status: Unknown, Source: source}
}

// onlineCPUs returns the online CPUs: /sys/devices/system/cpu/online, or
// else the cpuN directories there, or else as many as Go sees.
func (in inspector) onlineCPUs() []int {
	if s, err := in.fs.read("/sys/devices/system/cpu/online"); err == nil {
		if cpus, err := parseCPUList(s); err == nil && len(cpus) > 0 {
			return cpus
		}
	}
	var cpus []int
	entries, _ := os.ReadDir(in.fs.path("/sys/devices/system/cpu"))
	for _, e := range entries {
		if n, ok := strings.CutPrefix(e.Name(), "cpu"); ok {
			if c, err := strconv.Atoi(n); err == nil {
				cpus = append(cpus, c)
			}
		}
	}
	if len(cpus) == 0 {
		for c := range runtime.NumCPU() {
			cpus = append(cpus, c)
		}
	}
	slices.Sort(cpus)
	return cpus
}

// governor reads the cpufreq scaling governor of every online CPU:
// performance is ok, anything else a warning; no cpufreq directory (a
// virtual machine) is information.
func (in inspector) governor(cpus []int) Finding {
	const name, source = "cpu-governor", "/sys/devices/system/cpu/cpu*/cpufreq/scaling_governor"
	byGov := map[string][]int{}
	var govs []string // in order of first CPU
	var none []int
	driver := ""
	for _, c := range cpus {
		dir := fmt.Sprintf("/sys/devices/system/cpu/cpu%d/cpufreq", c)
		if !in.fs.exists(dir) {
			none = append(none, c)
			continue
		}
		g, err := in.fs.read(dir + "/scaling_governor")
		if err != nil {
			return unknown(name, source, err)
		}
		if driver == "" {
			driver, _ = in.fs.read(dir + "/scaling_driver")
		}
		if _, ok := byGov[g]; !ok {
			govs = append(govs, g)
		}
		byGov[g] = append(byGov[g], c)
	}
	if len(govs) == 0 {
		return Finding{Name: name, Status: Info, Source: "/sys/devices/system/cpu/cpu*/cpufreq",
			State: "no cpufreq: the hypervisor (or the firmware) controls frequency"}
	}
	f := Finding{Name: name, Status: OK, Source: source}
	var parts []string
	for _, g := range govs {
		parts = append(parts, fmt.Sprintf("%s on cpu %s", g, formatCPUList(byGov[g])))
		if g != "performance" {
			f.Status = Warn
		}
	}
	if len(none) > 0 {
		parts = append(parts, "no cpufreq on cpu "+formatCPUList(none))
	}
	f.State = strings.Join(parts, "; ")
	if driver != "" {
		f.State += " (" + driver + ")"
	}
	if f.Status == Warn {
		f.State += ": the clock follows the load, so a run's speed depends on what ran just before it"
		f.Advice = "echo performance | sudo tee /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor"
	}
	return f
}

// boost reads Intel's turbo switch (intel_pstate/no_turbo) and the
// generic cpufreq boost switch (acpi-cpufreq, amd-pstate): either on is a
// warning.
func (in inspector) boost() Finding {
	const (
		noTurbo = "/sys/devices/system/cpu/intel_pstate/no_turbo"
		boost   = "/sys/devices/system/cpu/cpufreq/boost"
	)
	f := Finding{Name: "cpu-boost", Status: OK}
	var states, advice, sources []string
	for _, sw := range []struct {
		path, what, onValue, offValue, fix string
	}{
		{noTurbo, "intel_pstate turbo", "0", "1", "echo 1 | sudo tee " + noTurbo},
		{boost, "cpufreq boost", "1", "0", "echo 0 | sudo tee " + boost},
	} {
		v, err := in.fs.read(sw.path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		sources = append(sources, sw.path)
		switch {
		case err != nil:
			return unknown(f.Name, sw.path, err)
		case v == sw.onValue:
			states = append(states, sw.what+" on")
			advice = append(advice, sw.fix)
			f.Status = Warn
		case v == sw.offValue:
			states = append(states, sw.what+" off")
		default:
			return unknown(f.Name, sw.path, fmt.Errorf("%s holds %q, want 0 or 1", sw.path, v))
		}
	}
	f.Source = strings.Join(sources, ", ")
	if len(sources) == 0 {
		f.Status = Info
		f.Source = noTurbo + ", " + boost
		f.State = "no boost switch (neither intel_pstate/no_turbo nor cpufreq/boost): the hypervisor or the firmware decides"
		return f
	}
	f.State = strings.Join(states, ", ")
	if f.Status == Warn {
		f.State += ": the frequency varies with temperature and with the load on the other cores"
		f.Advice = strings.Join(advice, "; ")
	}
	return f
}

// smt reads whether simultaneous multithreading is active: on is
// information (a sibling's work slows a benchmark sharing its core), off
// or unsupported is ok.
func (in inspector) smt() Finding {
	const (
		active  = "/sys/devices/system/cpu/smt/active"
		control = "/sys/devices/system/cpu/smt/control"
	)
	f := Finding{Name: "smt", Source: active + ", " + control}
	a, err := in.fs.read(active)
	if errors.Is(err, fs.ErrNotExist) {
		f.Status, f.State = Info, "no SMT switch in this kernel"
		return f
	}
	if err != nil {
		return unknown(f.Name, active, err)
	}
	c, err := in.fs.read(control)
	if err != nil {
		c = "unreadable"
	}
	switch a {
	case "1":
		f.Status = Info
		f.State = fmt.Sprintf("on (control: %s): hyperthreads of one core share its execution units and caches", c)
		f.Advice = "pin benchmarks to one hyperthread per core with cpus: in .perfbot.yml " +
			"(siblings: /sys/devices/system/cpu/cpuN/topology/thread_siblings_list), or turn SMT off: echo off | sudo tee " + control
	case "0":
		f.Status = OK
		f.State = fmt.Sprintf("off (control: %s)", c)
	default:
		return unknown(f.Name, active, fmt.Errorf("%s holds %q, want 0 or 1", active, a))
	}
	return f
}

var isolcpusRE = regexp.MustCompile(`(?:^|\s)(isolcpus|nohz_full)=(\S+)`)

// isolated reads which CPUs the scheduler keeps other tasks off
// (isolcpus=) and which run without the timer tick (nohz_full=). None is
// information: isolating CPUs and pinning benchmarks to them is the
// strongest protection from other work.
func (in inspector) isolated(cpus []int) Finding {
	const (
		isolatedPath = "/sys/devices/system/cpu/isolated"
		nohzPath     = "/sys/devices/system/cpu/nohz_full"
		cmdlinePath  = "/proc/cmdline"
	)
	f := Finding{Name: "isolated-cpus", Source: strings.Join([]string{isolatedPath, nohzPath, cmdlinePath}, ", ")}
	list := func(p string) ([]int, error) {
		s, err := in.fs.read(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil // an older kernel, or no nohz_full support
		}
		if err != nil {
			return nil, err
		}
		return parseCPUList(s)
	}
	iso, err := list(isolatedPath)
	if err != nil {
		return unknown(f.Name, isolatedPath, err)
	}
	nohz, err := list(nohzPath)
	if err != nil {
		return unknown(f.Name, nohzPath, err)
	}
	cmdline, err := in.fs.read(cmdlinePath)
	if err != nil {
		return unknown(f.Name, cmdlinePath, err)
	}
	var params []string
	for _, m := range isolcpusRE.FindAllStringSubmatch(cmdline, -1) {
		params = append(params, m[1]+"="+m[2])
	}

	if len(iso) == 0 && len(nohz) == 0 {
		f.Status = Info
		f.State = "none: no isolcpus= or nohz_full= on the kernel command line"
		if len(params) > 0 {
			f.State = "none isolated, though the kernel command line has " + strings.Join(params, " ")
		}
		if len(cpus) > 1 {
			rest := formatCPUList(cpus[1:])
			f.Advice = fmt.Sprintf("boot with isolcpus=%s nohz_full=%s on the kernel command line (leaving cpu %d to the system) "+
				"and pin benchmarks to them with cpus: %s in .perfbot.yml", rest, rest, cpus[0], rest)
		}
		return f
	}
	f.Status = OK
	var parts []string
	if len(iso) > 0 {
		parts = append(parts, "isolated cpu "+formatCPUList(iso))
	}
	if len(nohz) > 0 {
		parts = append(parts, "nohz_full cpu "+formatCPUList(nohz))
	}
	if len(params) > 0 {
		parts = append(parts, "kernel command line "+strings.Join(params, " "))
	}
	f.State = strings.Join(parts, "; ")
	pin := iso
	if len(pin) == 0 {
		pin = nohz
	}
	f.Advice = fmt.Sprintf("pin benchmarks to them with cpus: %s in .perfbot.yml", formatCPUList(pin))
	return f
}

// aslr reads address space layout randomization. pyperf counts the
// memory layout as a source of noise between runs and its tune command
// turns full randomization on: every run is a new process, so the
// layouts vary and average out over the runs instead of one fixed layout
// (a lucky or unlucky alignment) biasing a whole side of a comparison.
// perfbot agrees: 2 is ok, 0 and 1 are warnings.
func (in inspector) aslr() Finding {
	const name, path = "aslr", "/proc/sys/kernel/randomize_va_space"
	v, err := in.fs.readInt(path)
	if err != nil {
		return unknown(name, path, err)
	}
	f := Finding{Name: name, Source: path, Advice: "echo 2 | sudo tee " + path}
	switch v {
	case 2:
		f.Status, f.State, f.Advice = OK, "2: full randomization: the memory layout varies from run to run and averages out over the runs", ""
	case 1:
		f.Status, f.State = Warn, "1: conservative randomization (no heap randomization): part of the layout is the same in every run of a binary, so an alignment effect biases one side of a comparison"
	case 0:
		f.Status, f.State = Warn, "0: no randomization: every run of a binary has the same layout, so an alignment effect biases one side of a comparison"
	default:
		return unknown(name, path, fmt.Errorf("%s holds %d, want 0, 1 or 2", path, v))
	}
	return f
}

// load reads the load averages: a 1-minute load above MaxLoad1 is a
// warning.
func (in inspector) load(ncpu int) Finding {
	const name, path = "load", "/proc/loadavg"
	s, err := in.fs.read(path)
	if err != nil {
		return unknown(name, path, err)
	}
	fields := strings.Fields(s)
	var avg [3]float64
	if len(fields) < 3 {
		return unknown(name, path, fmt.Errorf("%s holds %q, want three load averages", path, s))
	}
	for i := range avg {
		if avg[i], err = strconv.ParseFloat(fields[i], 64); err != nil {
			return unknown(name, path, fmt.Errorf("%s holds %q, want three load averages", path, s))
		}
	}
	f := Finding{Name: name, Status: OK, Source: path,
		State: fmt.Sprintf("%.2f %.2f %.2f (1, 5, 15 min) on %d CPUs", avg[0], avg[1], avg[2], ncpu)}
	if avg[0] > MaxLoad1 {
		f.Status = Warn
		f.State += fmt.Sprintf(": above %.1f, something kept CPUs busy over the last minute", MaxLoad1)
		f.Advice = "wait until the machine is idle, or stop what runs (see the busiest processes)"
	}
	return f
}

// busy turns two process snapshots into the busy-processes finding and
// the busiest other processes.
func (in inspector) busy(before, after procSnapshot, err error, wall time.Duration, exclude []int) (Finding, []Process) {
	const name, source = "busy-processes", "/proc/[pid]/stat"
	if err != nil {
		return unknown(name, source, err), nil
	}
	ps := in.fs.top(cpuUse(before, after, wall, inTree(exclude, before, after)), topProcesses)
	f := Finding{Name: name, Status: OK, Source: source}
	var over []string
	for _, p := range ps {
		if p.CPUPct > MaxOtherCPUPct {
			over = append(over, fmt.Sprintf("%d %s %.0f%%", p.PID, p.Comm, p.CPUPct))
		}
	}
	wallText := wall.Round(10 * time.Millisecond).String()
	switch {
	case len(over) > 0:
		f.Status = Warn
		f.State = fmt.Sprintf("%s used more than %.0f%% of a CPU over %s", strings.Join(over, ", "), MaxOtherCPUPct, wallText)
		f.Advice = "stop them, or pin benchmarks to other CPUs with cpus: in .perfbot.yml"
	case len(ps) > 0:
		f.State = fmt.Sprintf("none used more than %.0f%% of a CPU over %s (the busiest: %d %s %.0f%%)",
			MaxOtherCPUPct, wallText, ps[0].PID, ps[0].Comm, ps[0].CPUPct)
	default:
		f.State = fmt.Sprintf("no other process used CPU over %s", wallText)
	}
	return f, ps
}

// perfParanoid reads which perf events an unprivileged process may open.
// -1, 0 and 1 open everything perfbot counts; 2 (the kernel's default)
// counts user space only, which is information; above 2 (Debian's and
// Android's patch) nothing opens, a warning, since perfbot then explains
// changes without counters. Root opens everything whatever it says.
func (in inspector) perfParanoid() Finding {
	const name, path = "perf-event-paranoid", "/proc/sys/kernel/perf_event_paranoid"
	v, err := in.fs.readInt(path)
	if err != nil {
		return unknown(name, path, err)
	}
	f := Finding{Name: name, Source: path}
	fix := "echo 1 | sudo tee " + path
	switch {
	case v <= -1:
		f.Status, f.State = OK, fmt.Sprintf("%d: an unprivileged process opens every counter: kernel and user, hardware too, and CPU-wide events", v)
	case v <= 1:
		f.Status, f.State = OK, fmt.Sprintf("%d: an unprivileged process opens kernel and user counters, hardware too", v)
	case v == 2:
		f.Status, f.State, f.Advice = Info, "2: an unprivileged process counts user space only, not kernel time", fix
	default:
		f.Status, f.State, f.Advice = Warn, fmt.Sprintf("%d: an unprivileged process opens no perf counter (a distribution's patch)", v), fix
	}
	if in.euid == 0 && v > 1 {
		f.Status, f.Advice = OK, ""
		f.State += "; perfbot runs as root, which opens every counter"
	}
	return f
}

// swap reads whether swap is configured and in use: swap in use is a
// warning, since a run that touches a swapped-out page waits for the
// disk.
func (in inspector) swap() Finding {
	const name, meminfo, vmstat = "swap", "/proc/meminfo", "/proc/vmstat"
	f := Finding{Name: name, Source: meminfo + ", " + vmstat}
	m, err := in.fs.readKeyed(meminfo, "SwapTotal", "SwapFree")
	if err != nil {
		return unknown(name, meminfo, err)
	}
	v, err := in.fs.readKeyed(vmstat, "pswpin", "pswpout")
	if err != nil {
		return unknown(name, vmstat, err)
	}
	total, free := m["SwapTotal"], m["SwapFree"]
	used := total - min(free, total)
	since := fmt.Sprintf("%d pages swapped in and %d out since boot", v["pswpin"], v["pswpout"])
	switch {
	case total == 0:
		f.Status, f.State = OK, "no swap configured"
		if v["pswpin"]+v["pswpout"] > 0 {
			f.State += "; " + since
		}
	case used > 0:
		f.Status = Warn
		f.State = fmt.Sprintf("%s of %s in use; %s", mib(used), mib(total), since)
		f.Advice = "free memory, or turn swap off: sudo swapoff -a"
	default:
		f.Status = OK
		f.State = fmt.Sprintf("%s configured, none in use; %s", mib(total), since)
	}
	return f
}

// mib formats a /proc/meminfo size (kB, which are KiB).
func mib(kib uint64) string { return fmt.Sprintf("%.1f MiB", float64(kib)/1024) }

// thp reads one transparent huge page setting (file "enabled" or
// "defrag"). enabled=always is a warning: khugepaged scans and collapses
// the pages of every process in the background, and faults may compact
// memory. defrag=always is one too: a fault that finds no huge page
// stalls to compact memory. madvise, defer and never are ok.
func (in inspector) thp(name, file string) Finding {
	dir := "/sys/kernel/mm/transparent_hugepage"
	path := dir + "/" + file
	s, err := in.fs.read(path)
	if errors.Is(err, fs.ErrNotExist) && !in.fs.exists(dir) {
		return Finding{Name: name, Status: Info, Source: dir, State: "no transparent huge pages in this kernel"}
	}
	if err != nil {
		return unknown(name, path, err)
	}
	_, rest, ok1 := strings.Cut(s, "[")
	mode, _, ok2 := strings.Cut(rest, "]")
	if !ok1 || !ok2 || mode == "" {
		return unknown(name, path, fmt.Errorf("%s holds %q, want the mode in brackets", path, s))
	}
	f := Finding{Name: name, Status: OK, Source: path, State: mode}
	if mode == "always" {
		f.Status = Warn
		if file == "enabled" {
			f.State += ": khugepaged collapses every process's pages in the background and faults may compact memory, adding latency at random"
		} else {
			f.State += ": a page fault that finds no free huge page stalls to compact memory"
		}
		f.Advice = "echo madvise | sudo tee " + path
	}
	return f
}
