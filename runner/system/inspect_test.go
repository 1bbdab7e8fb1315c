package system

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// These tests read the real /proc and /sys of the machine they run on and
// check Inspect against their own reads of the same files.

// readFile returns a file's content without surrounding white space,
// failing the test if it cannot be read.
func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// inspectHere runs Inspect on this machine, excluding the test process.
func inspectHere(t *testing.T) Report {
	t.Helper()
	return Inspect(context.Background(), Options{Interval: 200 * time.Millisecond, Exclude: []int{os.Getpid()}})
}

func TestInspectHereHasEveryFindingInOrder(t *testing.T) {
	t.Parallel()
	r := inspectHere(t)
	var names []string
	for _, f := range r.Findings {
		names = append(names, f.Name)
		if !slices.Contains([]string{OK, Warn, Info, Unknown}, f.Status) || f.State == "" || f.Source == "" {
			t.Errorf("finding %+v: want a status, a state and a source", f)
		}
		if f.Status == Warn && f.Advice == "" {
			t.Errorf("warning %s has no advice", f.Name)
		}
	}
	want := []string{"cpu-governor", "cpu-boost", "smt", "isolated-cpus", "aslr", "load", "busy-processes",
		"perf-event-paranoid", "swap", "thp", "thp-defrag", "toolchain-go", "toolchain-make", "toolchain-nvcc"}
	if !slices.Equal(names, want) {
		t.Errorf("findings %q, want %q", names, want)
	}
	host, _ := os.Hostname()
	if r.Hostname != host || r.Kernel != readFile(t, "/proc/sys/kernel/osrelease") {
		t.Errorf("hostname %q kernel %q; want %q and /proc/sys/kernel/osrelease", r.Hostname, r.Kernel, host)
	}
	cpuinfo := strings.Count(readFile(t, "/proc/cpuinfo"), "\nprocessor") + 1
	if r.CPUs != cpuinfo {
		t.Errorf("CPUs %d, /proc/cpuinfo lists %d", r.CPUs, cpuinfo)
	}
	if r.Interval < 200*time.Millisecond || r.Interval > 2*time.Second {
		t.Errorf("interval %v, want about 200ms", r.Interval)
	}
	if r.NVML.Name != "nvml" || r.NVML.Status == "" {
		t.Errorf("nvml finding %+v", r.NVML)
	}
}

