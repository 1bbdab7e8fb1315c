package analysis

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/google/pprof/profile"
	"github.com/perfbot/perfbot/analysis/internal/fmtx"
	"github.com/perfbot/perfbot/analysis/stats"
)

// This file explains a regression by heap profiles: which allocation
// sites allocate more per run in head than in base. Go's heap profiles
// carry no pprof labels (the runtime records an allocation's stack, not
// the goroutine's labels), so a memory diff covers whole runs, never a
// phase.

// The sample types of Go's heap profiles (runtime/pprof's allocs and heap
// profiles): allocations since the program started, in objects and
// bytes.
const (
	allocObjectsSampleType = "alloc_objects"
	allocSpaceSampleType   = "alloc_space"
)

// defaultMemoryTop is how many allocation sites a MemoryDiff lists.
const defaultMemoryTop = 5

// minSiteSamples is the fewest counts (see MemoryDiff) of an allocation
// site in head with which a MemoryDiff lists it, and the fewest of both
// sides together with which it tests it: a site caught by a few sampled
// allocations is not evidence, whatever it scales up to.
const minSiteSamples = 10

// A MemoryDiff compares the heap profiles of one benchmark command's runs,
// base against head: the allocation sites whose allocations per run grew
// most, in bytes (alloc_space) and in objects (alloc_objects). Compare
// makes one when a phase the command measured regressed and both sides'
// runs carry memory profiles (Run.Profiles of kind ProfileMem). A heap
// profile covers the whole run (setup, warm-ups and every proof), not a
// phase: Go's heap profiles carry no labels.
//
// A site is listed only on evidence. The runtime samples allocations,
// one every MemProfileRate bytes on average (the profile's Period: 512
// KiB by default, 4 KiB under perfbot prove), and runtime/pprof scales
// what it sampled up to estimates: one sampled 16-byte allocation reads
// as 32768 objects. So each site is tested on counts of what was
// sampled, summed over the side's profiles: for Objects, the allocations
// sampled (the scaling undone); for Space, the bytes in units of the
// Period. An allocation of s bytes is sampled with chance 1−e^(−s/Period),
// which leaves both counts no more variable than Poisson counts of the
// same mean (large allocations, almost always sampled, are nearly exact).
// The test is the conditional binomial test of two Poisson rates,
// two-sided, with the sides' numbers of runs as their exposures: given a
// site's counts on both sides together, head's part of them is binomial
// when the site allocates as much per run on both sides. Exact for
// Poisson counts, it errs towards listing less for these. Each list
// (Space, Objects) is one family, the sites with at least minSiteSamples
// counts on both sides together; Holm's correction over it keeps the
// chance that sampling noise lists any site at profileAlpha. A site is
// listed when its adjusted p-value is below profileAlpha, its amount per
// run grew and it has at least minSiteSamples counts in head. The test
// sees sampling noise only, not a program that allocates differently
// from run to run. Under MemProfileRate 1 the profile records every
// allocation and has no sampling noise: the Space count is then the
// bytes themselves, and a site can be listed for a few dozen bytes a
// run.
type MemoryDiff struct {
	// Command is the benchmark command whose runs wrote the profiles (the
	// runner's benchmark name, "prove"), "" when the runs do not name it.
	Command string `json:"command"`
	// BaseProfiles and HeadProfiles count the profiles on each side.
	BaseProfiles int `json:"base_profiles"`
	HeadProfiles int `json:"head_profiles"`
	// BaseSpace and HeadSpace are the bytes allocated per run (the mean
	// over the side's profiles); BaseObjects and HeadObjects the objects.
	BaseSpace   float64 `json:"base_alloc_space"`
	HeadSpace   float64 `json:"head_alloc_space"`
	BaseObjects float64 `json:"base_alloc_objects"`
	HeadObjects float64 `json:"head_alloc_objects"`
	// Space lists the allocation sites whose bytes per run grew the most,
	// by growth descending; Objects those whose objects per run grew.
	// Only sites that grew measurably (see above) are listed; reports
	// stored before the test list any that grew, without counts.
	Space   []AllocSite `json:"alloc_space"`
	Objects []AllocSite `json:"alloc_objects"`
}

// An AllocSite is one allocation site's allocations per run on each side
// and their growth, in bytes or objects, and the evidence for the growth.
type AllocSite struct {
	// Name is the function that allocated: the innermost frame of the
	// allocation's stack outside package runtime, with its full package
	// path.
	Name  string  `json:"name"`
	Base  float64 `json:"base"`
	Head  float64 `json:"head"`
	Delta float64 `json:"delta"`
	// BaseSamples and HeadSamples are the site's counts on each side,
	// summed over the side's profiles: the allocations sampled (Objects)
	// or the bytes in units of the sampling period (Space), as
	// MemoryDiff says; 0 in reports stored before they were kept.
	BaseSamples int64 `json:"base_samples"`
	HeadSamples int64 `json:"head_samples"`
	// P is the p-value of the conditional binomial test of the counts
	// per run, Holm-adjusted over the list's family (see MemoryDiff).
	P float64 `json:"p_value"`
}

