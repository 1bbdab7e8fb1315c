package system

import (
	"cmp"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// clockTicks is USER_HZ, the unit of the times in /proc/PID/stat and
// /proc/stat: 100 on every Linux architecture Go supports (the kernel's
// internal HZ may differ; what it exports to user space does not).
const clockTicks = 100

// A procStat is what /proc/PID/stat says about one process.
type procStat struct {
	ppid  int
	state string // R, S, D, Z…
	comm  string // from stat, for when /proc/PID/comm is gone
	// ticks is the CPU time of all its threads (utime+stime);
	// childTicks that of its waited-for children (cutime+cstime).
	ticks, childTicks uint64
	start             uint64 // starttime: clock ticks after boot
}

// A procSnapshot is every process's stat at one moment.
type procSnapshot struct {
	procs map[int]procStat
	// uptime is /proc/uptime in clock ticks when the snapshot began, or
	// 0 if it could not be read.
	uptime uint64
}

// snapshot reads /proc/PID/stat of every process. Processes that exit
// while it reads are left out; only a /proc that cannot be listed is an
// error.
func (f fsys) snapshot() (procSnapshot, error) {
	s := procSnapshot{procs: map[int]procStat{}}
	if up, err := f.read("/proc/uptime"); err == nil {
		if secs, err := strconv.ParseFloat(strings.Fields(up + " x")[0], 64); err == nil {
			s.uptime = uint64(secs * clockTicks)
		}
	}
	entries, err := os.ReadDir(f.path("/proc"))
	if err != nil {
		return s, readError("/proc", err)
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 {
			continue
		}
		b, err := os.ReadFile(f.path(fmt.Sprintf("/proc/%d/stat", pid)))
		if err != nil {
			continue
		}
		if st, ok := parseStat(string(b)); ok {
			s.procs[pid] = st
		}
	}
	return s, nil
}

// parseStat parses the content of /proc/PID/stat. The command name is in
// parentheses and may itself hold spaces and parentheses, so the fields
// are counted from the last ')'.
func parseStat(s string) (procStat, bool) {
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return procStat{}, false
	}
	// fields[0] is field 3 of proc(5), the state.
	fields := strings.Fields(s[end+1:])
	if len(fields) < 20 {
		return procStat{}, false
	}
	num := func(field int) uint64 {
		v, _ := strconv.ParseUint(fields[field-3], 10, 64)
		return v
	}
	ppid, err := strconv.Atoi(fields[4-3])
	if err != nil {
		return procStat{}, false
	}
	return procStat{
		ppid:       ppid,
		state:      fields[0],
		comm:       s[open+1 : end],
		ticks:      num(14) + num(15),
		childTicks: num(16) + num(17),
		start:      num(22),
	}, true
}

// inTree returns a function that reports whether a process is one of
// roots or descends from one, by the parent links of the snapshots
// (the later first: a process started in between is only there).
func inTree(roots []int, snaps ...procSnapshot) func(pid int) bool {
	set := map[int]bool{}
	for _, r := range roots {
		set[r] = true
	}
	parent := func(pid int) (int, bool) {
		for i := len(snaps) - 1; i >= 0; i-- {
			if st, ok := snaps[i].procs[pid]; ok {
				return st.ppid, true
			}
		}
		return 0, false
	}
	return func(pid int) bool {
		for range 4096 { // a guard against a cycle of reused pids
			if set[pid] {
				return true
			}
			pp, ok := parent(pid)
			if !ok || pp <= 0 || pp == pid {
				return false
			}
			pid = pp
		}
		return false
	}
}

// cpuUse returns the CPU each process used between two snapshots wall
// apart, in percent of one CPU, the busiest first, leaving out those for
// which skip is true and those that used none. A process not in before
// (or whose pid was reused) started in between, so all of its time
// counts, unless it started before the first snapshot and was only
// missed by it. Processes that started and exited in between are in
// neither snapshot and cannot be named.
func cpuUse(before, after procSnapshot, wall time.Duration, skip func(int) bool) []Process {
	if wall <= 0 {
		return nil
	}
	var ps []Process
	for pid, a := range after.procs {
		if skip(pid) {
			continue
		}
		used := a.ticks
		if b, ok := before.procs[pid]; ok && b.start == a.start {
			used = a.ticks - min(b.ticks, a.ticks)
		} else if before.uptime > 0 && a.start+1 < before.uptime {
			continue
		}
		if used == 0 {
			continue
		}
		ps = append(ps, Process{
			PID:    pid,
			Comm:   a.comm,
			CPUPct: float64(used) / clockTicks / wall.Seconds() * 100,
		})
	}
	slices.SortFunc(ps, func(x, y Process) int {
		return cmp.Or(cmp.Compare(y.CPUPct, x.CPUPct), cmp.Compare(x.PID, y.PID))
	})
	return ps
}

// top returns the first n of ps with their command names read from
// /proc/PID/comm where it is still there.
func (f fsys) top(ps []Process, n int) []Process {
	ps = slices.Clone(ps[:min(n, len(ps))])
	for i := range ps {
		if c, err := f.read(fmt.Sprintf("/proc/%d/comm", ps[i].PID)); err == nil && c != "" {
			ps[i].Comm = c
		}
	}
	return ps
}
