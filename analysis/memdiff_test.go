package analysis

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// fakeAlloc is one sample of a synthetic heap profile: its stack, leaf
// first, and its objects and bytes.
type fakeAlloc struct {
	stack          []string
	objects, bytes int64
}

// fakeHeapProfile builds a gzipped heap profile as runtime/pprof writes
// its allocs profile: alloc_objects, alloc_space, inuse_objects,
// inuse_space.
func fakeHeapProfile(t *testing.T, allocs ...fakeAlloc) []byte {
	t.Helper()
	p := &profile.Profile{
		SampleType: []*profile.ValueType{
			{Type: "alloc_objects", Unit: "count"}, {Type: "alloc_space", Unit: "bytes"},
			{Type: "inuse_objects", Unit: "count"}, {Type: "inuse_space", Unit: "bytes"},
		},
		DefaultSampleType: "alloc_space",
		PeriodType:        &profile.ValueType{Type: "space", Unit: "bytes"},
		Period:            4096,
	}
	funcs := make(map[string]*profile.Function)
	locs := make(map[string]*profile.Location)
	for _, a := range allocs {
		var stack []*profile.Location
		for _, name := range a.stack {
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
		p.Sample = append(p.Sample, &profile.Sample{Location: stack, Value: []int64{a.objects, a.bytes, 0, 0}})
	}
	var b bytes.Buffer
	if err := p.Write(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

const (
	newSystem = "github.com/perfbot/perfbot/prover/r1cs.NewSystem"
	planted   = "github.com/perfbot/perfbot/prover/r1cs.(*LC).grow"
	makeSlice = "runtime.makeslice"
	mallocgc  = "runtime.mallocgc"
	mainMain  = "main.main"
)

func TestDiffMemProfilesRanksSitesByGrowthPerRun(t *testing.T) {
	t.Parallel()
	// Two base runs of 10 MiB in NewSystem and 1 KiB in grow (through
	// the runtime's allocator frames, which are not the site); one head
	// run of 10 MiB in NewSystem and 3 MiB in grow.
	b1 := fakeHeapProfile(t,
		fakeAlloc{[]string{mallocgc, makeSlice, newSystem, mainMain}, 2, 10 << 20},
		fakeAlloc{[]string{planted, mainMain}, 1, 1 << 10},
	)
	b2 := fakeHeapProfile(t,
		fakeAlloc{[]string{newSystem, mainMain}, 2, 10 << 20},
		fakeAlloc{[]string{makeSlice, planted, mainMain}, 1, 1 << 10},
	)
	h := fakeHeapProfile(t,
		fakeAlloc{[]string{newSystem, mainMain}, 2, 10 << 20},
		fakeAlloc{[]string{planted, mainMain}, 48, 3 << 20},
		fakeAlloc{[]string{mallocgc}, 1, 100}, // the runtime's own: its leaf is the site
	)
	d, warnings := DiffMemProfiles([][]byte{b1, b2}, [][]byte{h}, 0)
	if len(warnings) != 0 {
		t.Errorf("warnings %q", warnings)
	}
	want := MemoryDiff{
		BaseProfiles: 2, HeadProfiles: 1,
		BaseSpace: 10<<20 + 1<<10, HeadSpace: 10<<20 + 3<<20 + 100,
		BaseObjects: 3, HeadObjects: 51,
		Space:   []AllocSite{{planted, 1 << 10, 3 << 20, 3<<20 - 1<<10}, {mallocgc, 0, 100, 100}},
		Objects: []AllocSite{{planted, 1, 48, 47}, {mallocgc, 0, 1, 1}},
	}
	if !reflect.DeepEqual(d, want) {
		t.Errorf("diff\n%+v\nwant\n%+v", d, want)
	}

	plain := func(s string) string { return s }
	d.Command = "prove"
	line := memoryLine(d, plain, plain)
	wantLine := "Allocations per run of prove (heap profiles of whole runs, not phases: Go's heap profiles carry no labels): " +
		"+2.999MiB (+30.0%), +48.00 objects (+1600.0%); grew most: prover/r1cs.(*LC).grow +2.999MiB a run"
	if line != wantLine {
		t.Errorf("line\n%q\nwant\n%q", line, wantLine)
	}
}

func TestDiffMemProfilesSkipsProfilesWithoutAllocations(t *testing.T) {
	t.Parallel()
	good := fakeHeapProfile(t, fakeAlloc{[]string{planted}, 1, 100})
	cpu := fakeProfile(t, fakeSample{"synthesis", []string{"pkg.f"}, 10})
	d, warnings := DiffMemProfiles([][]byte{good, []byte("junk")}, [][]byte{good, cpu}, 0)
	if d.BaseProfiles != 1 || d.HeadProfiles != 1 || len(d.Space) != 0 {
		t.Errorf("diff %+v; want one profile a side, nothing grown", d)
	}
	if len(warnings) != 2 || !strings.HasPrefix(warnings[0], "base: skipped 1 of 2 memory profiles that did not parse") ||
		warnings[1] != `head: skipped 1 of 2 memory profiles that have no "alloc_space" samples` {
		t.Errorf("warnings %q", warnings)
	}
}

// withMemProfiles returns copies of runs as runs of command cmd, each
// carrying data as its memory profile.
func withMemProfiles(runs []Run, cmd string, data []byte) []Run {
	out := withProfiles(runs, cmd)
	for i := range out {
		out[i].Profiles = []Profile{{Benchmark: cmd, Kind: ProfileMem, Data: data}}
	}
	return out
}

func TestCompareShowsTheMemoryDiffOnlyWhenAPhaseRegressed(t *testing.T) {
	t.Parallel()
	base := fakeHeapProfile(t, fakeAlloc{[]string{newSystem, mainMain}, 2, 10 << 20})
	head := fakeHeapProfile(t, fakeAlloc{[]string{newSystem, mainMain}, 2, 10 << 20}, fakeAlloc{[]string{planted, mainMain}, 48, 3 << 20})
	g := newSynth(81, 0.004)

	steady := Compare(Input{
		Base: withMemProfiles(g.runs(baseRev, 6, nil), "prove", base),
		Head: withMemProfiles(g.runs(headRev, 6, nil), "prove", head),
	}, DefaultOptions())
	if steady.MemoryDiffs != nil {
		t.Errorf("no phase regressed, yet memory diffs %+v", steady.MemoryDiffs)
	}

	r := Compare(Input{
		Base: withMemProfiles(g.runs(baseRev, 6, nil), "prove", base),
		Head: withMemProfiles(g.runs(headRev, 6, map[string]float64{"synthesis": 1.1}), "prove", head),
	}, DefaultOptions())
	if len(r.MemoryDiffs) != 1 {
		t.Fatalf("memory diffs %+v; want prove's", r.MemoryDiffs)
	}
	d := r.MemoryDiffs[0]
	if d.Command != "prove" || d.BaseProfiles != 6 || d.HeadProfiles != 6 || len(d.Space) != 1 || d.Space[0].Name != planted || d.Space[0].Delta != 3<<20 {
		t.Errorf("diff %+v; want prove's 6 profiles a side and grow +3 MiB a run", d)
	}
	if r.ProfileDiffs != nil {
		t.Errorf("profile diffs %+v: a memory profile is no CPU profile", r.ProfileDiffs)
	}
	var md, txt, js bytes.Buffer
	if err := RenderMarkdown(&md, r, RenderContext{}); err != nil {
		t.Fatal(err)
	}
	if err := RenderText(&txt, r); err != nil {
		t.Fatal(err)
	}
	if err := RenderJSON(&js, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"\nAllocations per run of `prove` (heap profiles of whole runs, not phases: Go's heap profiles carry no labels): +3.000MiB (+30.0%), +48.00 objects (+2400.0%); grew most: `prover/r1cs.(*LC).grow` +3.000MiB a run\n",
		"| `prover/r1cs.(*LC).grow` | 0B | 3.000MiB | +3.000MiB |",
		"| `prover/r1cs.(*LC).grow` | 0 objects | 48.00 objects | +48.00 objects |",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
	if !strings.Contains(txt.String(), "  +3.000MiB a run (0B → 3.000MiB), prover/r1cs.(*LC).grow\n") {
		t.Errorf("text lacks the site:\n%s", txt.String())
	}
	var back Report
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.MemoryDiffs, r.MemoryDiffs) {
		t.Errorf("JSON round trip: %+v, want %+v", back.MemoryDiffs, r.MemoryDiffs)
	}
}
