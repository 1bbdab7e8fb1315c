package analysis

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/google/pprof/profile"
	"github.com/perfbot/perfbot/analysis/internal/fmtx"
	"github.com/perfbot/perfbot/analysis/stats"
)

// This file explains regressed CPU phases by their profiles: it merges
// each side's profiles, keeps the samples labelled with the phase and
// compares every function's share of them.

// PhaseLabel is the pprof label with which the prover marks the samples
// of each phase: it runs every phase under
// pprof.Do(ctx, pprof.Labels("phase", name), …).
const PhaseLabel = "phase"

// minProfileSamples is how many profiler samples of a phase each side's
// merged CPU profiles must hold for Compare to take the phase for a CPU
// phase and explain it. A phase that runs on the GPU leaves few CPU
// samples: its host thread mostly waits.
const minProfileSamples = 20

// defaultProfileTop is how many functions a ProfileDiff lists by default.
const defaultProfileTop = 5

// profileAlpha is the family-wise error rate at which a ProfileDiff lists
// a function (and a MemoryDiff an allocation site): the chance that
// sampling noise alone lists any of the list's functions, after Holm's
// correction over them. Stricter than a comparison's default α of 0.05:
// a list is read as evidence of where the time went, and a profile holds
// hundreds of functions, most of which no change touched.
const profileAlpha = 0.01

// minFuncSamples is the fewest profiler samples of a function in head's
// phase with which a ProfileDiff lists it, and the fewest of both sides
// together with which it tests it. Below it a share is a handful of
// samples (one of 232 reads as 0.4%), which an exact test may still call
// significant when the other side has many samples, but which is too
// little to say what grew.
const minFuncSamples = 10

// The sample types of Go's CPU profiles: "cpu" holds CPU time (in
// nanoseconds), "samples" the number of profiler samples.
const (
	cpuSampleType   = "cpu"
	countSampleType = "samples"
)

// ProcessBenchmark is the Key.Benchmark of the samples that the runner
// records for a whole benchmark process (runner/execute's
// ProcessBenchmark); a named benchmark command's are
// "process/benchmark=NAME", with "/gpu=N" for one GPU's among several.
const ProcessBenchmark = "process"

// A ProfileDiff explains one phase of one benchmark by profiles: which
// functions took a measurably larger share of the phase's samples in
// head than in base. Each side's profiles are merged (their samples
// summed), and only the samples labelled phase=Phase count.
//
// A function is listed only on evidence. Its profiler samples in the
// phase, k of n on each side, are tested by Fisher's exact test (two
// proportions, two-sided): the samples are taken as independent draws
// from the phase's CPU time, and given the function's k_b+k_h samples in
// all, head's share of them is hypergeometric when its share did not
// change. An exact test, not the pooled z-test, because the functions in
// question often have a handful of samples, where the z-test's normal
// approximation is wrong. Each list (Flat, Cum) is one family, the
// functions with at least minFuncSamples samples on both sides together
// (filtering on that total keeps each test exact, since the test
// conditions on it); Holm's correction over the family keeps the chance
// that noise lists any function at profileAlpha. A function is listed
// when its adjusted p-value is below profileAlpha, its share grew and it
// has at least minFuncSamples samples in head. Samples of one run are not
// quite independent, and runs vary; the test sees sampling noise only.
type ProfileDiff struct {
	// Benchmark and Phase name the explained series, as in Key.
	Benchmark string `json:"benchmark"`
	Phase     string `json:"phase"`
	// SampleType is the pprof sample type compared ("cpu" for a CPU
	// profile) and Unit its unit ("nanoseconds").
	SampleType string `json:"sample_type"`
	Unit       string `json:"unit"`
	// BaseProfiles and HeadProfiles count the profiles merged on each
	// side.
	BaseProfiles int `json:"base_profiles"`
	HeadProfiles int `json:"head_profiles"`
	// BaseSamples and HeadSamples count the profiler samples of the
	// phase on each side (the "samples" sample type where the profile
	// has one, else the sample records).
	BaseSamples int64 `json:"base_samples"`
	HeadSamples int64 `json:"head_samples"`
	// BaseValue and HeadValue sum the phase's samples in Unit: the CPU
	// time the profiler saw in the phase.
	BaseValue int64 `json:"base_value"`
	HeadValue int64 `json:"head_value"`
	// Flat lists the functions whose flat share grew the most: the share
	// of the phase's samples in which the function itself was running
	// (the leaf frame, inlined frames counted as their own functions).
	// Only functions whose share grew measurably (see above) are listed,
	// by Delta descending; reports stored before the test list any that
	// grew, without counts.
	Flat []FuncShare `json:"flat"`
	// Cum lists, in the same way, the functions whose cumulative share
	// grew the most: the share of the samples in which the function was
	// anywhere on the stack, counted once per sample however often it
	// appears (recursion, inlining).
	Cum []FuncShare `json:"cum"`
}

