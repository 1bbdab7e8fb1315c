package main

import (
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perfbot/perfbot/github/githubtest"
)

// TestBotWorkerKilledMidRunLeavesNoProcessOfTheRun SIGKILLs a worker while
// a benchmark runs that started two processes of its own: a sleep in the
// background and one it waits for, each with an argument unique to this
// test. The worker's death takes the benchmark's shell with it
// (Pdeathsig), not the sleeps, which nothing else ends: the test checks
// that both still run, and then that the next worker started on the host
// ends both as it starts, and says so in its log, naming each by pid and
// command and the killed worker as their owner.
func TestBotWorkerKilledMidRunLeavesNoProcessOfTheRun(t *testing.T) {
	id := fmt.Sprintf("%09d", time.Now().UnixNano()%1e9)
	args := []string{"300." + id, "301." + id} // sleep's arguments: seconds
	script := fmt.Sprintf("sleep %s & sleep %s; echo 'BenchmarkX/phase=total 1 5 ns/op'", args[0], args[1])
	e := startBot(t, botOptions{noWorker: true, bench: script, count: 1})
	t.Cleanup(func() {
		for _, pid := range sleeping(args) {
			if p, err := os.FindProcess(pid); err == nil {
				p.Kill()
			}
		}
	})
	const pr = 41
	base := e.repo.Git(t, "rev-parse", "HEAD")
	e.repo.Git(t, "checkout", "--quiet", "-b", "feature")
	head := e.repo.Commit(t, "a change", map[string]string{"value": "1300\n"})
	e.gh.AddPullRequest(githubtest.PR{Owner: e2eOwner, Repo: e2eName, Number: pr, BaseSHA: base, HeadRef: "feature", HeadSHA: head})
	data := t.TempDir()

	first, _ := startWorkerProcess(t, e, data)
	if code, body := e.post(t, "pull_request", e.nextDelivery(), e.pullRequestPayload("opened", pr, base, head)); code != http.StatusAccepted {
		t.Fatalf("opened: %d %q", code, body)
	}
	// The run's time limit is 30 s: the kill comes well before it.
	e.waitFor(t, "the benchmark's two sleeps", 90*time.Second, func() bool { return len(sleeping(args)) == 2 })
	if err := first.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	first.Wait()
	left := sleeping(args)
	if len(left) != 2 {
		t.Fatalf("sleeps %v alive after the worker was killed; want both: this test proves nothing if something else ends them", left)
	}

	_, log := startWorkerProcess(t, e, data)
	e.waitFor(t, "the new worker to end what the killed one left", 60*time.Second, func() bool {
		return strings.Contains(log.String(), "leftover processes of perfbot processes that are gone")
	})
	if alive := sleeping(args); len(alive) > 0 {
		t.Errorf("sleeps %v of the killed worker's run alive after the new worker started; want none", alive)
	}
	var lines []string
	for line := range strings.SplitSeq(log.String(), "\n") {
		if strings.Contains(line, "msg=\"ended a leftover process") {
			lines = append(lines, line)
		}
	}
	owner := "/" + strconv.Itoa(first.Process.Pid) + "/" // the killed worker's pid, in its owner
	for i, pid := range left {
		n := 0
		for _, line := range lines {
			if strings.Contains(line, fmt.Sprintf(" pid=%d ", pid)) {
				n++
				if !strings.Contains(line, fmt.Sprintf("command=\"sleep %s\"", args[i])) || !strings.Contains(line, owner) {
					t.Errorf("log line %q: want command \"sleep %s\" and the killed worker's owner (pid %d)", line, args[i], first.Process.Pid)
				}
			}
		}
		if n != 1 {
			t.Errorf("%d log lines say that the worker ended sleep %s (pid %d); want one. Lines:\n%s", n, args[i], pid, strings.Join(lines, "\n"))
		}
	}
	t.Logf("the new worker's log:\n%s", strings.Join(lines, "\n"))
}

// sleeping returns the pids of the live sleep processes whose argument is
// one of args, in the order of args.
func sleeping(args []string) []int {
	var pids []int
	dirs, _ := os.ReadDir("/proc")
	for _, a := range args {
		for _, d := range dirs {
			pid, err := strconv.Atoi(d.Name())
			if err != nil {
				continue
			}
			// A zombie's command line is empty: it runs no more.
			cmdline, err := os.ReadFile("/proc/" + d.Name() + "/cmdline")
			if err == nil && string(cmdline) == "sleep\x00"+a+"\x00" {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}
