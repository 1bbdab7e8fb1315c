package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perfbot/perfbot/runner/system"
	"github.com/perfbot/perfbot/runner/workspace/workspacetest"
	"github.com/perfbot/perfbot/store"
)

func TestLoadCaveats(t *testing.T) {
	t.Parallel()
	quiet := system.Usage{Wall: time.Minute, OtherCPUs: 0.05}
	if c := loadCaveats(quiet); len(c) != 0 {
		t.Errorf("a quiet machine: %q", c)
	}
	busy := system.Usage{Wall: 95 * time.Second, OtherCPUs: 0.85, StealPct: 7.5, SwapIns: 12,
		Top: []system.Process{{PID: 7, Comm: "cc1", CPUPct: 61}, {PID: 9, Comm: "go", CPUPct: 20.4}, {PID: 3, Comm: "idle", CPUPct: 0.2}}}
	c := loadCaveats(busy)
	if len(c) != 3 ||
		!strings.Contains(c[0], "other processes kept 0.85 CPUs busy on average during the 1m35s of runs (busiest, in % of one CPU: cc1 (pid 7) 61%, go (pid 9) 20%)") ||
		strings.Contains(c[0], "idle") ||
		!strings.Contains(c[1], "7.5% of the CPU time to other guests") || !strings.Contains(c[2], "12 pages were swapped in") {
		t.Errorf("a busy machine: %q", c)
	}
	// By command: fifty short cc1 processes, one loop, the unseen
	// children of make, and a quarter of a CPU that nothing explains.
	byCmd := system.Usage{Wall: 95 * time.Second, OtherCPUs: 1.85, UnattributedPct: 40,
		Commands: []system.CommandUse{{Comm: "cc1", Processes: 50, PID: 70, CPUPct: 120.4}, {Comm: "sh", Processes: 1, PID: 9, CPUPct: 15}, {Comm: "make's children", PID: 5, CPUPct: 9.6}, {Comm: "go", Processes: 2, CPUPct: 0.4}},
		Top:      []system.Process{{PID: 9, Comm: "sh", CPUPct: 15}}}
	want := "other processes kept 1.85 CPUs busy on average during the 1m35s of runs (busiest, in % of one CPU: cc1 ×50 120%, sh (pid 9) 15%, make's children 10%) (40% of one CPU not put down to any process): "
	if c := loadCaveats(byCmd); len(c) != 1 || !strings.HasPrefix(c[0], want) {
		t.Errorf("by command: %q\nwant it to start %q", c, want)
	}
	byCmd.UnattributedPct = 9
	if c := loadCaveats(byCmd); len(c) != 1 || strings.Contains(c[0], "not put down") {
		t.Errorf("9%% not attributed, under a tenth of a CPU: %q", c)
	}
	if c := loadCaveats(system.Usage{Unavailable: "read /proc/stat: gone"}); len(c) != 1 || !strings.Contains(c[0], "not measured: read /proc/stat: gone") {
		t.Errorf("no usage: %q", c)
	}
}

func TestStaticCaveatsLeaveOutWhatTheRunsMeasure(t *testing.T) {
	t.Parallel()
	r := system.Report{
		Findings: []system.Finding{
			{Name: "load", Status: system.Warn, State: "3.2"},
			{Name: "busy-processes", Status: system.Warn, State: "sh 90%"},
			{Name: "thp", Status: system.Warn, State: "always"},
			{Name: "aslr", Status: system.OK, State: "2"},
		},
		GPUs: []system.GPU{{Index: 0, Findings: []system.Finding{{Name: "persistence-mode", Status: system.Warn, State: "off"}}}},
	}
	c := staticCaveats(r)
	if len(c) != 1 || !strings.Contains(c[0], "thp (always); gpu0/persistence-mode (off)") || strings.Contains(c[0], "load") || strings.Contains(c[0], "busy") {
		t.Errorf("caveats %q", c)
	}
	if c := staticCaveats(system.Report{Findings: []system.Finding{{Name: "thp", Status: system.OK}}}); c != nil {
		t.Errorf("nothing on: %q", c)
	}
}

