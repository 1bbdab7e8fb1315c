package prover

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/prometheus/procfs"
	"golang.org/x/perf/benchunit"

	"github.com/perfbot/perfbot/prover/circuit"
	"github.com/perfbot/perfbot/prover/gpu"
	"github.com/perfbot/perfbot/prover/groth16"
	"github.com/perfbot/perfbot/prover/r1cs"
)

// Info describes a run before its first proof: what was built and what ran.
type Info struct {
	Circuit     string
	Requested   int    // constraints asked for
	Constraints int    // constraints in the circuit, input constraints excluded
	Blocks      int    // SHA-256 compressions in the chain
	Inputs, Aux int    // variables (inputs include One)
	Backend     string // the backend that runs: "cpu" or "gpu" ("auto" resolved)
	GPU         string // the device's name when the GPU backend runs
	SRS         string // "setup" or "random"
	Keys        string // where the keys came from: "cache", "setup", "random"; "" for synthesis only
	// PipelineOff says why --pipeline was asked for and the proofs were
	// proved one after another instead; "" when it was not asked for or
	// ran.
	PipelineOff string
}

// A ProofResult is one measured proof: one Measurement per phase that ran,
// total last.
type ProofResult struct {
	Index        int // from 0, warm-ups excluded
	Measurements []Measurement
}

// A Sink receives a run's results as they are produced.
type Sink interface {
	Start(Info) error
	Proof(ProofResult) error
}

// A Server is a Sink that serves runs one at a time, in one process
// (perfbot's resident protocol, runner/execute): Run prepares the keys
// and the backend and runs the warm-ups once, calls Ready, and then, for
// every Next that returns true, Start and cfg.Count proofs (with
// cfg.Pipeline, one pipeline and its Throughput per run), then Done
// with the run's error. A run that fails is reported to Done, and the
// next one is served; Next's error or false ends Run.
type Server interface {
	Sink
	Ready() error
	Next() (bool, error)
	Done(runErr error) error
}

// ErrProofInvalid reports a proof that did not verify under --verify.
var ErrProofInvalid = errors.New("proof did not verify")

