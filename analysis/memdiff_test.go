package analysis

import (
	"bytes"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/perfbot/perfbot/analysis/stats"
)

// FakeAlloc is one sample of a synthetic heap profile: its stack, leaf
// first, and its objects and bytes.
type FakeAlloc struct {
	Stack          []string
	Objects, Bytes int64
}

// FakeHeapProfile builds a gzipped heap profile as runtime/pprof writes
// its allocs profile: alloc_objects, alloc_space, inuse_objects,
// inuse_space, sampled every 4 KiB. The values are taken as they come,
// as the profile's scaled estimates.
func FakeHeapProfile(t *testing.T, allocs ...FakeAlloc) []byte {
	t.Helper()
	return fakeHeapProfileEvery(t, 4096, allocs...)
}

// fakeHeapProfileEvery is FakeHeapProfile sampled every period bytes.
func fakeHeapProfileEvery(t *testing.T, period int64, allocs ...FakeAlloc) []byte {
	t.Helper()
	p := &profile.Profile{
		SampleType: []*profile.ValueType{
			{Type: "alloc_objects", Unit: "count"}, {Type: "alloc_space", Unit: "bytes"},
			{Type: "inuse_objects", Unit: "count"}, {Type: "inuse_space", Unit: "bytes"},
		},
		DefaultSampleType: "alloc_space",
		PeriodType:        &profile.ValueType{Type: "space", Unit: "bytes"},
		Period:            period,
	}
	funcs := make(map[string]*profile.Function)
	locs := make(map[string]*profile.Location)
	for _, a := range allocs {
		var stack []*profile.Location
		for _, name := range a.Stack {
			loc, ok := locs[name]
			if !ok {
				fn := &profile.Function{ID: uint64(len(p.Function) + 1), Name: name, SystemName: name}
				funcs[name] = fn
				p.Function = append(p.Function, fn)
				loc = &profile.Location{ID: uint64(len(p.Location) + 1), Address: uint64(0x1000 * (len(p.Location) + 1)),
					Line: []profile.Line{{Function: fn, Line: 1}}}
				locs[name] = loc
				p.Location = append(p.Location, loc)
			}
			stack = append(stack, loc)
		}
		p.Sample = append(p.Sample, &profile.Sample{Location: stack, Value: []int64{a.Objects, a.Bytes, 0, 0}})
	}
	var b bytes.Buffer
	if err := p.Write(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

const (
	NewSystem = "github.com/perfbot/perfbot/prover/r1cs.NewSystem"
	Planted   = "github.com/perfbot/perfbot/prover/r1cs.(*LC).grow"
	makeSlice = "runtime.makeslice"
	mallocgc  = "runtime.mallocgc"
	MainMain  = "main.main"
)

func TestDiffMemProfilesRanksSitesByGrowthPerRun(t *testing.T) {
	t.Parallel()
	// Two base runs of 10 MiB in NewSystem and 1 KiB in grow (through
	// the runtime's allocator frames, which are not the site); one head
	// run of 10 MiB in NewSystem and 3 MiB in grow. The runtime's own 100
	// bytes grew too, but one sampled allocation is no evidence.
	b1 := FakeHeapProfile(t,
		FakeAlloc{[]string{mallocgc, makeSlice, NewSystem, MainMain}, 2, 10 << 20},
		FakeAlloc{[]string{Planted, MainMain}, 1, 1 << 10},
	)
	b2 := FakeHeapProfile(t,
		FakeAlloc{[]string{NewSystem, MainMain}, 2, 10 << 20},
		FakeAlloc{[]string{makeSlice, Planted, MainMain}, 1, 1 << 10},
	)
	h := FakeHeapProfile(t,
		FakeAlloc{[]string{NewSystem, MainMain}, 2, 10 << 20},
		FakeAlloc{[]string{Planted, MainMain}, 48, 3 << 20},
		FakeAlloc{[]string{mallocgc}, 1, 100}, // the runtime's own: its leaf is the site
	)
	d, warnings := DiffMemProfiles([][]byte{b1, b2}, [][]byte{h}, 0)
	if len(warnings) != 0 {
		t.Errorf("warnings %q", warnings)
	}
	// Counts, every 4 KiB: grow's bytes span 1 KiB / 4 KiB = ¼ period a
	// base run (½ in all, rounded to 1) and 768 periods in head; its
	// objects, 48 of 64 KiB, were each all but surely sampled, and each
	// base run's one object counts as one sampled allocation. NewSystem
	// allocates as much per run on both sides (p 1) and its 6 objects
	// are too few to test. Holm: grow's p times 2 functions for bytes,
	// times 1 for objects.
	want := MemoryDiff{
		BaseProfiles: 2, HeadProfiles: 1,
		BaseSpace: 10<<20 + 1<<10, HeadSpace: 10<<20 + 3<<20 + 100,
		BaseObjects: 3, HeadObjects: 51,
		Space: []AllocSite{{Name: Planted, Base: 1 << 10, Head: 3 << 20, Delta: 3<<20 - 1<<10,
			BaseSamples: 1, HeadSamples: 768, P: 2 * binomialReference(1, 2, 768, 1)}},
		Objects: []AllocSite{{Name: Planted, Base: 1, Head: 48, Delta: 47,
			BaseSamples: 2, HeadSamples: 48, P: binomialReference(2, 2, 48, 1)}},
	}
	got := d
	got.Space, got.Objects, want.Space, want.Objects = nil, nil, nil, nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("diff\n%+v\nwant\n%+v", got, want)
	}
	checkSites(t, "space", d.Space, []AllocSite{{Name: Planted, Base: 1 << 10, Head: 3 << 20, Delta: 3<<20 - 1<<10,
		BaseSamples: 1, HeadSamples: 768, P: 2 * binomialReference(1, 2, 768, 1)}})
	checkSites(t, "objects", d.Objects, []AllocSite{{Name: Planted, Base: 1, Head: 48, Delta: 47,
		BaseSamples: 2, HeadSamples: 48, P: binomialReference(2, 2, 48, 1)}})

	plain := func(s string) string { return s }
	d.Command = "prove"
	line := MemoryLine(d, plain, plain)
	wantLine := "Allocations per run of prove (heap profiles of whole runs, not phases: Go's heap profiles carry no labels): " +
		"+2.999MiB (+30.0%), +48.00 objects (+1600.0%); grew most: prover/r1cs.(*LC).grow +2.999MiB a run (p<0.001)"
	if line != wantLine {
		t.Errorf("line\n%q\nwant\n%q", line, wantLine)
	}
}

func TestDiffMemProfilesSkipsProfilesWithoutAllocations(t *testing.T) {
	t.Parallel()
	good := FakeHeapProfile(t, FakeAlloc{[]string{Planted}, 1, 100})
	cpu := FakeProfile(t, FakeSample{"synthesis", []string{"pkg.f"}, 10})
	d, warnings := DiffMemProfiles([][]byte{good, []byte("junk")}, [][]byte{good, cpu}, 0)
	if d.BaseProfiles != 1 || d.HeadProfiles != 1 || len(d.Space) != 0 {
		t.Errorf("diff %+v; want one profile a side, nothing grown", d)
	}
	if len(warnings) != 2 || !strings.HasPrefix(warnings[0], "base: skipped 1 of 2 memory profiles that did not parse") ||
		warnings[1] != `head: skipped 1 of 2 memory profiles that have no "alloc_space" samples` {
		t.Errorf("warnings %q", warnings)
	}
}

// WithMemProfiles returns copies of runs as runs of command cmd, each
// carrying data as its memory profile.
func WithMemProfiles(runs []Run, cmd string, data []byte) []Run {
	out := WithProfiles(runs, cmd)
	for i := range out {
		out[i].Profiles = []Profile{{Benchmark: cmd, Kind: ProfileMem, Data: data}}
	}
	return out
}

// binomialReference returns the two-sided p-value of the conditional
// binomial test of k1 events in exposure w1 against k2 in w2 the long
// way: in exact integer arithmetic, each split y of the k1+k2 events
// weighed by C(k, y)·w1^(k−y)·w2^y out of (w1+w2)^k.
func binomialReference(k1, w1, k2, w2 int64) float64 {
	k := k1 + k2
	pow := func(b, e int64) *big.Int { return new(big.Int).Exp(big.NewInt(b), big.NewInt(e), nil) }
	weight := func(y int64) *big.Int {
		w := new(big.Int).Mul(new(big.Int).Binomial(k, y), pow(w1, k-y))
		return w.Mul(w, pow(w2, y))
	}
	return minLikelihoodReference(0, k, k2, weight, pow(w1+w2, k))
}

// checkSites compares sites with want field by field, P to a relative
// 10⁻⁹.
func checkSites(t *testing.T, list string, got, want []AllocSite) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s = %+v, want %+v", list, got, want)
		return
	}
	for i := range got {
		g, w := got[i], want[i]
		g.P, w.P = 0, 0
		if !reflect.DeepEqual(g, w) || !closeRel(got[i].P, want[i].P, 1e-9) {
			t.Errorf("%s[%d] = %+v, want %+v", list, i, got[i], want[i])
		}
	}
}

