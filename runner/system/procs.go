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

// A CommandUse is the CPU that the processes of one command name used
// over an interval, those that started and exited within it included.
type CommandUse struct {
	// Comm is the command name (/proc/PID/stat's), or "NAME's children"
	// for the time of children that NAME waited for and no sample saw.
	Comm string `json:"comm"`
	// Processes counts the processes of that name the samples saw (the
	// ones no sample saw are not counted, though their time is).
	Processes int `json:"processes"`
	// PID is the busiest of them.
	PID int `json:"pid"`
	// CPUPct is their CPU time over the interval, in percent of one CPU.
	CPUPct float64 `json:"cpu_pct"`
}

// procKey names one process: a pid may be reused, its start time with it
// may not.
type procKey struct {
	pid   int
	start uint64
}

// A cmdTally is one command name's CPU so far.
type cmdTally struct {
	ticks   uint64
	procs   map[procKey]uint64 // each process's ticks
	busiest procKey
}

// A cpuTracker adds up, sample by sample, the CPU every process outside
// skip used, by command name. A process's own time (utime+stime) counts
// from one sample to the next. A process that exits between two samples
// is seen at most up to the last; the rest of its time, and all of the
// time of a process no sample saw, appears when its parent waits for it,
// as the parent's cutime+cstime growing. That growth, less the time
// already counted of the processes that vanished under it, is credited
// to the command that used the most time among the parent's vanished
// descendants, or to "PARENT's children" when no sample saw any.
type cpuTracker struct {
	// roots and their descendants are left out.
	roots []int
	prev  procSnapshot
	cmds  map[string]*cmdTally
	// reaped is each waiting parent's unexplained children's time, and
	// under the vanished descendants' time by command, per parent.
	reaped map[procKey]int64
	under  map[procKey]map[string]uint64
	comms  map[procKey]string
}

func newCPUTracker(first procSnapshot, roots ...int) *cpuTracker {
	return &cpuTracker{
		roots:  roots,
		prev:   first,
		cmds:   map[string]*cmdTally{},
		reaped: map[procKey]int64{},
		under:  map[procKey]map[string]uint64{},
		comms:  map[procKey]string{},
	}
}

func (c *cpuTracker) add(comm string, k procKey, ticks uint64) {
	t := c.cmds[comm]
	if t == nil {
		t = &cmdTally{procs: map[procKey]uint64{}}
		c.cmds[comm] = t
	}
	t.ticks += ticks
	t.procs[k] += ticks
	if t.busiest == (procKey{}) || t.procs[k] > t.procs[t.busiest] {
		t.busiest = k
	}
}

// step takes the next snapshot into account.
func (c *cpuTracker) step(cur procSnapshot) {
	prev := c.prev
	skip := inTree(c.roots, prev, cur)
	same := func(pid int) (procStat, procStat, bool) {
		p, okP := prev.procs[pid]
		q, okQ := cur.procs[pid]
		return p, q, okP && okQ && p.start == q.start
	}
	for pid, q := range cur.procs {
		if skip(pid) {
			continue
		}
		k := procKey{pid, q.start}
		used := q.ticks
		if p, _, ok := same(pid); ok {
			used = q.ticks - min(p.ticks, q.ticks)
			if d := int64(q.childTicks) - int64(p.childTicks); d > 0 {
				c.reaped[k] += d
				c.comms[k] = q.comm
			}
		} else if prev.uptime > 0 && q.start+1 < prev.uptime {
			continue // alive at prev, but prev missed it
		}
		if used > 0 {
			c.add(q.comm, k, used)
		}
	}
	// The processes that vanished: their time up to prev is counted, or
	// was before the first snapshot; what their waiting ancestor's
	// children's time grew by beyond it is not.
	for pid, p := range prev.procs {
		if _, _, ok := same(pid); ok || skip(pid) {
			continue
		}
		anc := p.ppid
		for range 4096 {
			if _, _, ok := same(anc); ok || anc <= 1 {
				break
			}
			pp, ok := prev.procs[anc]
			if !ok {
				anc = 0
				break
			}
			anc = pp.ppid
		}
		if _, q, ok := same(anc); ok {
			k := procKey{anc, q.start}
			c.reaped[k] -= int64(p.ticks + p.childTicks)
			if c.under[k] == nil {
				c.under[k] = map[string]uint64{}
			}
			// Weighed by its time, plus one: a process seen with none
			// still names its command.
			c.under[k][p.comm] += p.ticks + 1
		}
	}
	c.prev = cur
}

// use returns the CPU by command over wall, the busiest first, and
// their total, in percent of one CPU.
func (c *cpuTracker) use(wall time.Duration) (cmds []CommandUse, total float64) {
	if wall <= 0 {
		return nil, 0
	}
	ticks := map[string]uint64{}
	pids := map[string]int{}
	procs := map[string]int{}
	for comm, t := range c.cmds {
		ticks[comm], pids[comm], procs[comm] = t.ticks, t.busiest.pid, len(t.procs)
	}
	for k, n := range c.reaped {
		if n <= 0 {
			continue
		}
		comm, most := c.comms[k]+"'s children", uint64(0)
		for name, w := range c.under[k] {
			if w > most || w == most && name < comm {
				comm, most = name, w
			}
		}
		if _, ok := pids[comm]; !ok {
			pids[comm] = k.pid
		}
		ticks[comm] += uint64(n)
	}
	for comm, n := range ticks {
		if n == 0 {
			continue
		}
		pct := float64(n) / clockTicks / wall.Seconds() * 100
		total += pct
		cmds = append(cmds, CommandUse{Comm: comm, Processes: procs[comm], PID: pids[comm], CPUPct: pct})
	}
	slices.SortFunc(cmds, func(x, y CommandUse) int {
		return cmp.Or(cmp.Compare(y.CPUPct, x.CPUPct), cmp.Compare(x.Comm, y.Comm))
	})
	return cmds, total
}