// Run builds the configured circuit and its keys, then runs cfg.Warmup
// proofs it does not report and cfg.Count proofs it hands to sink, each
// phase measured on its own. With Phases "synthesis" only synthesis runs.
// With cfg.Pipeline the warm-ups run one after another as always and the
// measured proofs in a pipeline (runPipeline), whose Throughput goes to a
// PipelineSink after the last proof; when the host's available memory
// cannot hold the second constraint system a pipeline keeps alive, the
// proofs run one after another instead, and Info.PipelineOff says why.
func Run(ctx context.Context, cfg Config, sink Sink) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	m := newMeter()
	if cfg.Counters != "off" {
		// First, while the process has few threads: the threads started
		// later (the runtime's, the CUDA driver's) inherit the counters.
		m.counters = openCounters(log, openEvent, processThreads)
		defer m.counters.close()
		m.counters.logStatus()
	}
	backend, eng, err := openBackend(cfg, log)
	if err != nil {
		return err
	}
	if closer, ok := eng.(interface{ Close() error }); ok {
		defer closer.Close()
	}

	rng := rand.New(rand.NewPCG(uint64(cfg.Seed), 0x70657266626f74)) // "perfbot"
	blocks := circuit.BlocksFor(cfg.Constraints)
	circ := circuit.NewSHA256Chain(blocks, rng)

	// A Setup-mode synthesis gives the shape: the counts, and the matrices
	// the keys are made from.
	shape := r1cs.NewSystem(r1cs.Setup, r1cs.Sizes{})
	if err := circ.Synthesize(shape); err != nil {
		return fmt.Errorf("synthesize %s circuit: %w", cfg.Circuit, err)
	}
	info := Info{
		Circuit:     cfg.Circuit,
		Requested:   cfg.Constraints,
		Constraints: shape.NumConstraints(),
		Blocks:      blocks,
		Inputs:      shape.NumInputs(),
		Aux:         shape.NumAux(),
		Backend:     backend,
		SRS:         cfg.SRS,
	}
	if g, ok := eng.(*gpu.Engine); ok {
		info.GPU = g.Device().Name
	}
	log.Info("circuit", "circuit", cfg.Circuit, "requested", cfg.Constraints,
		"constraints", info.Constraints, "blocks", blocks, "inputs", info.Inputs, "aux", info.Aux,
		"synthesis_threads", cfg.threads())

	hint := r1cs.Sizes{Constraints: shape.NumConstraints(), Inputs: shape.NumInputs(), Aux: shape.NumAux(),
		LCStorage: cfg.lcStorage(), Threads: cfg.threads(), Pool: r1cs.NewPool()}

	// Nothing reads shape after loadKeys, so its matrices can be collected
	// as soon as the keys no longer need them: with random keys, before
	// their points are drawn (at 2^24 constraints the matrices and the
	// points were the peak of the run's memory).
	full := cfg.Phases == "all"
	var keys *keyPair
	if full {
		start := time.Now()
		pk, vk, origin, err := loadKeys(log, cfg, shape, rng)
		if err != nil {
			return err
		}
		keys = &keyPair{pk, vk, new(groth16.Scratch)}
		info.Keys = origin
		log.Info("keys", "origin", origin, "dir", cfg.KeyDir, "elapsed", time.Since(start).Round(time.Millisecond))
		if cfg.SRS == "random" {
			log.Warn("random SRS: timings are realistic but these proofs cannot verify")
		}
	}
	if keys != nil {
		hint.Domain = keys.pk.DomainSize // A, B and C laid out over the domain in place
	}
	if os.Getenv("GOGC") == "" {
		live, pct := tuneGC()
		log.Info("garbage collector", "live_mib", live>>20, "gogc", pct)
	}
	pipeline := cfg.Pipeline
	if pipeline && keys != nil {
		if reason := pipelineMemory(log, hint); reason != "" {
			pipeline, info.PipelineOff = false, reason
			log.Warn("pipeline off: proving one after another", "reason", reason)
		}
	}

	// report hands measured proof i (from 0) of count to the sink.
	report := func(i, count int, res ProofResult) error {
		res.Index = i
		total := res.Measurements[len(res.Measurements)-1].Elapsed
		log.Info("proof", "n", i+1, "of", count, "total", total.Round(time.Millisecond))
		return sink.Proof(res)
	}
	// proofs runs warm warm-ups, one after another, and then count
	// measured proofs, pipelined when pipeline is on.
	proofs := func(warm, count int) error {
		m.marking = false
		for i := range warm {
			res, err := proveOnce(ctx, m, cfg, circ, keys, hint, rng, eng)
			if err != nil {
				return fmt.Errorf("proof %d: %w", i+1, err)
			}
			total := res.Measurements[len(res.Measurements)-1].Elapsed
			log.Info("warm-up proof", "n", i+1, "total", total.Round(time.Millisecond))
		}
		if pipeline && count > 0 {
			return runPipeline(ctx, m, log, sink, count, warm+1,
				func(ctx context.Context) (witness, error) { return synthesize(ctx, m, cfg, circ, hint) },
				func(ctx context.Context, w witness) (ProofResult, error) {
					return prove(ctx, m, cfg, circ, keys, rng, eng, w)
				},
				func(i int, res ProofResult) error { return report(i, count, res) })
		}
		m.marking = true
		for i := range count {
			res, err := proveOnce(ctx, m, cfg, circ, keys, hint, rng, eng)
			if err != nil {
				return fmt.Errorf("proof %d: %w", warm+i+1, err)
			}
			if err := report(i, count, res); err != nil {
				return err
			}
		}
		return nil
	}
	if pipeline {
		log.Info("pipeline: phase lines carry time and sizes only",
			"reason", "the phases of two proofs overlap and the process's counters (B/op, allocs, page faults, perf counters) cannot be split between them; "+
				"they go on the pipeline line, per proof over the whole pipeline")
	}
	srv, resident := sink.(Server)
	if !resident {
		if err := sink.Start(info); err != nil {
			return err
		}
		if err := proofs(cfg.Warmup, cfg.Count); err != nil {
			return err
		}
	} else {
		// Keys, backend and warm-ups once; then cfg.Count proofs per run
		// asked for, each run's output whole (its header again).
		if err := proofs(cfg.Warmup, 0); err != nil {
			return err
		}
		if err := srv.Ready(); err != nil {
			return err
		}
		for {
			more, err := srv.Next()
			if err != nil || !more {
				return err
			}
			err = sink.Start(info)
			if err == nil {
				err = proofs(0, cfg.Count)
			}
			if err := srv.Done(err); err != nil {
				return err
			}
		}
	}
	if rss := peakRSS(); rss > 0 {
		log.Info("memory", "peak_rss_mib", rss>>20, "rss_bytes_per_constraint", rss/int64(info.Constraints))
	}
	return nil
}

