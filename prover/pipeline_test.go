package prover

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/perf/benchfmt"
)

// goroutinesBack waits up to two seconds for the number of goroutines to
// come back to at most base (the runtime ends finished ones lazily) and
// fails the test if it does not.
func goroutinesBack(t *testing.T, base int) {
	t.Helper()
	n := 0
	for range 200 {
		if n = runtime.NumGoroutine(); n <= base {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	buf := make([]byte, 1<<16)
	t.Errorf("%d goroutines after the pipeline, %d before: one outlived it\n%s", n, base, buf[:runtime.Stack(buf, true)])
}

// TestPipelineProducesBesideConsumingAndKeepsAtMostTwoItemsAlive: item
// n+1 is being produced while item n is consumed (the consumer of item n
// waits until then, so the test fails by timing out if it never is), the
// items arrive in order, and never more than two are alive at once.
func TestPipelineProducesBesideConsumingAndKeepsAtMostTwoItemsAlive(t *testing.T) {
	const count = 6
	var alive, most atomic.Int32
	started := make([]chan struct{}, count)
	for i := range started {
		started[i] = make(chan struct{})
	}
	var got []int
	err := pipeline(context.Background(), count,
		func(_ context.Context, n int) (int, error) {
			close(started[n])
			if a := alive.Add(1); a > most.Load() {
				most.Store(a)
			}
			return n, nil
		},
		func(_ context.Context, n, item int) error {
			if n+1 < count {
				select {
				case <-started[n+1]:
				case <-time.After(5 * time.Second):
					return fmt.Errorf("item %d: the next one was not started while it was consumed", n)
				}
			}
			time.Sleep(time.Millisecond) // let a producer that would run ahead do so
			got = append(got, item)
			alive.Add(-1)
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{0, 1, 2, 3, 4, 5}; !slices.Equal(got, want) {
		t.Errorf("consumed %v, want %v", got, want)
	}
	if m := most.Load(); m > 2 {
		t.Errorf("%d items alive at once, want at most 2 (one consumed, the next produced)", m)
	}
}

// TestPipelineReturnsTheFirstErrorOfEitherSide: a producer's error stops
// the consumer, a consumer's stops the producer, the error that stopped
// the other side is the one returned, and no goroutine is left.
func TestPipelineReturnsTheFirstErrorOfEitherSide(t *testing.T) {
	errProduce, errConsume := errors.New("produce failed"), errors.New("consume failed")
	base := runtime.NumGoroutine()

	// The producer fails at item 2 while item 1 is consumed; the consumer
	// then fails on the cancellation, which is not what is returned.
	var consumed []int
	err := pipeline(context.Background(), 5,
		func(_ context.Context, n int) (int, error) {
			if n == 2 {
				return 0, errProduce
			}
			return n, nil
		},
		func(ctx context.Context, n, _ int) error {
			if n == 1 {
				<-ctx.Done()
				return ctx.Err()
			}
			consumed = append(consumed, n)
			return nil
		})
	if !errors.Is(err, errProduce) {
		t.Errorf("producer failing: %v, want %v", err, errProduce)
	}
	if !slices.Equal(consumed, []int{0}) {
		t.Errorf("consumed %v before the producer failed, want [0]", consumed)
	}
	goroutinesBack(t, base)

	// The consumer fails at item 1 once item 2 is produced: the
	// producer, handing item 2 over, stops.
	produced := 0
	item2 := make(chan struct{})
	err = pipeline(context.Background(), 100,
		func(ctx context.Context, n int) (int, error) {
			if err := ctx.Err(); err != nil {
				return 0, err
			}
			produced++
			if n == 2 {
				close(item2)
			}
			return n, nil
		},
		func(_ context.Context, n, _ int) error {
			if n == 1 {
				<-item2
				return errConsume
			}
			return nil
		})
	if !errors.Is(err, errConsume) {
		t.Errorf("consumer failing: %v, want %v", err, errConsume)
	}
	if produced > 3 {
		t.Errorf("%d items produced after the consumer failed at item 1, want at most 3", produced)
	}
	goroutinesBack(t, base)
}

// TestPipelineStopsWhenItsContextEnds: cancelled between items, with the
// producer waiting to hand one over, pipeline returns ctx's error and
// leaves no goroutine.
func TestPipelineStopsWhenItsContextEnds(t *testing.T) {
	base := runtime.NumGoroutine()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := 0
	err := pipeline(ctx, 10,
		func(context.Context, int) (int, error) { return 0, nil },
		func(context.Context, int, int) error {
			n++
			if n == 3 {
				cancel()
			}
			return nil
		})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("pipeline cancelled after 3 items: %v, want context.Canceled", err)
	}
	if n != 3 {
		t.Errorf("%d items consumed, want 3: the pipeline stops at the cancellation", n)
	}
	goroutinesBack(t, base)
}

// pipelineFixture is a one-block chain with random keys and the two
// halves of its proofs, measured by m.
type pipelineFixture struct {
	m     *meter
	synth func(context.Context) (witness, error)
	prove func(context.Context, witness) (ProofResult, error)
}

func newPipelineFixture(t *testing.T) *pipelineFixture {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, 8))
	circ, keys := testChain(t, rng, 1, true)
	m, cfg := newMeter(), Config{Phases: "all"}
	return &pipelineFixture{
		m:     m,
		synth: func(ctx context.Context) (witness, error) { return synthesize(ctx, m, cfg, circ, circ.Sizes()) },
		prove: func(ctx context.Context, w witness) (ProofResult, error) {
			return prove(ctx, m, cfg, circ, keys, rng, nil, w)
		},
	}
}

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// TestRunPipelineSynthesisErrorNamesTheProof: synthesis failing for the
// third proof is the error returned, naming that proof, after the first
// two were reported; no goroutine is left.
func TestRunPipelineSynthesisErrorNamesTheProof(t *testing.T) {
	f := newPipelineFixture(t)
	errSynth := errors.New("planted synthesis failure")
	calls := 0
	synth := func(ctx context.Context) (witness, error) {
		if calls++; calls == 3 {
			return witness{}, errSynth
		}
		return f.synth(ctx)
	}
	base := runtime.NumGoroutine()
	var reported []int
	var sink resultSink
	err := runPipeline(context.Background(), f.m, discardLogger(), &sink, 4, 1, synth, f.prove,
		func(i int, _ ProofResult) error { reported = append(reported, i); return nil })
	if !errors.Is(err, errSynth) || !strings.HasPrefix(err.Error(), "proof 3: ") {
		t.Errorf("runPipeline = %v, want proof 3's synthesis error", err)
	}
	// Proof 2 was being proved when synthesis failed: it stops at its
	// next phase, or is done and reported first.
	if !slices.Equal(reported, []int{0}) && !slices.Equal(reported, []int{0, 1}) {
		t.Errorf("reported %v before the failure, want [0] or [0 1]", reported)
	}
	if f.m.shared {
		t.Error("the meter is still shared after the pipeline")
	}
	goroutinesBack(t, base)
}

// TestRunPipelineCancelledLeavesNoGoroutine cancels a pipeline of real
// proofs once the first is reported: the error is the cancellation, and
// the producer, synthesizing or holding the next witness, is gone.
func TestRunPipelineCancelledLeavesNoGoroutine(t *testing.T) {
	f := newPipelineFixture(t)
	base := runtime.NumGoroutine()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var sink resultSink
	err := runPipeline(ctx, f.m, discardLogger(), &sink, 4, 1, f.synth, f.prove,
		func(i int, _ ProofResult) error {
			if i == 0 {
				cancel()
			}
			return nil
		})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("runPipeline cancelled = %v, want context.Canceled", err)
	}
	goroutinesBack(t, base)
}

