package system

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// A Usage is how the machine was used over an interval by everything but
// this process and its children.
type Usage struct {
	// Wall is the interval's length.
	Wall time.Duration `json:"wall_ns"`
	// OtherCPUs is the average number of CPUs busy with anything but
	// this process and its descendants: the machine's busy time (user,
	// nice, system, irq, softirq and steal in /proc/stat) less the CPU
	// time of this process and its descendants, over Wall, never below
	// 0. Processes that started and exited within the interval count
	// here but are in no snapshot, so Top cannot name them. Steal counts
	// as used by others: the hypervisor gave the CPU to another guest.
	OtherCPUs float64 `json:"other_cpus"`
	// OwnCPUs is the average number of CPUs this process and its
	// descendants used: its own CPU time and its waited-for children's
	// (getrusage), and the time of descendants still running at either
	// end (/proc/PID/stat), over Wall.
	OwnCPUs float64 `json:"own_cpus"`
	// StealPct is the share of all CPU time, in percent, that the
	// hypervisor gave to other guests while this machine's CPUs wanted
	// to run.
	StealPct float64 `json:"steal_pct"`
	// SwapIns counts the pages swapped in (/proc/vmstat pswpin).
	SwapIns uint64 `json:"swap_ins"`
	// Top are the other processes that used the most CPU in the
	// interval (at most 5, the busiest first), in percent of one CPU,
	// of those alive at its end.
	Top []Process `json:"top"`
	// Commands are the other processes' CPU by command name (those at 1%
	// of one CPU or more, at most 20, the busiest first), in percent of one CPU, sampled every
	// UsageSampleInterval: processes that started and exited between
	// samples count too, through their parents' waited-for children's
	// time (see CommandUse).
	Commands []CommandUse `json:"commands"`
	// UnattributedPct is the part of OtherCPUs, in percent of one CPU,
	// that no process accounts for: interrupts, the kernel's own
	// threads' rounding, and processes whose parent exited before
	// waiting for them.
	UnattributedPct float64 `json:"unattributed_pct"`
	// Unavailable says why the fields are zero, when the second
	// snapshot could not be taken.
	Unavailable string `json:"unavailable,omitempty"`
}

// maxCommands is how many commands a Usage names at most.
const maxCommands = 20

// UsageSampleInterval is how often a UsageMeter reads every process's
// CPU time between its first snapshot and Stop. A read takes about 14 µs
// of CPU a process (0.96 ms for 69 processes on the 2-core machine): a few
// hundred processes cost 1–2% of one CPU at this interval.
var UsageSampleInterval = 250 * time.Millisecond

// A UsageMeter holds the first snapshot of a Usage and samples every
// process's CPU time until Stop (or Close), which takes the last.
type UsageMeter struct {
	fs  fsys
	pid int
	at  usageSnapshot

	mu    sync.Mutex
	procs *cpuTracker
	done  chan struct{}
	ended sync.WaitGroup
	close sync.Once
}

// A usageSnapshot is the counters at one moment.
type usageSnapshot struct {
	when  time.Time
	stat  cpuStat
	own   time.Duration // self and waited-for children, by getrusage
	procs procSnapshot
	swap  uint64 // pswpin
	noSwp bool   // /proc/vmstat had no pswpin
}

// A cpuStat is the machine-wide line of /proc/stat, in clock ticks.
type cpuStat struct {
	busy, steal, total uint64
}

// StartUsage takes the first snapshot of the machine's CPU use: /proc/stat,
// getrusage of this process and its waited-for children, every process's
// /proc/PID/stat and /proc/vmstat.
func StartUsage() (*UsageMeter, error) {
	return startUsage(fsys{root: "/"})
}

func startUsage(f fsys) (*UsageMeter, error) {
	m := &UsageMeter{fs: f, pid: os.Getpid()}
	var err error
	if m.at, err = m.snapshot(true); err != nil {
		return nil, fmt.Errorf("start usage meter: %w", err)
	}
	m.procs = newCPUTracker(m.at.procs, m.pid)
	m.done = make(chan struct{})
	m.ended.Add(1)
	go m.sample(UsageSampleInterval)
	return m, nil
}

// sample feeds the tracker a snapshot every interval until Close.
func (m *UsageMeter) sample(interval time.Duration) {
	defer m.ended.Done()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-m.done:
			return
		case <-tick.C:
		}
		s, err := m.fs.snapshot()
		if err != nil {
			continue
		}
		m.mu.Lock()
		m.procs.step(s)
		m.mu.Unlock()
	}
}

// Close stops the sampling; Stop calls it. A meter that is not stopped
// must be closed.
func (m *UsageMeter) Close() {
	m.close.Do(func() {
		close(m.done)
		m.ended.Wait()
	})
}

