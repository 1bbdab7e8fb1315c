package execute

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"golang.org/x/sys/unix"

	"github.com/perfbot/perfbot/analysis"
)

// This file runs a benchmark once under valgrind's callgrind and turns
// what callgrind counted into simulated instruction counts: one per
// benchmark line (the span the line reports) and one for the process.
//
// How a span is counted: callgrind runs with --collect-atstart=yes and
// --dump-before for the two marker functions SpanBeginFunc and
// SpanEndFunc, so that every time the program enters one of them
// callgrind writes what it counted since the last such moment to a new
// file (a "part", whose header names the marker that ended it) and
// starts again from zero. The parts, in order, tile the whole run.
// Pairing each begin with its end as brackets nest, a span holds the
// parts between its markers: a phase its own part, total its phases'
// and what ran between them. The program prints one benchmark line per
// span, in the order the spans end (perfbot prove prints a proof's
// phases, then total, when the proof is done), so the n-th span to end
// is the n-th line.

// The marker functions a program calls to mark a span for RunCallgrind:
// SpanBeginFunc at its start, SpanEndFunc at its end. Any function whose
// name ends so counts, in any package (prover/spans.go has perfbot
// prove's); it must not be inlined.
const (
	SpanBeginFunc = "perfbotSpanBegin"
	SpanEndFunc   = "perfbotSpanEnd"
)

// ErrNoValgrind is wrapped by the error of RunCallgrind and LookValgrind
// when valgrind is not installed where the benchmark would find it.
var ErrNoValgrind = errors.New("valgrind not found")

// LookValgrind returns the path of the valgrind program a benchmark
// whose environment additions are env would run (found in the PATH it
// gets, perfbot's unless env sets one), or an error wrapping
// ErrNoValgrind that says how to install it.
func LookValgrind(env []string) (string, error) {
	full, err := childEnv(env)
	if err != nil {
		return "", err
	}
	path, err := lookPath("valgrind", full)
	if err != nil {
		return "", fmt.Errorf("%w in the benchmark's PATH (%s): install valgrind 3.19 or later "+
			"(apt-get install valgrind), or remove callgrind from the benchmark", ErrNoValgrind, envValue(full, "PATH"))
	}
	return path, nil
}

// RunCallgrind runs the benchmark spec describes once under valgrind's
// callgrind and returns a Result whose Run.Tool is
// analysis.ToolCallgrind and whose ok Run carries simulated samples
// only:
//
//   - per benchmark line, the instructions of its span divided by the
//     line's iteration count, in analysis.SimInstructionsUnit; present
//     when the program marked exactly one span per line (see
//     SpanBeginFunc), with a warning saying why when not;
//   - for the process (Key.Benchmark as in ProcessBenchmark), all its
//     instructions in analysis.SimProcessInstructionsUnit and the run's
//     wall time in analysis.SimWallUnit.
//
// The counts leave out the Go runtime's own bookkeeping (see
// runtimeOverhead), whose instruction counts depend on wall time and on
// the heap's randomized base address rather than on the program.
//
// So that the counts repeat, the run gets, after spec.Env:
// GODEBUG=asyncpreemptoff=1,memprofilerate=0,cpu.rdtscp=off appended to
// the benchmark's own GODEBUG (callgrind cannot run Go's asynchronous
// preemption signals; memory profiling samples at random; valgrind 3.19
// does not decode RDTSCP, which the runtime's cputicks uses when the CPU
// has it, so a contended runtime lock died of SIGILL now and then),
// GOMAXPROCS=1,
// and unless spec.Env sets them GOGC=off and GOMEMLIMIT at half the
// machine's memory (no garbage collection while that much is left). It
// runs pinned to one CPU: the last of spec.CPUs, or the last CPU perfbot
// may use, so that the program sees one CPU (runtime.NumCPU) whatever
// the machine. It is given no profile flags. Everything else is as Run
// does it, spec.Timeout included, which should allow for callgrind's
// slowdown (20 to 100 times).
//
// RunCallgrind returns an error wrapping ErrNoValgrind when valgrind is
// not installed. A run that fails carries the end of valgrind's log in
// its Detail.
func RunCallgrind(ctx context.Context, spec Spec) (Result, error) {
	return runCallgrind(ctx, spec, nvml.New())
}