// openBackend resolves --backend: "cpu" is gnark-crypto; "gpu" loads the
// CUDA library and opens device 0, and fails saying why when it cannot;
// "auto" takes the GPU when that works and says why it fell back when not.
// A nil Engine means the CPU.
func openBackend(cfg Config, log *slog.Logger) (string, groth16.Engine, error) {
	if cfg.Backend == "cpu" {
		return "cpu", nil, nil
	}
	lib, err := gpu.Open(cfg.CUDALib)
	var eng *gpu.Engine
	if err == nil {
		eng, err = lib.NewEngine(0)
	}
	if err != nil {
		if cfg.Backend == "gpu" {
			return "", nil, fmt.Errorf("%w: %w", ErrBackend, err)
		}
		log.Info("backend auto: using the CPU", "reason", err)
		return "cpu", nil, nil
	}
	d := eng.Device()
	log.Info("backend gpu", "device", d.Name, "uuid", d.UUID, "sm", fmt.Sprintf("%d.%d", d.Major, d.Minor),
		"memory_gib", d.Memory>>30, "library", lib.Path)
	return "gpu", eng, nil
}

// ErrBackend wraps why --backend gpu cannot run.
var ErrBackend = errors.New("--backend gpu cannot run")

// PeakRSSUnit is the unit of the process's peak resident set size so
// far, in bytes, on each proof's total line and on the pipeline line: the
// high-water mark of the whole process up to then (keys, warm-ups and
// earlier proofs included; in a resident process, earlier runs too). It
// is not perfbot compare's peak-rss-B/run, which the runner measures
// per process from outside, on the process benchmark.
const PeakRSSUnit = "peak-rss-B/op"

// peakRSS returns the process's peak resident set size so far in bytes,
// or 0 when it cannot be read: the high-water mark of its own memory
// (VmHWM), not getrusage's ru_maxrss where /proc can be read. A process
// that os/exec starts (with vfork) has its parent's peak at exec folded
// into its ru_maxrss (runner/execute/rss.go), so under perfbot compare
// ru_maxrss could be the runner's. Without /proc, ru_maxrss (KiB on
// Linux).
func peakRSS() int64 {
	if p, err := procfs.Self(); err == nil {
		if st, err := p.NewStatus(); err == nil && st.VmHWM > 0 {
			return int64(st.VmHWM)
		}
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return int64(ru.Maxrss) * 1024
}

// pipelineMemory returns why a pipeline of proofs of hint's size would
// not fit the host's memory, or "" when it would or that cannot be told.
// A pipeline keeps two constraint systems alive (the one proved and the
// next, each its witness and A, B, C over the domain: 3.6 GB at 2^24)
// where proofs one after another keep one; the check runs once the keys
// are made, when neither exists yet, against the kernel's estimate of the
// memory it can give without swapping (MemAvailable).
func pipelineMemory(log *slog.Logger, hint r1cs.Sizes) string {
	need := 2 * hint.ProveBytes()
	avail, err := memAvailable()
	if err != nil {
		log.Warn("pipeline: host memory not checked", "err", err)
		return ""
	}
	if avail >= need {
		return ""
	}
	return fmt.Sprintf("host memory: two constraint systems need %sB, %sB available",
		benchunit.Scale(float64(need), benchunit.Binary), benchunit.Scale(float64(avail), benchunit.Binary))
}

// memAvailable returns the host's available memory in bytes
// (/proc/meminfo's MemAvailable). A variable for tests, which cannot
// shrink the machine.
var memAvailable = func() (int64, error) {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return 0, err
	}
	mi, err := fs.Meminfo()
	if err != nil {
		return 0, err
	}
	if mi.MemAvailableBytes == nil {
		return 0, errors.New("/proc/meminfo has no MemAvailable line")
	}
	return int64(*mi.MemAvailableBytes), nil
}

type keyPair struct {
	pk *groth16.ProvingKey
	vk *groth16.VerifyingKey
	// scratch is the buffers the proofs with pk reuse. Run proves one
	// proof at a time (the pipeline overlaps synthesis, not proving), so
	// one Scratch serves them all.
	scratch *groth16.Scratch
}

