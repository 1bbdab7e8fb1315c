package prover

import (
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	perf "github.com/hodgesds/perf-utils"
	"golang.org/x/sys/unix"
)

// CounterModes are the values --counters accepts: auto counts the perf
// events the kernel allows and leaves out, with a log line, those it
// refuses; off counts none.
var CounterModes = []string{"auto", "off"}

// A counterEvent is one perf event counted over every phase.
type counterEvent struct {
	name   string  // as perf stat spells it, ":u" for user space only; the key of a refusal
	unit   string  // the unit of its metric on a phase line
	typ    uint32  // PERF_TYPE_*
	config uint64  // PERF_COUNT_*
	scale  float64 // multiplies the count into unit
}

// counterEvents are the perf events counted over every phase: software
// events, which most kernels allow, then hardware events, which virtual
// machines and locked-down kernels refuse. Both kinds go through the same
// code (see eventAttr). Page faults are not among them: page-faults/op
// comes from getrusage (see meter), which works with --counters off and
// where perf is refused, so that the unit means the same on every machine.
var counterEvents = [...]counterEvent{
	{"task-clock", "task-clock-sec/op", unix.PERF_TYPE_SOFTWARE, unix.PERF_COUNT_SW_TASK_CLOCK, 1e-9},
	{"context-switches", "context-switches/op", unix.PERF_TYPE_SOFTWARE, unix.PERF_COUNT_SW_CONTEXT_SWITCHES, 1},
	{"cpu-migrations", "cpu-migrations/op", unix.PERF_TYPE_SOFTWARE, unix.PERF_COUNT_SW_CPU_MIGRATIONS, 1},
	{"instructions:u", "instructions/op", unix.PERF_TYPE_HARDWARE, unix.PERF_COUNT_HW_INSTRUCTIONS, 1},
	{"cycles:u", "cycles/op", unix.PERF_TYPE_HARDWARE, unix.PERF_COUNT_HW_CPU_CYCLES, 1},
	{"cache-references:u", "cache-references/op", unix.PERF_TYPE_HARDWARE, unix.PERF_COUNT_HW_CACHE_REFERENCES, 1},
	{"cache-misses:u", "cache-misses/op", unix.PERF_TYPE_HARDWARE, unix.PERF_COUNT_HW_CACHE_MISSES, 1},
	{"branch-instructions:u", "branch-instructions/op", unix.PERF_TYPE_HARDWARE, unix.PERF_COUNT_HW_BRANCH_INSTRUCTIONS, 1},
	{"branch-misses:u", "branch-misses/op", unix.PERF_TYPE_HARDWARE, unix.PERF_COUNT_HW_BRANCH_MISSES, 1},
}

// userOnly reports whether e counts user space only: every event but the
// software ones, whose whole point (a context switch, a migration) happens
// in the kernel, so that exclude_kernel would make them read zero.
func (e *counterEvent) userOnly() bool { return e.typ != unix.PERF_TYPE_SOFTWARE }

// eventAttr returns the perf_event_attr that counts e on one thread and,
// through inherit, on every thread it creates from then on. Hardware and
// software events differ only in their type: a hardware event counts user
// space only (exclude_kernel, perf's ":u"), which is the prover's own code
// and which kernel.perf_event_paranoid 2, the kernel's default, allows an
// unprivileged user. The event counts from the moment it is opened: a
// phase is the difference of two readings, so it is never reset, enabled
// or disabled.
//
// perf-utils' own constructors cannot make this event: NewProfiler sets
// neither exclude_kernel nor lets one set it, and NewGroupProfiler
// overwrites the bits it is given. So the attribute is built here and
// opened with x/sys/unix, and perf-utils provides the event size, the
// Profiler interface and its ProfileValue reading.
func eventAttr(e *counterEvent) unix.PerfEventAttr {
	attr := unix.PerfEventAttr{
		Type:        e.typ,
		Config:      e.config,
		Size:        perf.EventAttrSize,
		Bits:        unix.PerfBitInherit | unix.PerfBitExcludeHv,
		Read_format: unix.PERF_FORMAT_TOTAL_TIME_ENABLED | unix.PERF_FORMAT_TOTAL_TIME_RUNNING,
	}
	if e.userOnly() {
		attr.Bits |= unix.PerfBitExcludeKernel
	}
	return attr
}

