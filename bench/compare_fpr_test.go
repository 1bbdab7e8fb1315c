// Package bench_test checks the measurement scripts' own bookkeeping: what
// they count and what they refuse, with real processes and a real git
// repository, but no measurement (that is make bench's and BENCHMARKS.md's).
package bench_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@localhost"}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// prepared returns a repository shaped as compare-fpr.sh's REPO= wants it
// (HEAD~1 the base, HEAD the planted commit).
func prepared(t *testing.T) string {
	dir := t.TempDir()
	git(t, dir, "init", "-q")
	for i, msg := range []string{"base", "planted"} {
		if err := os.WriteFile(filepath.Join(dir, "f"), []byte{byte('0' + i)}, 0o644); err != nil {
			t.Fatal(err)
		}
		git(t, dir, "add", "f")
		git(t, dir, "commit", "-qm", msg)
	}
	return dir
}

func fpr(t *testing.T, env []string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command("bash", append([]string{"compare-fpr.sh"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), code
}

// A comparison whose perfbot fails measured nothing: it must be listed as
// failed and counted neither as a quiet A/A nor as a missed detection (a
// GPU host that lost its binary once read "A/A false alarms: 0 of 20").
func TestCompareFPRLeavesFailedComparisonsOutOfTheCounts(t *testing.T) {
	repo := prepared(t)
	bin := filepath.Join(t.TempDir(), "perfbot")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\necho 'perfbot: cannot run here' >&2\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	outdir := t.TempDir()
	out, code := fpr(t, []string{"REPO=" + repo, "PERFBOT=" + bin}, outdir, "2")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	summary, err := os.ReadFile(filepath.Join(outdir, "summary.txt"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(summary)
	if !strings.Contains(s, "failed, not counted (see OUTDIR's JSON and perfbot's stderr): aa 1 planted 1 aa 2 planted 2") {
		t.Errorf("summary does not list the four failed comparisons:\n%s", s)
	}
	for _, counted := range []string{"A/A false alarms", "found and attributed", "miss:"} {
		if strings.Contains(s, counted) {
			t.Errorf("summary counts failed comparisons (%q):\n%s", counted, s)
		}
	}
}

func TestCompareFPRRefusesBadInput(t *testing.T) {
	repo := prepared(t)
	notRepo := t.TempDir()
	for _, c := range []struct {
		name string
		env  []string
		want string
	}{
		{"missing binary", []string{"REPO=" + repo, "PERFBOT=/nonexistent/perfbot"}, "PERFBOT=/nonexistent/perfbot is not an executable file"},
		{"no repository", []string{"REPO=/nonexistent/repo", "PERFBOT=/bin/true"}, "REPO=/nonexistent/repo is not a directory"},
		{"repository without a base", []string{"REPO=" + notRepo, "PERFBOT=/bin/true"}, "is not a git repository with a base (HEAD~1) and a planted HEAD"},
		{"bad UNTIL", []string{"UNTIL=not a time", "REPO=" + repo, "PERFBOT=/bin/true"}, "UNTIL is a time date -d reads, not 'not a time'"},
		{"past UNTIL", []string{"UNTIL=2020-01-01 00:00", "REPO=" + repo, "PERFBOT=/bin/true"}, "already past: no comparison would start"},
		{"bad PLANT_PCT", []string{"PLANT_PCT=5%"}, "PLANT_PCT is a whole percentage, not '5%'"},
		{"bad ORDER", []string{"ORDER=backwards"}, "ORDER is random, abba or alternate, not 'backwards'"},
		{"bad ALPHA", []string{"ALPHA=1%"}, "ALPHA is a level such as 0.01, not '1%'"},
	} {
		t.Run(c.name, func(t *testing.T) {
			outdir := filepath.Join(t.TempDir(), "out")
			out, code := fpr(t, c.env, outdir, "1")
			if code != 2 || !strings.Contains(out, c.want) {
				t.Errorf("exit %d, output %q; want exit 2 and %q", code, out, c.want)
			}
			if _, err := os.Stat(filepath.Join(outdir, "summary.txt")); err == nil {
				t.Errorf("a refused run wrote a summary")
			}
		})
	}
}

// fakePerfbot writes a perfbot that answers compare with a JSON report:
// msm_h a regression that explains total when --head is planted, an
// inconclusive A/A otherwise (the fields compare-fpr.sh reads).
func fakePerfbot(t *testing.T, planted string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "perfbot")
	script := `#!/bin/sh
case " $* " in
*" --head ` + planted + ` "*)
  echo '{"verdict":"regression","phases":[{"phase":"msm_h","unit":"sec/op","verdict":"regression","shift_pct":5.1,"mde_pct":3.2}],"attribution":[{"explained_by":["msm_h"]}],"sequential":{"looks":[{"runs":10},{"runs":25}]}}' ;;
*)
  echo '{"verdict":"inconclusive","phases":[{"phase":"msm_h","unit":"sec/op","verdict":"inconclusive","shift_pct":0.4,"mde_pct":5.5}],"sequential":{"looks":[{"runs":10},{"runs":60}]}}' ;;
esac
`
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

func headOf(t *testing.T, repo string) string {
	t.Helper()
	out, err := exec.Command("git", "-C", repo, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// The parallel runner's instances each count their own comparisons; its
// summary must count all of them once: two instances of two comparisons a
// kind are four A/A and four planted.
func TestCompareFPRParallelCountsEveryInstance(t *testing.T) {
	if _, err := exec.LookPath("taskset"); err != nil {
		t.Skip("taskset (util-linux) is not installed")
	}
	if runtime.NumCPU() < 2 {
		t.Skipf("two instances of one CPU each need two CPUs; this process may use %d", runtime.NumCPU())
	}
	repo := prepared(t)
	bin := fakePerfbot(t, headOf(t, repo))
	outdir := t.TempDir()
	cmd := exec.Command("bash", "compare-fpr-parallel.sh", outdir, "2", "1", "2")
	cmd.Env = append(os.Environ(), "REPO="+repo, "PERFBOT="+bin, "ALPHA=0.01")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	summary, err := os.ReadFile(filepath.Join(outdir, "all", "summary.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"alpha 0.01",
		"A/A false alarms: 0 of 4 (95% upper bound 60.2%), median rounds 60",
		"planted +5% msm_h found and attributed: 4 of 4, median rounds 25",
	} {
		if !strings.Contains(string(summary), want) {
			t.Errorf("summary lacks %q:\n%s", want, summary)
		}
	}
	for _, k := range []string{"0", "1"} {
		if _, err := os.Stat(filepath.Join(outdir, k, "planted-2.json")); err != nil {
			t.Errorf("instance %s did not run its own comparisons: %v", k, err)
		}
	}
}

// STOP_AFTER ends a measurement that would outlive its time (a GPU host's
// call) and still counts what finished: each instance's A/A comparison
// returns at once, its planted one hangs until it is stopped. The summary
// must count the two A/A, no planted comparison, say that both instances
// were cut off, and no hanging process may outlive the script.
func TestCompareFPRParallelStopAfterKeepsWhatFinished(t *testing.T) {
	for _, c := range []string{"taskset", "setsid", "pkill"} {
		if _, err := exec.LookPath(c); err != nil {
			t.Skipf("%s (util-linux, procps) is not installed", c)
		}
	}
	if runtime.NumCPU() < 2 {
		t.Skipf("two instances of one CPU each need two CPUs; this process may use %d", runtime.NumCPU())
	}
	repo := prepared(t)
	pids := t.TempDir()
	bin := filepath.Join(t.TempDir(), "perfbot")
	script := `#!/bin/sh
case " $* " in
*" --head ` + headOf(t, repo) + ` "*)
  echo $$ > "` + pids + `/$$"
  exec sleep 300 ;;
*)
  echo '{"verdict":"inconclusive","phases":[{"phase":"msm_h","unit":"sec/op","verdict":"inconclusive","shift_pct":0.4,"mde_pct":5.5}],"sequential":{"looks":[{"runs":10},{"runs":60}]}}' ;;
esac
`
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	outdir := t.TempDir()
	// The deadline only turns a STOP_AFTER that does not stop into a
	// failure instead of a five-minute hang.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "compare-fpr-parallel.sh", outdir, "2", "1", "1")
	cmd.Env = append(os.Environ(), "REPO="+repo, "PERFBOT="+bin, "STOP_AFTER=3")
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("STOP_AFTER=3 did not stop the instances:\n%s", out)
	}
	if err != nil {
		t.Fatalf("a stopped run is not a failed one, but: %v\n%s", err, out)
	}
	summary, err := os.ReadFile(filepath.Join(outdir, "all", "summary.txt"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(summary)
	for _, want := range []string{
		"A/A false alarms: 0 of 2 (95% upper bound 84.2%), median rounds 60",
		"stopped after 3 s (STOP_AFTER): 2 of 2 instances were cut off",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("summary lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "planted +5% msm_h found") {
		t.Errorf("summary counts the planted comparisons that were cut off:\n%s", s)
	}
	hung, err := os.ReadDir(pids)
	if err != nil {
		t.Fatal(err)
	}
	if len(hung) != 2 {
		t.Fatalf("%d planted comparisons started, want one an instance (2)", len(hung))
	}
	for _, e := range hung {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			t.Fatal(err)
		}
		// The group's TERM is sent before the script returns; the process
		// may still be a zombie for a moment until init reaps it.
		alive := true
		for i := 0; i < 50 && alive; i++ {
			alive = !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) && !zombie(pid)
			if alive {
				time.Sleep(100 * time.Millisecond)
			}
		}
		if alive {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Errorf("the planted comparison's process %d outlived STOP_AFTER", pid)
		}
	}
}

// zombie reports whether pid has exited and waits only to be reaped.
func zombie(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the command's closing parenthesis.
	i := strings.LastIndexByte(string(stat), ')')
	return i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z'
}

func TestCompareFPRParallelRefusesBadInput(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
		env  []string
		want string
	}{
		{"more CPUs than the machine", []string{"4096", "1"}, nil, "4096 instances of 1 CPUs need 4096 CPUs; this machine has"},
		{"not a number", []string{"two", "1"}, nil, "P, CPUS_EACH and N are positive whole numbers, not 'two'"},
		{"CPUS set", []string{"1", "1"}, []string{"CPUS=1"}, "each instance's CPUs come from taskset; unset CPUS"},
		{"bad STOP_AFTER", []string{"1", "1"}, []string{"STOP_AFTER=9m"}, "STOP_AFTER is a positive whole number of seconds, not '9m'"},
	} {
		t.Run(c.name, func(t *testing.T) {
			outdir := filepath.Join(t.TempDir(), "out")
			cmd := exec.Command("bash", append([]string{"compare-fpr-parallel.sh", outdir}, c.args...)...)
			cmd.Env = append(os.Environ(), c.env...)
			out, err := cmd.CombinedOutput()
			ee, ok := err.(*exec.ExitError)
			if !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), c.want) {
				t.Errorf("err %v, output %q; want exit 2 and %q", err, out, c.want)
			}
			if _, err := os.Stat(outdir); err == nil {
				t.Errorf("a refused run made its OUTDIR")
			}
		})
	}
}

// meter.py summarises what perfbot compare stored about other processes'
// CPU use, for compare-fpr.sh and each parallel instance, and stays silent
// (creating nothing) when there is no database.
func TestMeterSummarisesStoredLoad(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	db := filepath.Join(t.TempDir(), "bench.db")
	mk := exec.Command("python3", "-c", `import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("create table comparisons (inputs text)")
for v in (0.84, 0.80, 0.89):
    c.execute("insert into comparisons values (?)", ('{"load": {"other_cpus": %s}}' % v,))
c.commit()`, db)
	if out, err := mk.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	out, err := exec.Command("python3", "meter.py", db, "instance 3: ").CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	want := "instance 3: other processes' CPU during the runs (perfbot compare's meter): median 0.84 CPUs, min 0.80, max 0.89, over 3 comparisons\n"
	if string(out) != want {
		t.Errorf("meter.py printed %q, want %q", out, want)
	}
	missing := filepath.Join(t.TempDir(), "none.db")
	out, err = exec.Command("python3", "meter.py", missing).CombinedOutput()
	if err != nil || len(out) != 0 {
		t.Errorf("without a database: err %v, output %q; want silence", err, out)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Errorf("meter.py created %s", missing)
	}
}
