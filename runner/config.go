package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/analysis/stats"
	"github.com/perfbot/perfbot/runner/readers"
	"github.com/perfbot/perfbot/runner/workspace"
)

// ConfigFile is the path of perfbot's configuration in a repository.
const ConfigFile = ".perfbot.yml"

// ErrInvalidConfig is wrapped by the errors of ParseConfig and
// Config.Validate for a configuration that is wrong; the message lists
// every problem, each naming its field and what to do.
var ErrInvalidConfig = errors.New("invalid perfbot config")

// A Config says what perfbot builds and measures in a repository and how
// it judges the result. It is read from .perfbot.yml at the base revision
// of a comparison, so that a pull request cannot change how it is
// measured; runner/testdata/perfbot.example.yml is a commented example.
//
// Commands are argument lists run without a shell ([go, build, ./...]; for
// shell syntax write [sh, -c, "…"]). In every argument and environment
// value perfbot replaces ${PERFBOT_SRC} (the revision's worktree, which is
// also the working directory) and ${PERFBOT_OUT} (the revision's build
// output directory); other $ signs are left as they are, and a
// ${PERFBOT_…} that is neither is an error. The same two variables are in
// the environment of builds and runs.
//
// ParseConfig fills in defaults, so a Config's fields are the values in
// force: each Benchmark's Count, Warmup and Timeout are its own or the
// top-level ones.
type Config struct {
	// Build is the build steps (YAML build, a list of steps: each an
	// argument list, or a mapping whose run: is one and whose inputs:
	// and outputs: declare what it reads and makes; see BuildStep), run
	// in order in the revision's worktree with ${PERFBOT_OUT} an empty
	// directory for their outputs. Absent: none. A build is cached per
	// commit and BuildHash; a declared step's outputs are reused, besides,
	// by any commit whose step reads the same files.
	Build []BuildStep `json:"build"`
	// BuildTimeout limits each build command (build_timeout, a Go
	// duration; default 30m).
	BuildTimeout time.Duration `json:"build_timeout"`
	// BuildParallel caps how many revisions build at once (build_parallel,
	// ≥ 1). 0, the default, builds all of a comparison's revisions at
	// once (base and head) on a host of 4 CPUs or more, one at a time on
	// a smaller one. Each build step gets MAKEFLAGS=-jN, N the CPUs
	// divided by the builds running at once, unless its env sets
	// MAKEFLAGS. It decides when builds run, not what they make: not part
	// of Hash or BuildHash.
	BuildParallel int `json:"build_parallel,omitempty"`
	// BuildVerify makes every BuildVerify-th reuse of a declared step's
	// outputs run the step again and compare what it makes, byte for
	// byte, with what it would have reused (build_verify, ≥ 0; 0: never;
	// default 0). A difference is a warning in the report naming the step
	// and the files, and the build uses, and keeps, the new outputs. Not
	// part of Hash or BuildHash.
	BuildVerify int `json:"build_verify,omitempty"`
	// Benchmarks are the programs measured, at least one.
	Benchmarks []Benchmark `json:"benchmarks"`
	// Count is the default number of measured runs per revision
	// (count, ≥ 1; default 10).
	Count int `json:"count"`
	// Warmup is the default number of runs per revision made first and
	// thrown away (warmup, ≥ 0; default 1).
	Warmup int `json:"warmup"`
	// MaxCount caps the runs per revision when inconclusive results
	// ask for more (max_count, ≥ every count; default 60: docs/statistics.md,
	// "Choosing α and the cap").
	MaxCount int `json:"max_count"`
	// Timeout is the default limit on one run (timeout, a Go duration;
	// default 10m).
	Timeout time.Duration `json:"timeout"`
	// Thresholds decide what counts as a change.
	Thresholds Thresholds `json:"thresholds"`
	// PrimaryUnits are the units whose changes pass or fail a
	// comparison (primary_units; default [sec/op]). They are benchfmt's
	// tidied units: ns/op is written, and stored, as sec/op.
	PrimaryUnits []string `json:"primary_units"`
	// Order is how each round orders the sides (order: random, abba or
	// alternate; default random, see OrderRandom). It decides when runs
	// happen, not what one measures, so it is not part of Hash: runs of
	// every order are one series.
	Order string `json:"order,omitempty"`
	// Variant is not read from YAML: it is the arguments WithVariant
	// appended to every benchmark's Args for one side of an A/B
	// comparison of flag sets (compare --base-args, --head-args), nil for
	// a config as written. It is part of the config's identity: the runs
	// of two variants have different Hashes, so they are never one
	// series, neither in the history noise floors are learned from nor
	// anywhere else runs are keyed by config hash, and each stored run's
	// config says which variant it ran (StoredVariant). Empty, it is left
	// out of the JSON, so the Hash of every config as written is what it
	// was before variants existed.
	Variant []string `json:"variant,omitempty"`
}