func TestConditionalBinomialPMatchesKnownValues(t *testing.T) {
	t.Parallel()
	// 10 events against none in equal exposures: the splits 0 and 10 of
	// 10 fair coin flips, 2/1024.
	if got := stats.ConditionalBinomialP(0, 1, 10, 1); !closeRel(got, 2.0/1024, 1e-12) {
		t.Errorf("0 against 10: p = %.15g, want 2/1024", got)
	}
	if got := stats.ConditionalBinomialP(5, 3, 5, 3); got != 1 {
		t.Errorf("5 against 5: p = %g, want 1", got)
	}
	for _, c := range [][4]int64{
		{20, 4, 42, 4},
		{2, 2, 48, 1},
		{40, 4, 160, 4},
		{7, 8, 3, 8},
		{0, 3, 0, 5},
		{300, 8, 200, 5},
		{3, 1, 0, 6},
	} {
		got := stats.ConditionalBinomialP(c[0], float64(c[1]), c[2], float64(c[3]))
		want := binomialReference(c[0], c[1], c[2], c[3])
		if !closeRel(got, want, 1e-9) {
			t.Errorf("%d in %d runs against %d in %d: p = %.15g, want %.15g", c[0], c[1], c[2], c[3], got, want)
		}
	}
	if got := stats.ConditionalBinomialP(3, 0, 4, 2); got != 1 {
		t.Errorf("no base runs: p = %g, want 1", got)
	}
}