// An openEventFunc opens attr on thread tid. openEvent is the real one;
// tests inject refusals and fake counts.
type openEventFunc func(attr *unix.PerfEventAttr, tid int) (perf.Profiler, error)

// openEvent opens attr on thread tid of this process, on any CPU.
func openEvent(attr *unix.PerfEventAttr, tid int) (perf.Profiler, error) {
	fd, err := unix.PerfEventOpen(attr, tid, -1, -1, unix.PERF_FLAG_FD_CLOEXEC)
	if err != nil {
		return nil, err
	}
	return eventFD(fd), nil
}

// An eventFD is one open perf event, read as perf-utils' Profiler.
type eventFD int

func (fd eventFD) Start() error { return unix.IoctlSetInt(int(fd), unix.PERF_EVENT_IOC_ENABLE, 0) }
func (fd eventFD) Reset() error { return unix.IoctlSetInt(int(fd), unix.PERF_EVENT_IOC_RESET, 0) }
func (fd eventFD) Stop() error  { return unix.IoctlSetInt(int(fd), unix.PERF_EVENT_IOC_DISABLE, 0) }
func (fd eventFD) Close() error { return unix.Close(int(fd)) }

// Profile reads the event's count so far: the thread's own and, summed by
// the kernel, that of every thread it created since the event was opened,
// exited ones included. An exited thread's own count stays readable too.
func (fd eventFD) Profile(v *perf.ProfileValue) error {
	var buf [24]byte // value, time_enabled, time_running (eventAttr's Read_format)
	n, err := unix.Read(int(fd), buf[:])
	for err == unix.EINTR {
		n, err = unix.Read(int(fd), buf[:])
	}
	if err != nil {
		return err
	}
	if n != len(buf) {
		return fmt.Errorf("read %d bytes of a perf event, want %d", n, len(buf))
	}
	v.Value = binary.NativeEndian.Uint64(buf[0:])
	v.TimeEnabled = binary.NativeEndian.Uint64(buf[8:])
	v.TimeRunning = binary.NativeEndian.Uint64(buf[16:])
	return nil
}

// processThreads lists the threads of this process.
func processThreads() ([]int, error) {
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return nil, err
	}
	tids := make([]int, 0, len(ents))
	for _, e := range ents {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			tids = append(tids, tid)
		}
	}
	return tids, nil
}

// openAttempts bounds how often openCounters starts over because threads
// appeared while it opened the events.
const openAttempts = 8

// A counterSet is counterEvents open on every thread of the process, so
// that a reading is what the whole process counted: the Go runtime's
// threads exist before main, and perf_event_open counts one thread (and,
// with inherit, the threads it creates later).
type counterSet struct {
	log *slog.Logger
	// fds holds, per event, one counter per thread it was opened on; nil
	// when the event is unavailable.
	fds [len(counterEvents)][]perf.Profiler
	// unavailable says why an event is not counted; "" when it is.
	unavailable [len(counterEvents)]string
	tids        []int // the threads the events were opened on
	attempts    int   // how many times the threads were listed and opened
	// warned marks events whose multiplexing, or failed read, was
	// logged: once per event and run.
	warned [len(counterEvents)]bool
	value  perf.ProfileValue // read's buffer: a local would escape through the interface call
}

// A counterReading is one reading of every event: per event, the sum over
// its counters.
type counterReading [len(counterEvents)]eventCount

type eventCount struct {
	value, enabled, running uint64 // count, time_enabled, time_running
	ok                      bool   // false when unavailable or unread
}

