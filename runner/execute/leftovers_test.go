package execute

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/runner/system"
)

// tagEnv names a variable a test gives the processes it starts, with a
// value of its own, so that it finds them and only them.
const tagEnv = "PERFBOT_EXECUTE_TAG"

// newTag returns an entry of tagEnv unique to the calling test.
func newTag(t *testing.T) string {
	return fmt.Sprintf("%s=%s-%d", tagEnv, strings.ReplaceAll(t.Name(), "/", "-"), time.Now().UnixNano())
}

// tagged returns the processes alive (not zombies) whose environment
// holds entry, ordered by pid.
func tagged(entry string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if err != nil || !slices.ContainsFunc(bytes.Split(env, []byte{0}), func(kv []byte) bool { return string(kv) == entry }) {
			continue
		}
		if f, err := statFields(pid); err == nil && f[0] != "Z" && f[0] != "X" {
			pids = append(pids, pid)
		}
	}
	slices.Sort(pids)
	return pids
}

// sleeps returns those of pids that run sleep(1).
func sleeps(pids []int) []int {
	var out []int
	for _, pid := range pids {
		if comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); err == nil && string(comm) == "sleep\n" {
			out = append(out, pid)
		}
	}
	return out
}

// waitTree waits up to 10 s until two live processes carrying entry run
// sleep, as the tree of "sleep 60 & sleep 60" does once both have started
// (whether or not the shell runs on beside them), and returns all
// processes carrying entry.
func waitTree(t *testing.T, entry string) []int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		pids := tagged(entry)
		if len(sleeps(pids)) >= 2 {
			return pids
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes %v carry %s after 10 s; want two sleeps among them", pids, entry)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// killTagged kills what a failed test left running.
func killTagged(entry string) {
	for _, pid := range tagged(entry) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// TestRunLeavesNoProcessOfItsGroupAlive runs benchmarks that start a
// grandchild in the background and checks, the moment Run returns, that
// no process of the run is left: whether the benchmark exited by itself
// leaving the grandchild, ran past its time limit, or was cancelled.
func TestRunLeavesNoProcessOfItsGroupAlive(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		script  string
		timeout time.Duration
		cancel  bool // cancel the run once the grandchild runs
		status  analysis.Status
	}{
		{name: "exited", script: `echo "pgid: $$"; sleep 30 & echo "BenchmarkX 1 5 ns/op"`, status: analysis.StatusOK},
		{name: "timed-out", script: `sleep 30 & sleep 30`, timeout: time.Second, status: analysis.StatusTimedOut},
		{name: "cancelled", script: `sleep 30 & sleep 30`, cancel: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tag := newTag(t)
			t.Cleanup(func() { killTagged(tag) })
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.cancel {
				go func() {
					// Not waitTagged: no t.Fatal off the test's goroutine.
					for deadline := time.Now().Add(10 * time.Second); len(sleeps(tagged(tag))) < 2 && time.Now().Before(deadline); {
						time.Sleep(10 * time.Millisecond)
					}
					cancel()
				}()
			}
			res, err := Run(ctx, Spec{Args: []string{"sh", "-c", tc.script}, Env: []string{tag}, Timeout: tc.timeout})
			left := tagged(tag) // at once: Run waits for its group to be gone
			switch {
			case tc.cancel && !errors.Is(err, context.Canceled):
				t.Fatalf("Run cancelled: %v, want context.Canceled", err)
			case !tc.cancel && err != nil:
				t.Fatal(err)
			case !tc.cancel:
				wantStatus(t, res, tc.status)
			}
			if len(left) > 0 {
				t.Errorf("processes %v of the run still alive when Run returned", left)
			}
			if tc.status == analysis.StatusOK {
				pgid, err := strconv.Atoi(res.Config["pgid"])
				if err != nil {
					t.Fatalf("the shell printed no pgid: config %v", res.Config)
				}
				if m := groupMembers(pgid); len(m) > 0 {
					t.Errorf("processes %v of group %d still alive when Run returned", m, pgid)
				}
				want := "killed processes the benchmark left running in its process group"
				if !slices.Contains(res.Warnings, want) {
					t.Errorf("warnings %q, want %q", res.Warnings, want)
				}
			}
		})
	}
}