func TestInspectHereMatchesTheKernelFiles(t *testing.T) {
	t.Parallel()
	loadBefore := readFile(t, "/proc/loadavg")
	memBefore := readFile(t, "/proc/meminfo")
	r := inspectHere(t)
	loadAfter := readFile(t, "/proc/loadavg")
	memAfter := readFile(t, "/proc/meminfo")

	t.Run("aslr", func(t *testing.T) {
		v := readFile(t, "/proc/sys/kernel/randomize_va_space")
		f := finding(t, r, "aslr")
		want := map[string]string{"0": Warn, "1": Warn, "2": OK}[v]
		if f.Status != want || !strings.HasPrefix(f.State, v+": ") {
			t.Errorf("randomize_va_space %s: %s %q, want %s", v, f.Status, f.State, want)
		}
	})
	t.Run("load", func(t *testing.T) {
		// The kernel updates the load every 5 s: Inspect read one of the
		// two values read around it.
		f := finding(t, r, "load")
		ok := false
		for _, s := range []string{loadBefore, loadAfter} {
			fs := strings.Fields(s)
			l1, _ := strconv.ParseFloat(fs[0], 64)
			l5, _ := strconv.ParseFloat(fs[1], 64)
			l15, _ := strconv.ParseFloat(fs[2], 64)
			prefix := fmt.Sprintf("%.2f %.2f %.2f (1, 5, 15 min) on %d CPUs", l1, l5, l15, r.CPUs)
			want := OK
			if l1 > MaxLoad1 {
				want = Warn
			}
			ok = ok || (strings.HasPrefix(f.State, prefix) && f.Status == want)
		}
		if !ok {
			t.Errorf("load finding %s %q; /proc/loadavg read %q and %q around it", f.Status, f.State, loadBefore, loadAfter)
		}
	})
	t.Run("thp", func(t *testing.T) {
		for name, file := range map[string]string{"thp": "enabled", "thp-defrag": "defrag"} {
			s := readFile(t, "/sys/kernel/mm/transparent_hugepage/"+file)
			mode := s[strings.Index(s, "[")+1 : strings.Index(s, "]")]
			f := finding(t, r, name)
			want := OK
			if mode == "always" {
				want = Warn
			}
			if f.Status != want || !strings.HasPrefix(f.State, mode) {
				t.Errorf("%s %q: %s %q, want %s %s", file, s, f.Status, f.State, want, mode)
			}
		}
	})
	t.Run("perf-event-paranoid", func(t *testing.T) {
		v, err := strconv.Atoi(readFile(t, "/proc/sys/kernel/perf_event_paranoid"))
		if err != nil {
			t.Fatal(err)
		}
		f := finding(t, r, "perf-event-paranoid")
		want := OK
		switch {
		case os.Geteuid() == 0 || v <= 1:
		case v == 2:
			want = Info
		default:
			want = Warn
		}
		if f.Status != want || !strings.HasPrefix(f.State, fmt.Sprintf("%d: ", v)) {
			t.Errorf("perf_event_paranoid %d (euid %d): %s %q, want %s", v, os.Geteuid(), f.Status, f.State, want)
		}
	})
	t.Run("swap", func(t *testing.T) {
		f := finding(t, r, "swap")
		ok := false
		for _, s := range []string{memBefore, memAfter} {
			var total, free uint64
			sc := bufio.NewScanner(strings.NewReader(s))
			for sc.Scan() {
				fs := strings.Fields(sc.Text())
				switch fs[0] {
				case "SwapTotal:":
					total, _ = strconv.ParseUint(fs[1], 10, 64)
				case "SwapFree:":
					free, _ = strconv.ParseUint(fs[1], 10, 64)
				}
			}
			switch {
			case total == 0:
				ok = ok || (f.Status == OK && strings.HasPrefix(f.State, "no swap configured"))
			case free < total:
				ok = ok || (f.Status == Warn && strings.HasPrefix(f.State, mib(total-free)+" of "+mib(total)+" in use"))
			default:
				ok = ok || (f.Status == OK && strings.HasPrefix(f.State, mib(total)+" configured, none in use"))
			}
		}
		if !ok {
			t.Errorf("swap finding %s %q does not match /proc/meminfo", f.Status, f.State)
		}
	})
	t.Run("cpu-governor", func(t *testing.T) {
		f := finding(t, r, "cpu-governor")
		gov, err := os.ReadFile("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")
		if os.IsNotExist(err) {
			if f.Status != Info || !strings.HasPrefix(f.State, "no cpufreq") {
				t.Errorf("no cpufreq here, finding %s %q", f.Status, f.State)
			}
			return
		}
		g := strings.TrimSpace(string(gov))
		if !strings.Contains(f.State, g+" on cpu ") || (g != "performance" && f.Status != Warn) {
			t.Errorf("cpu0 governor %s, finding %s %q", g, f.Status, f.State)
		}
	})
	t.Run("smt", func(t *testing.T) {
		f := finding(t, r, "smt")
		active, err := os.ReadFile("/sys/devices/system/cpu/smt/active")
		if os.IsNotExist(err) {
			if f.Status != Info {
				t.Errorf("no smt switch here, finding %s %q", f.Status, f.State)
			}
			return
		}
		want := map[string]string{"0": "off", "1": "on"}[strings.TrimSpace(string(active))]
		if !strings.HasPrefix(f.State, want+" (control: "+readFile(t, "/sys/devices/system/cpu/smt/control")+")") {
			t.Errorf("smt active %q, finding %q", active, f.State)
		}
	})
	t.Run("isolated-cpus", func(t *testing.T) {
		f := finding(t, r, "isolated-cpus")
		iso := readFile(t, "/sys/devices/system/cpu/isolated")
		if iso == "" {
			nohz, _ := os.ReadFile("/sys/devices/system/cpu/nohz_full")
			if n := strings.TrimSpace(string(nohz)); n == "" || n == "(null)" {
				if f.Status != Info || !strings.HasPrefix(f.State, "none") {
					t.Errorf("no isolated CPUs here, finding %s %q", f.Status, f.State)
				}
			}
			return
		}
		if f.Status != OK || !strings.Contains(f.State, "isolated cpu "+iso) {
			t.Errorf("isolated %q, finding %s %q", iso, f.Status, f.State)
		}
	})
}