func TestSampledAllocsUndoesRuntimePprofsScaling(t *testing.T) {
	t.Parallel()
	// runtime/pprof writes n sampled allocations of s bytes, at a period
	// of r bytes, as n/(1−e^(−s/r)) objects of s bytes each.
	for _, c := range []struct{ n, size, period int64 }{
		{1, 16, 512 << 10}, {40, 64 << 10, 512 << 10}, {3, 4 << 20, 512 << 10}, {7, 100, 4096},
	} {
		scale := 1 / (1 - math.Exp(-float64(c.size)/float64(c.period)))
		objects := int64(float64(c.n) * scale)
		space := int64(float64(c.n*c.size) * scale)
		if got := sampledAllocs(objects, space, float64(c.period)); math.Round(got) != float64(c.n) {
			t.Errorf("%d sampled of %d B every %d B (%d objects, %d B): %g, want %d", c.n, c.size, c.period, objects, space, got, c.n)
		}
	}
	if got := sampledAllocs(300, 3000, 1); got != 300 {
		t.Errorf("every allocation recorded: %g, want 300", got)
	}
}

// scaledAlloc returns the heap profile record that runtime/pprof writes
// for n sampled allocations of size bytes each at a sampling period.
func scaledAlloc(stack []string, n, size, period int64) FakeAlloc {
	scale := 1 / (1 - math.Exp(-float64(size)/float64(period)))
	return FakeAlloc{stack, int64(float64(n) * scale), int64(float64(n*size) * scale)}
}

