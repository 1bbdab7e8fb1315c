package prover

import (
	"context"
	"fmt"
	"runtime/metrics"
	"runtime/pprof"
	"strings"
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
type meter struct {
	samples  []metrics.Sample
	counters *counterSet // nil when counting is off
	// marking says whether spans call perfbotSpanBegin and
	// perfbotSpanEnd (see spans.go): in measured proofs, not warm-ups.
	marking bool
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
	return m.diff(name, &before, &after), nil
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
	ms := Measurement{Phase: name, Start: before.at, Elapsed: after.at.Sub(before.at)}
	ms.Metrics = append(ms.Metrics,
		Metric{float64(after.allocBytes - before.allocBytes), "B/op"},
		Metric{float64(after.allocObjs - before.allocObjs), "allocs/op"},
	)
	if before.faultsKnown && after.faultsKnown {
		ms.Metrics = append(ms.Metrics, Metric{float64(after.pageFaults - before.pageFaults), "page-faults/op"})
	}
	if m.counters != nil {
		ms.Metrics = append(ms.Metrics, m.counters.metrics(name, &before.counters, &after.counters)...)
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
