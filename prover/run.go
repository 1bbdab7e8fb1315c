package prover

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"syscall"
	"time"

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
// every Next that returns true, Start and cfg.Count proofs, then Done
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

	full := cfg.Phases == "all"
	var keys *keyPair
	if full {
		start := time.Now()
		pk, vk, origin, err := loadKeys(log, cfg, shape, rng)
		if err != nil {
			return err
		}
		keys = &keyPair{pk, vk}
		info.Keys = origin
		log.Info("keys", "origin", origin, "dir", cfg.KeyDir, "elapsed", time.Since(start).Round(time.Millisecond))
		if cfg.SRS == "random" {
			log.Warn("random SRS: timings are realistic but these proofs cannot verify")
		}
	}
	hint := r1cs.Sizes{Constraints: shape.NumConstraints(), Inputs: shape.NumInputs(), Aux: shape.NumAux(),
		LCStorage: cfg.lcStorage(), Threads: cfg.threads()}
	if keys != nil {
		hint.Domain = keys.pk.DomainSize // A, B and C laid out over the domain in place
	}
	shape = nil // the matrices are not needed from here on

	// proofs runs warm warm-ups and then count measured proofs.
	proofs := func(warm, count int) error {
		for i := range warm + count {
			warming := i < warm
			m.marking = !warming
			res, err := proveOnce(ctx, m, cfg, circ, keys, hint, rng, eng)
			if err != nil {
				return fmt.Errorf("proof %d: %w", i+1, err)
			}
			total := res.Measurements[len(res.Measurements)-1].Elapsed
			if warming {
				log.Info("warm-up proof", "n", i+1, "total", total.Round(time.Millisecond))
				continue
			}
			res.Index = i - warm
			log.Info("proof", "n", res.Index+1, "of", count, "total", total.Round(time.Millisecond))
			if err := sink.Proof(res); err != nil {
				return err
			}
		}
		return nil
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

// peakRSS returns the process's peak resident set size in bytes (Linux
// reports ru_maxrss in KiB), or 0 when it cannot be read.
func peakRSS() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return int64(ru.Maxrss) * 1024
}

type keyPair struct {
	pk *groth16.ProvingKey
	vk *groth16.VerifyingKey
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
	var res ProofResult
	start := m.begin()
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
		return res, err
	}
	n := float64(cs.NumConstraints())
	synth.Metrics = append(synth.Metrics,
		Metric{n, "constraints/op"},
		Metric{n / synth.Elapsed.Seconds(), "constraints/s"})
	res.Measurements = append(res.Measurements, synth)

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
			Engine: eng,
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
		p, stats, err := groth16.Prove(ctx, keys.pk, cs, r, s, opts)
		if err != nil {
			return res, err
		}
		proof = p
		addMSMStats(res.Measurements, stats)
	}
	m.markEnd()
	end := m.end()
	total := m.diff(PhaseTotal, &start, &end)
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