// WithVariant returns c for one side of an A/B comparison of flag sets:
// a copy with args appended to every benchmark's Args (after any earlier
// variant's) and recorded in Variant, validated as a whole (args may not
// give a benchmark's cpuprofile flag, for one); errors wrap
// ErrInvalidConfig. With no args it returns c itself: the config as
// written, with its own Hash and history.
func (c *Config) WithVariant(args []string) (*Config, error) {
	if len(args) == 0 {
		return c, nil
	}
	cp := *c
	cp.Variant = append(slices.Clone(c.Variant), args...)
	cp.Benchmarks = slices.Clone(c.Benchmarks)
	for i := range cp.Benchmarks {
		b := &cp.Benchmarks[i]
		b.Args = append(slices.Clone(b.Args), args...)
	}
	if err := cp.Validate(); err != nil {
		return nil, fmt.Errorf("variant args %q: %w", args, err)
	}
	return &cp, nil
}

// StoredVariant returns the Variant of a config as a run stores it (its
// JSON, store.RunRecord.Config): nil for a config as written, and for a
// run stored without a config.
func StoredVariant(configJSON string) ([]string, error) {
	if configJSON == "" {
		return nil, nil
	}
	var c struct {
		Variant []string `json:"variant"`
	}
	if err := json.Unmarshal([]byte(configJSON), &c); err != nil {
		return nil, fmt.Errorf("stored config: %w", err)
	}
	if len(c.Variant) == 0 {
		return nil, nil
	}
	return c.Variant, nil
}

// A Benchmark is one program perfbot runs, one process per run, that
// prints Go benchmark format (a go test -bench binary, or perfbot prove).
type Benchmark struct {
	// Name identifies the benchmark in reports and history
	// (name, [a-z0-9_-]+, unique).
	Name string `json:"name"`
	// Command is the program and its first arguments (command, an
	// argument list); a relative program path is relative to the
	// worktree, a bare name is looked up in PATH.
	Command []string `json:"command"`
	// Args are more arguments, appended to Command (args).
	Args []string `json:"args"`
	// Env is added to the run's environment (env, a map; names are
	// [A-Za-z_][A-Za-z0-9_]*, PERFBOT_SRC and PERFBOT_OUT are reserved).
	Env map[string]string `json:"env"`
	// Count is the measured runs per revision (count; default the
	// top-level count).
	Count int `json:"count"`
	// Warmup is the discarded runs per revision (warmup; default the
	// top-level warmup).
	Warmup int `json:"warmup"`
	// Timeout limits one run (timeout; default the top-level timeout).
	Timeout time.Duration `json:"timeout"`
	// CPUs, when set, pins each run to these CPUs (cpus, a Linux CPU
	// list such as "2-5,8" or a YAML list of numbers), sorted and
	// without repeats.
	CPUs []int `json:"cpus"`
	// CPUsAuto (cpus: auto) pins each run to every CPU perfbot may use
	// but the lowest-numbered one, which is left to the system and to
	// perfbot itself; on a one-CPU machine, to that CPU. The default
	// config uses it: on the 2-core development machine it cut msm_h's
	// run-to-run spread about threefold (BENCHMARKS.md).
	CPUsAuto bool `json:"cpus_auto,omitempty"`
	// CPUProfile, when set, is the flag with which the program takes a
	// file to write a CPU profile to (cpuprofile, as --cpuprofile or
	// -test.cpuprofile; absent or empty: no profile). Every run gets the
	// flag and a new file's path appended to its arguments, and the
	// profile an ok run writes there (pprof's gzipped format, as written)
	// is stored with the run, for reports to show where a phase's time
	// went. A run that writes no profile is a warning, not a failure. The
	// default config profiles perfbot prove, whose samples are labelled
	// with their phase.
	CPUProfile string `json:"cpuprofile,omitempty"`
	// MemProfile, when set, is the flag with which the program takes a
	// file to write a heap profile to (memprofile, as --memprofile or
	// -test.memprofile; absent or empty: none), handled as CPUProfile is:
	// every run gets the flag and a new file's path appended, and the
	// profile an ok run writes there is stored with the run (kind mem),
	// for reports to show which allocation sites grew when a phase
	// regressed. Go's heap profiles carry no labels, so it covers the
	// whole run, not a phase.
	MemProfile string `json:"memprofile,omitempty"`
	// Callgrind (callgrind: true) makes one more run of the benchmark per
	// revision, after the timed runs, under valgrind's callgrind
	// (execute.RunCallgrind): a deterministic instruction count per
	// span the program marks (per phase for perfbot prove) and for the
	// whole process, stored as that revision's callgrind run and
	// compared exactly, base against head. The run takes 20 to 100 times
	// as long as a timed one; its time limit is 200 times the side's
	// slowest timed run, and at least a minute. Off by default; valgrind
	// must be installed.
	Callgrind bool `json:"callgrind,omitempty"`
	// Resident (resident: true) keeps one process of the benchmark per
	// side alive across its runs, driven through the resident protocol
	// (execute.StartResident, docs/resident.md): what the program does
	// once (keys, device, warm-ups) is paid once per side, not per run.
	// The program's results must be Go benchmark format; a run's process
	// samples are its wall time, CPU time and GPU telemetry (no perf
	// counters, no peak RSS), and no memprofile. Part of the config's
	// hash: resident runs never share a series with one-shot runs.
	Resident bool `json:"resident,omitempty"`
	// Format says how to read what the program prints (format: one of
	// readers.Formats); "" is Go benchmark format, the default. Pattern,
	// Stream and Unit configure format lines, Path a format that reads a
	// file the program writes (see readers.Config). All are part of the
	// config's hash when set, so runs read differently never share a
	// series.
	Format  string `json:"format,omitempty"`
	Pattern string `json:"pattern,omitempty"`
	Stream  string `json:"stream,omitempty"`
	Unit    string `json:"unit,omitempty"`
	Path    string `json:"path,omitempty"`
}

