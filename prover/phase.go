package prover

import (
	"context"
	"fmt"
	"runtime/metrics"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The phases of one proof, in the order they run. Their names are the
// values of the phase=… part of every benchmark line.
const (
	PhaseSynthesis = "synthesis"
	PhaseNTT       = "ntt"
	PhaseMSMA      = "msm_a"
	PhaseMSMB1     = "msm_b1"
	PhaseMSMB2     = "msm_b2"
	PhaseMSMB2Wait = "msm_b2_wait" // the GPU backend only: the wait for msm_b2, which runs beside msm_a … msm_h
	PhaseMSML      = "msm_l"
	PhaseMSMH      = "msm_h"
	PhaseAssemble  = "assemble"
	PhaseTotal     = "total"
)

// Phases lists every phase of a full proof, total last. msm_b2_wait is a
// phase of the GPU backend only.
var Phases = []string{
	PhaseSynthesis, PhaseNTT, PhaseMSMA, PhaseMSMB1, PhaseMSMB2,
	PhaseMSMB2Wait, PhaseMSML, PhaseMSMH, PhaseAssemble, PhaseTotal,
}

// PhaseSets are the values --phases accepts: what part of a proof runs.
var PhaseSets = []string{"all", PhaseSynthesis}

// A Metric is one extra measurement on a phase line, in benchfmt's units
// ("B/op", "page-faults/op", "constraints/s").
type Metric struct {
	Value float64
	Unit  string
}

// A Measurement is what one phase of one proof cost, and when it ran.
type Measurement struct {
	Phase   string
	Start   time.Time // when it began, on the clock every phase of the proof shares
	Elapsed time.Duration
	Metrics []Metric
	// Lane is "" for a phase of the proof's own thread of control, which
	// runs one phase after another, and names the worker of a phase that
	// ran beside them ("host" for msm_b2 beside the GPU's G1 MSMs).
	Lane string
	// Waits names the phase this one waited for: its time is the proof
	// standing still until that phase, on another lane, was done.
	Waits string
}

// End returns when the measurement's phase ended.
func (m *Measurement) End() time.Time { return m.Start.Add(m.Elapsed) }

// Metric returns the value of unit, and whether it is present.
func (m *Measurement) Metric(unit string) (float64, bool) {
	for _, x := range m.Metrics {
		if x.Unit == unit {
			return x.Value, true
		}
	}
	return 0, false
}

// A meter reads the process-wide counters a phase is charged with: heap
// bytes and objects allocated (runtime/metrics, cumulative and cheap),
// page faults (getrusage, minor and major: the one source of
// page-faults/op, with or without perf counters) and, unless --counters is
// off, the perf counters of counterSet. Counters cover every goroutine and
// every thread, which is what a phase is: gnark-crypto's MultiExp and FFT
// run on many.
//
// Work that runs beside the proof's phases (msm_b2 on a backend that
// offloads the G1 MSMs) is a span of its own: the counters of the
// process from its start to its end are charged to it, and a phase it
// overlaps is charged only with what was counted in its window outside
// that span, or with nothing where the span covers its whole window (its
// line then has its time and the device's steps, no host counter). No
// per-goroutine counters exist to split them otherwise: on the GPU the
// phases beside msm_b2 are the device's work and the host thread that
// waits for it, and what the host counts meanwhile is msm_b2's.
type meter struct {
	mu       sync.Mutex // readings are taken by the proof and by the work beside it
	samples  []metrics.Sample
	counters *counterSet // nil when counting is off
	// marking says whether spans call perfbotSpanBegin and
	// perfbotSpanEnd (see spans.go): in measured proofs, not warm-ups.
	marking bool
	beside  *besideSpan // the current proof's, under mu; nil before it starts
	// shared says that the phases being measured overlap other proofs'
	// (a pipelined run): no process-wide reading is then one phase's
	// own, so counts gives none, and a phase carries its time and its
	// own sizes only. Set before the phases start, read after.
	shared bool
}

// A besideSpan is work beside the proof's phases and the readings at its
// two ends; done says whether it has ended.
type besideSpan struct {
	begin, end reading
	done       bool
}

type reading struct {
	at          time.Time
	allocBytes  uint64
	allocObjs   uint64
	pageFaults  int64
	faultsKnown bool
	counters    counterReading
}

func newMeter() *meter {
	return &meter{samples: []metrics.Sample{
		{Name: "/gc/heap/allocs:bytes"},
		{Name: "/gc/heap/allocs:objects"},
	}}
}

// begin reads the counters at the start of a span. The readings nest: the
// perf counters outermost, then allocations and page faults, the clock
// innermost, so that neither the cost of reading the perf counters (a
// read system call per event and thread) nor their allocations are charged
// to the span's time and B/op.
func (m *meter) begin() reading {
	m.mu.Lock()
	defer m.mu.Unlock()
	var r reading
	if m.counters != nil {
		m.counters.read(&r.counters)
	}
	m.readRuntime(&r)
	r.at = time.Now()
	return r
}

// end reads the counters at the end of a span, in begin's reverse order.
func (m *meter) end() reading {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := reading{at: time.Now()}
	m.readRuntime(&r)
	if m.counters != nil {
		m.counters.read(&r.counters)
	}
	return r
}

func (m *meter) readRuntime(r *reading) {
	metrics.Read(m.samples)
	r.allocBytes = m.samples[0].Value.Uint64()
	r.allocObjs = m.samples[1].Value.Uint64()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
		r.pageFaults = int64(ru.Minflt) + int64(ru.Majflt)
		r.faultsKnown = true
	}
}

