package execute

import (
	"fmt"
	"strconv"
	"strings"

	perf "github.com/hodgesds/perf-utils"
	"golang.org/x/sys/unix"

	"github.com/perfbot/perfbot/analysis"
)

// A counterDef is one perf event counted over a benchmark's process tree.
type counterDef struct {
	name   string  // perf's name for the event; the key in Result.Unavailable
	unit   string  // the unit of its sample
	typ    uint32  // PERF_TYPE_*
	config uint64  // PERF_COUNT_*
	scale  float64 // multiplies the raw count into unit
}

// counterDefs lists the counters of every run: software events, which
// every Linux kernel counts, then hardware events, which virtual machines
// and some kernels refuse. Both kinds go through the same code.
var counterDefs = []counterDef{
	{"task-clock", "task-clock-sec/run", unix.PERF_TYPE_SOFTWARE, unix.PERF_COUNT_SW_TASK_CLOCK, 1e-9},
	{"page-faults", "page-faults/run", unix.PERF_TYPE_SOFTWARE, unix.PERF_COUNT_SW_PAGE_FAULTS, 1},
	{"context-switches", "context-switches/run", unix.PERF_TYPE_SOFTWARE, unix.PERF_COUNT_SW_CONTEXT_SWITCHES, 1},
	{"cpu-migrations", "cpu-migrations/run", unix.PERF_TYPE_SOFTWARE, unix.PERF_COUNT_SW_CPU_MIGRATIONS, 1},
	{"cycles", "cycles/run", unix.PERF_TYPE_HARDWARE, unix.PERF_COUNT_HW_CPU_CYCLES, 1},
	{"instructions", "instructions/run", unix.PERF_TYPE_HARDWARE, unix.PERF_COUNT_HW_INSTRUCTIONS, 1},
	{"cache-references", "cache-references/run", unix.PERF_TYPE_HARDWARE, unix.PERF_COUNT_HW_CACHE_REFERENCES, 1},
	{"cache-misses", "cache-misses/run", unix.PERF_TYPE_HARDWARE, unix.PERF_COUNT_HW_CACHE_MISSES, 1},
	{"branches", "branches/run", unix.PERF_TYPE_HARDWARE, unix.PERF_COUNT_HW_BRANCH_INSTRUCTIONS, 1},
	{"branch-misses", "branch-misses/run", unix.PERF_TYPE_HARDWARE, unix.PERF_COUNT_HW_BRANCH_MISSES, 1},
}

// counters is the set of perf events open for one run.
type counters struct {
	open        []openCounter
	unavailable map[string]string // counter name → why it is not counted
}

type openCounter struct {
	def counterDef
	p   perf.Profiler
}

// openCounters opens every counter of counterDefs on the calling thread
// (pid 0, any CPU) with Inherit set, disabled. The caller must hold the
// thread with runtime.LockOSThread and start the measured process from it:
// a process forked from the thread inherits the events, and so do its own
// children, so the counts cover the whole tree once its processes have
// exited. A counter that does not open is recorded in unavailable; it never
// fails the run.
func openCounters() *counters {
	c := &counters{unavailable: map[string]string{}}
	for _, def := range counterDefs {
		// perf.NewProfiler sets Inherit and Disabled; the flag closes the
		// descriptor on exec so the benchmark never holds it.
		p, err := perf.NewProfiler(def.typ, def.config, 0, -1, unix.PERF_FLAG_FD_CLOEXEC)
		if err != nil {
			c.unavailable[def.name] = openReason(err)
			continue
		}
		c.open = append(c.open, openCounter{def, p})
	}
	return c
}

// start resets and enables the open counters. It counts the calling
// thread too, so the counts include the few microseconds it spends
// forking the benchmark and waiting for it.
func (c *counters) start() {
	kept := c.open[:0]
	for _, oc := range c.open {
		if err := oc.p.Reset(); err != nil {
			c.drop(oc, "reset", err)
			continue
		}
		if err := oc.p.Start(); err != nil {
			c.drop(oc, "enable", err)
			continue
		}
		kept = append(kept, oc)
	}
	c.open = kept
}

// stop disables the open counters.
func (c *counters) stop() {
	for _, oc := range c.open {
		_ = oc.p.Stop() // read still returns the count so far
	}
}

// read returns one sample per counter that counted, scaled to its unit.
// A counter that the kernel multiplexed (it ran for part of the time) is
// scaled up by enabled/running time, as perf stat does, and noted in
// warnings; one that never ran is unavailable.
func (c *counters) read() (samples []analysis.Sample, warnings []string) {
	for _, oc := range c.open {
		var v perf.ProfileValue
		if err := oc.p.Profile(&v); err != nil {
			c.unavailable[oc.def.name] = fmt.Sprintf("read: %v", err)
			continue
		}
		value := float64(v.Value)
		if v.TimeEnabled > 0 && v.TimeRunning < v.TimeEnabled {
			if v.TimeRunning == 0 {
				c.unavailable[oc.def.name] = "never scheduled on the PMU (too many counters for the hardware)"
				continue
			}
			value *= float64(v.TimeEnabled) / float64(v.TimeRunning)
			warnings = append(warnings, fmt.Sprintf("counter %s was multiplexed: it ran %.0f%% of the time and is scaled up",
				oc.def.name, 100*float64(v.TimeRunning)/float64(v.TimeEnabled)))
		}
		samples = append(samples, analysis.Sample{
			Key:   analysis.Key{Benchmark: ProcessBenchmark, Unit: oc.def.unit},
			Value: value * oc.def.scale,
		})
	}
	return samples, warnings
}

// close closes every open counter.
func (c *counters) close() {
	for _, oc := range c.open {
		_ = oc.p.Close()
	}
	c.open = nil
}

func (c *counters) drop(oc openCounter, op string, err error) {
	c.unavailable[oc.def.name] = fmt.Sprintf("%s: %v", op, err)
	_ = oc.p.Close()
}

// openReason turns perf-utils' open error, which embeds the whole event
// attribute and quotes the errno's text, into a short reason that says
// what to do about it.
func openReason(err error) string {
	s := err.Error()
	if i := strings.LastIndex(s, `: "`); i >= 0 {
		if u, uerr := strconv.Unquote(s[i+2:]); uerr == nil {
			s = u
		}
	}
	switch s {
	case unix.ENOENT.Error(), unix.EOPNOTSUPP.Error():
		return "perf_event_open: " + s + " (the kernel or hypervisor does not expose this event)"
	case unix.EACCES.Error(), unix.EPERM.Error():
		return "perf_event_open: " + s + " (run perfbot as root or with CAP_PERFMON, or set kernel.perf_event_paranoid to 1 or less)"
	}
	return "perf_event_open: " + s
}