// openCounters opens every event of counterEvents, with inherit, on every
// thread that threads lists, then lists the threads again. When no thread
// appeared meanwhile, every thread of the process has exactly one counter
// per event and every thread created from now on descends from one of
// them, so it inherits their counters: nothing is missed and nothing is
// counted twice. When threads did appear (one of them may have inherited a
// counter already, another not), it closes everything, which also ends
// the counters threads inherited from what it closes, and starts over;
// after openAttempts it gives up, and every event is unavailable. (A
// thread that ends and whose id the kernel hands to a new thread between
// the two listings would go unnoticed; thread ids are reused only after
// wrapping around pid_max.) An event
// the kernel refuses is unavailable with the reason; neither ever fails a
// run. Threads that exit between the listing and the opening are skipped
// (ESRCH): there is nothing of them left to count.
func openCounters(log *slog.Logger, open openEventFunc, threads func() ([]int, error)) *counterSet {
	c := &counterSet{log: log}
	var attrs [len(counterEvents)]unix.PerfEventAttr
	for i := range counterEvents {
		attrs[i] = eventAttr(&counterEvents[i])
	}
	for c.attempts < openAttempts {
		if c.attempts > 0 {
			c.closeFDs()
			time.Sleep(time.Duration(c.attempts) * time.Millisecond) // let a burst of thread starts pass
		}
		c.attempts++
		before, err := threads()
		if err != nil {
			c.refuseAll("list the process's threads: " + err.Error())
			return c
		}
		c.tids = c.tids[:0]
		for _, tid := range before {
			opened := false
			for i := range counterEvents {
				if c.unavailable[i] != "" {
					continue
				}
				p, err := open(&attrs[i], tid)
				switch {
				case err == nil:
					c.fds[i] = append(c.fds[i], p)
					opened = true
				case errors.Is(err, unix.ESRCH):
					// The thread exited since it was listed.
				default:
					c.refuse(i, openReason(&counterEvents[i], err))
				}
			}
			if opened {
				c.tids = append(c.tids, tid)
			}
		}
		after, err := threads()
		if err != nil {
			c.refuseAll("list the process's threads: " + err.Error())
			return c
		}
		if subset(after, before) {
			return c
		}
	}
	c.refuseAll(fmt.Sprintf("threads kept starting while the counters were opened (%d attempts): a thread's counts could be missed or counted twice", openAttempts))
	return c
}

// subset reports whether every element of a is in b.
func subset(a, b []int) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

// refuse makes event i unavailable for reason and closes its counters.
func (c *counterSet) refuse(i int, reason string) {
	c.unavailable[i] = reason
	for _, p := range c.fds[i] {
		_ = p.Close()
	}
	c.fds[i] = nil
}

func (c *counterSet) refuseAll(reason string) {
	for i := range counterEvents {
		if c.unavailable[i] == "" {
			c.refuse(i, reason)
		}
	}
	c.tids = nil
}

// closeFDs closes every counter; refusals are kept.
func (c *counterSet) closeFDs() {
	for i := range c.fds {
		for _, p := range c.fds[i] {
			_ = p.Close()
		}
		c.fds[i] = nil
	}
}

// close closes every counter. The set counts nothing afterwards.
func (c *counterSet) close() {
	if c != nil {
		c.closeFDs()
	}
}

// counting returns the names of the events that are counted.
func (c *counterSet) counting() []string {
	var names []string
	for i := range counterEvents {
		if c.fds[i] != nil {
			names = append(names, counterEvents[i].name)
		}
	}
	return names
}