func loadKeys(log *slog.Logger, cfg Config, shape *r1cs.System, rng *rand.Rand) (*groth16.ProvingKey, *groth16.VerifyingKey, string, error) {
	src := cryptoReader{rng}
	if cfg.SRS == "random" {
		pk, vk, err := groth16.RandomKeys(shape, src)
		if err != nil {
			return nil, nil, "", fmt.Errorf("random keys: %w", err)
		}
		return pk, vk, "random", nil
	}
	pk, vk, cached, warnings, err := groth16.LoadOrSetup(cfg.KeyDir, shape, src, false)
	if err != nil {
		return nil, nil, "", fmt.Errorf("keys: %w", err)
	}
	for _, w := range warnings {
		log.Warn("key cache", "err", w)
	}
	if cached {
		return pk, vk, "cache", nil
	}
	return pk, vk, "setup", nil
}

// proveOnce synthesizes the witness and, for a full proof, proves it; each
// phase is measured, and total covers everything.
func proveOnce(ctx context.Context, m *meter, cfg Config, circ *circuit.SHA256Chain, keys *keyPair, hint r1cs.Sizes, rng *rand.Rand, eng groth16.Engine) (ProofResult, error) {
	w, err := synthesize(ctx, m, cfg, circ, hint)
	if err != nil {
		return ProofResult{}, err
	}
	return prove(ctx, m, cfg, circ, keys, rng, eng, w)
}

// A witness is a proof's synthesized constraint system, ready to prove,
// with its synthesis measured and the reading its total starts from.
type witness struct {
	cs    *r1cs.System
	synth Measurement
	start reading // just before synthesis: the start of total
}

// synthesize starts a proof's total and measures its synthesis: the
// first half of proveOnce. It reads nothing but circ, hint and cfg, so it
// may run beside prove.
func synthesize(ctx context.Context, m *meter, cfg Config, circ *circuit.SHA256Chain, hint r1cs.Sizes) (witness, error) {
	w := witness{start: m.begin()}
	m.markBegin()
	var cs *r1cs.System
	synth, err := m.run(ctx, PhaseSynthesis, func() error {
		cs = r1cs.NewSystem(r1cs.Prove, hint)
		if err := circ.SynthesizeParallel(cs, cfg.threads()); err != nil {
			return err
		}
		plantSpin(testSpinSynthesis())
		return cs.Err()
	})
	if err != nil {
		return witness{}, err
	}
	n := float64(cs.NumConstraints())
	synth.Metrics = append(synth.Metrics,
		Metric{n, "constraints/op"},
		Metric{n / synth.Elapsed.Seconds(), "constraints/s"})
	w.cs, w.synth = cs, synth
	return w, nil
}

