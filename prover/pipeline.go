package prover

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// This file runs a pipelined run (Config.Pipeline): the measured proofs
// of one circuit with the synthesis of proof n+1 beside the proving of
// proof n, and what they achieved together.

// A Throughput is what the proofs of a pipelined run achieved together.
type Throughput struct {
	Proofs int           // measured proofs in the pipeline
	Wall   time.Duration // from just before the first synthesis to the end of the last proof
	// Metrics are per proof: proofs/s, peak-rss-B/op, then what the
	// whole process counted over Wall divided by Proofs (B/op,
	// allocs/op, page-faults/op and the perf counters, as a phase line
	// of an unpipelined run has them).
	Metrics []Metric
}

// A PipelineSink is a Sink that also takes a pipelined run's Throughput,
// after its last proof. Run logs the throughput whatever the sink; it
// hands it to a sink that implements PipelineSink.
type PipelineSink interface {
	Sink
	Pipeline(Throughput) error
}

// runPipeline proves count measured proofs in a pipeline, hands report
// each one in order (i from 0) and then gives sink the run's Throughput.
// synth and prove are the two halves of proveOnce; first is the number
// of the first proof in errors, warm-ups counted, as the unpipelined
// proofs are numbered.
//
// While the pipeline runs, m is shared: the proofs' phases overlap, so a
// process-wide counter of one phase's window would be charged to two
// phases at once. Phase lines then carry their time and their own sizes
// (constraints/op, points/op, …); the process's counters go on the
// pipeline line, summed over all its proofs and divided by their number.
// No span is marked for callgrind either: markers of two goroutines
// would not nest (spans.go), and the runner keeps the whole process's
// simulated count alone.
//
// In each proof's spans synthesis is on lane host: the proof's own
// thread of control is the proving side, which proves one witness after
// another, and the synthesis of proof n+1 ran on the producer, beside
// proof n. Each proof's spans are on its own clock, from the start of
// its synthesis: the gap between the end of synthesis and the start of
// ntt is the time the witness waited for the previous proof, and total,
// from the start of the proof's synthesis to the end of its assemble,
// includes it.
func runPipeline(ctx context.Context, m *meter, log *slog.Logger, sink Sink, count, first int,
	synth func(context.Context) (witness, error),
	prove func(context.Context, witness) (ProofResult, error),
	report func(int, ProofResult) error,
) error {
	m.shared, m.marking = true, false
	defer func() { m.shared = false }() // pipeline has returned: its producer has ended
	start := m.begin()
	err := pipeline(ctx, count,
		func(ctx context.Context, n int) (witness, error) {
			w, err := synth(ctx)
			if err != nil {
				return w, fmt.Errorf("proof %d: %w", first+n, err)
			}
			w.synth.Lane = LaneHost
			return w, nil
		},
		func(ctx context.Context, n int, w witness) error {
			res, err := prove(ctx, w)
			if err != nil {
				return fmt.Errorf("proof %d: %w", first+n, err)
			}
			return report(n, res)
		})
	end := m.end()
	if err != nil {
		return err
	}
	wall := end.at.Sub(start.at)
	t := Throughput{Proofs: count, Wall: wall, Metrics: []Metric{{float64(count) / wall.Seconds(), "proofs/s"}}}
	rss := peakRSS()
	if rss > 0 {
		t.Metrics = append(t.Metrics, Metric{float64(rss), PeakRSSUnit})
	}
	for _, x := range m.process(PhasePipeline, &start, &end) {
		t.Metrics = append(t.Metrics, Metric{x.Value / float64(count), x.Unit})
	}
	log.Info("pipeline", "proofs", count, "wall", wall.Round(time.Millisecond),
		"per_proof", (wall / time.Duration(count)).Round(time.Millisecond),
		"proofs_per_s", fmt.Sprintf("%.3f", t.Metrics[0].Value), "peak_rss_mib", rss>>20)
	if ps, ok := sink.(PipelineSink); ok {
		return ps.Pipeline(t)
	}
	return nil
}

// PhasePipeline names a pipelined run's throughput in its log line and
// where a perf counter's warning names a phase.
const PhasePipeline = "pipeline"

// pipeline runs produce(ctx, n) and consume(ctx, n, item) for n from 0 to
// count-1, the producing of item n+1 beside the consuming of item n.
//
// Two goroutines: a producer, which pipeline starts, makes the items in
// turn and hands each over an unbuffered channel; the consumer, the
// caller's goroutine, takes them in order. The hand-over is a rendezvous:
// a producer that is done with item n+1 before item n is consumed holds
// it and starts nothing more until the consumer takes it. So at most two
// items are alive at once: the one being consumed, and the next, being
// produced or produced and waiting. (In a proof pipeline an item is a
// synthesized constraint system, the largest thing a proof has: the
// witness and A, B and C over the domain.)
//
// The first error of either side is returned, and cancels the context
// both were given, so that the other side stops at its next check; an
// error the cancellation causes on the other side is not returned. When
// ctx ends the two sides stop the same way, and the error is the side's
// that saw it, or ctx's. pipeline returns only when the producer has
// ended: no goroutine outlives it. A producer in the middle of an item is
// not interrupted (a proof's synthesis checks ctx before it starts, not
// during), so the return can wait for the item under way.
func pipeline[T any](ctx context.Context, count int,
	produce func(ctx context.Context, n int) (T, error),
	consume func(ctx context.Context, n int, item T) error,
) error {
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		once  sync.Once
		first error
	)
	fail := func(err error) {
		once.Do(func() { first = err })
		cancel()
	}
	items := make(chan T) // unbuffered: the rendezvous
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(items)
		for n := range count {
			if ctx.Err() != nil {
				return // the consumer failed, or ctx ended
			}
			item, err := produce(ctx, n)
			if err != nil {
				fail(err)
				return
			}
			select {
			case items <- item:
			case <-ctx.Done():
				return // the consumer failed, or ctx ended: item is dropped
			}
		}
	}()
	n := 0
	for item := range items {
		if ctx.Err() != nil {
			break // ctx ended: the item is dropped
		}
		if err := consume(ctx, n, item); err != nil {
			fail(err)
			break
		}
		n++
	}
	cancel() // a producer still at work stops at its next check
	<-done   // and then first is written, if the producer wrote it
	switch {
	case first != nil:
		return first
	case n < count:
		// One side saw ctx end between two items.
		return fmt.Errorf("pipeline stopped after %d of %d: %w", n, count, context.Cause(parent))
	}
	return nil
}