// busyLoop is the shell's busy loop, which uses one CPU until killed.
const busyLoop = "while :; do :; done"

// ticksOf returns utime+stime of a process from /proc/PID/stat.
func ticksOf(t *testing.T, pid int) uint64 {
	t.Helper()
	st, ok := parseStat(readFile(t, fmt.Sprintf("/proc/%d/stat", pid)))
	if !ok {
		t.Fatalf("cannot parse /proc/%d/stat", pid)
	}
	return st.ticks
}

// startBusy starts the shell command as a child and kills it when the
// test ends.
func startBusy(t *testing.T, script string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd
}

// These tests are not parallel: a busy process of one would take CPU
// from another's on a machine with few cores.

// listAll makes Report and Usage name every busy process for one test,
// so that on a machine busy with other work (CI runs packages side by
// side) the test's own loop cannot fall out of the top five.
func listAll(t *testing.T) {
	old := topProcesses
	topProcesses = 1 << 20
	t.Cleanup(func() { topProcesses = old })
}

// The CPU a busy child is reported to use is what its own /proc/PID/stat
// says it used over the interval, however much other work the machine
// has: the two are compared, not the share with a fixed number.
func TestInspectListsABusyProcessWithItsCPU(t *testing.T) {
	listAll(t)
	cmd := startBusy(t, busyLoop)
	before, start := ticksOf(t, cmd.Process.Pid), time.Now()
	r := Inspect(context.Background(), Options{Interval: 500 * time.Millisecond})
	used, wall := float64(ticksOf(t, cmd.Process.Pid)-before)/clockTicks, time.Since(start).Seconds()
	i := slices.IndexFunc(r.Processes, func(p Process) bool { return p.PID == cmd.Process.Pid })
	if i < 0 {
		t.Fatalf("busy child %d (%.0f%% of a CPU by its own stat) not among the busy processes %+v", cmd.Process.Pid, 100*used/wall, r.Processes)
	}
	// Inspect's window lies within [start, now]: it cannot see more CPU
	// than the child used in all of it (a tick either way), nor much less
	// than what it used outside Inspect's own reads.
	p := r.Processes[i]
	if p.Comm != "sh" || p.CPUPct > 100*used/0.5+4 || p.CPUPct < 100*(used-(wall-0.5))/0.5-4 {
		t.Errorf("busy child: %+v; its own stat says %.2fs of CPU in %.2fs around the 0.5s interval", p, used, wall)
	}
	// The warning names every process above MaxOtherCPUPct: the child,
	// unless the machine left it less than that.
	f := finding(t, r, "busy-processes")
	named := f.Status == Warn && strings.Contains(f.State, fmt.Sprintf("%d sh ", cmd.Process.Pid))
	if named != (p.CPUPct > MaxOtherCPUPct) {
		t.Errorf("busy-processes %s %q with the child at %.0f%% of a CPU: want it named exactly when above %.0f%%", f.Status, f.State, p.CPUPct, MaxOtherCPUPct)
	}
	if !slices.IsSortedFunc(r.Processes, func(a, b Process) int { return cmp.Compare(b.CPUPct, a.CPUPct) }) {
		t.Errorf("processes not busiest first: %+v", r.Processes)
	}
}

func TestInspectNamesAtMostTheTopProcesses(t *testing.T) {
	for range topProcesses + 2 {
		startBusy(t, busyLoop)
	}
	r := Inspect(context.Background(), Options{Interval: 300 * time.Millisecond})
	if len(r.Processes) != topProcesses {
		t.Errorf("%d processes listed with %d busy loops, want %d", len(r.Processes), topProcesses+2, topProcesses)
	}
}

