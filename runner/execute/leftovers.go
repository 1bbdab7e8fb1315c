package execute

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/perfbot/perfbot/runner/system"
)

// OwnerEnv marks every process perfbot starts to measure or build, and
// every process those start, as started for one perfbot process: its
// value is that process's owner (system.Owner), the owner its sessions
// are stored with. Run, StartResident and RunCallgrind set it last in the
// benchmark's environment, so that a config's env: cannot change it.
//
// When perfbot itself is killed (SIGKILL, the OOM killer, a crash), the
// direct child of a run dies with it (Pdeathsig), but what the child
// started runs on: the process group is killed by the process that
// died. EndLeftovers, which the next perfbot process on the host runs,
// finds those processes by this variable.
const OwnerEnv = "PERFBOT_OWNER"

var ownerMarker = sync.OnceValue(func() string {
	if o := system.Owner(); o != "" {
		return OwnerEnv + "=" + o
	}
	return ""
})

// OwnerMarker returns the OwnerEnv entry (KEY=VALUE) of this process,
// which Run gives every benchmark process, for the other commands perfbot
// runs (builds). It is "" where this process has no owner: /proc does
// not say all of it.
func OwnerMarker() string { return ownerMarker() }

// groupGrace is how long a run waits, once it has killed what its
// benchmark left in its process group, for those processes to be gone;
// EndLeftovers waits as long for the processes it killed.
const groupGrace = 5 * time.Second

// A Leftover is a process that EndLeftovers found: one started for a
// perfbot process that is gone.
type Leftover struct {
	PID int
	// Command is its command line, the arguments joined by spaces (at
	// most 200 bytes), or its name when the command line is empty.
	Command string
	// Owner is the owner of the perfbot process it was started for
	// (OwnerEnv's value).
	Owner string
	// Err is why it could not be killed (another user's process), or why
	// it still ran groupGrace after SIGKILL; nil once it is gone.
	Err error
}

// EndLeftovers kills every process of this host whose environment
// carries OwnerEnv naming an owner that gone reports gone (given
// system.OwnerGone: a perfbot process of this boot and pid namespace
// that no longer runs), waits at most groupGrace for them to be gone, and
// returns them ordered by pid. Such a process is a benchmark, a build
// step or something one of them started for a perfbot process that died
// without ending it; left alone it would run beside the next comparison
// on the host.
//
// Nothing but that variable picks a process: not its name, user or
// parent. This process and processes whose environment cannot be read
// (other users', zombies, those that exit meanwhile) are skipped. Each
// marked process is held by a pidfd (os.FindProcess) and its environment
// read again before it is killed, so a pid that a new process reuses
// meanwhile is not killed in its stead. A process that cleared or
// rewrote its environment (env -i, setproctitle) is not found.
// EndLeftovers returns an error only when /proc cannot be listed.
func EndLeftovers(gone func(owner string) bool) ([]Leftover, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("end leftover processes: %w", err)
	}
	judged := map[string]bool{} // owner -> gone
	var found []Leftover
	var held []*os.Process
	defer func() {
		for _, p := range held {
			p.Release()
		}
	}()
	self := os.Getpid()
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 || pid == self {
			continue
		}
		owner, ok := markedOwner(pid)
		if !ok {
			continue
		}
		g, seen := judged[owner]
		if !seen {
			g = gone(owner)
			judged[owner] = g
		}
		if !g {
			continue
		}
		// Hold the process (a pidfd where the kernel has them), read its
		// mark again, and check that the process held still exists: then
		// the mark read is its own, not that of a process that took its
		// pid after the first read.
		p, err := os.FindProcess(pid)
		if err != nil {
			continue
		}
		if again, ok := markedOwner(pid); !ok || again != owner || p.Signal(syscall.Signal(0)) != nil {
			p.Release()
			continue
		}
		l := Leftover{PID: pid, Command: commandLine(pid), Owner: owner}
		if err := p.Signal(syscall.SIGKILL); err != nil {
			if errors.Is(err, os.ErrProcessDone) {
				p.Release()
				continue
			}
			l.Err = fmt.Errorf("kill: %w", err)
		}
		found = append(found, l)
		held = append(held, p)
	}
	deadline := time.Now().Add(groupGrace)
	for i := range found {
		if found[i].Err != nil {
			continue
		}
		for !procGone(held[i]) {
			if time.Now().After(deadline) {
				found[i].Err = fmt.Errorf("still ran %v after SIGKILL", groupGrace)
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	slices.SortFunc(found, func(a, b Leftover) int { return a.PID - b.PID })
	return found, nil
}

// markedOwner returns the value of OwnerEnv in process pid's
// environment, and whether it has one.
func markedOwner(pid int) (string, bool) {
	env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		return "", false
	}
	prefix := []byte(OwnerEnv + "=")
	for kv := range bytes.SplitSeq(env, []byte{0}) {
		if v, ok := bytes.CutPrefix(kv, prefix); ok && len(v) > 0 {
			return string(v), true
		}
	}
	return "", false
}

// commandLine returns process pid's command line for a log, or its name
// where the command line is empty.
func commandLine(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	s := strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " "))
	if s == "" {
		c, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
		s = "[" + strings.TrimSpace(string(c)) + "]"
	}
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// procGone reports whether the process p holds runs no more: it exited
// (a zombie too: it runs no more, and its parent, not perfbot, reaps it).
func procGone(p *os.Process) bool {
	if p.Signal(syscall.Signal(0)) != nil {
		return true
	}
	st, err := statFields(p.Pid)
	return err != nil || st[0] == "Z" || st[0] == "X"
}

// killGroup kills process group pgid and waits, at most groupGrace, until
// no process of it runs (zombies count as gone, as for procGone). found
// says whether the group had any process; left lists those still running
// at the limit.
func killGroup(pgid int) (found bool, left []int) {
	if syscall.Kill(-pgid, syscall.SIGKILL) != nil {
		return false, nil // ESRCH: no process in the group
	}
	deadline := time.Now().Add(groupGrace)
	for {
		left = groupMembers(pgid)
		if len(left) == 0 || time.Now().After(deadline) {
			return true, left
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// groupMembers lists the processes of group pgid that are not zombies.
func groupMembers(pgid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	want := strconv.Itoa(pgid)
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 {
			continue
		}
		// Field 3 of proc(5) is the state, field 5 the process group.
		if f, err := statFields(pid); err == nil && f[2] == want && f[0] != "Z" && f[0] != "X" {
			pids = append(pids, pid)
		}
	}
	return pids
}

// statFields returns the fields of /proc/PID/stat after the command
// name, which is in parentheses and may hold spaces: the first is field 3
// of proc(5), the state. There are at least 13.
func statFields(pid int) ([]string, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, err
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil, fmt.Errorf("/proc/%d/stat has no command name", pid)
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return nil, fmt.Errorf("/proc/%d/stat has %d fields after the name", pid, len(f))
	}
	return f, nil
}