// pipelineSink keeps the proofs and the throughput it is given.
type pipelineSink struct {
	resultSink
	info       Info
	throughput []Throughput
}

func (s *pipelineSink) Start(info Info) error { s.info = info; return nil }
func (s *pipelineSink) Pipeline(t Throughput) error {
	s.throughput = append(s.throughput, t)
	return nil
}

// TestRunPipelinedProofsVerifyOverlapAndPrintTheirThroughput runs
// perfbot prove --pipeline --count 3 --verify at one block with real
// keys: every proof verifies, each prints its phases under the usual
// names with synthesis on lane host, the synthesis of proof n+1 began
// before proof n's total ended (wall clock), each total carries the peak
// RSS and no process-wide counter, and the throughput line follows. The
// output reads with benchfmt: 3 × 9 phase lines and the throughput line.
func TestRunPipelinedProofsVerifyOverlapAndPrintTheirThroughput(t *testing.T) {
	const count = 3
	cfg := Config{Circuit: "sha256", Constraints: 1 << 10, Backend: "cpu", Phases: "all", SRS: "setup",
		Count: count, Warmup: 1, Verify: true, Pipeline: true, KeyDir: t.TempDir(), Logger: discardLogger()}
	var sink pipelineSink
	if err := Run(context.Background(), cfg, &sink); err != nil {
		t.Fatal(err)
	}
	if len(sink.proofs) != count || len(sink.throughput) != 1 {
		t.Fatalf("%d proofs and %d throughputs, want %d and 1", len(sink.proofs), len(sink.throughput), count)
	}
	want := []string{PhaseSynthesis, PhaseNTT, PhaseMSMA, PhaseMSMB1, PhaseMSMB2, PhaseMSML, PhaseMSMH, PhaseAssemble, PhaseTotal}
	phase := func(p ProofResult, name string) Measurement {
		for _, m := range p.Measurements {
			if m.Phase == name {
				return m
			}
		}
		t.Fatalf("proof %d has no %s", p.Index, name)
		return Measurement{}
	}
	for i, p := range sink.proofs {
		var names []string
		for _, m := range p.Measurements {
			names = append(names, m.Phase)
			if _, ok := m.Metric("B/op"); ok {
				t.Errorf("proof %d: %s has B/op: a pipelined phase carries no process-wide counter", i, m.Phase)
			}
		}
		if p.Index != i || !slices.Equal(names, want) {
			t.Errorf("proof %d (index %d): phases %v, want %v", i, p.Index, names, want)
		}
		synth, ntt, assemble, total := phase(p, PhaseSynthesis), phase(p, PhaseNTT), phase(p, PhaseAssemble), phase(p, PhaseTotal)
		if synth.Lane != LaneHost || ntt.Lane != "" {
			t.Errorf("proof %d: synthesis on lane %q, ntt on %q; want host and the proof's own", i, synth.Lane, ntt.Lane)
		}
		if synth.Start.Before(total.Start) || ntt.Start.Before(synth.End()) || total.End().Before(assemble.End()) {
			t.Errorf("proof %d: total [%v, %v] does not run from before synthesis to after assemble", i, total.Start, total.End())
		}
		if rss, ok := total.Metric(PeakRSSUnit); !ok || rss < 1<<20 {
			t.Errorf("proof %d: total's %s = %v (%v), want the process's peak RSS", i, PeakRSSUnit, rss, ok)
		}
		if i > 0 {
			prev := phase(sink.proofs[i-1], PhaseTotal)
			if !synth.Start.Before(prev.End()) {
				t.Errorf("proof %d's synthesis began at %v, after proof %d's total ended (%v): no overlap", i, synth.Start, i-1, prev.End())
			}
		}
	}
	tp := sink.throughput[0]
	first := sink.proofs[0].Measurements[0].Start
	lastTotal := phase(sink.proofs[count-1], PhaseTotal)
	last := lastTotal.End()
	if tp.Proofs != count || tp.Wall < last.Sub(first) {
		t.Errorf("throughput of %d proofs over %v; want %d over at least %v, the first synthesis to the last total", tp.Proofs, tp.Wall, count, last.Sub(first))
	}
	for _, unit := range []string{"proofs/s", PeakRSSUnit, "B/op", "allocs/op"} {
		if v, ok := (&Measurement{Metrics: tp.Metrics}).Metric(unit); !ok || v <= 0 {
			t.Errorf("throughput has %s = %v (%v), want it positive", unit, v, ok)
		}
	}

	var out bytes.Buffer
	for _, p := range sink.proofs {
		if err := WriteProof(&out, "sha256", cfg.Constraints, "cpu", p.Index, p.Measurements); err != nil {
			t.Fatal(err)
		}
	}
	if err := WritePipeline(&out, "sha256", cfg.Constraints, "cpu", tp); err != nil {
		t.Fatal(err)
	}
	r := benchfmt.NewReader(&out, "pipelined")
	perName := map[string]int{}
	var pipelined *benchfmt.Result
	for r.Scan() {
		switch rec := r.Result().(type) {
		case *benchfmt.Result:
			perName[string(rec.Name)]++
			if strings.Contains(string(rec.Name), "/pipeline=") {
				pipelined = rec.Clone()
			}
		case *benchfmt.SyntaxError:
			t.Errorf("benchfmt: %v", rec)
		}
	}
	for _, p := range want {
		if n := perName[BenchName("sha256", 1<<10, "cpu", p)]; n != count {
			t.Errorf("%d %s lines, want %d", n, p, count)
		}
	}
	if pipelined == nil || string(pipelined.Name) != PipelineName("sha256", 1<<10, "cpu", count) || pipelined.Iters != count {
		t.Fatalf("throughput line %+v, want %s with %d iterations", pipelined, PipelineName("sha256", 1<<10, "cpu", count), count)
	}
	if v, ok := pipelined.Value("sec/op"); !ok || math.Abs(v-(tp.Wall/count).Seconds()) > 1e-9 {
		t.Errorf("throughput sec/op %v (%v), want the wall time per proof %v", v, ok, (tp.Wall / count).Seconds())
	}
}