func runCallgrind(ctx context.Context, spec Spec, lib nvml.Interface) (Result, error) {
	if len(spec.Args) == 0 {
		return Result{}, errors.New("run benchmark under callgrind: empty command line")
	}
	name := filepath.Base(spec.Args[0])
	valgrind, err := LookValgrind(spec.Env)
	if err != nil {
		return Result{}, fmt.Errorf("run %s under callgrind: %w", name, err)
	}
	cpu, err := oneCPU(spec.CPUs)
	if err != nil {
		return Result{}, fmt.Errorf("run %s under callgrind: %w", name, err)
	}
	dir, err := os.MkdirTemp("", "perfbot-callgrind-*")
	if err != nil {
		return Result{}, fmt.Errorf("run %s under callgrind: %w", name, err)
	}
	defer os.RemoveAll(dir)

	vs := spec
	vs.Args = append([]string{valgrind,
		"--tool=callgrind",
		"--callgrind-out-file=" + filepath.Join(dir, "callgrind.out"),
		"--collect-atstart=yes",
		"--dump-before=*" + SpanBeginFunc,
		"--dump-before=*" + SpanEndFunc,
		"--log-file=" + filepath.Join(dir, "valgrind.log"),
	}, spec.Args...)
	vs.Env = append(slices.Clone(spec.Env), callgrindEnv(spec.Env)...)
	vs.CPUs = []int{cpu}
	vs.CPUProfileFlag, vs.MemProfileFlag = "", ""
	res, err := run(ctx, vs, lib)
	if err != nil {
		return res, err
	}
	res.Run.Tool = analysis.ToolCallgrind
	if res.Run.Status != analysis.StatusOK {
		if log := valgrindLogTail(filepath.Join(dir, "valgrind.log")); log != "" {
			res.Run.Detail += "\nvalgrind's log (last lines):\n" + log
		}
		return res, nil
	}

	process := ProcessBenchmark
	if spec.Name != "" {
		process += "/benchmark=" + spec.Name
	}
	parts, err := readCallgrindParts(dir)
	if err != nil {
		res.Run.Status = analysis.StatusNoOutput
		res.Run.Detail = "callgrind counted nothing that perfbot could read: " + err.Error()
		if log := valgrindLogTail(filepath.Join(dir, "valgrind.log")); log != "" {
			res.Run.Detail += "\nvalgrind's log (last lines):\n" + log
		}
		res.Run.Samples = nil
		return res, nil
	}
	var total uint64
	for _, p := range parts {
		total += p.instructions
	}
	samples := make([]analysis.Sample, 0, len(res.lines)+2)
	spans, err := pairSpans(parts)
	switch {
	case err != nil:
		res.Warnings = append(res.Warnings, "callgrind: "+err.Error()+"; only the whole process's simulated count is kept")
	case len(spans) == 0:
		res.Warnings = append(res.Warnings, fmt.Sprintf("callgrind: the program marked no span (it never called a function named %s, "+
			"or its binary has no symbol table, as go test's and -ldflags=-s builds have not): "+
			"only the whole process's simulated count is kept", SpanBeginFunc))
	case len(spans) != len(res.lines):
		res.Warnings = append(res.Warnings, fmt.Sprintf("callgrind: the program marked %d spans but printed %d benchmark lines; "+
			"a simulated count per line needs one span per line, the lines printed in the order the spans end: "+
			"only the whole process's simulated count is kept", len(spans), len(res.lines)))
	default:
		for i, l := range res.lines {
			samples = append(samples, analysis.Sample{
				Key:   analysis.Key{Benchmark: l.benchmark, Phase: l.phase, Unit: analysis.SimInstructionsUnit},
				Value: float64(spans[i]) / float64(max(l.iters, 1)),
			})
		}
	}
	samples = append(samples,
		analysis.Sample{Key: analysis.Key{Benchmark: process, Unit: analysis.SimProcessInstructionsUnit}, Value: float64(total)},
		analysis.Sample{Key: analysis.Key{Benchmark: process, Unit: analysis.SimWallUnit}, Value: res.Wall.Seconds()},
	)
	res.Run.Samples = samples
	res.Unavailable = nil // the process counters of a simulated run are not kept
	return res, nil
}