// A FuncShare is one function's share of a phase's samples on each side,
// in percent of that side's samples, its change in percentage points,
// and the evidence for the change.
type FuncShare struct {
	// Name is the function as pprof names it, with its full package path:
	// "github.com/perfbot/perfbot/prover/r1cs.(*LC).Add".
	Name  string  `json:"name"`
	Base  float64 `json:"base"`
	Head  float64 `json:"head"`
	Delta float64 `json:"delta"` // Head − Base
	// BaseSamples and HeadSamples count the phase's profiler samples of
	// the function on each side (flat or cum, as the list); 0 in reports
	// stored before they were kept.
	BaseSamples int64 `json:"base_samples"`
	HeadSamples int64 `json:"head_samples"`
	// P is the p-value of Fisher's exact test of the two shares of
	// samples, Holm-adjusted over the list's family (see ProfileDiff).
	P float64 `json:"p_value"`
}

// HasEvidence reports whether s carries its sample counts and p-value:
// every listed share does, but those of reports stored before them.
func (s FuncShare) HasEvidence() bool {
	return s.HeadSamples > 0
}

// ProfileOptions says what DiffProfiles compares. The zero value compares
// CPU time and lists the top 5 functions.
type ProfileOptions struct {
	// SampleType is the pprof sample type whose values are compared
	// (default "cpu"). A heap profile's "alloc_space" would compare
	// allocation sites the same way: the leaf frame is where memory was
	// allocated.
	SampleType string
	// Top is how many functions Flat and Cum list at most (default 5).
	Top int
}

func (o ProfileOptions) withDefaults() ProfileOptions {
	o.SampleType = cmp.Or(o.SampleType, cpuSampleType)
	if o.Top <= 0 {
		o.Top = defaultProfileTop
	}
	return o
}

// DiffProfiles compares the samples labelled phase=phase (PhaseLabel) in
// the base and the head profiles: each side's profiles are merged, and
// every function's flat and cumulative share of the side's samples of
// the phase are compared. Profiles are pprof's protocol buffers, gzipped
// or not, as runtime/pprof writes them. A profile that does not parse, or
// that lacks opts.SampleType, is skipped, and a warning says so; a side
// without samples of the phase has every share 0, and then no function is
// listed. Functions are listed as ProfileDiff says. The result's
// Benchmark is left for the caller.
func DiffProfiles(base, head [][]byte, phase string, opts ProfileOptions) (ProfileDiff, []string) {
	opts = opts.withDefaults()
	var warnings []string
	var tallies [2]phaseTally
	for i, s := range []struct {
		name string
		data [][]byte
	}{{"base", base}, {"head", head}} {
		pp := parseProfiles(s.data, opts.SampleType)
		warnings = append(warnings, pp.warnings(s.name, "profiles", opts.SampleType)...)
		tallies[i] = tallyPhase(pp.profiles, phase, opts.SampleType)
	}
	return diffTallies(phase, opts, tallies[0], tallies[1]), warnings
}

// parsedProfiles is a set of profiles, parsed, without those that do not
// parse or lack the sample type sought.
type parsedProfiles struct {
	profiles []*profile.Profile
	given    int   // profiles given
	bad      int   // profiles that did not parse
	firstErr error // why the first of them did not
	untyped  int   // profiles without the sample type
}

func parseProfiles(data [][]byte, sampleType string) parsedProfiles {
	pp := parsedProfiles{given: len(data)}
	for _, d := range data {
		p, err := profile.ParseData(d)
		switch {
		case err != nil:
			pp.bad++
			if pp.firstErr == nil {
				pp.firstErr = err
			}
		case valueIndex(p, sampleType) < 0:
			pp.untyped++
		default:
			pp.profiles = append(pp.profiles, p)
		}
	}
	return pp
}

// warnings says which profiles were skipped, and why.
func (pp parsedProfiles) warnings(side, what, sampleType string) []string {
	var out []string
	if pp.bad > 0 {
		out = append(out, fmt.Sprintf("%s: skipped %d of %d %s that did not parse (%v)", side, pp.bad, pp.given, what, pp.firstErr))
	}
	if pp.untyped > 0 {
		out = append(out, fmt.Sprintf("%s: skipped %d of %d %s that have no %q samples", side, pp.untyped, pp.given, what, sampleType))
	}
	return out
}