// TestRunPipelinedResidentRunsAreOnePipelineEach: in resident mode every
// run asked for is a pipeline of cfg.Count proofs with its throughput;
// the warm-up runs once before Ready.
func TestRunPipelinedResidentRunsAreOnePipelineEach(t *testing.T) {
	cfg := Config{Circuit: "sha256", Constraints: 1 << 10, Backend: "cpu", Phases: "all", SRS: "random",
		Count: 2, Warmup: 1, Pipeline: true, Counters: "off", Logger: discardLogger()}
	srv := &pipelineServer{runs: 2}
	if err := Run(context.Background(), cfg, srv); err != nil {
		t.Fatal(err)
	}
	if want := "ready start proof0 proof1 pipeline done start proof0 proof1 pipeline done"; strings.Join(srv.events, " ") != want {
		t.Errorf("events %q, want %q", strings.Join(srv.events, " "), want)
	}
}

// pipelineServer is a Server of runs runs that records what it is given.
type pipelineServer struct {
	runs   int
	events []string
}

func (s *pipelineServer) Start(Info) error { s.events = append(s.events, "start"); return nil }
func (s *pipelineServer) Proof(p ProofResult) error {
	s.events = append(s.events, fmt.Sprintf("proof%d", p.Index))
	return nil
}
func (s *pipelineServer) Pipeline(t Throughput) error {
	s.events = append(s.events, "pipeline")
	return nil
}
func (s *pipelineServer) Ready() error { s.events = append(s.events, "ready"); return nil }
func (s *pipelineServer) Next() (bool, error) {
	s.runs--
	return s.runs >= 0, nil
}
func (s *pipelineServer) Done(err error) error {
	s.events = append(s.events, "done")
	return err
}