// ReaderConfig returns the reader the benchmark's runs are read with, or
// nil for Go benchmark format.
func (b *Benchmark) ReaderConfig() *readers.Config {
	if b.Format == "" || b.Format == FormatGo {
		return nil
	}
	c := &readers.Config{Format: b.Format, Pattern: b.Pattern, Stream: b.Stream, Unit: b.Unit, Path: b.Path}
	if b.Format == "lines" {
		c.Name = b.Name // the benchmark of values whose line names none
	}
	return c
}

// FormatGo is Go benchmark format, what a benchmark prints unless its
// format: says otherwise.
const FormatGo = "go"

// RunCPUs returns the CPUs a run is pinned to, nil for none: CPUs, or
// with CPUsAuto every CPU this process may use but the lowest.
func (b *Benchmark) RunCPUs() ([]int, error) {
	if !b.CPUsAuto {
		return b.CPUs, nil
	}
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil, fmt.Errorf("cpus: auto: read this process's CPUs: %w", err)
	}
	var cpus []int
	for c := range maxCPU {
		if set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	if len(cpus) > 1 {
		cpus = cpus[1:]
	}
	return cpus, nil
}

// Argv returns the benchmark's full argument list, Command then Args,
// with vars expanded.
func (b *Benchmark) Argv(vars Vars) []string {
	return vars.ExpandAll(append(slices.Clone(b.Command), b.Args...))
}

// Environ returns the benchmark's environment additions as sorted
// NAME=value strings, values expanded, followed by vars' PERFBOT_SRC and
// PERFBOT_OUT. The caller adds its base environment.
func (b *Benchmark) Environ(vars Vars) []string {
	names := make([]string, 0, len(b.Env))
	for name := range b.Env {
		names = append(names, name)
	}
	sort.Strings(names)
	env := make([]string, 0, len(names)+2)
	for _, name := range names {
		env = append(env, name+"="+vars.Expand(b.Env[name]))
	}
	return append(env, vars.Environ()...)
}

// Thresholds decide what counts as a change (YAML thresholds).
type Thresholds struct {
	// Alpha is the significance level after Holm correction
	// (alpha, in (0, 0.5); default 0.01: the family-wise false-alarm
	// probability of a whole comparison, all its looks and phases together).
	Alpha float64 `json:"alpha"`
	// MinChangePct is the smallest change, in percent, that counts while
	// history is too short to measure a phase's noise
	// (min_change_pct, ≥ 0; default 1.0).
	MinChangePct float64 `json:"min_change_pct"`
	// MinHistory is the number of baseline runs needed before the noise
	// floor is learned from history (min_history, ≥ 2; default 10).
	MinHistory int `json:"min_history"`
	// Spending is the α-spending function that shares Alpha between the
	// looks of a comparison that adds runs (spending: obrien-fleming or
	// pocock; default obrien-fleming, see stats.Spendings). Like
	// Order it is not part of Hash.
	Spending string `json:"spending,omitempty"`
	// Paired (paired: true) decides each row on its rounds' own ratios,
	// head over base, with Wilcoxon's signed-rank test (analysis.Options
	// Paired; docs/statistics.md). Off by default. Like Spending it
	// decides verdicts, not what a run measures: not part of Hash.
	Paired bool `json:"paired,omitempty"`
	// Headline is the phase each benchmark's verdict is about, what its
	// user waits for (headline; default total; analysis.Options
	// Headline): phases that move while it does not are a trade-off,
	// which fails no check by default. Not part of Hash.
	Headline string `json:"headline,omitempty"`
	// FailOn says which regressions fail a check and
	// --fail-on-regression (fail_on: headline, the default, or
	// any-phase). Not part of Hash.
	FailOn string `json:"fail_on,omitempty"`
}