// Stop takes the second snapshot and returns the Usage between the two.
// It may be called more than once; each call measures from StartUsage.
func (m *UsageMeter) Stop() Usage {
	m.Close()
	now, err := m.snapshot(false)
	u := Usage{Wall: now.when.Sub(m.at.when), Top: []Process{}, Commands: []CommandUse{}}
	if err != nil {
		u.Unavailable = err.Error()
		return u
	}
	if u.Wall <= 0 {
		return u
	}
	secs := u.Wall.Seconds()
	ours := func(s usageSnapshot) func(int) bool { return inTree([]int{m.pid}, s.procs) }
	own := (m.family(now, ours(now)) - m.family(m.at, ours(m.at))).Seconds()
	own = max(own, 0)
	busy := float64(now.stat.busy-min(m.at.stat.busy, now.stat.busy)) / clockTicks
	u.OwnCPUs = own / secs
	u.OtherCPUs = max(busy-own, 0) / secs
	if total := now.stat.total - min(m.at.stat.total, now.stat.total); total > 0 {
		u.StealPct = float64(now.stat.steal-min(m.at.stat.steal, now.stat.steal)) / float64(total) * 100
	}
	if !now.noSwp && !m.at.noSwp {
		u.SwapIns = now.swap - min(m.at.swap, now.swap)
	}
	both := inTree([]int{m.pid}, m.at.procs, now.procs)
	u.Top = m.fs.top(cpuUse(m.at.procs, now.procs, u.Wall, both), topProcesses)
	m.mu.Lock()
	m.procs.step(now.procs)
	cmds, named := m.procs.use(u.Wall)
	m.mu.Unlock()
	n := slices.IndexFunc(cmds, func(c CommandUse) bool { return c.CPUPct < 1 })
	if n < 0 {
		n = len(cmds)
	}
	u.Commands = cmds[:min(n, maxCommands)]
	u.UnattributedPct = max(u.OtherCPUs*100-named, 0)
	return u
}

// family returns the CPU time this process and its descendants had used
// by snapshot s: getrusage's self and waited-for children, and the live
// descendants' own and waited-for children's time from /proc.
func (m *UsageMeter) family(s usageSnapshot, ours func(int) bool) time.Duration {
	t := s.own
	for pid, p := range s.procs.procs {
		if pid != m.pid && ours(pid) {
			t += time.Duration(p.ticks+p.childTicks) * (time.Second / clockTicks)
		}
	}
	return t
}

// snapshot reads every counter once. The first snapshot reads
// /proc/stat first and the second reads it last, so that the machine's
// busy time spans at least the interval over which this process's own
// time is subtracted from it.
func (m *UsageMeter) snapshot(first bool) (usageSnapshot, error) {
	var s usageSnapshot
	var err error
	if first {
		s.when = time.Now()
		if s.stat, err = m.fs.cpuStat(); err != nil {
			return s, err
		}
	}
	var self, children syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &self); err != nil {
		return s, fmt.Errorf("getrusage self: %w", err)
	}
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children); err != nil {
		return s, fmt.Errorf("getrusage children: %w", err)
	}
	s.own = rusageTime(self) + rusageTime(children)
	if s.procs, err = m.fs.snapshot(); err != nil {
		return s, err
	}
	if v, err := m.fs.readKeyed("/proc/vmstat", "pswpin"); err == nil {
		s.swap = v["pswpin"]
	} else {
		s.noSwp = true
	}
	if !first {
		if s.stat, err = m.fs.cpuStat(); err != nil {
			return s, err
		}
		s.when = time.Now()
	}
	return s, nil
}

func rusageTime(r syscall.Rusage) time.Duration {
	return time.Duration(r.Utime.Nano() + r.Stime.Nano())
}

// cpuStat reads the "cpu" line of /proc/stat: user nice system idle
// iowait irq softirq steal guest guest_nice. Busy is user, nice, system,
// irq, softirq and steal (guest time is already in user and nice); idle
// and iowait are idle.
func (f fsys) cpuStat() (cpuStat, error) {
	const path = "/proc/stat"
	s, err := f.read(path)
	if err != nil {
		return cpuStat{}, err
	}
	line, _, _ := strings.Cut(s, "\n")
	fields := strings.Fields(line)
	if len(fields) < 9 || fields[0] != "cpu" {
		return cpuStat{}, fmt.Errorf("%s: first line %q is not the cpu line", path, line)
	}
	var v [8]uint64
	for i := range v {
		if v[i], err = strconv.ParseUint(fields[1+i], 10, 64); err != nil {
			return cpuStat{}, fmt.Errorf("%s: cpu line %q: %v", path, line, err)
		}
	}
	user, nice, system, idle, iowait, irq, softirq, steal := v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]
	busy := user + nice + system + irq + softirq + steal
	return cpuStat{busy: busy, steal: steal, total: busy + idle + iowait}, nil
}
