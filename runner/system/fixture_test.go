package system

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
)

// tunedHost is a fixture of a bare-metal runner with two CPUs tuned for
// benchmarks: every finding ok. Paths are the machine's, without the
// leading slash.
var tunedHost = map[string]string{
	"sys/devices/system/cpu/online":                        "0-1\n",
	"sys/devices/system/cpu/cpu0/cpufreq/scaling_governor": "performance\n",
	"sys/devices/system/cpu/cpu0/cpufreq/scaling_driver":   "intel_pstate\n",
	"sys/devices/system/cpu/cpu1/cpufreq/scaling_governor": "performance\n",
	"sys/devices/system/cpu/cpu1/cpufreq/scaling_driver":   "intel_pstate\n",
	"sys/devices/system/cpu/intel_pstate/no_turbo":         "1\n",
	"sys/devices/system/cpu/smt/active":                    "0\n",
	"sys/devices/system/cpu/smt/control":                   "off\n",
	"sys/devices/system/cpu/isolated":                      "1\n",
	"sys/devices/system/cpu/nohz_full":                     "1\n",
	"sys/kernel/mm/transparent_hugepage/enabled":           "always [madvise] never\n",
	"sys/kernel/mm/transparent_hugepage/defrag":            "always defer defer+madvise [madvise] never\n",
	"proc/cmdline":                        "BOOT_IMAGE=/vmlinuz root=/dev/sda1 isolcpus=1 nohz_full=1 quiet\n",
	"proc/sys/kernel/osrelease":           "6.8.0-fixture\n",
	"proc/sys/kernel/randomize_va_space":  "2\n",
	"proc/sys/kernel/perf_event_paranoid": "1\n",
	"proc/loadavg":                        "0.05 0.10 0.20 1/200 12345\n",
	"proc/meminfo":                        "MemTotal:       16384000 kB\nSwapTotal:             0 kB\nSwapFree:              0 kB\n",
	"proc/vmstat":                         "nr_free_pages 100\npswpin 0\npswpout 0\n",
	"proc/uptime":                         "1000.00 1900.00\n",
	"proc/100/stat":                       "100 (idle daemon) S 1 100 100 0 -1 4194560 10 0 0 0 5 3 0 0 20 0 1 0 500 1000 10 18446744073709551615\n",
	"proc/100/comm":                       "idle daemon\n",
}