// Vars are the values of the variables perfbot expands in commands,
// arguments and environment values.
type Vars struct {
	// Src is ${PERFBOT_SRC}: the revision's worktree.
	Src string
	// Out is ${PERFBOT_OUT}: the revision's build output directory.
	Out string
}

// Expand returns s with ${PERFBOT_SRC} and ${PERFBOT_OUT} replaced.
func (v Vars) Expand(s string) string {
	if !strings.Contains(s, "${PERFBOT_") {
		return s
	}
	return strings.NewReplacer("${PERFBOT_SRC}", v.Src, "${PERFBOT_OUT}", v.Out).Replace(s)
}

// ExpandAll returns a new slice of args, each expanded.
func (v Vars) ExpandAll(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = v.Expand(a)
	}
	return out
}

// Environ returns PERFBOT_SRC=… and PERFBOT_OUT=….
func (v Vars) Environ() []string {
	return []string{"PERFBOT_SRC=" + v.Src, "PERFBOT_OUT=" + v.Out}
}

// DefaultConfig returns the configuration used for a repository without
// .perfbot.yml; it fits this repository: build cmd/perfbot and run one
// 2^16-constraint proof per process, keeping each run's CPU profile.
func DefaultConfig() *Config {
	return &Config{
		Build:        Steps([]string{"go", "build", "-o", "${PERFBOT_OUT}/perfbot", "./cmd/perfbot"}),
		BuildTimeout: defaultBuildTimeout,
		Benchmarks: []Benchmark{{
			Name:     "prove",
			Command:  []string{"${PERFBOT_OUT}/perfbot", "prove"},
			Args:     []string{"--constraints", "2^16", "--count", "1", "--warmup", "1", "--srs", "random", "--quiet"},
			Count:    defaultCount,
			Warmup:   defaultWarmup,
			Timeout:  defaultTimeout,
			CPUsAuto: true,
			// prove labels its profile's samples phase=NAME, so compare
			// can explain a regressed CPU phase by the functions that
			// grew. Counting and profiling together cost a proof +0.06%
			// (bench/cpuprofile-overhead.sh, BENCHMARKS.md; target 2%).
			CPUProfile: "--cpuprofile",
		}},
		Count:    defaultCount,
		Warmup:   defaultWarmup,
		MaxCount: defaultMaxCount,
		Timeout:  defaultTimeout,
		Thresholds: Thresholds{Alpha: defaultAlpha, MinChangePct: 1.0, MinHistory: 10, Spending: stats.SpendingOBrienFleming,
			Headline: "total", FailOn: analysis.FailOnHeadline},
		PrimaryUnits: []string{"sec/op"},
		Order:        OrderRandom,
	}
}

const (
	defaultCount    = 10
	defaultWarmup   = 1
	defaultMaxCount = 60
	defaultAlpha    = 0.01
	// What Hash writes for α and max_count, whatever they are.
	hashedAlpha         = 0.05
	hashedMaxCount      = 30
	defaultTimeout      = 10 * time.Minute
	defaultBuildTimeout = 30 * time.Minute
)

// LoadConfig reads .perfbot.yml at baseSHA (the base revision of a
// comparison) and parses it, or returns DefaultConfig when the file is
// not there and the repository is perfbot itself; any other repository
// without the file is ErrNoConfig. source says which it was, for logs
// and reports: ".perfbot.yml at 0123456789ab" or "default (no
// .perfbot.yml at 0123456789ab)". A Runner with an ExternalConfig reads
// neither (Runner.Config).
func LoadConfig(ctx context.Context, ws *workspace.Workspace, baseSHA string) (cfg *Config, source string, err error) {
	at := baseSHA
	if len(at) > 12 {
		at = at[:12]
	}
	data, err := ws.ReadFile(ctx, baseSHA, ConfigFile)
	if errors.Is(err, workspace.ErrFileNotFound) {
		if !isPerfbot(ctx, ws, baseSHA) {
			return nil, "", noConfigError(ws, at)
		}
		return DefaultConfig(), fmt.Sprintf("default (no %s at %s)", ConfigFile, at), nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("load config: %w", err)
	}
	source = fmt.Sprintf("%s at %s", ConfigFile, at)
	cfg, err = ParseConfig(data)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", source, err)
	}
	return cfg, source, nil
}