// A comparison that runs while another process keeps a CPU busy says so
// in its report, and stores perfbot system's report and the usage with the
// comparison. The loop is started by a shell that exits, so it is not this
// test's child: other work on the machine, as on a shared runner. However
// busy the machine is besides (CI runs packages side by side), the stored
// usage counts at least the CPU the loop's own /proc/PID/stat says it got.
func TestCompareWarnsOfABusyMachineAndStoresItsState(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("sh", "-c", "sh -c 'while :; do :; done' </dev/null >/dev/null 2>&1 & echo $!").Output()
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })

	repo := workspacetest.New(t)
	sha := repo.Commit(t, "busy", map[string]string{".perfbot.yml": positionConfig(OrderRandom, filepath.Join(t.TempDir(), "n"), 6)})
	r := newPRRunner(t)
	before, start := loopTicks(t, pid), time.Now()
	res, err := r.Compare(context.Background(), CompareRequest{Source: repo.Dir, Base: sha, Head: sha})
	if err != nil {
		t.Fatal(err)
	}
	used, wall := float64(loopTicks(t, pid)-before)/100, time.Since(start).Seconds() // USER_HZ ticks
	stored, err := r.Store.(*store.DB).Comparison(context.Background(), res.ComparisonID)
	if err != nil {
		t.Fatal(err)
	}
	var in struct {
		System system.Report `json:"system"`
		Load   system.Usage  `json:"load"`
	}
	if err := json.Unmarshal([]byte(stored.Inputs), &in); err != nil {
		t.Fatal(err)
	}
	if len(in.System.Findings) == 0 || in.Load.Wall <= 0 {
		t.Fatalf("stored system report with %d findings and load %+v", len(in.System.Findings), in.Load)
	}
	// The meter watches the runs, a part of the comparison: a steady
	// loop used about its average share of the whole comparison then, so
	// other CPUs hold at least half of it (ticks and scheduling aside).
	if loop := used / wall; in.Load.OtherCPUs < loop/2 || loop < 0.05 {
		t.Errorf("other CPUs %.2f over the runs' %v; the loop used %.2fs of CPU in the comparison's %.2fs (%.2f CPUs)", in.Load.OtherCPUs, in.Load.Wall, used, wall, loop)
	}
	warned := ""
	for _, w := range res.Report.Warnings {
		if strings.HasPrefix(w, "other processes kept") {
			warned = w
		}
	}
	if (warned != "") != (in.Load.OtherCPUs > maxOtherCPUs) {
		t.Errorf("other CPUs %.2f (warn above %.2f), warning %q", in.Load.OtherCPUs, maxOtherCPUs, warned)
	}
}

// loopTicks returns a process's utime+stime from /proc/PID/stat.
func loopTicks(t *testing.T, pid int) uint64 {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	u, _ := strconv.ParseUint(f[11], 10, 64)
	k, _ := strconv.ParseUint(f[12], 10, 64)
	return u + k
}