// callgrindEnv returns the environment RunCallgrind adds after a
// benchmark's own additions given (see RunCallgrind).
func callgrindEnv(given []string) []string {
	godebug := "asyncpreemptoff=1,memprofilerate=0,cpu.rdtscp=off"
	if own := envValue(given, "GODEBUG"); own != "" {
		godebug = own + "," + godebug // later settings win
	}
	env := []string{"GODEBUG=" + godebug, "GOMAXPROCS=1"}
	if !hasEnv(given, "GOGC") {
		env = append(env, "GOGC=off")
	}
	if !hasEnv(given, "GOMEMLIMIT") {
		var si unix.Sysinfo_t
		if unix.Sysinfo(&si) == nil && si.Totalram > 0 {
			half := uint64(si.Totalram) * uint64(si.Unit) / 2
			env = append(env, fmt.Sprintf("GOMEMLIMIT=%dMiB", max(half>>20, 1)))
		}
	}
	return env
}

// hasEnv reports whether env sets key.
func hasEnv(env []string, key string) bool {
	return slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, key+"=") })
}

// oneCPU returns the CPU a callgrind run is pinned to: the last of cpus,
// or the last CPU this process may run on.
func oneCPU(cpus []int) (int, error) {
	if len(cpus) > 0 {
		return cpus[len(cpus)-1], nil
	}
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return 0, fmt.Errorf("read this process's CPUs: %w", err)
	}
	own := cpuList(set)
	if len(own) == 0 {
		return 0, errors.New("this process may run on no CPU")
	}
	return own[len(own)-1], nil
}

// valgrindLogTail returns the last lines of valgrind's log, or "".
func valgrindLogTail(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

// A callgrindPart is one file callgrind wrote: what it counted between
// two dumps.
type callgrindPart struct {
	part int
	// trigger is what ended it: "begin" or "end" for a span marker,
	// "" for anything else (the program's end).
	trigger string
	// instructions counts the part's instructions, the Go runtime's
	// bookkeeping left out (see runtimeOverhead).
	instructions uint64
	// all counts every instruction of the part; overhead, the runtime's
	// bookkeeping among them.
	all, overhead uint64
}

// readCallgrindParts reads every file callgrind wrote in dir, in the
// order it wrote them.
func readCallgrindParts(dir string) ([]callgrindPart, error) {
	names, err := filepath.Glob(filepath.Join(dir, "callgrind.out*"))
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, errors.New("callgrind wrote no file")
	}
	parts := make([]callgrindPart, 0, len(names))
	for _, name := range names {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		p, err := parseCallgrindPart(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Base(name), err)
		}
		parts = append(parts, p)
	}
	slices.SortFunc(parts, func(a, b callgrindPart) int { return a.part - b.part })
	for i := 1; i < len(parts); i++ {
		if parts[i].part == parts[i-1].part {
			return nil, fmt.Errorf("two files of part %d", parts[i].part)
		}
	}
	return parts, nil
}