// A phaseTally is one side's samples of one phase, summed over profiles:
// per function, the samples in which it is the leaf (flat) and those in
// which it is on the stack (cum).
type phaseTally struct {
	profiles  int    // profiles merged
	unit      string // the sample type's unit
	samples   int64  // profiler samples of the phase
	value     int64  // their value
	flat, cum funcTally
}

// A funcTally holds, per function, the value of some samples and their
// count of profiler samples.
type funcTally struct {
	value, samples map[string]int64
}

func newFuncTally() funcTally {
	return funcTally{value: make(map[string]int64), samples: make(map[string]int64)}
}

func (f funcTally) add(name string, value, samples int64) {
	f.value[name] += value
	f.samples[name] += samples
}

// tallyPhase sums the samples of profs labelled phase=phase, in the
// value of sampleType and in profiler samples: the "samples" sample type
// where the profile has one, else one per sample record.
func tallyPhase(profs []*profile.Profile, phase, sampleType string) phaseTally {
	t := phaseTally{flat: newFuncTally(), cum: newFuncTally()}
	onStack := make(map[string]bool)
	for _, p := range profs {
		vi, ci := valueIndex(p, sampleType), valueIndex(p, countSampleType)
		if vi < 0 {
			continue // parseProfiles left it out
		}
		t.profiles++
		if t.unit == "" {
			t.unit = p.SampleType[vi].Unit
		}
		for _, s := range p.Sample {
			v := s.Value[vi]
			if v == 0 || !slices.Contains(s.Label[PhaseLabel], phase) {
				continue
			}
			n := int64(1)
			if ci >= 0 {
				n = s.Value[ci]
			}
			t.samples += n
			t.value += v
			if len(s.Location) > 0 {
				t.flat.add(frameNames(s.Location[0])[0], v, n)
			}
			clear(onStack)
			for _, loc := range s.Location {
				for _, name := range frameNames(loc) {
					if !onStack[name] {
						onStack[name] = true
						t.cum.add(name, v, n)
					}
				}
			}
		}
	}
	return t
}

// valueIndex returns the index of sampleType among p's sample values, or
// −1.
func valueIndex(p *profile.Profile, sampleType string) int {
	return slices.IndexFunc(p.SampleType, func(st *profile.ValueType) bool { return st.Type == sampleType })
}

// frameNames returns the functions of a location, innermost first: one,
// or more where calls were inlined into the location's function. A
// location without symbols is named by its address.
func frameNames(loc *profile.Location) []string {
	var names []string
	for _, line := range loc.Line {
		if line.Function != nil && line.Function.Name != "" {
			names = append(names, line.Function.Name)
		}
	}
	if len(names) == 0 {
		names = append(names, fmt.Sprintf("0x%x", loc.Address))
	}
	return names
}

// diffTallies compares the two sides' tallies of a phase.
func diffTallies(phase string, opts ProfileOptions, base, head phaseTally) ProfileDiff {
	return ProfileDiff{
		Phase:        phase,
		SampleType:   opts.SampleType,
		Unit:         cmp.Or(base.unit, head.unit),
		BaseProfiles: base.profiles,
		HeadProfiles: head.profiles,
		BaseSamples:  base.samples,
		HeadSamples:  head.samples,
		BaseValue:    base.value,
		HeadValue:    head.value,
		Flat:         topGrowth(base, head, base.flat, head.flat, opts.Top),
		Cum:          topGrowth(base, head, base.cum, head.cum, opts.Top),
	}
}

// topGrowth returns the top functions of one list (bf and hf, the sides'
// flat or cum tallies) whose share grew measurably, as ProfileDiff says,
// by growth descending (then by name).
func topGrowth(base, head phaseTally, bf, hf funcTally, top int) []FuncShare {
	return measurable(shareFamily(base, head, bf, hf), minFuncSamples, top,
		func(f *FuncShare) (*float64, float64, int64, string) { return &f.P, f.Delta, f.HeadSamples, f.Name })
}