// prove proves w when there are keys (a full proof) and ends its total:
// the second half of proveOnce. The total line carries the process's peak
// RSS so far; --verify's check comes after the total.
func prove(ctx context.Context, m *meter, cfg Config, circ *circuit.SHA256Chain, keys *keyPair, rng *rand.Rand, eng groth16.Engine, w witness) (ProofResult, error) {
	// The next proof's synthesis writes into this one's memory (Sizes.Pool).
	defer w.cs.Release()
	res := ProofResult{Measurements: []Measurement{w.synth}}
	var proof *groth16.Proof
	if keys != nil {
		r, s, err := groth16.NewBlinding(cryptoReader{rng})
		if err != nil {
			return res, err
		}
		stepper, _ := eng.(interface{ TakeSteps() []gpu.Step })
		// msm_b2 beside the G1 MSMs, measured on its own goroutine; its
		// line goes out when the proof has waited for it, just before
		// the wait's. (Beside returns before the wait phase ends, so the
		// wait reads beside after it was written.)
		var beside *Measurement
		m.resetBeside()
		opts := groth16.ProveOptions{
			Scratch: keys.scratch,
			Engine:  eng,
			Beside: func(name string, run func()) {
				if d := testSpinG2(); name == PhaseMSMB2 && d > 0 {
					g2 := run
					run = func() { g2(); plantSpin(d) }
				}
				ms := m.runBeside(name, run)
				ms.Lane = LaneHost
				beside = &ms
			},
			Phase: func(name string, run func() error) error {
				if d := testSpinG2(); name == PhaseMSMB2 && d > 0 {
					g2 := run
					run = func() error { err := g2(); plantSpin(d); return err }
				}
				if stepper != nil {
					stepper.TakeSteps() // steps of this phase only
				}
				ms, err := m.run(ctx, name, run)
				if err != nil {
					return err
				}
				if name == groth16.PhaseMSMB2Wait && beside != nil {
					res.Measurements = append(res.Measurements, *beside)
					ms.Waits = beside.Phase
				}
				if stepper != nil {
					// Device steps as extra units: msm_h's sort becomes
					// sort-sec/op on the msm_h line.
					for _, st := range stepper.TakeSteps() {
						ms.Metrics = append(ms.Metrics, Metric{st.Seconds, st.Name + "-sec/op"})
					}
				}
				res.Measurements = append(res.Measurements, ms)
				return nil
			},
		}
		p, stats, err := groth16.Prove(ctx, keys.pk, w.cs, r, s, opts)
		if err != nil {
			return res, err
		}
		proof = p
		addMSMStats(res.Measurements, stats)
	}
	m.markEnd()
	end := m.end()
	total := m.diff(PhaseTotal, &w.start, &end)
	if rss := peakRSS(); rss > 0 {
		total.Metrics = append(total.Metrics, Metric{float64(rss), PeakRSSUnit})
	}
	res.Measurements = append(res.Measurements, total)

	if cfg.Verify && proof != nil {
		if err := groth16.Verify(keys.vk, proof, circ.PublicInputs()); err != nil {
			return res, fmt.Errorf("%w: %w", ErrProofInvalid, err)
		}
	}
	return res, nil
}

// LaneHost is the Lane of work the host does beside the device's.
const LaneHost = "host"

// addMSMStats adds each MSM's real sizes to its phase line: points in the
// multi-exponentiation, points summed directly (scalar one), and points
// skipped (scalar zero or point at infinity).
func addMSMStats(ms []Measurement, stats *groth16.Stats) {
	if stats == nil {
		return
	}
	byPhase := map[string]groth16.MSMStats{
		PhaseMSMA: stats.A, PhaseMSMB1: stats.B1, PhaseMSMB2: stats.B2,
		PhaseMSML: stats.L, PhaseMSMH: stats.H,
	}
	for i := range ms {
		s, ok := byPhase[ms[i].Phase]
		if !ok {
			continue
		}
		ms[i].Metrics = append(ms[i].Metrics,
			Metric{float64(s.MultiExp), "points/op"},
			Metric{float64(s.Ones), "ones/op"},
			Metric{float64(s.Zeros + s.Infinity), "skipped/op"})
	}
}

// cryptoReader adapts a seeded math/rand generator to io.Reader, so setup
// and proofs repeat exactly for a --seed. perfbot's keys are benchmark
// fixtures, not production parameters.
type cryptoReader struct{ r *rand.Rand }

func (c cryptoReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(c.r.Uint32())
	}
	return len(p), nil
}

// plantSpin keeps the calling goroutine busy on the CPU for d: a test build's
// planted slowdown (testhooks.go).
func plantSpin(d time.Duration) {
	if d <= 0 {
		return
	}
	for end := time.Now().Add(d); time.Now().Before(end); {
	}
}

// tuneGC sets the garbage collector for the proofs, once the keys are
// made, and returns the live heap it measured and the GOGC it set. What
// lives for the whole run (the proving key) is then most of the heap, and
// Go's default, GOGC=100, lets as much garbage again accumulate before a
// collection: at 2^24 constraints some 12 GB of resident memory beside
// the key. tuneGC lets garbage grow by a quarter of the live heap or by
// 1 GiB, whichever is more, and never more than the default: a small run
// keeps GOGC=100 (a lower one made synthesis at 2^16, whose heap is a few
// MB, collect every few MB), a large one collects at most every GiB
// allocated, which costs little since the large vectors hold no pointers.
func tuneGC() (live uint64, pct int) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	live = ms.HeapAlloc
	pct = gcPercent(live)
	debug.SetGCPercent(pct)
	return live, pct
}

// gcPercent is the GOGC that lets garbage grow by max(live/4, 1 GiB), at
// most by live (GOGC=100).
func gcPercent(live uint64) int {
	if live == 0 {
		return 100
	}
	return int(min(100, max(25, 100*(1<<30)/live)))
}