// parseCallgrindPart reads one file in callgrind's format
// (https://valgrind.org/docs/manual/cl-format.html): its part number,
// the trigger of its dump, and, summing every cost line but those that
// follow a calls= line (a call's inclusive cost, counted where it was
// spent), its instructions in all and those of the functions
// runtimeOverhead names.
func parseCallgrindPart(r io.Reader) (callgrindPart, error) {
	p := callgrindPart{part: -1}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	positions := 1               // position columns before the costs
	names := map[string]string{} // compressed function names: "(12)" → name
	overhead := false            // the current function is runtime overhead
	skip := false                // the next cost line is a call's inclusive cost
	sawEvents := false
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		switch c := line[0]; {
		case c >= '0' && c <= '9', c == '+', c == '-', c == '*':
			if skip {
				skip = false
				continue
			}
			f := strings.Fields(line)
			if len(f) <= positions {
				continue // a cost line without costs counts nothing
			}
			v, err := strconv.ParseUint(f[positions], 10, 64)
			if err != nil {
				return p, fmt.Errorf("cost line %q: %w", line, err)
			}
			p.all += v
			if overhead {
				p.overhead += v
			}
			continue
		}
		key, val, _ := strings.Cut(line, "=")
		switch key {
		case "fn":
			overhead = runtimeOverhead(compressedName(names, val))
			continue
		case "cfn", "cfi", "cfl", "cob", "ob", "fl", "fi", "fe":
			if key == "cfn" {
				compressedName(names, val)
			}
			continue
		case "calls":
			skip = true
			continue
		}
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		val = strings.TrimSpace(val)
		switch key {
		case "part":
			n, err := strconv.Atoi(val)
			if err != nil {
				return p, fmt.Errorf("part %q: %w", val, err)
			}
			p.part = n
		case "positions":
			positions = len(strings.Fields(val))
		case "events":
			if ev := strings.Fields(val); len(ev) == 0 || ev[0] != "Ir" {
				return p, fmt.Errorf("events %q: want Ir first", val)
			}
			sawEvents = true
		case "desc":
			if t, ok := strings.CutPrefix(val, "Trigger: --dump-before="); ok {
				switch {
				case strings.HasSuffix(t, SpanBeginFunc):
					p.trigger = "begin"
				case strings.HasSuffix(t, SpanEndFunc):
					p.trigger = "end"
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		return p, err
	}
	switch {
	case !sawEvents:
		return p, errors.New("not a callgrind profile: no events line")
	case p.part < 0:
		return p, errors.New("no part number")
	}
	p.instructions = p.all - p.overhead
	return p, nil
}

// compressedName returns the name a "(id) name" or "(id)" reference
// stands for, remembering it when given.
func compressedName(names map[string]string, ref string) string {
	if !strings.HasPrefix(ref, "(") {
		return ref
	}
	id, name, ok := strings.Cut(ref, ") ")
	if ok {
		names[id] = name
		return name
	}
	return names[strings.TrimSuffix(ref, ")")]
}

// pairSpans pairs each begin with its end, as brackets nest, and returns
// each span's instructions in the order the spans ended: the sum of the
// parts between its begin and its end.
func pairSpans(parts []callgrindPart) ([]uint64, error) {
	var spans []uint64
	var open []int // indexes into counts, innermost last
	var counts []uint64
	for _, p := range parts {
		for _, i := range open {
			counts[i] += p.instructions
		}
		switch p.trigger {
		case "begin":
			open = append(open, len(counts))
			counts = append(counts, 0)
		case "end":
			if len(open) == 0 {
				return nil, fmt.Errorf("%s was called with no span open (part %d)", SpanEndFunc, p.part+1)
			}
			spans = append(spans, counts[open[len(open)-1]])
			open = open[:len(open)-1]
		}
	}
	if len(open) > 0 {
		return nil, fmt.Errorf("%d spans were begun and never ended", len(open))
	}
	return spans, nil
}

// runtimeOverhead reports whether fn, a function as callgrind names it,
// is the Go runtime's own bookkeeping, left out of simulated counts: a
// function of package runtime or internal/runtime/…, unless runtimeWork
// lists it. Its instruction counts follow wall time (the scheduler,
// sysmon, preemption, timers) or the heap's address layout, which Go
// 1.26 randomizes at every start (the page allocator, heap growth),
// rather than the program: with them, two runs of synthesis at 2^10
// constraints differed by up to 0.3%; without them, by tens of
// instructions in 30 million.
func runtimeOverhead(fn string) bool {
	rest, ok := strings.CutPrefix(fn, "runtime.")
	if !ok {
		return strings.HasPrefix(fn, "internal/runtime/") && !strings.HasPrefix(fn, "internal/runtime/maps.")
	}
	for _, w := range runtimeWork {
		if strings.HasPrefix(rest, w) {
			return false
		}
	}
	return true
}

// runtimeWork lists the runtime functions, by name prefix after
// "runtime.", that do the program's own work and are counted: copying,
// clearing, comparing and hashing memory, allocating an object (not
// finding pages for it), string conversions and map operations (with
// internal/runtime/maps).
var runtimeWork = []string{
	"memmove", "memclr", "memequal", "cmpstring", "memhash", "strhash", "aeshash",
	"mallocgc", "newobject", "newarray", "makeslice", "growslice", "nextFreeFast", "heapSetType",
	"concatstring", "slicebytetostring", "stringtoslice", "rawstring", "intstring", "convT",
	"mapaccess", "mapassign", "mapdelete", "mapiter", "makemap",
}