// TestRunMarksEveryProcessWithItsOwner checks that a benchmark's
// processes carry OwnerEnv with this process's owner, which a config's
// env cannot change.
func TestRunMarksEveryProcessWithItsOwner(t *testing.T) {
	t.Parallel()
	me := system.Owner()
	if me == "" {
		t.Skip("this host's /proc gives no boot id or pid namespace: perfbot has no owner to mark processes with")
	}
	script := `echo "owner: $PERFBOT_OWNER"; echo "grandchild: $(sh -c 'echo $PERFBOT_OWNER')"; echo "BenchmarkX 1 5 ns/op"`
	res, err := Run(context.Background(), Spec{Args: []string{"sh", "-c", script}, Env: []string{OwnerEnv + "=forged"}})
	if err != nil {
		t.Fatal(err)
	}
	wantStatus(t, res, analysis.StatusOK)
	if res.Config["owner"] != me || res.Config["grandchild"] != me {
		t.Errorf("the benchmark saw %s=%q, its child %q; want %q for both", OwnerEnv, res.Config["owner"], res.Config["grandchild"], me)
	}
}

// TestEndLeftoversEndsTheProcessTreesOfGoneOwnersOnly starts three trees
// of processes (a shell with a sleeping child in the background): one
// marked with the owner of a perfbot process that is gone, one with this
// live process's, one with an owner of another boot. EndLeftovers must
// kill the first tree, all of it, and touch neither of the others.
func TestEndLeftoversEndsTheProcessTreesOfGoneOwnersOnly(t *testing.T) {
	t.Parallel()
	me := system.Owner()
	if me == "" {
		t.Skip("this host's /proc gives no boot id or pid namespace: no owner is ever judged gone")
	}
	parts := strings.Split(me, "/")
	// This pid, started at another time: a perfbot process gone.
	goneHere := fmt.Sprintf("%s/%s/%s/1", parts[0], parts[1], parts[2])
	owners := map[string]string{
		// The tree judged gone. Its owner is of another boot, which
		// system.OwnerGone never judges gone, and this test's predicate
		// does: a sweep by any other perfbot process on the machine (a
		// worker started by another package's tests, beside this one in
		// make test) leaves it alone, so what this call ends is its own
		// doing. It once found the tree already ended by such a sweep.
		"gone":         "11111111-1111-1111-1111-111111111111/" + strings.Join(parts[1:], "/") + "-gone",
		"alive":        me,
		"another boot": "00000000-0000-0000-0000-000000000000/" + strings.Join(parts[1:], "/"),
	}
	if !system.OwnerGone(goneHere) || system.OwnerGone(owners["gone"]) || system.OwnerGone(owners["alive"]) || system.OwnerGone(owners["another boot"]) {
		t.Fatal("system.OwnerGone does not judge the test's owners as this test expects")
	}
	gone := func(owner string) bool { return owner == owners["gone"] }
	tags := map[string]string{}
	trees := map[string][]int{}
	for name, owner := range owners {
		tag := newTag(t) + "-" + strings.ReplaceAll(name, " ", "-")
		tags[name] = tag
		cmd := exec.Command("sh", "-c", "sleep 60 & sleep 60")
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), OwnerEnv + "=" + owner, tag}
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			_ = cmd.Wait()
		})
		trees[name] = waitTree(t, tag)
	}

	left, err := EndLeftovers(gone)
	if err != nil {
		t.Fatal(err)
	}
	var ended []int
	for _, l := range left {
		if l.Owner != owners["gone"] { // another test's, or another user's leftover
			continue
		}
		if l.Err != nil || !strings.Contains(l.Command, "sleep") {
			t.Errorf("leftover %+v: want it killed, named by its command", l)
		}
		ended = append(ended, l.PID)
	}
	if !slices.Equal(ended, trees["gone"]) {
		t.Errorf("EndLeftovers ended %v of the gone owner; want its whole tree %v", ended, trees["gone"])
	}
	if alive := tagged(tags["gone"]); len(alive) > 0 {
		t.Errorf("processes %v of the gone owner alive after EndLeftovers returned", alive)
	}
	for _, name := range []string{"alive", "another boot"} {
		if alive := tagged(tags[name]); !slices.Equal(alive, trees[name]) {
			t.Errorf("the %s owner's processes: %v alive after EndLeftovers, want all of %v", name, alive, trees[name])
		}
	}
	t.Logf("ended %v; kept %v and %v", ended, trees["alive"], trees["another boot"])
}
