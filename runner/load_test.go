package runner

import (
	"context"
	"encoding/json"
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
// in its report, naming it, and stores perfbot system's report and the
// usage with the comparison. The loop is started by a shell that exits,
// so it is not this test's child: other work on the machine, as on a
// shared runner.
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
	res, err := r.Compare(context.Background(), CompareRequest{Source: repo.Dir, Base: sha, Head: sha})
	if err != nil {
		t.Fatal(err)
	}
	var warned string
	for _, w := range res.Report.Warnings {
		if strings.HasPrefix(w, "other processes kept") {
			warned = w
		}
	}
	if !strings.Contains(warned, "(pid "+strconv.Itoa(pid)+")") {
		t.Errorf("no warning naming the busy loop %d in %q", pid, res.Report.Warnings)
	}
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
	if len(in.System.Findings) == 0 || in.Load.OtherCPUs < 0.2 || in.Load.Wall <= 0 {
		t.Errorf("stored system report with %d findings and load %+v", len(in.System.Findings), in.Load)
	}
}