// fixture writes tunedHost with changes under a new directory and
// returns it. A change to "" leaves the file out (and its directory, unless
// another file is in it); a change to "DIR" puts an empty directory in
// the file's place.
func fixture(t *testing.T, changes map[string]string) string {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{}
	for p, s := range tunedHost {
		files[p] = s
	}
	for p, s := range changes {
		files[p] = s
	}
	for p, s := range files {
		if s == "" {
			continue
		}
		path := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		switch s {
		case "DIR":
			if err := os.Mkdir(path, 0o755); err != nil {
				t.Fatal(err)
			}
		default:
			if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return root
}

// noNVML is an NVML library without a driver: its Init fails and any
// other call panics, as the real library kills the process.
func noNVML() *mock.Interface {
	return &mock.Interface{InitFunc: func() nvml.Return { return nvml.ERROR_LIBRARY_NOT_FOUND }}
}

// inspectFixture runs Inspect on a fixture root, with fixtureTools' build
// tools.
func inspectFixture(t *testing.T, changes map[string]string) Report {
	t.Helper()
	return Inspect(context.Background(), Options{Root: fixture(t, changes), NVML: noNVML(), Interval: 10 * time.Millisecond,
		LookPath: fixtureTools(t, map[string]string{"go": "go version go1.99.1 linux/amd64", "make": "GNU Make 4.3\nBuilt for x86_64"})})
}

// fixtureTools writes a shell script per tool that prints its text, and
// returns a LookPath that finds only those.
func fixtureTools(t *testing.T, tools map[string]string) func(string) (string, error) {
	t.Helper()
	dir := t.TempDir()
	for name, text := range tools {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\nprintf '%s\\n' \""+text+"\"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return func(name string) (string, error) {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); err != nil {
			return "", exec.ErrNotFound
		}
		return p, nil
	}
}

// finding returns r's finding named name.
func finding(t *testing.T, r Report, name string) Finding {
	t.Helper()
	for _, f := range r.Findings {
		if f.Name == name {
			return f
		}
	}
	t.Fatalf("no finding %q in %+v", name, r.Findings)
	return Finding{}
}

func TestTunedFixtureHasNoWarnings(t *testing.T) {
	t.Parallel()
	r := inspectFixture(t, nil)
	if w := r.Warnings(); len(w) != 0 {
		t.Errorf("warnings on a tuned host: %+v", w)
	}
	if r.CPUs != 2 || r.Kernel != "6.8.0-fixture" {
		t.Errorf("CPUs %d, kernel %q; want 2, 6.8.0-fixture", r.CPUs, r.Kernel)
	}
	want := map[string]Finding{
		"cpu-governor":        {State: "performance on cpu 0-1 (intel_pstate)", Status: OK},
		"cpu-boost":           {State: "intel_pstate turbo off", Status: OK},
		"smt":                 {State: "off (control: off)", Status: OK},
		"isolated-cpus":       {State: "isolated cpu 1; nohz_full cpu 1; kernel command line isolcpus=1 nohz_full=1", Status: OK},
		"aslr":                {State: "2: full randomization: the memory layout varies from run to run and averages out over the runs", Status: OK},
		"load":                {State: "0.05 0.10 0.20 (1, 5, 15 min) on 2 CPUs", Status: OK},
		"busy-processes":      {Status: OK},
		"perf-event-paranoid": {State: "1: an unprivileged process opens kernel and user counters, hardware too", Status: OK},
		"swap":                {State: "no swap configured", Status: OK},
		"thp":                 {State: "madvise", Status: OK},
		"thp-defrag":          {State: "madvise", Status: OK},
		"toolchain-go":        {Status: OK},
		"toolchain-make":      {Status: OK},
		"toolchain-nvcc":      {State: "nvcc not found on PATH", Status: Info},
	}
	if len(r.Findings) != len(want) {
		t.Errorf("%d findings, want %d: %+v", len(r.Findings), len(want), r.Findings)
	}
	for name, w := range want {
		f := finding(t, r, name)
		if f.Status != w.Status || (w.State != "" && f.State != w.State) {
			t.Errorf("%s: %s %q, want %s %q", name, f.Status, f.State, w.Status, w.State)
		}
		if f.Source == "" {
			t.Errorf("%s has no source", name)
		}
	}
	// The fixture's one process used no CPU between the snapshots.
	if len(r.Processes) != 0 {
		t.Errorf("processes %+v, want none", r.Processes)
	}
}

func TestNoCpufreqIsInfoAboutTheHypervisor(t *testing.T) {
	t.Parallel()
	r := inspectFixture(t, map[string]string{
		"sys/devices/system/cpu/cpu0/cpufreq/scaling_governor": "", "sys/devices/system/cpu/cpu0/cpufreq/scaling_driver": "",
		"sys/devices/system/cpu/cpu1/cpufreq/scaling_governor": "", "sys/devices/system/cpu/cpu1/cpufreq/scaling_driver": "",
		"sys/devices/system/cpu/cpu0/topology/core_id": "0\n", "sys/devices/system/cpu/cpu1/topology/core_id": "1\n",
		"sys/devices/system/cpu/intel_pstate/no_turbo": "",
	})
	f := finding(t, r, "cpu-governor")
	if f.Status != Info || f.State != "no cpufreq: the hypervisor (or the firmware) controls frequency" || f.Advice != "" {
		t.Errorf("cpu-governor without cpufreq: %+v", f)
	}
	f = finding(t, r, "cpu-boost")
	if f.Status != Info || !strings.HasPrefix(f.State, "no boost switch") {
		t.Errorf("cpu-boost without a switch: %+v", f)
	}
}

func TestGovernorOfSomeCPUsUnreadableIsUnknown(t *testing.T) {
	t.Parallel()
	r := inspectFixture(t, map[string]string{"sys/devices/system/cpu/cpu1/cpufreq/scaling_governor": "DIR"})
	f := finding(t, r, "cpu-governor")
	if f.Status != Unknown || f.State != "cannot read /sys/devices/system/cpu/cpu1/cpufreq/scaling_governor: is a directory" {
		t.Errorf("cpu-governor: %+v", f)
	}
}

func TestPowersaveGovernorWarnsWithTheCommand(t *testing.T) {
	t.Parallel()
	r := inspectFixture(t, map[string]string{"sys/devices/system/cpu/cpu1/cpufreq/scaling_governor": "powersave\n"})
	f := finding(t, r, "cpu-governor")
	if f.Status != Warn || !strings.HasPrefix(f.State, "performance on cpu 0; powersave on cpu 1 (intel_pstate): ") {
		t.Errorf("governor: %s %q", f.Status, f.State)
	}
	if f.Advice != "echo performance | sudo tee /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor" {
		t.Errorf("advice %q", f.Advice)
	}
	if w := r.Warnings(); len(w) != 1 || w[0].Name != "cpu-governor" {
		t.Errorf("warnings %+v, want cpu-governor alone", w)
	}
}

func TestTurboAndBoostOnWarn(t *testing.T) {
	t.Parallel()
	r := inspectFixture(t, map[string]string{
		"sys/devices/system/cpu/intel_pstate/no_turbo": "0\n",
		"sys/devices/system/cpu/cpufreq/boost":         "1\n",
	})
	f := finding(t, r, "cpu-boost")
	if f.Status != Warn || !strings.HasPrefix(f.State, "intel_pstate turbo on, cpufreq boost on: the frequency varies") {
		t.Errorf("boost: %s %q", f.Status, f.State)
	}
	want := "echo 1 | sudo tee /sys/devices/system/cpu/intel_pstate/no_turbo; echo 0 | sudo tee /sys/devices/system/cpu/cpufreq/boost"
	if f.Advice != want {
		t.Errorf("advice %q, want %q", f.Advice, want)
	}
}

func TestTHPAlwaysWarns(t *testing.T) {
	t.Parallel()
	r := inspectFixture(t, map[string]string{
		"sys/kernel/mm/transparent_hugepage/enabled": "[always] madvise never\n",
		"sys/kernel/mm/transparent_hugepage/defrag":  "[always] defer defer+madvise madvise never\n",
	})
	for name, file := range map[string]string{"thp": "enabled", "thp-defrag": "defrag"} {
		f := finding(t, r, name)
		if f.Status != Warn || !strings.HasPrefix(f.State, "always: ") {
			t.Errorf("%s: %s %q", name, f.Status, f.State)
		}
		if want := "echo madvise | sudo tee /sys/kernel/mm/transparent_hugepage/" + file; f.Advice != want {
			t.Errorf("%s advice %q, want %q", name, f.Advice, want)
		}
	}
}

func TestSwapInUseWarns(t *testing.T) {
	t.Parallel()
	r := inspectFixture(t, map[string]string{
		"proc/meminfo": "MemTotal:       16384000 kB\nSwapCached:      10 kB\nSwapTotal:       2097152 kB\nSwapFree:        1048576 kB\n",
		"proc/vmstat":  "pswpin 12\npswpout 34\n",
	})
	f := finding(t, r, "swap")
	want := "1024.0 MiB of 2048.0 MiB in use; 12 pages swapped in and 34 out since boot"
	if f.Status != Warn || f.State != want || f.Advice != "free memory, or turn swap off: sudo swapoff -a" {
		t.Errorf("swap: %+v, want warn %q", f, want)
	}
}

func TestSwapConfiguredButUnusedIsOK(t *testing.T) {
	t.Parallel()
	r := inspectFixture(t, map[string]string{
		"proc/meminfo": "SwapTotal:       2097152 kB\nSwapFree:        2097152 kB\n",
	})
	if f := finding(t, r, "swap"); f.Status != OK || f.State != "2048.0 MiB configured, none in use; 0 pages swapped in and 0 out since boot" {
		t.Errorf("swap: %+v", f)
	}
}

func TestUnreadableFilesAreUnknownWithTheReason(t *testing.T) {
	t.Parallel()
	r := inspectFixture(t, map[string]string{
		"proc/sys/kernel/randomize_va_space":         "DIR",
		"proc/sys/kernel/perf_event_paranoid":        "lots\n",
		"proc/loadavg":                               "",
		"proc/meminfo":                               "MemTotal: 1 kB\n",
		"sys/kernel/mm/transparent_hugepage/enabled": "madvise\n",
	})
	for name, want := range map[string]string{
		"aslr":                "cannot read /proc/sys/kernel/randomize_va_space: is a directory",
		"perf-event-paranoid": `/proc/sys/kernel/perf_event_paranoid holds "lots", not a number`,
		"load":                "cannot read /proc/loadavg: no such file or directory",
		"swap":                "/proc/meminfo has no SwapTotal line",
		"thp":                 `/sys/kernel/mm/transparent_hugepage/enabled holds "madvise", want the mode in brackets`,
	} {
		f := finding(t, r, name)
		if f.Status != Unknown || f.State != want {
			t.Errorf("%s: %s %q, want unknown %q", name, f.Status, f.State, want)
		}
	}
	// The others are still read.
	if f := finding(t, r, "thp-defrag"); f.Status != OK {
		t.Errorf("thp-defrag: %+v", f)
	}
}

func TestNoIsolatedCPUsAdvisesIsolcpusAndPinning(t *testing.T) {
	t.Parallel()
	r := inspectFixture(t, map[string]string{
		"sys/devices/system/cpu/online":    "0-3\n",
		"sys/devices/system/cpu/isolated":  "\n",
		"sys/devices/system/cpu/nohz_full": "(null)\n",
		"proc/cmdline":                     "BOOT_IMAGE=/vmlinuz quiet\n",
	})
	f := finding(t, r, "isolated-cpus")
	want := "boot with isolcpus=1-3 nohz_full=1-3 on the kernel command line (leaving cpu 0 to the system) " +
		"and pin benchmarks to them with cpus: 1-3 in .perfbot.yml"
	if f.Status != Info || f.State != "none: no isolcpus= or nohz_full= on the kernel command line" || f.Advice != want {
		t.Errorf("isolated-cpus: %+v", f)
	}
}

func TestASLRAndLoadRules(t *testing.T) {
	t.Parallel()
	cases := []struct {
		file, content, name, status, prefix string
	}{
		{"proc/sys/kernel/randomize_va_space", "0\n", "aslr", Warn, "0: no randomization"},
		{"proc/sys/kernel/randomize_va_space", "1\n", "aslr", Warn, "1: conservative randomization"},
		{"proc/loadavg", "0.50 0.10 0.00 1/90 7\n", "load", OK, "0.50 0.10 0.00 (1, 5, 15 min) on 2 CPUs"},
		{"proc/loadavg", "0.51 0.10 0.00 1/90 7\n", "load", Warn, "0.51 0.10 0.00 (1, 5, 15 min) on 2 CPUs: above 0.5"},
		{"sys/devices/system/cpu/smt/active", "1\n", "smt", Info, "on (control: off)"},
	}
	for _, c := range cases {
		r := inspectFixture(t, map[string]string{c.file: c.content})
		f := finding(t, r, c.name)
		if f.Status != c.status || !strings.HasPrefix(f.State, c.prefix) {
			t.Errorf("%s %q: %s %q, want %s %q…", c.file, c.content, f.Status, f.State, c.status, c.prefix)
		}
	}
}

func TestPerfParanoidForAnUnprivilegedPerfbot(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		v, status, state string
		euid             int
	}{
		{"-1", OK, "-1: an unprivileged process opens every counter: kernel and user, hardware too, and CPU-wide events", 1000},
		{"2", Info, "2: an unprivileged process counts user space only, not kernel time", 1000},
		{"3", Warn, "3: an unprivileged process opens no perf counter (a distribution's patch)", 1000},
		{"3", OK, "3: an unprivileged process opens no perf counter (a distribution's patch); perfbot runs as root, which opens every counter", 0},
	} {
		in := inspector{fs: fsys{root: fixture(t, map[string]string{"proc/sys/kernel/perf_event_paranoid": c.v})}, euid: c.euid}
		f := in.perfParanoid()
		if f.Status != c.status || f.State != c.state {
			t.Errorf("paranoid %s as %d: %s %q, want %s %q", c.v, c.euid, f.Status, f.State, c.status, c.state)
		}
		if (f.Status == OK) != (f.Advice == "") {
			t.Errorf("paranoid %s as %d: advice %q", c.v, c.euid, f.Advice)
		}
	}
}