// HasEvidence reports whether s carries its counts and p-value: every
// listed site does, but those of reports stored before them.
func (s AllocSite) HasEvidence() bool {
	return s.HeadSamples > 0
}

// An allocTally is one side's heap profiles summed: per allocation site
// and in all, objects and bytes.
type allocTally struct {
	profiles         int
	objects, space   int64
	siteObj, siteSpc siteTally
}

// A siteTally holds, per allocation site, an amount allocated (objects or
// bytes) and the count on which MemoryDiff tests it.
type siteTally struct {
	amount  map[string]int64
	samples map[string]float64
}

func newSiteTally() siteTally {
	return siteTally{amount: make(map[string]int64), samples: make(map[string]float64)}
}

func (s siteTally) add(site string, amount int64, samples float64) {
	s.amount[site] += amount
	s.samples[site] += samples
}

// tallyAllocs sums profs' allocations by site.
func tallyAllocs(profs []*profile.Profile) allocTally {
	t := allocTally{siteObj: newSiteTally(), siteSpc: newSiteTally()}
	for _, p := range profs {
		oi, si := valueIndex(p, allocObjectsSampleType), valueIndex(p, allocSpaceSampleType)
		if si < 0 {
			continue // parseProfiles left it out
		}
		t.profiles++
		period := max(float64(p.Period), 1)
		for _, s := range p.Sample {
			site, space := allocSite(s), s.Value[si]
			t.space += space
			t.siteSpc.add(site, space, float64(space)/period)
			if oi >= 0 {
				objects := s.Value[oi]
				t.objects += objects
				t.siteObj.add(site, objects, sampledAllocs(objects, space, period))
			}
		}
	}
	return t
}

// sampledAllocs returns how many allocations the runtime sampled for a
// heap profile's record of objects allocations of space bytes, under a
// sampling period of period bytes. runtime/pprof scales what was sampled
// by 1/(1−e^(−m/period)), m the mean size, one over the chance that an
// allocation of that size is sampled; this undoes it. A record holds at
// least one sampled allocation. Under a period of 1 every allocation is
// recorded, unscaled.
func sampledAllocs(objects, space int64, period float64) float64 {
	if objects <= 0 {
		return 0
	}
	if period <= 1 || space <= 0 {
		return float64(objects)
	}
	mean := float64(space) / float64(objects)
	return max(1, float64(objects)*-math.Expm1(-mean/period))
}

// allocSite names where a heap profile's sample allocated: the innermost
// function outside package runtime (the runtime's allocator frames, when
// a profile keeps them, are not the program's site), or the innermost
// frame when every frame is the runtime's.
func allocSite(s *profile.Sample) string {
	first := ""
	for _, loc := range s.Location {
		for _, name := range frameNames(loc) {
			if first == "" {
				first = name
			}
			if !strings.HasPrefix(name, "runtime.") {
				return name
			}
		}
	}
	if first == "" {
		return "(no stack)"
	}
	return first
}

// diffAllocs compares two sides' tallies per run.
func diffAllocs(command string, base, head allocTally, top int) MemoryDiff {
	return MemoryDiff{
		Command:      command,
		BaseProfiles: base.profiles,
		HeadProfiles: head.profiles,
		BaseSpace:    per(base.space, base.profiles),
		HeadSpace:    per(head.space, head.profiles),
		BaseObjects:  per(base.objects, base.profiles),
		HeadObjects:  per(head.objects, head.profiles),
		Space:        siteGrowth(base.profiles, head.profiles, base.siteSpc, head.siteSpc, top),
		Objects:      siteGrowth(base.profiles, head.profiles, base.siteObj, head.siteObj, top),
	}
}

// per returns v per run of n, 0 without runs.
func per(v int64, n int) float64 {
	if n == 0 {
		return 0
	}
	return float64(v) / float64(n)
}

// siteGrowth returns the top sites of one list (b and h, the sides'
// tallies of bytes or of objects, over baseRuns and headRuns profiles)
// whose amount per run grew measurably, as MemoryDiff says, by growth
// descending (then by name).
func siteGrowth(baseRuns, headRuns int, b, h siteTally, top int) []AllocSite {
	return measurable(siteFamily(baseRuns, headRuns, b, h), minSiteSamples, top,
		func(s *AllocSite) (*float64, float64, int64, string) { return &s.P, s.Delta, s.HeadSamples, s.Name })
}

