package analysis

import (
	"cmp"
	"slices"
	"strings"

	"github.com/google/pprof/profile"
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

// A MemoryDiff compares the heap profiles of one benchmark command's runs,
// base against head: the allocation sites whose allocations per run grew
// most, in bytes (alloc_space) and in objects (alloc_objects). Compare
// makes one when a phase the command measured regressed and both sides'
// runs carry memory profiles (Run.Profiles of kind ProfileMem). A heap
// profile covers the whole run (setup, warm-ups and every proof), not a
// phase: Go's heap profiles carry no labels.
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
	// Only sites that grew are listed.
	Space   []AllocSite `json:"alloc_space"`
	Objects []AllocSite `json:"alloc_objects"`
}

// An AllocSite is one allocation site's allocations per run on each side
// and their growth, in bytes or objects.
type AllocSite struct {
	// Name is the function that allocated: the innermost frame of the
	// allocation's stack outside package runtime, with its full package
	// path.
	Name  string  `json:"name"`
	Base  float64 `json:"base"`
	Head  float64 `json:"head"`
	Delta float64 `json:"delta"`
}

// An allocTally is one side's heap profiles summed: per allocation site
// and in all, objects and bytes.
type allocTally struct {
	profiles         int
	objects, space   int64
	siteObj, siteSpc map[string]int64
}

// tallyAllocs sums profs' allocations by site.
func tallyAllocs(profs []*profile.Profile) allocTally {
	t := allocTally{siteObj: make(map[string]int64), siteSpc: make(map[string]int64)}
	for _, p := range profs {
		oi, si := valueIndex(p, allocObjectsSampleType), valueIndex(p, allocSpaceSampleType)
		if si < 0 {
			continue // parseProfiles left it out
		}
		t.profiles++
		for _, s := range p.Sample {
			site := allocSite(s)
			t.space += s.Value[si]
			t.siteSpc[site] += s.Value[si]
			if oi >= 0 {
				t.objects += s.Value[oi]
				t.siteObj[site] += s.Value[oi]
			}
		}
	}
	return t
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
	per := func(v int64, n int) float64 {
		if n == 0 {
			return 0
		}
		return float64(v) / float64(n)
	}
	growth := func(b, h map[string]int64) []AllocSite {
		out := []AllocSite{}
		for name, hv := range h {
			s := AllocSite{Name: name, Base: per(b[name], base.profiles), Head: per(hv, head.profiles)}
			s.Delta = s.Head - s.Base
			if s.Delta > 0 {
				out = append(out, s)
			}
		}
		slices.SortFunc(out, func(x, y AllocSite) int {
			return cmp.Or(cmp.Compare(y.Delta, x.Delta), strings.Compare(x.Name, y.Name))
		})
		if len(out) > top {
			out = out[:top]
		}
		return out
	}
	return MemoryDiff{
		Command:      command,
		BaseProfiles: base.profiles,
		HeadProfiles: head.profiles,
		BaseSpace:    per(base.space, base.profiles),
		HeadSpace:    per(head.space, head.profiles),
		BaseObjects:  per(base.objects, base.profiles),
		HeadObjects:  per(head.objects, head.profiles),
		Space:        growth(base.siteSpc, head.siteSpc),
		Objects:      growth(base.siteObj, head.siteObj),
	}
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
		if row.Verdict != VerdictRegression || row.Unit != timeUnit || row.Phase == "" {
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

// memoryLine says in one line how a command's allocations per run
// changed and which site grew most. code formats a name, text plain text.
func memoryLine(d MemoryDiff, code, text func(string) string) string {
	name := "the benchmark"
	if d.Command != "" {
		name = code(d.Command)
	}
	s := text("Allocations per run of ") + name + text(" (heap profiles of whole runs, not phases: Go's heap profiles carry no labels): "+
		formatAllocDelta(d.HeadSpace-d.BaseSpace, "B")+" ("+formatPct(deltaPct(d.BaseSpace, d.HeadSpace))+"), "+
		formatAllocDelta(d.HeadObjects-d.BaseObjects, "objects")+" ("+formatPct(deltaPct(d.BaseObjects, d.HeadObjects))+")")
	if len(d.Space) == 0 {
		return s + text("; no allocation site grew")
	}
	top := d.Space[0]
	return s + text("; grew most: ") + code(shortFuncName(top.Name)) + text(" "+formatAllocDelta(top.Delta, "B")+" a run")
}

// formatAlloc formats an amount of allocation in unit "B" (bytes, binary
// prefixes: "8.000MiB", "0B") or "objects" ("1.234k objects").
func formatAlloc(v float64, unit string) string {
	num := formatValue(v, unit)
	if v == 0 {
		num = "0"
	}
	if unit == "B" {
		return num + "B"
	}
	return num + " objects"
}

// formatAllocDelta formats a signed change of an amount of allocation.
func formatAllocDelta(d float64, unit string) string {
	if d >= 0 {
		return "+" + formatAlloc(d, unit)
	}
	return formatAlloc(d, unit)
}