// measurable keeps the items of a family that grew measurably: Holm's
// adjustment over the family (written back into each item's p-value)
// below profileAlpha, a growth above zero and at least minHead samples in
// head; by growth descending (then by name), at most top. of returns an
// item's p-value to adjust, growth, head samples and name. Both profile
// diffs (functions, allocation sites) list by it.
func measurable[T any](family []T, minHead int64, top int, of func(*T) (p *float64, delta float64, head int64, name string)) []T {
	ps := make([]float64, len(family))
	for i := range family {
		p, _, _, _ := of(&family[i])
		ps[i] = *p
	}
	out := []T{}
	for i, adj := range stats.Holm(ps) {
		item := family[i]
		p, delta, head, _ := of(&item)
		*p = adj
		if adj < profileAlpha && delta > 0 && head >= minHead {
			out = append(out, item)
		}
	}
	slices.SortFunc(out, func(x, y T) int {
		_, dx, _, nx := of(&x)
		_, dy, _, ny := of(&y)
		return cmp.Or(cmp.Compare(dy, dx), strings.Compare(nx, ny))
	})
	return out[:min(len(out), top)]
}

// shareFamily returns the functions of one list that topGrowth tests,
// in name order: those with at least minFuncSamples samples on both
// sides together, each with its shares, its counts and the unadjusted
// p-value of Fisher's exact test.
func shareFamily(base, head phaseTally, bf, hf funcTally) []FuncShare {
	var out []FuncShare
	for _, name := range sortedUnion(bf.samples, hf.samples) {
		kb, kh := bf.samples[name], hf.samples[name]
		if kb+kh < minFuncSamples {
			continue
		}
		s := FuncShare{
			Name:        name,
			Base:        sharePct(bf.value[name], base.value),
			Head:        sharePct(hf.value[name], head.value),
			BaseSamples: kb,
			HeadSamples: kh,
			P:           stats.FisherExactP(kb, base.samples, kh, head.samples),
		}
		s.Delta = s.Head - s.Base
		out = append(out, s)
	}
	return out
}

// sortedUnion returns the keys of a and b, sorted, each once.
func sortedUnion[V any](a, b map[string]V) []string {
	keys := slices.AppendSeq(slices.Collect(maps.Keys(a)), maps.Keys(b))
	slices.Sort(keys)
	return slices.Compact(keys)
}

// sharePct returns part as a percentage of whole, 0 when whole is 0.
func sharePct(part, whole int64) float64 {
	if whole == 0 {
		return 0
	}
	return float64(part) * 100 / float64(whole)
}

// explainProfiles returns a ProfileDiff for every regressed sec/op row of
// a CPU phase, in the order of rows. A phase is a CPU phase when each
// side's merged CPU profiles hold at least minProfileSamples samples
// labelled with it. Profiles are found through the runs (see
// profileSource); a side without profiles explains nothing and says
// nothing.
func (c *comparer) explainProfiles(in Input, rows []Row) []ProfileDiff {
	var base, head *profileSource
	var out []ProfileDiff
	opts := ProfileOptions{}.withDefaults()
	for _, row := range rows {
		if row.Verdict != VerdictRegression || row.Unit != TimeUnit || row.Phase == "" {
			continue
		}
		if base == nil {
			base, head = newProfileSource("base", in.Base, ProfileCPU), newProfileSource("head", in.Head, ProfileCPU)
		}
		bp, hp := base.profiles(c, row.Benchmark), head.profiles(c, row.Benchmark)
		if len(bp) == 0 || len(hp) == 0 {
			continue
		}
		bt, ht := tallyPhase(bp, row.Phase, opts.SampleType), tallyPhase(hp, row.Phase, opts.SampleType)
		if bt.samples < minProfileSamples || ht.samples < minProfileSamples {
			continue
		}
		d := diffTallies(row.Phase, opts, bt, ht)
		d.Benchmark = row.Benchmark
		out = append(out, d)
		if others := slices.Concat(base.sharing(row.Key), head.sharing(row.Key)); len(others) > 0 {
			slices.Sort(others)
			c.warnf("%s: the CPU profiles that explain it also hold %s, whose samples carry the same phase label: the profile diff mixes them",
				c.label(row.Key), fmtx.List(slices.Compact(others), listLimit))
		}
	}
	return out
}

// TimeUnit is the unit of time per operation: what a CPU profile
// explains.
const TimeUnit = "sec/op"