// siteFamily returns the sites of one list that siteGrowth tests, in
// name order: those with at least minSiteSamples counts on both sides
// together, each with its amounts per run, its counts and the unadjusted
// p-value of the conditional binomial test.
func siteFamily(baseRuns, headRuns int, b, h siteTally) []AllocSite {
	var out []AllocSite
	for _, name := range sortedUnion(b.amount, h.amount) {
		kb, kh := int64(math.Round(b.samples[name])), int64(math.Round(h.samples[name]))
		if kb+kh < minSiteSamples {
			continue
		}
		s := AllocSite{
			Name:        name,
			Base:        per(b.amount[name], baseRuns),
			Head:        per(h.amount[name], headRuns),
			BaseSamples: kb,
			HeadSamples: kh,
			P:           stats.ConditionalBinomialP(kb, float64(baseRuns), kh, float64(headRuns)),
		}
		s.Delta = s.Head - s.Base
		out = append(out, s)
	}
	return out
}

// DiffMemProfiles compares base's heap profiles with head's (pprof's
// protocol buffers, gzipped or not, as runtime/pprof writes its allocs
// and heap profiles): allocations per run, and the top allocation sites
// whose bytes and objects per run grew. A profile that does not parse,
// or that has no alloc_space samples, is skipped with a warning. The
// result's Command is left for the caller.
func DiffMemProfiles(base, head [][]byte, top int) (MemoryDiff, []string) {
	if top <= 0 {
		top = defaultMemoryTop
	}
	var warnings []string
	var tallies [2]allocTally
	for i, s := range []struct {
		name string
		data [][]byte
	}{{"base", base}, {"head", head}} {
		pp := parseProfiles(s.data, allocSpaceSampleType)
		warnings = append(warnings, pp.warnings(s.name, "memory profiles", allocSpaceSampleType)...)
		tallies[i] = tallyAllocs(pp.profiles)
	}
	return diffAllocs("", tallies[0], tallies[1], top), warnings
}

// explainMemory returns a MemoryDiff for every benchmark command that
// measured a regressed sec/op phase row and whose runs carry memory
// profiles on both sides, in the order of rows.
func (c *comparer) explainMemory(in Input, rows []Row) []MemoryDiff {
	var base, head *profileSource
	var out []MemoryDiff
	done := make(map[string]bool)
	for _, row := range rows {
		if row.Verdict != VerdictRegression || row.Unit != TimeUnit || row.Phase == "" {
			continue
		}
		if base == nil {
			base, head = newProfileSource("base", in.Base, ProfileMem), newProfileSource("head", in.Head, ProfileMem)
		}
		for _, cmd := range base.commands[row.Benchmark] {
			if done[cmd] || !slices.Contains(head.commands[row.Benchmark], cmd) {
				continue
			}
			done[cmd] = true
			if len(base.data[cmd]) == 0 || len(head.data[cmd]) == 0 {
				continue
			}
			bp, hp := base.commandProfiles(c, cmd), head.commandProfiles(c, cmd)
			if len(bp) == 0 || len(hp) == 0 {
				continue
			}
			out = append(out, diffAllocs(cmd, tallyAllocs(bp), tallyAllocs(hp), defaultMemoryTop))
		}
	}
	return out
}

// MemoryLine says in one line how a command's allocations per run
// changed and which site grew most. code formats a name, text plain text.
func MemoryLine(d MemoryDiff, code, text func(string) string) string {
	name := "the benchmark"
	if d.Command != "" {
		name = code(d.Command)
	}
	s := text("Allocations per run of ") + name + text(" (heap profiles of whole runs, not phases: Go's heap profiles carry no labels): "+
		fmtx.FormatAllocDelta(d.HeadSpace-d.BaseSpace, "B")+" ("+fmtx.FormatPct(deltaPct(d.BaseSpace, d.HeadSpace))+"), "+
		fmtx.FormatAllocDelta(d.HeadObjects-d.BaseObjects, "objects")+" ("+fmtx.FormatPct(deltaPct(d.BaseObjects, d.HeadObjects))+")")
	if len(d.Space) == 0 {
		return s + text("; no allocation site's bytes per run grew measurably ("+MemoryTestNote()+")")
	}
	top := d.Space[0]
	return s + text("; grew most: ") + code(ShortFuncName(top.Name)) + text(" "+fmtx.FormatAllocDelta(top.Delta, "B")+" a run"+siteEvidence(top))
}

// MemoryTestNote names the rule by which a memory diff lists a site:
// "conditional binomial test, Holm α 0.01, ≥10 samples".
func MemoryTestNote() string {
	return fmt.Sprintf("conditional binomial test, Holm α %g, ≥%d samples", profileAlpha, minSiteSamples)
}

// siteEvidence formats a listed site's p-value: " (p<0.001)", or "" for
// a site of a report stored without one.
func siteEvidence(s AllocSite) string {
	if !s.HasEvidence() {
		return ""
	}
	return " (" + fmtx.FormatPEq(s.P) + ")"
}