func TestInspectStopsWhenCtxEnds(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	defer close(release)
	lib := &mock.Interface{InitFunc: func() nvml.Return {
		<-release // an NVML that hangs
		return nvml.ERROR_TIMEOUT
	}}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	r := Inspect(ctx, Options{Root: fixture(t, nil), NVML: lib, Interval: time.Minute})
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Inspect took %v after ctx ended", d)
	}
	if f := finding(t, r, "busy-processes"); f.Status != Unknown || f.State != "not sampled: context canceled" {
		t.Errorf("busy-processes %+v", f)
	}
	if r.NVML.Status != Unknown || r.NVML.State != "nvml: context canceled" {
		t.Errorf("nvml %+v", r.NVML)
	}
	// What needs no waiting was still read.
	if f := finding(t, r, "aslr"); f.Status != OK {
		t.Errorf("aslr %+v", f)
	}
}

// The build tools the GPU config needs are named with their versions and
// paths, nvcc from the CUDA directory when it is not on PATH, and a tool
// that is missing or does not run says what to install.
func TestToolchainNamesEachBuildToolWithItsVersion(t *testing.T) {
	t.Parallel()
	root := fixture(t, nil)
	nvcc := filepath.Join(root, "usr/local/cuda/bin/nvcc")
	if err := os.MkdirAll(filepath.Dir(nvcc), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(nvcc, []byte("#!/bin/sh\necho 'nvcc: NVIDIA (R) Cuda compiler driver'\necho 'Build cuda_13.0.r13.0/compiler.36424714_0'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	look := fixtureTools(t, map[string]string{"go": "go version go1.99.1 linux/amd64"})
	r := Inspect(context.Background(), Options{Root: root, NVML: noNVML(), Interval: 10 * time.Millisecond, LookPath: func(name string) (string, error) {
		if name == "make" {
			return "/nonexistent/make", nil // on PATH, but does not run
		}
		return look(name)
	}})
	goPath, _ := look("go")
	for name, want := range map[string]Finding{
		"toolchain-go":   {Status: OK, State: "go version go1.99.1 linux/amd64 (" + goPath + ")"},
		"toolchain-nvcc": {Status: OK, State: "Build cuda_13.0.r13.0/compiler.36424714_0 (" + nvcc + ")"},
		"toolchain-make": {Status: Warn},
	} {
		f := finding(t, r, name)
		if f.Status != want.Status || (want.State != "" && f.State != want.State) {
			t.Errorf("%s: %s %q; want %s %q", name, f.Status, f.State, want.Status, want.State)
		}
		if f.Status != OK && !strings.Contains(f.Advice, "install") {
			t.Errorf("%s: advice %q does not say what to install", name, f.Advice)
		}
	}
	if f := finding(t, r, "toolchain-make"); !strings.Contains(f.State, "/nonexistent/make does not run") {
		t.Errorf("toolchain-make state %q; want it to say the make found does not run", f.State)
	}
}
