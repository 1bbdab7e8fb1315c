package execute

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// groupGrace is how long a run waits, once it has killed what its
// benchmark left in its process group, for those processes to be gone.
const groupGrace = 5 * time.Second

// killGroup kills process group pgid and waits, at most groupGrace, until
// no process of it runs (zombies count as gone: they run no more, and their parent, not
// perfbot, reaps them). found
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