// Forty busy processes of a tenth of a second each, started one after
// another by a shell that is not this test's child: most start and exit
// between two of the meter's samples, yet the busy-machine warning names
// their command with the CPU they used, which the shell's own `times`
// reports (its children's user and system time).
func TestLoadCaveatsNameShortLivedProcesses(t *testing.T) {
	dir := t.TempDir()
	// A command name of their own, which no other process on the
	// machine has: the shell, under another name.
	busy := filepath.Join(dir, "shortbusy")
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(sh, busy); err != nil {
		t.Fatal(err)
	}
	times := filepath.Join(dir, "times")
	loop := fmt.Sprintf(`for i in $(seq 40); do timeout 0.1 %s -c 'while :; do :; done'; done; times > %s.tmp; mv %s.tmp %s; exec sleep 60`, busy, times, times, times)
	for attempt := 1; ; attempt++ {
		u, used := meterShortLived(t, loop, times)
		var cmd system.CommandUse
		for _, c := range u.Commands {
			if c.Comm == "shortbusy" {
				cmd = c
			}
		}
		truth := used.Seconds() / u.Wall.Seconds() * 100 // in % of one CPU
		if truth < 20 && attempt < 3 {
			t.Logf("attempt %d: the processes got %.0f%% of a CPU, too little to tell; again", attempt, truth)
			continue
		}
		c := loadCaveats(u)
		named := 0.0
		for _, c := range u.Commands {
			named += c.CPUPct
		}
		t.Logf("truth %.0f%% of one CPU over %v (%v of CPU); others %.0f%%, named %.0f%%, unattributed %.0f%%; %+v; caveats %q", truth, u.Wall, used, u.OtherCPUs*100, named, u.UnattributedPct, u.Commands, c)
		// Seen by some samples: a sample every quarter second over the
		// four or more seconds of the loop, each process alive for a
		// tenth; at most the forty.
		if cmd.Processes < 3 || cmd.Processes > 40 {
			t.Errorf("%d shortbusy processes seen, want 3 to 40", cmd.Processes)
		}
		// Seen or not, their time counts: within a sixth, and two clock
		// ticks a second of the wall.
		if slack := truth/6 + 2; math.Abs(cmd.CPUPct-truth) > slack {
			t.Errorf("shortbusy used %.1f%% of one CPU by the meter, %.1f%% by the shell's times: more than %.1f apart", cmd.CPUPct, truth, slack)
		}
		// The warning names the three busiest commands: shortbusy, where
		// it is one of them.
		if i := slices.IndexFunc(u.Commands, func(c system.CommandUse) bool { return c.Comm == "shortbusy" }); i >= 0 && i < 3 && u.OtherCPUs > maxOtherCPUs {
			m := regexp.MustCompile(`shortbusy ×(\d+) (\d+)%`).FindStringSubmatch(strings.Join(c, "\n"))
			if m == nil {
				t.Fatalf("the warning does not name shortbusy: %q", c)
			}
			if n, _ := strconv.Atoi(m[1]); n != cmd.Processes {
				t.Errorf("the warning says ×%s, the usage %d", m[1], cmd.Processes)
			}
			if pct, _ := strconv.ParseFloat(m[2], 64); math.Abs(pct-truth) > truth/6+3 {
				t.Errorf("the warning says %s%%, the shell's times %.0f%%", m[2], truth)
			}
		}
		return
	}
}

// meterShortLived runs loop in a shell that is not this process's child,
// metered from its start until it writes the file times, and returns the
// usage and the CPU its children used by that file.
func meterShortLived(t *testing.T, loop, times string) (system.Usage, time.Duration) {
	t.Helper()
	os.Remove(times)
	m, err := system.StartUsage()
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	out, err := exec.Command("sh", "-c", "sh -c \"$0\" </dev/null >/dev/null 2>&1 & echo $!", loop).Output()
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(pid, syscall.SIGKILL)
	var b []byte
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(50 * time.Millisecond) {
		if b, err = os.ReadFile(times); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the loop did not finish in 2 minutes")
		}
	}
	u := m.Stop()
	// times prints the shell's user and system time, then its
	// children's: "0m0.004000s 0m0.000000s\n0m3.981000s 0m0.012000s".
	f := regexp.MustCompile(`(\d+)m([0-9.]+)s`).FindAllStringSubmatch(string(b), -1)
	if len(f) != 4 {
		t.Fatalf("times printed %q", b)
	}
	var used time.Duration
	for _, x := range f[2:] {
		mins, _ := strconv.Atoi(x[1])
		secs, _ := strconv.ParseFloat(x[2], 64)
		used += time.Duration(mins)*time.Minute + time.Duration(secs*float64(time.Second))
	}
	return u, used
}