// TestAPipelineThatDoesNotFitTheHostsMemoryProvesOneAfterAnother: with
// less memory available than two constraint systems of the circuit, a
// --pipeline run proves its proofs one after another (each synthesis
// after the previous proof's total, phase lines with the process's
// counters), hands no throughput, and says why: a warning with both sizes
// and Info.PipelineOff, which the header prints. When the available
// memory cannot be read, the pipeline runs and the log says it was not
// checked. Not parallel: it replaces memAvailable.
func TestAPipelineThatDoesNotFitTheHostsMemoryProvesOneAfterAnother(t *testing.T) {
	if avail, err := memAvailable(); err != nil || avail < 1<<20 {
		t.Errorf("this host's MemAvailable: %d, %v; want a size", avail, err)
	}
	defer func(f func() (int64, error)) { memAvailable = f }(memAvailable)
	cfg := Config{Circuit: "sha256", Constraints: 1 << 10, Backend: "cpu", Phases: "all", SRS: "random",
		Count: 2, Pipeline: true, Counters: "off"}
	run := func(avail func() (int64, error)) (*pipelineSink, string) {
		memAvailable = avail
		var logs bytes.Buffer
		c := cfg
		c.Logger = slog.New(slog.NewTextHandler(&logs, nil))
		var sink pipelineSink
		if err := Run(context.Background(), c, &sink); err != nil {
			t.Fatal(err)
		}
		return &sink, logs.String()
	}

	sink, logs := run(func() (int64, error) { return 64 << 10, nil })
	// 1,024 constraints: a 2,048 domain (2^11 ≥ constraints + inputs),
	// so two systems hold 2 × (aux + 3 × 2,048) × 32 B, some 7 MiB.
	reason := sink.info.PipelineOff
	if !regexp.MustCompile(`^host memory: two constraint systems need 7\.[0-9]+MiB, 64\.00KiB available$`).MatchString(reason) ||
		len(sink.throughput) != 0 || len(sink.proofs) != 2 {
		t.Fatalf("64 KiB available: pipeline off %q, %d throughputs, %d proofs; want the two sizes, no throughput, 2 proofs",
			reason, len(sink.throughput), len(sink.proofs))
	}
	if !strings.Contains(logs, `level=WARN msg="pipeline off: proving one after another" reason="`+reason+`"`) {
		t.Errorf("log does not warn that the pipeline is off, with the reason:\n%s", logs)
	}
	total0 := sink.proofs[0].Measurements[len(sink.proofs[0].Measurements)-1]
	synth1 := sink.proofs[1].Measurements[0]
	if synth1.Phase != PhaseSynthesis || synth1.Start.Before(total0.End()) || synth1.Lane != "" {
		t.Errorf("proof 2's %s (lane %q) began at %v, proof 1 ended at %v; want synthesis on the proof's own lane after it", synth1.Phase, synth1.Lane, synth1.Start, total0.End())
	}
	if _, ok := synth1.Metric("B/op"); !ok {
		t.Errorf("proof 2's synthesis has no B/op; proofs one after another carry the process's counters")
	}
	var out bytes.Buffer
	if err := WriteHeader(&out, Header{Backend: "cpu", Pipeline: "off: " + reason}); err != nil || !strings.Contains(out.String(), "\npipeline: off: "+reason+"\n") {
		t.Errorf("header %q (%v); want the line pipeline: off: %s", out.String(), err, reason)
	}

	sink, logs = run(func() (int64, error) { return 0, errors.New("planted: no /proc") })
	if sink.info.PipelineOff != "" || len(sink.throughput) != 1 ||
		!strings.Contains(logs, `msg="pipeline: host memory not checked" err="planted: no /proc"`) {
		t.Errorf("unreadable memory: pipeline off %q, %d throughputs, log:\n%s\nwant the pipeline run and the log to say memory was not checked",
			sink.info.PipelineOff, len(sink.throughput), logs)
	}
}
