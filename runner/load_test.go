package runner

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
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
