package prover

import (
	"context"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// sink keeps allocations alive until the test reads the counters.
var sink [][]byte

// allocate allocates n bytes in 64 KiB pieces.
func allocate(n int) {
	for ; n > 0; n -= 64 << 10 {
		sink = append(sink, make([]byte, 64<<10))
	}
}

// spinCPU keeps the calling goroutine busy on a CPU for d of its own CPU
// time (a goroutine that shares its core gets less wall time done).
func spinCPU(d time.Duration) {
	runtime.LockOSThread() // threadCPU is the thread's
	defer runtime.UnlockOSThread()
	for t := threadCPU(); threadCPU()-t < d; {
	}
}

func TestMeterChargesWhatRunsBesideThePhasesToItsOwnSpan(t *testing.T) {
	// Not parallel: allocations and CPU time are counted process-wide,
	// and the collector's would land anywhere.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	m, _ := realCounters(t)
	ctx := context.Background()
	started, release, ended := make(chan struct{}), make(chan struct{}), make(chan Measurement)
	p1, err := m.run(ctx, "p1", func() error {
		allocate(1 << 20)
		spinCPU(20 * time.Millisecond)
		go func() {
			ended <- m.runBeside("side", func() {
				allocate(8 << 20)
				close(started)
				<-release
				spinCPU(150 * time.Millisecond)
			})
		}()
		<-started
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// p2 runs inside the span: whatever the host counts meanwhile, the
	// phase's own included, is the span's.
	p2, err := m.run(ctx, "p2", func() error {
		allocate(2 << 20)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var side Measurement
	p3, err := m.run(ctx, "p3", func() error {
		close(release)
		side = <-ended
		allocate(4 << 20)
		spinCPU(40 * time.Millisecond)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sink = nil

	const slack = 256 << 10 // the runtime's own allocations meanwhile
	within := func(ms Measurement, unit string, lo, hi float64) {
		t.Helper()
		if v := metric(t, ms, unit); v < lo || v > hi {
			t.Errorf("%s %s = %.4g, want %.4g … %.4g", ms.Phase, unit, v, lo, hi)
		}
	}
	within(p1, "B/op", 1<<20, 1<<20+slack)
	within(p3, "B/op", 4<<20, 4<<20+slack)
	within(side, "B/op", 10<<20, 10<<20+slack)
	// task-clock: p1's 20 ms and p3's 40 ms are theirs, the side's
	// 150 ms its own (p3 waited for them); the slack is the kernel's
	// work on fresh pages and the runtime's threads.
	// (Charged by window alone, p3 would have ≥ 0.19 s.)
	within(p1, "task-clock-sec/op", 0.019, 0.060)
	within(p3, "task-clock-sec/op", 0.039, 0.100)
	within(side, "task-clock-sec/op", 0.149, 0.260)
	if len(p2.Metrics) != 0 {
		t.Errorf("p2, inside the span, has counters %v: they are the span's", p2.Metrics)
	}
	if p2.Elapsed <= 0 || side.Elapsed <= p2.Elapsed {
		t.Errorf("p2 took %v, the side %v: the times are untouched", p2.Elapsed, side.Elapsed)
	}

	// The next proof starts without a span: all of a phase is its own.
	m.resetBeside()
	p4, err := m.run(ctx, "p4", func() error { allocate(1 << 20); return nil })
	if err != nil {
		t.Fatal(err)
	}
	within(p4, "B/op", 1<<20, 1<<20+slack)
}