func TestDiffMemProfilesDoesNotListAFewSampledAllocations(t *testing.T) {
	t.Parallel()
	// At Go's default 512 KiB, three sampled 16-byte allocations in one
	// head run read as 98k objects and 1.5 MiB; base has none. Four
	// runs a side.
	const period = 512 << 10
	base := fakeHeapProfileEvery(t, period, scaledAlloc([]string{NewSystem, MainMain}, 40, 64<<10, period))
	noisy := fakeHeapProfileEvery(t, period,
		scaledAlloc([]string{NewSystem, MainMain}, 40, 64<<10, period),
		scaledAlloc([]string{Planted, MainMain}, 3, 16, period))
	quiet := base
	d, _ := DiffMemProfiles([][]byte{base, base, base, base}, [][]byte{noisy, quiet, quiet, quiet}, 0)
	if d.HeadSpace-d.BaseSpace < 256<<10 || d.HeadObjects-d.BaseObjects < 20000 {
		t.Fatalf("diff %+v; want head's three samples to scale up to hundreds of KiB and thousands of objects a run", d)
	}
	if len(d.Space) != 0 || len(d.Objects) != 0 {
		t.Errorf("space %+v, objects %+v; want nothing listed", d.Space, d.Objects)
	}
	plain := func(s string) string { return s }
	if line := MemoryLine(d, plain, plain); !strings.HasSuffix(line, fmt.Sprintf("; no allocation site's bytes per run grew measurably (conditional binomial test, Holm α %g, ≥%d samples)", profileAlpha, minSiteSamples)) {
		t.Errorf("line %q; want it to say no site grew measurably", line)
	}

	// A site that went from 10 to 40 sampled 64 KiB allocations a run is
	// listed, with its sampled allocations counted back.
	grown := fakeHeapProfileEvery(t, period, scaledAlloc([]string{NewSystem, MainMain}, 160, 64<<10, period))
	d, _ = DiffMemProfiles([][]byte{base, base, base, base}, [][]byte{grown, grown, grown, grown}, 0)
	if len(d.Objects) != 1 || d.Objects[0].BaseSamples != 4*40 || d.Objects[0].HeadSamples != 4*160 || !(d.Objects[0].P < profileAlpha) {
		t.Errorf("objects %+v; want NewSystem, 160 against 640 sampled allocations, p below %g", d.Objects, profileAlpha)
	}
	if len(d.Space) != 1 || d.Space[0].Name != NewSystem || !(d.Space[0].P < profileAlpha) {
		t.Errorf("space %+v; want NewSystem, p below %g", d.Space, profileAlpha)
	}
}

func TestSiteGrowthListsNoneOfManyDifferencesThatHolmDoesNotKeep(t *testing.T) {
	t.Parallel()
	// 20 sites each grow from 20 to 42 counts over 4 runs a side: each
	// alone is significant at α, but not among the 20 tested.
	b, h := newSiteTally(), newSiteTally()
	for i := range 20 {
		name := fmt.Sprintf("pkg.f%02d", i)
		b.add(name, 20<<10, 20)
		h.add(name, 42<<10, 42)
	}
	p := stats.ConditionalBinomialP(20, 4, 42, 4)
	if !(p < profileAlpha) || !(20*p > profileAlpha) {
		t.Fatalf("p = %g; the test wants one below α that 20 tests lift above it", p)
	}
	if got := siteGrowth(4, 4, b, h, defaultMemoryTop); len(got) != 0 {
		t.Errorf("sites %+v; want none listed", got)
	}
	b.add("pkg.hot", 20<<10, 20)
	h.add("pkg.hot", 200<<10, 200)
	if got := siteGrowth(4, 4, b, h, defaultMemoryTop); len(got) != 1 || got[0].Name != "pkg.hot" || got[0].HeadSamples != 200 || !(got[0].P < profileAlpha) {
		t.Errorf("sites %+v; want pkg.hot alone", got)
	}
}