// logStatus logs which events are counted, on how many threads, and one
// line per distinct reason naming the events that reason leaves out.
func (c *counterSet) logStatus() {
	if names := c.counting(); len(names) > 0 {
		fds := 0
		for _, f := range c.fds {
			fds += len(f)
		}
		c.log.Info("perf counters", "counting", strings.Join(names, ","), "threads", len(c.tids),
			"fds", fds, "attempts", c.attempts)
	}
	var reasons []string
	byReason := map[string][]string{}
	for i, why := range c.unavailable {
		if why == "" {
			continue
		}
		if byReason[why] == nil {
			reasons = append(reasons, why)
		}
		byReason[why] = append(byReason[why], counterEvents[i].name)
	}
	for _, why := range reasons {
		c.log.Info("perf counters unavailable: their units are left out", "counters", strings.Join(byReason[why], ","), "reason", why)
	}
}

// read reads every open event into r: per event, the sum of its counters'
// counts and times. It makes one read system call per counter and does
// not allocate.
func (c *counterSet) read(r *counterReading) {
	for i := range c.fds {
		if c.fds[i] == nil {
			continue
		}
		sum := eventCount{ok: true}
		v := &c.value
		for _, p := range c.fds[i] {
			if err := p.Profile(v); err != nil {
				sum = eventCount{}
				if !c.warned[i] {
					c.warned[i] = true
					c.log.Warn("perf counter read failed: its unit is left out of the phases it spans",
						"counter", counterEvents[i].name, "err", err)
				}
				break
			}
			sum.value += v.Value
			sum.enabled += v.TimeEnabled
			sum.running += v.TimeRunning
		}
		r[i] = sum
	}
}

// metrics returns the counts of phase, from before to after, in their
// units. A counter the kernel multiplexed with others on the PMU (it
// counted for part of the time it was enabled) is scaled up by the ratio
// of those times, as perf stat does, and logged once as a warning; one
// that never counted during the phase is left out of it, also logged once.
// The times are summed over threads, like the counts, so the scaling is
// that of the whole process.
func (c *counterSet) metrics(phase string, before, after *counterReading) []Metric {
	var ms []Metric
	for i := range counterEvents {
		b, a := before[i], after[i]
		if !b.ok || !a.ok {
			continue
		}
		v := float64(a.value - b.value)
		enabled, running := a.enabled-b.enabled, a.running-b.running
		if running < enabled {
			if running == 0 {
				c.warnOnce(i, "perf counter never counted during a phase (the PMU had no room for it): its unit is left out of such phases",
					"phase", phase)
				continue
			}
			v *= float64(enabled) / float64(running)
			c.warnOnce(i, "perf counter multiplexed: scaled up by its enabled/running time, as perf stat does; other phases may be scaled too",
				"phase", phase, "running_pct", fmt.Sprintf("%.1f", 100*float64(running)/float64(enabled)))
		}
		ms = append(ms, Metric{v * counterEvents[i].scale, counterEvents[i].unit})
	}
	return ms
}

func (c *counterSet) warnOnce(i int, msg string, args ...any) {
	if c.warned[i] {
		return
	}
	c.warned[i] = true
	c.log.Warn(msg, append([]any{"counter", counterEvents[i].name}, args...)...)
}

// openReason turns a perf_event_open error into a short reason that says
// what to do about it.
func openReason(e *counterEvent, err error) string {
	s := "perf_event_open: " + err.Error()
	switch {
	case errors.Is(err, unix.ENOENT), errors.Is(err, unix.EOPNOTSUPP), errors.Is(err, unix.ENODEV):
		return s + " (the kernel or hypervisor does not expose this event)"
	case errors.Is(err, unix.EACCES), errors.Is(err, unix.EPERM):
		need := 1 // events that count in the kernel
		if e.userOnly() {
			need = 2
		}
		return fmt.Sprintf("%s (%s; run perfbot as root or with CAP_PERFMON, or set it to %d or less)", s, paranoid(), need)
	}
	return s
}

// paranoid says what kernel.perf_event_paranoid is.
func paranoid() string {
	b, err := os.ReadFile("/proc/sys/kernel/perf_event_paranoid")
	if err != nil {
		return "kernel.perf_event_paranoid unreadable: " + err.Error()
	}
	return "kernel.perf_event_paranoid is " + strings.TrimSpace(string(b))
}