func TestInspectLeavesOutTheExcludedTree(t *testing.T) {
	// A busy grandchild of this process: sh waits on a busy sh.
	cmd := exec.Command("sh", "-c", "sh -c '"+busyLoop+"' & echo $!; wait")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	grandchild, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = killPID(grandchild)
		cmd.Process.Kill()
		cmd.Wait()
	})

	before := ticksOf(t, grandchild)
	r := Inspect(context.Background(), Options{Interval: 300 * time.Millisecond, Exclude: []int{os.Getpid()}})
	used := ticksOf(t, grandchild) - before
	if used < 5 {
		t.Fatalf("the grandchild used %d ticks over the interval: not busy, the test proves nothing", used)
	}
	for _, p := range r.Processes {
		if p.PID == grandchild || p.PID == cmd.Process.Pid || p.PID == os.Getpid() {
			t.Errorf("excluded process listed: %+v", p)
		}
	}
	if f := finding(t, r, "busy-processes"); strings.Contains(f.State, fmt.Sprintf("%d sh", grandchild)) {
		t.Errorf("busy-processes names the excluded grandchild: %q", f.State)
	}
}

func TestParseStatHandlesAWeirdCommand(t *testing.T) {
	t.Parallel()
	st, ok := parseStat("4242 (a) b (c)) R 17 4242 4242 0 -1 4194304 100 0 0 0 250 50 7 3 20 0 1 0 98765 1000000 300 18446744073709551615")
	want := procStat{ppid: 17, state: "R", comm: "a) b (c)", ticks: 300, childTicks: 10, start: 98765}
	if !ok || st != want {
		t.Errorf("parseStat: %+v %v, want %+v", st, ok, want)
	}
	if _, ok := parseStat("4242 (short) R 1 2"); ok {
		t.Error("a truncated stat parsed")
	}
}

func TestCPUUseCountsReusedAndNewPIDsAndSkipsTheTree(t *testing.T) {
	t.Parallel()
	before := procSnapshot{uptime: 10_000, procs: map[int]procStat{
		1:  {ppid: 0, comm: "init", ticks: 500, start: 1},
		10: {ppid: 1, comm: "steady", ticks: 1000, start: 100},
		11: {ppid: 1, comm: "old", ticks: 900, start: 200},
		20: {ppid: 1, comm: "perfbot", ticks: 50, start: 300},
		21: {ppid: 20, comm: "bench", ticks: 10, start: 400},
	}}
	after := procSnapshot{procs: map[int]procStat{
		1:  {ppid: 0, comm: "init", ticks: 500, start: 1},       // idle: left out
		10: {ppid: 1, comm: "steady", ticks: 1050, start: 100},  // 50 ticks
		11: {ppid: 1, comm: "reused", ticks: 30, start: 10_020}, // a new process in an old pid: all 30
		12: {ppid: 1, comm: "new", ticks: 20, start: 10_010},    // started in between: all 20
		13: {ppid: 1, comm: "missed", ticks: 7000, start: 500},  // there before, missed by it: left out
		20: {ppid: 1, comm: "perfbot", ticks: 150, start: 300},
		21: {ppid: 20, comm: "bench", ticks: 110, start: 400},
		22: {ppid: 21, comm: "child", ticks: 40, start: 10_030},
	}}
	got := cpuUse(before, after, time.Second, inTree([]int{20}, before, after))
	want := []Process{{10, "steady", 50}, {11, "reused", 30}, {12, "new", 20}}
	if !slices.Equal(got, want) {
		t.Errorf("cpuUse %+v, want %+v", got, want)
	}
}

func TestCPUListsRoundTrip(t *testing.T) {
	t.Parallel()
	for s, want := range map[string][]int{"": nil, "(null)": nil, "3": {3}, "0-3,8,10-11": {0, 1, 2, 3, 8, 10, 11}} {
		got, err := parseCPUList(s)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("parseCPUList(%q) = %v, %v; want %v", s, got, err, want)
		}
		if want != nil && formatCPUList(got) != s {
			t.Errorf("formatCPUList(%v) = %q, want %q", got, formatCPUList(got), s)
		}
	}
	for _, bad := range []string{"a", "3-1", "1,,2", "-1"} {
		if _, err := parseCPUList(bad); err == nil {
			t.Errorf("parseCPUList(%q) accepted", bad)
		}
	}
}
