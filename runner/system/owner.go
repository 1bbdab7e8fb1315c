package system

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Owner names this process so that another process on the same host
// can later tell whether it is still alive (OwnerGone): the host's boot
// id, this process's pid namespace, its pid and its start time in clock
// ticks after boot (so that a reused pid is not taken for it), as
// "BOOT/PIDNS/PID/START". It is "" where /proc does not say all of it;
// such an owner is never judged gone.
func Owner() string {
	o, err := ownerOf(os.Getpid())
	if err != nil {
		return ""
	}
	return o
}

// ownerOf is Owner of process pid, which must be in this process's pid
// namespace.
func ownerOf(pid int) (string, error) {
	boot, ns, err := hostScope()
	if err != nil {
		return "", err
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", err
	}
	st, ok := parseStat(string(b))
	if !ok {
		return "", fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	return fmt.Sprintf("%s/%s/%d/%d", boot, ns, pid, st.start), nil
}

// hostScope returns the boot id and this process's pid namespace: the
// scope in which a pid names one process.
func hostScope() (boot, ns string, err error) {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return "", "", err
	}
	ns, err = os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return "", "", err
	}
	boot = strings.TrimSpace(string(b))
	if boot == "" || strings.Contains(boot, "/") || strings.Contains(ns, "/") {
		return "", "", fmt.Errorf("unexpected boot id %q or pid namespace %q", boot, ns)
	}
	return boot, ns, nil
}

// OwnerGone reports whether the process owner names (Owner) is known to
// be gone: it ran on this host since its last boot, in this pid
// namespace, and no process with its pid and start time is left. An
// owner from another boot, host, or namespace, or one it cannot parse,
// is not known to be gone: it may be alive elsewhere (a clone of this
// machine, another container), so it reports false.
func OwnerGone(owner string) bool {
	parts := strings.Split(owner, "/")
	if len(parts) != 4 {
		return false
	}
	boot, ns, err := hostScope()
	if err != nil || parts[0] != boot || parts[1] != ns {
		return false
	}
	pid, err1 := strconv.Atoi(parts[2])
	start, err2 := strconv.ParseUint(parts[3], 10, 64)
	if err1 != nil || err2 != nil || pid <= 0 {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if os.IsNotExist(err) {
		return true
	}
	if err != nil {
		return false
	}
	st, ok := parseStat(string(b))
	if !ok {
		return false
	}
	// A zombie has not been reaped yet but is done measuring.
	return st.start != start || st.state == "Z"
}
