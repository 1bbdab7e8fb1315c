package main

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"

	"github.com/spf13/cobra"

	"github.com/perfbot/perfbot/prover"
	"github.com/perfbot/perfbot/prover/r1cs"
	"github.com/perfbot/perfbot/runner/execute"
)

func newProveCommand() *cobra.Command {
	var (
		cfg         prover.Config
		constraints string
		cpuprofile  string
		memprofile  string
		outPath     string
		quiet       bool
	)
	cmd := &cobra.Command{
		Use:   "prove",
		Short: "Run the Groth16 prover and print per-phase timings in Go benchmark format",
		Long: `prove synthesizes the SHA-256 chain circuit, makes Groth16 proofs over
BLS12-381 and prints one benchmark line per phase per proof:

  BenchmarkProve/circuit=sha256/constraints=65536/backend=cpu/phase=synthesis 1 81234567 ns/op ...

Phases: synthesis, ntt, msm_a, msm_b1, msm_b2, msm_l, msm_h, assemble, total
(and msm_b2_wait, the wait for msm_b2 beside the G1 MSMs, on the GPU backend),
then one span line per phase ("# perfbot-span NAME proof=N start_ns=… end_ns=…":
when it ran; see the README).
The output reads with golang.org/x/perf/benchfmt and benchstat
(benchstat -row /phase old.txt new.txt). Notes go to stderr.

Each line also carries the perf counters the kernel allows, counted over
every thread of the process for exactly the phase (--counters auto):
task-clock-sec/op, context-switches/op, cpu-migrations/op and, user space
only, instructions/op, cycles/op, cache-references/op, cache-misses/op,
branch-instructions/op, branch-misses/op. A counter the kernel refuses is
logged once with the reason and left out; --counters off prints none.

Keys come from a real setup, cached on disk by circuit shape (--key-dir), or
with --srs random from random points of the right shapes: timing stays
realistic but such proofs cannot verify.

--memprofile FILE writes pprof's allocs profile of the whole run when it
ends (Go's heap profiles carry no phase labels), sampling an allocation
every 4 KiB allocated on average.

--lc-storage is a variant switch: both storages give the same constraint
system and proof; the header line lc-storage: says which ran, so benchstat
keeps them apart (benchstat -col lc-storage heap.txt inline.txt compares
them), and perfbot compare --head-args "--lc-storage inline" compares them
in one build.

--threads N synthesizes on N goroutines (default: all CPUs), each taking
whole SHA-256 blocks: the witness and the proof are the same for every N,
only the synthesis time differs. --threads 1 is the sequential synthesis,
the one-core rate (perfbot prove --phases synthesis --threads 1).

The total line of each proof also carries peak-rss-B/op: the process's peak
resident set size so far (VmHWM), in bytes. Once the keys are made, prove
sets Go's garbage collector to let garbage grow by a quarter of what is
live or 1 GiB, whichever is more, up to Go's default (GOGC=100, garbage as
large as what is live): at 2^24 constraints the default let some 12 GB of
garbage accumulate beside the proving key. A GOGC in the environment wins.
A proof's witness and its A, B and C evaluations are written into the
memory of a proof that is done (3.6 GB a proof at 2^24), so only the first
proof's synthesis allocates them (two sets with --pipeline).

--pipeline proves the --count proofs (at least 2; not with --phases
synthesis) in a pipeline: the synthesis of proof n+1 runs while proof n is
proved, and at most two constraint systems are alive at once (the one being
proved and the next). Warm-ups run one after another first. Each proof
prints its lines under the same names; its synthesis span is on lane host,
and its total runs from the start of its synthesis to the end of its
assemble, the time its witness waited for the previous proof included. As
the phases of two proofs overlap, phase lines carry time and sizes only:
the process-wide counters (B/op, allocs/op, page-faults/op, the perf
counters) could not be split between them. After the proofs one line gives
the pipeline's throughput:

  BenchmarkProve/circuit=sha256/constraints=65536/backend=cpu/pipeline=4 4 812000000 ns/op 1.23 proofs/s 2.1e+09 peak-rss-B/op ...

K iterations (the proofs), the wall time per proof, proofs per second, the
peak RSS, then the process's counters over the whole pipeline per proof.
--verify verifies every proof, between proofs, inside the wall time.
When the host's available memory (MemAvailable) cannot hold two
constraint systems, the proofs run one after another instead: a warning
says so with the sizes, the header gets a line "pipeline: off: host
memory: …" and no pipeline line is printed.

Exit status (perfbot --help has the table): 0 done; 2 bad input (a flag,
a CUDA library that is not there); 3 a proof did not verify (--verify); 4
could not run (a device error, interrupted).`,
		Example: `  perfbot prove --constraints 2^16 --count 5 --verify
  perfbot prove --constraints 2^18 --srs random --count 10 --out head.txt
  perfbot prove --constraints 65536 --phases synthesis --count 20
  perfbot prove --phases synthesis --count 10 --lc-storage inline
  perfbot prove --constraints 2^20 --phases synthesis --threads 1
  perfbot prove --constraints 2^18 --srs random --pipeline --count 8`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			n, err := prover.ParseConstraints(constraints)
			if err != nil {
				return usagef(cmd, "%v", err)
			}
			cfg.Constraints = n
			if cmd.Flags().Changed("threads") && cfg.Threads < 1 {
				// Config takes 0 as all CPUs, the default; on the
				// command line it is a mistake.
				return usagef(cmd, "--threads %d: give 1 or more synthesis goroutines (1 is the sequential synthesis); leave it out for all CPUs (%d here)",
					cfg.Threads, runtime.GOMAXPROCS(0))
			}
			if err := cfg.Validate(); err != nil {
				return usagef(cmd, "%v", err)
			}
			if cfg.KeyDir == "" {
				cfg.KeyDir = defaultKeyDir()
			}
			level := slog.LevelInfo
			if quiet {
				level = slog.LevelWarn
			}
			cfg.Logger = slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: level}))
			return runProve(cmd, cfg, profiles{cpu: cpuprofile, mem: memprofile}, outPath)
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Circuit, "circuit", "sha256", "workload circuit: "+strings.Join(prover.Circuits, ", "))
	f.StringVar(&constraints, "constraints", "2^16", "circuit size, as 65536 or 2^16 (rounded up to whole SHA-256 blocks; at most 2^28)")
	f.StringVar(&cfg.Backend, "backend", "cpu", "where NTT and MSM run: "+strings.Join(prover.Backends, ", ")+" (gpu needs libperfbot_cuda.so: make cuda)")
	f.StringVar(&cfg.CUDALib, "cuda-lib", "", "path of libperfbot_cuda.so (default: $PERFBOT_CUDA_LIB, then next to the perfbot binary)")
	f.StringVar(&cfg.Phases, "phases", "all", "what to run: all (a whole proof) or synthesis (synthesis alone)")
	f.StringVar(&cfg.SRS, "srs", "setup", "keys: setup (real, cached, proofs verify) or random (random points, proofs cannot verify)")
	f.IntVar(&cfg.Count, "count", 1, "measured proofs")
	f.IntVar(&cfg.Warmup, "warmup", 1, "warm-up proofs run first and not printed")
	f.Int64Var(&cfg.Seed, "seed", 1, "seed for the witness and the setup's toxic waste")
	f.BoolVar(&cfg.Verify, "verify", false, "verify every proof; exit 3 if one does not verify")
	f.StringVar(&cfg.Counters, "counters", "auto", "perf counters on each phase line: auto (those the kernel allows; refused ones are logged and left out) or off")
	f.StringVar(&cfg.LCStorage, "lc-storage", prover.LCStorages[0], fmt.Sprintf(
		"where synthesis keeps linear-combination terms: heap (a reused slice) or inline (%d terms in the constraint system; longer combinations spill to the heap)",
		r1cs.InlineTerms))
	f.IntVar(&cfg.Threads, "threads", 0, "goroutines synthesis runs on (default: all CPUs, GOMAXPROCS); 1 is the sequential synthesis, the one-core benchmark of --phases synthesis")
	f.BoolVar(&cfg.Pipeline, "pipeline", false, "prove the --count proofs (2 or more) in a pipeline, the synthesis of each beside the proving of the one before; then print the throughput (see above)")
	f.StringVar(&cfg.KeyDir, "key-dir", os.Getenv("PERFBOT_KEY_DIR"), "key cache directory (default: the user cache directory's perfbot/keys; env PERFBOT_KEY_DIR)")
	f.StringVar(&cpuprofile, "cpuprofile", "", "write a CPU profile (pprof, samples labelled phase=…) to `FILE`")
	f.StringVar(&memprofile, "memprofile", "", fmt.Sprintf(
		"write a heap profile of the whole run (pprof's allocs profile, an allocation sampled every %d KiB on average; no phase labels) to `FILE`",
		memProfileRate>>10))
	f.StringVar(&outPath, "out", "", "write the benchmark lines to `FILE` instead of stdout (written whole or not at all)")
	f.BoolVar(&quiet, "quiet", false, "print only warnings and errors on stderr")
	return cmd
}

func defaultKeyDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "perfbot", "keys")
}

// memProfileRate is runtime.MemProfileRate with --memprofile: an
// allocation is sampled every 4 KiB allocated on average (Go's default
// is 512 KiB), so an allocation site a change adds shows in one run's
// profile unless it allocates less than a few KiB a run. A proof makes
// about a thousand allocations, most of them large, so sampling more
// often costs next to nothing: see README.md for the measured overhead.
const memProfileRate = 4 << 10

// profiles are the profile files prove writes: "" for none.
type profiles struct{ cpu, mem string }

func runProve(cmd *cobra.Command, cfg prover.Config, prof profiles, outPath string) (err error) {
	out := cmd.OutOrStdout()
	var commit func() error
	if outPath != "" {
		w, c, err := createAtomic(outPath)
		if err != nil {
			return err
		}
		defer func() {
			if err != nil {
				w.abort()
			}
		}()
		out, commit = w, c
	}
	var mf *os.File
	if prof.mem != "" {
		// Created first, so that a path that cannot be written fails
		// before the proofs rather than after them.
		if mf, err = os.Create(prof.mem); err != nil {
			return fmt.Errorf("create memory profile: %w", err)
		}
		defer mf.Close()
		runtime.MemProfileRate = memProfileRate
	}
	if prof.cpu != "" {
		pf, err := os.Create(prof.cpu)
		if err != nil {
			return fmt.Errorf("create CPU profile: %w", err)
		}
		defer pf.Close()
		if err := pprof.StartCPUProfile(pf); err != nil {
			return fmt.Errorf("start CPU profile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	var sink prover.Sink = &benchSink{w: out, cfg: &cfg}
	if os.Getenv(execute.ResidentEnv) == "1" {
		if outPath != "" || prof.cpu != "" || prof.mem != "" {
			return usagef(cmd, "%s=1 (perfbot's resident protocol): each run's results and CPU profile are asked for on stdin; drop --out, --cpuprofile and --memprofile", execute.ResidentEnv)
		}
		sink = &residentSink{benchSink: sink.(*benchSink), in: bufio.NewScanner(cmd.InOrStdin())}
	}
	if err := prover.Run(cmd.Context(), cfg, sink); err != nil {
		if errors.Is(err, prover.ErrBackend) {
			return usagef(cmd, "%v", err) // a setup problem: exit 2, nothing written
		}
		if errors.Is(err, prover.ErrProofInvalid) {
			return &statusError{exitRunsFailed, err.Error()} // a run whose result is wrong
		}
		return err
	}
	if mf != nil {
		if err := writeMemProfile(mf); err != nil {
			return err
		}
	}
	if commit != nil {
		return commit()
	}
	return nil
}

// writeMemProfile writes the allocations of the whole run to f as
// pprof's allocs profile. The garbage collection first makes the profile
// complete: the runtime publishes a cycle's allocations when a collection
// ends.
func writeMemProfile(f *os.File) error {
	runtime.GC()
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		return fmt.Errorf("write memory profile: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write memory profile: %w", err)
	}
	return nil
}

// benchSink prints results in Go benchmark format.
type benchSink struct {
	w   io.Writer
	cfg *prover.Config
	run prover.Info
}

func (s *benchSink) Start(info prover.Info) error {
	s.run = info
	h := prover.HostHeader(info.Backend, info.GPU, info.SRS)
	h.LCStorage = cmp.Or(s.cfg.LCStorage, prover.LCStorages[0])
	if info.PipelineOff != "" {
		h.Pipeline = "off: " + info.PipelineOff
	}
	return prover.WriteHeader(s.w, h)
}

func (s *benchSink) Proof(p prover.ProofResult) error {
	return prover.WriteProof(s.w, s.cfg.Circuit, s.cfg.Constraints, s.run.Backend, p.Index, p.Measurements)
}

// Pipeline prints a pipelined run's throughput line.
func (s *benchSink) Pipeline(t prover.Throughput) error {
	return prover.WritePipeline(s.w, s.cfg.Circuit, s.cfg.Constraints, s.run.Backend, t)
}

// residentSink serves perfbot's resident protocol (runner/execute): it
// says "#perfbot ready" once the keys and the backend are ready, then
// proves a run for every "run" line on stdin ("run cpuprofile=PATH"
// profiles that run alone), printing its results and "#perfbot done", or
// "#perfbot failed REASON" when the run fails; stdin's end ends it.
type residentSink struct {
	*benchSink
	in  *bufio.Scanner
	cpu *os.File // the CPU profile of the current run
}

func (s *residentSink) Ready() error {
	_, err := fmt.Fprintln(s.w, execute.ResidentReady)
	return err
}

func (s *residentSink) Next() (bool, error) {
	if !s.in.Scan() {
		return false, s.in.Err()
	}
	req := strings.Fields(s.in.Text())
	if len(req) == 0 || req[0] != "run" {
		return false, fmt.Errorf("resident protocol: request %q: want \"run\" or \"run cpuprofile=PATH\"", s.in.Text())
	}
	for _, kv := range req[1:] {
		path, ok := strings.CutPrefix(kv, "cpuprofile=")
		if !ok {
			continue // a request this version does not know: ignored
		}
		f, err := os.Create(path)
		if err != nil {
			return false, fmt.Errorf("create CPU profile: %w", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return false, fmt.Errorf("start CPU profile: %w", err)
		}
		s.cpu = f
	}
	return true, nil
}

func (s *residentSink) Done(runErr error) error {
	if s.cpu != nil {
		pprof.StopCPUProfile()
		runErr = errors.Join(runErr, s.cpu.Close())
		s.cpu = nil
	}
	line := execute.ResidentDone
	if runErr != nil {
		line = execute.ResidentFailed + " " + strings.Join(strings.Fields(runErr.Error()), " ")
	}
	_, err := fmt.Fprintln(s.w, line)
	return err
}

// atomicFile is written under a temporary name and renamed into place only
// when the command succeeds, so --out never leaves a half-written file.
// A path that names something other than a regular file (--out
// /dev/null, a FIFO) is written in place: renaming a file over it would
// replace the device or pipe with a regular file.
type atomicFile struct {
	*os.File
	path    string
	inPlace bool
}

func createAtomic(path string) (*atomicFile, func() error, error) {
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() && !fi.IsDir() {
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return nil, nil, fmt.Errorf("open output %s: %w", path, err)
		}
		a := &atomicFile{File: f, path: path, inPlace: true}
		return a, a.Close, nil
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return nil, nil, fmt.Errorf("create output file: %w", err)
	}
	a := &atomicFile{File: f, path: path}
	commit := func() error {
		if err := a.Sync(); err != nil {
			a.abort()
			return fmt.Errorf("write %s: %w", path, err)
		}
		if err := a.Close(); err != nil {
			os.Remove(a.Name())
			return fmt.Errorf("write %s: %w", path, err)
		}
		if err := os.Rename(a.Name(), path); err != nil {
			os.Remove(a.Name())
			return fmt.Errorf("write %s: %w", path, err)
		}
		return nil
	}
	return a, commit, nil
}

func (a *atomicFile) abort() {
	a.Close()
	if a.inPlace {
		return
	}
	os.Remove(a.Name())
}
