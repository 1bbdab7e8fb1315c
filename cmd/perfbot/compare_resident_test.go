package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/runner/workspace/workspacetest"
)

// residentProgram is a Go benchmark that serves perfbot's resident
// protocol: it appends a line to $STARTS when it starts, says it is
// ready, and for every "run" times three phases on its thread's CPU
// clock. %s is code run at the start of each run (n counts them).
const residentProgram = `package main

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"syscall"
	"unsafe"
)

var sink uint64

func spin(n int) {
	x := sink | 1
	for i := 0; i < n; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	sink = x
}

func cpu() int64 {
	var ts syscall.Timespec
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 3, uintptr(unsafe.Pointer(&ts)), 0)
	return ts.Nano()
}

func main() {
	runtime.LockOSThread()
	f, err := os.OpenFile(os.Getenv("STARTS"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		panic(err)
	}
	fmt.Fprintln(f, os.Getpid())
	f.Close()
	spin(50_000_000) // "keys": paid once a process
	fmt.Println("#perfbot ready")
	in := bufio.NewScanner(os.Stdin)
	for n := 1; in.Scan(); n++ {
		%s
		for _, ph := range []struct {
			name  string
			loops int
		}{{"parse", %d}, {"solve", %d}, {"emit", %d}} {
			t := cpu()
			spin(ph.loops)
			fmt.Printf("BenchmarkWork/phase=%%s 1 %%d ns/op\n", ph.name, cpu()-t)
		}
		fmt.Println("#perfbot done")
	}
}
`

// dieOnce makes the program exit in its third run, once: the file
// $DIED marks that it did.
const dieOnce = `if _, err := os.Stat(os.Getenv("DIED")); n == 3 && err != nil {
			os.WriteFile(os.Getenv("DIED"), nil, 0o644)
			fmt.Fprintln(os.Stderr, "out of device memory")
			os.Exit(3)
		}`

// A resident benchmark keeps one process a side for all its runs: the
// planted phase is found as with one-shot runs, here paired by round; a process that dies
// during a run fails that run, with its reason, and a new one serves the
// next; the comparison goes on and reports the failure.
func TestCompareWithResidentProcesses(t *testing.T) {
	t.Parallel()
	r := workspacetest.New(t)
	const n = 5_000_000
	goMod := "module example.com/work\n\ngo 1.26\n"
	base := r.Commit(t, "work: three phases, served", map[string]string{"go.mod": goMod, "main.go": fmt.Sprintf(residentProgram, "", n, 2*n, n)})
	head := r.Commit(t, "solve: 40% more work; the process dies once", map[string]string{"main.go": fmt.Sprintf(residentProgram, dieOnce, n, 2*n*14/10, n)})
	tmp := t.TempDir()
	starts, died := filepath.Join(tmp, "starts"), filepath.Join(tmp, "died")
	cfg := filepath.Join(tmp, "resident.yml")
	config := fmt.Sprintf(`build:
  - [go, build, -o, "${PERFBOT_OUT}/work", .]
benchmarks:
  - name: work
    command: ["${PERFBOT_OUT}/work"]
    resident: true
    env: {STARTS: %q, DIED: %q}
count: 10
warmup: 1
max_count: 20
timeout: 1m
thresholds:
  alpha: 0.01
  min_change_pct: 5
  paired: true
`, starts, died)
	if err := os.WriteFile(cfg, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	db := filepath.Join(data, "perfbot.db")
	out, errOut, code := perfbot(t, "compare", "--format", "json", "--quiet", "--repo", r.Dir, "--base", base, "--head", head,
		"--db", db, "--data-dir", data, "--config", cfg)
	if code != exitRunsFailed {
		t.Fatalf("exit %d, want %d (one run failed)\n%s", code, exitRunsFailed, errOut)
	}
	var rep analysis.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	// Two processes a side at most: base's one, head's first and the one
	// that replaced it.
	pids, err := os.ReadFile(starts)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(pids), "\n"); n != 3 {
		t.Errorf("%d processes started, want 3 (one for base, two for head): %q", n, pids)
	}
	if rep.Runs.Base.OK != rep.Runs.Base.Total || rep.Runs.Head.OK != rep.Runs.Head.Total-1 || rep.Runs.Base.Total < 10 {
		t.Errorf("runs %+v, want every base run ok and all head runs but one", rep.Runs)
	}
	if len(rep.Failures) != 1 || rep.Failures[0].Side != "head" || rep.Failures[0].Status != analysis.StatusCrashed ||
		!strings.Contains(rep.Failures[0].Detail, "exited (exit status 3) during a run") || !strings.Contains(rep.Failures[0].Detail, "out of device memory") {
		t.Errorf("failures %+v, want head's crashed run with its reason and stderr", rep.Failures)
	}
	byPhase := map[string]analysis.Row{}
	wall := 0
	for _, row := range rep.Phases {
		if row.Benchmark == "Work" && row.Unit == "sec/op" {
			byPhase[row.Phase] = row
		}
		if row.Benchmark == "process/benchmark=work" && row.Unit == "wall-sec/run" {
			wall++
			// A run's wall time is its own, not the process's start
			// (50M loops of "keys", several times a run's work).
			if row.BaseValue > 0.5 {
				t.Errorf("a run's wall time %g s includes the process's start", row.BaseValue)
			}
		}
	}
	if wall != 1 {
		t.Errorf("%d wall-sec/run rows, want 1", wall)
	}
	// thresholds.paired: the rounds' own ratios decide (the round head's
	// process died in has no head value and is left out). Nine pairs
	// cannot reach α/3 with the signed-rank test (its smallest p is
	// 2/2⁹), so the comparison adds rounds: max_count is 20.
	for ph, row := range byPhase {
		if !row.Paired || row.PUnpaired == 0 {
			t.Errorf("%s: paired %v, benchstat's p %g; want a paired row that keeps it", ph, row.Paired, row.PUnpaired)
		}
	}
	if s := byPhase["solve"]; s.Verdict != analysis.VerdictRegression || s.Change() < 25 || s.Change() > 60 {
		t.Errorf("solve %s %+.1f%%, want the planted +40%%", s.Verdict, s.Change())
	}
	for _, ph := range []string{"parse", "emit"} {
		if v := byPhase[ph].Verdict; v == analysis.VerdictRegression || v == analysis.VerdictImprovement {
			t.Errorf("%s %s %+.1f%%, want no change", ph, v, byPhase[ph].Change())
		}
	}
}