// run runs fn as the named phase: labelled for the CPU profiler, checked
// for cancellation first, and measured.
func (m *meter) run(ctx context.Context, name string, fn func() error) (Measurement, error) {
	if err := ctx.Err(); err != nil {
		return Measurement{}, fmt.Errorf("before phase %s: %w", name, err)
	}
	var err error
	before := m.begin()
	pprof.Do(ctx, pprof.Labels("phase", name), func(context.Context) {
		m.markBegin()
		err = fn()
		m.markEnd()
	})
	after := m.end()
	if err != nil {
		return Measurement{}, fmt.Errorf("phase %s: %w", name, err)
	}
	ms := m.diff(name, &before, &after)
	m.mu.Lock()
	var span *besideSpan
	if m.beside != nil {
		s := *m.beside // a copy: runBeside may be ending it meanwhile
		span = &s
	}
	m.mu.Unlock()
	if span != nil {
		ms.Metrics = m.outside(name, &before, &after, span)
	}
	return ms, nil
}

// runBeside runs fn as work beside the proof's phases and returns its
// measurement: its own time and the process's counters over it.
func (m *meter) runBeside(name string, fn func()) Measurement {
	b := &besideSpan{begin: m.begin()}
	m.mu.Lock()
	m.beside = b
	m.mu.Unlock()
	fn()
	end := m.end()
	m.mu.Lock()
	b.end, b.done = end, true
	m.mu.Unlock()
	return m.diff(name, &b.begin, &end)
}

// resetBeside forgets the last proof's span.
func (m *meter) resetBeside() {
	m.mu.Lock()
	m.beside = nil
	m.mu.Unlock()
}

// outside returns the counters of the window from before to after that
// were counted outside the span beside it: up to the span's start, from
// its end, both, or none (an empty list where the span covers the window).
func (m *meter) outside(name string, before, after *reading, span *besideSpan) []Metric {
	var pieces [][]Metric
	if span.begin.at.After(before.at) {
		upTo := after
		if span.begin.at.Before(after.at) {
			upTo = &span.begin
		}
		pieces = append(pieces, m.counts(name, before, upTo))
	}
	if span.done && span.end.at.Before(after.at) {
		from := before
		if span.end.at.After(before.at) {
			from = &span.end
		}
		pieces = append(pieces, m.counts(name, from, after))
	}
	return sumMetrics(pieces)
}

// sumMetrics adds lists of counters unit by unit, keeping the first
// list's order; a unit missing from one piece is left out of the sum
// (it was not counted over the whole of it).
func sumMetrics(pieces [][]Metric) []Metric {
	if len(pieces) == 0 {
		return nil
	}
	sum := slices.Clone(pieces[0])
	for _, p := range pieces[1:] {
		kept := sum[:0]
		for _, x := range sum {
			for _, y := range p {
				if y.Unit == x.Unit {
					x.Value += y.Value
					kept = append(kept, x)
					break
				}
			}
		}
		sum = kept
	}
	return sum
}

// markBegin marks the start of a span for callgrind when m is marking.
func (m *meter) markBegin() {
	if m.marking {
		perfbotSpanBegin()
	}
}

// markEnd marks the end of a span for callgrind when m is marking.
func (m *meter) markEnd() {
	if m.marking {
		perfbotSpanEnd()
	}
}

// diff returns what the span from before to after cost: time, B/op,
// allocs/op, page-faults/op, then the perf counters that counted (see
// counterSet.metrics).
func (m *meter) diff(name string, before, after *reading) Measurement {
	return Measurement{Phase: name, Start: before.at, Elapsed: after.at.Sub(before.at), Metrics: m.counts(name, before, after)}
}

// counts returns the counters from before to after: B/op, allocs/op,
// page-faults/op, then the perf counters that counted; none when m is
// shared.
func (m *meter) counts(name string, before, after *reading) []Metric {
	if m.shared {
		return nil
	}
	return m.process(name, before, after)
}

// process returns what the whole process counted from before to after,
// whatever ran meanwhile: counts' units.
func (m *meter) process(name string, before, after *reading) []Metric {
	ms := []Metric{
		{float64(after.allocBytes - before.allocBytes), "B/op"},
		{float64(after.allocObjs - before.allocObjs), "allocs/op"},
	}
	if before.faultsKnown && after.faultsKnown {
		ms = append(ms, Metric{float64(after.pageFaults - before.pageFaults), "page-faults/op"})
	}
	if m.counters != nil {
		ms = append(ms, m.counters.metrics(name, &before.counters, &after.counters)...)
	}
	return ms
}

// ParsePhaseSet checks a --phases value.
func ParsePhaseSet(s string) (string, error) {
	for _, p := range PhaseSets {
		if s == p {
			return s, nil
		}
	}
	return "", fmt.Errorf("unknown phase set %q: allowed values are %s", s, strings.Join(PhaseSets, ", "))
}