// A profileSource finds one side's profiles of one kind (CPU or memory)
// for a row, by the name of the benchmark command that measured it. A run
// is one execution of one command; the runner names the command in the
// run's process samples ("process/benchmark=NAME") and in each Profile's
// Benchmark. So a row's benchmark leads to the commands whose ok runs
// measured it, and those to the profiles of the side's ok runs that carry
// their names (a profile without a Benchmark belongs to its run's
// command).
type profileSource struct {
	side string
	kind string // ProfileCPU or ProfileMem
	// commands lists, per row benchmark, the commands that measured it,
	// in the order of the runs.
	commands map[string][]string
	// measured holds, per command, the benchmark and phase of every
	// series its runs measured.
	measured map[string]map[Key]bool
	// data holds, per command, the profiles of its ok runs, in run
	// order.
	data   map[string][][]byte
	parsed map[string][]*profile.Profile
}

func newProfileSource(side string, runs []Run, kind string) *profileSource {
	s := &profileSource{
		side:     side,
		kind:     kind,
		commands: make(map[string][]string),
		measured: make(map[string]map[Key]bool),
		data:     make(map[string][][]byte),
		parsed:   make(map[string][]*profile.Profile),
	}
	for _, run := range runs {
		if run.Status != StatusOK || run.Tool != "" {
			continue
		}
		cmd := commandName(run)
		for _, smp := range run.Samples {
			if isProcessBenchmark(smp.Benchmark) {
				continue
			}
			if !slices.Contains(s.commands[smp.Benchmark], cmd) {
				s.commands[smp.Benchmark] = append(s.commands[smp.Benchmark], cmd)
			}
			if s.measured[cmd] == nil {
				s.measured[cmd] = make(map[Key]bool)
			}
			s.measured[cmd][Key{Benchmark: smp.Benchmark, Phase: smp.Phase}] = true
		}
		for _, p := range run.Profiles {
			if p.Kind == kind {
				name := cmp.Or(p.Benchmark, cmd)
				s.data[name] = append(s.data[name], p.Data)
			}
		}
	}
	return s
}

// profiles returns the parsed profiles of the commands that measured
// benchmark. It parses each command's profiles once and warns, through
// c, about those that do not parse.
func (s *profileSource) profiles(c *comparer, benchmark string) []*profile.Profile {
	var out []*profile.Profile
	for _, cmd := range s.commands[benchmark] {
		out = append(out, s.commandProfiles(c, cmd)...)
	}
	return out
}

// commandProfiles returns the parsed profiles of command cmd, parsing
// them the first time and warning about those that do not parse.
func (s *profileSource) commandProfiles(c *comparer, cmd string) []*profile.Profile {
	if parsed, ok := s.parsed[cmd]; ok {
		return parsed
	}
	sampleType, what := cpuSampleType, "CPU profiles"
	if s.kind == ProfileMem {
		sampleType, what = allocSpaceSampleType, "memory profiles"
	}
	pp := parseProfiles(s.data[cmd], sampleType)
	if cmd != "" {
		what += " of " + cmd
	}
	c.warnings = append(c.warnings, pp.warnings(s.side, what, sampleType)...)
	s.parsed[cmd] = pp.profiles
	return pp.profiles
}

// sharing returns the other benchmarks that the commands measuring k's
// benchmark measured in k's phase too: their samples carry the same
// label, so the profiles cannot tell them apart.
func (s *profileSource) sharing(k Key) []string {
	var out []string
	for _, cmd := range s.commands[k.Benchmark] {
		for m := range s.measured[cmd] {
			if m.Phase == k.Phase && m.Benchmark != k.Benchmark {
				out = append(out, m.Benchmark)
			}
		}
	}
	return out
}

// commandName returns the name of the benchmark command a run executed,
// from its process samples ("process/benchmark=NAME…"), or "" when they
// do not name it.
func commandName(run Run) string {
	for _, smp := range run.Samples {
		if rest, ok := strings.CutPrefix(smp.Benchmark, ProcessBenchmark+"/benchmark="); ok {
			name, _, _ := strings.Cut(rest, "/")
			return name
		}
	}
	return ""
}

// isProcessBenchmark reports whether a sample describes a whole benchmark
// process rather than one benchmark.
func isProcessBenchmark(benchmark string) bool {
	return benchmark == ProcessBenchmark || strings.HasPrefix(benchmark, ProcessBenchmark+"/")
}

// ownModule is the module path that renderings drop from function names:
// perfbot's own, whose prover is the workload it guards by default.
const ownModule = "github.com/perfbot/perfbot/"

// ShortFuncName returns a function's name without ownModule:
// "prover/r1cs.(*LC).Add". Names from other modules stay whole.
func ShortFuncName(name string) string {
	if short, ok := strings.CutPrefix(name, ownModule); ok && short != "" {
		return short
	}
	return name
}
