package analysis

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"reflect"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"github.com/perfbot/perfbot/analysis/stats"
)

// This file tests the profile diffs, with real CPU profiles of workloads
// run here under phase labels and with synthetic profiles whose numbers
// are exact.

// spinSink keeps the spinning functions' results alive.
var spinSink uint64

// spinFor calls fn, which spins for a while, until the process has used d
// more CPU time. CPU time, not wall time: the profiler samples CPU time,
// and a busy machine must not thin the samples out.
func spinFor(t *testing.T, d time.Duration, fn func(uint64) uint64) {
	t.Helper()
	x := uint64(1)
	for end := cpuTime(t) + d; cpuTime(t) < end; {
		x = fn(x)
	}
	spinSink += x
}

// cpuTime returns the CPU time the process has used.
func cpuTime(t *testing.T) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// phaseWork is the work synthesis does in both revisions.
//
//go:noinline
func phaseWork(x uint64) uint64 {
	for range 1 << 16 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}

// SlowHelper is the work head added to synthesis; base barely calls it.
//
//go:noinline
func SlowHelper(x uint64) uint64 {
	for range 1 << 16 {
		x = x*6364136223846793005 + 1442695040888963407
		x ^= x >> 29
	}
	return x
}

// msmWork is msm_h's work, the same in both revisions.
//
//go:noinline
func msmWork(x uint64) uint64 {
	for range 1 << 16 {
		x += x<<3 ^ x>>11
	}
	return x
}

// FuncName returns the name pprof gives fn.
func FuncName(fn any) string {
	return runtime.FuncForPC(reflect.ValueOf(fn).Pointer()).Name()
}

var (
	realOnce               sync.Once
	realBase, realHead     []byte
	realProfileUnavailable error
)

// RealProfiles returns a CPU profile of a base and of a head workload,
// each with a synthesis and an msm_h phase and some unlabelled work. Head
// spends twice as long again in slowHelper during synthesis: about 40
// samples, enough for the profile diff's exact test to tell among the
// dozen functions on the stack. The profiles are made once, in about 1.4
// seconds of CPU time, by the first test that asks.
// Those tests do not call t.Parallel: only one CPU profile can run at a
// time, and the CPU time spinFor counts is the whole process's (the
// labels would keep other tests' samples out anyway).
func RealProfiles(t *testing.T) (base, head []byte) {
	t.Helper()
	realOnce.Do(func() {
		profileSide := func(helper time.Duration) []byte {
			var buf bytes.Buffer
			if err := pprof.StartCPUProfile(&buf); err != nil {
				realProfileUnavailable = err
				return nil
			}
			ctx := context.Background()
			pprof.Do(ctx, pprof.Labels(PhaseLabel, "synthesis"), func(context.Context) {
				spinFor(t, 200*time.Millisecond, phaseWork)
				spinFor(t, helper, SlowHelper)
			})
			pprof.Do(ctx, pprof.Labels(PhaseLabel, "msm_h"), func(context.Context) {
				spinFor(t, 150*time.Millisecond, msmWork)
			})
			spinFor(t, 50*time.Millisecond, phaseWork) // outside every phase
			pprof.StopCPUProfile()
			return buf.Bytes()
		}
		realBase = profileSide(5 * time.Millisecond)
		realHead = profileSide(400 * time.Millisecond)
	})
	if realProfileUnavailable != nil {
		t.Skipf("CPU profiler in use (go test -cpuprofile?): %v", realProfileUnavailable)
	}
	return realBase, realHead
}

func ShareOf(shares []FuncShare, name string) (FuncShare, bool) {
	i := slices.IndexFunc(shares, func(s FuncShare) bool { return s.Name == name })
	if i < 0 {
		return FuncShare{}, false
	}
	return shares[i], true
}

func mustParse(t *testing.T, data []byte) *profile.Profile {
	t.Helper()
	p, err := profile.ParseData(data)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDiffProfilesOfRealCPUProfilesPutsTheGrownFunctionFirst(t *testing.T) {
	base, head := RealProfiles(t)
	helper := FuncName(SlowHelper)
	if !strings.HasPrefix(helper, "github.com/perfbot/perfbot/analysis.") {
		t.Fatalf("slowHelper is named %q; want its full package path", helper)
	}

	d, warnings := DiffProfiles([][]byte{base}, [][]byte{head}, "synthesis", ProfileOptions{})
	if len(warnings) > 0 {
		t.Errorf("warnings: %q", warnings)
	}
	t.Logf("synthesis: base %d samples (%d ns), head %d samples (%d ns); flat %+v", d.BaseSamples, d.BaseValue, d.HeadSamples, d.HeadValue, d.Flat)
	if d.Phase != "synthesis" || d.SampleType != "cpu" || d.Unit != "nanoseconds" || d.BaseProfiles != 1 || d.HeadProfiles != 1 {
		t.Errorf("diff %+v: want phase synthesis, cpu nanoseconds, 1 profile a side", d)
	}
	if d.BaseSamples == 0 || d.HeadSamples <= d.BaseSamples {
		t.Errorf("synthesis samples: base %d, head %d; want head to have more (it spun three times as long)", d.BaseSamples, d.HeadSamples)
	}
	if len(d.Flat) == 0 || d.Flat[0].Name != helper {
		t.Fatalf("flat %+v: want %s first", d.Flat, helper)
	}
	if f := d.Flat[0]; !(f.Delta > 20) || f.Head <= f.Base || math.Abs(f.Delta-(f.Head-f.Base)) > 1e-9 {
		t.Errorf("%s flat: %+v; want it to grow from almost nothing to about two thirds of synthesis", helper, f)
	}
	if f := d.Flat[0]; f.HeadSamples < minFuncSamples || f.HeadSamples <= f.BaseSamples || !(f.P < profileAlpha) {
		t.Errorf("%s flat: %+v; want at least %d head samples, more than base's, and p below %g", helper, f, minFuncSamples, profileAlpha)
	}
	if c, ok := ShareOf(d.Cum, helper); !ok || c.Delta <= 0 {
		t.Errorf("cum %+v: want %s with a positive delta", d.Cum, helper)
	}
	for _, fs := range [][]FuncShare{d.Flat, d.Cum} {
		if len(fs) > defaultProfileTop {
			t.Errorf("%d functions listed, want at most %d", len(fs), defaultProfileTop)
		}
		for i, f := range fs {
			if f.Delta <= 0 || i > 0 && f.Delta > fs[i-1].Delta || !(f.P < profileAlpha) || f.HeadSamples < minFuncSamples {
				t.Errorf("shares %+v: want positive deltas, descending, each with p below %g and %d head samples", fs, profileAlpha, minFuncSamples)
				break
			}
		}
	}

	// msm_h did not change and never calls the helper: no sample of
	// either side's msm_h has it anywhere on the stack.
	m, _ := DiffProfiles([][]byte{base}, [][]byte{head}, "msm_h", ProfileOptions{})
	if m.BaseSamples == 0 || m.HeadSamples == 0 {
		t.Fatalf("msm_h: base %d samples, head %d; want some on both sides", m.BaseSamples, m.HeadSamples)
	}
	for _, data := range [][]byte{base, head} {
		tally := tallyPhase([]*profile.Profile{mustParse(t, data)}, "msm_h", "cpu")
		if tally.cum.value[helper] != 0 || tally.cum.value[FuncName(phaseWork)] != 0 {
			t.Errorf("msm_h counts samples of synthesis's functions: %v", tally.cum.value)
		}
		if tally.flat.value[FuncName(msmWork)] == 0 || tally.flat.samples[FuncName(msmWork)] == 0 {
			t.Errorf("msm_h has no sample of msmWork: %v, %v", tally.flat.value, tally.flat.samples)
		}
	}
	if _, ok := ShareOf(slices.Concat(m.Flat, m.Cum), helper); ok {
		t.Errorf("msm_h lists %s: %+v %+v", helper, m.Flat, m.Cum)
	}

	// The unlabelled work counts in no phase.
	p := mustParse(t, head)
	all := int64(0)
	for _, s := range p.Sample {
		all += s.Value[valueIndex(p, "cpu")]
	}
	if d.HeadValue+m.HeadValue >= all {
		t.Errorf("synthesis %d + msm_h %d ns ≥ the whole profile's %d ns: the unlabelled samples were counted", d.HeadValue, m.HeadValue, all)
	}
}

// A FakeSample is one sample of a synthetic CPU profile: its phase label
// ("" for none), its stack, leaf first, where "a+b" is one location in
// which a was inlined into b, and its count of 10ms profiler samples.
type FakeSample struct {
	Phase string
	Stack []string
	N     int64
}

// FakeProfile builds a gzipped CPU profile as runtime/pprof writes them:
// sample types samples/count and cpu/nanoseconds, a 10ms period.
func FakeProfile(t *testing.T, samples ...FakeSample) []byte {
	t.Helper()
	const period = 10_000_000
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Period:     period,
	}
	funcs := make(map[string]*profile.Function)
	locs := make(map[string]*profile.Location)
	for _, s := range samples {
		var stack []*profile.Location
		for _, frame := range s.Stack {
			loc, ok := locs[frame]
			if !ok {
				loc = &profile.Location{ID: uint64(len(p.Location) + 1), Address: uint64(0x1000 * (len(p.Location) + 1))}
				for _, name := range strings.Split(frame, "+") {
					fn, ok := funcs[name]
					if !ok {
						fn = &profile.Function{ID: uint64(len(p.Function) + 1), Name: name, SystemName: name}
						funcs[name] = fn
						p.Function = append(p.Function, fn)
					}
					loc.Line = append(loc.Line, profile.Line{Function: fn, Line: 1})
				}
				locs[frame] = loc
				p.Location = append(p.Location, loc)
			}
			stack = append(stack, loc)
		}
		smp := &profile.Sample{Location: stack, Value: []int64{s.N, s.N * period}}
		if s.Phase != "" {
			smp.Label = map[string][]string{PhaseLabel: {s.Phase}}
		}
		p.Sample = append(p.Sample, smp)
	}
	var b bytes.Buffer
	if err := p.Write(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestDiffProfilesCountsOnlyThePhasesSamplesAndEachFunctionOncePerSample(t *testing.T) {
	t.Parallel()
	const (
		add   = "github.com/perfbot/perfbot/prover/r1cs.(*LC).Add"
		eval  = "github.com/perfbot/perfbot/prover/r1cs.evalTerms"
		mul   = "github.com/consensys/gnark-crypto/ecc/bls12-381/fr.(*Element).Mul"
		synth = "github.com/perfbot/perfbot/prover/gadget.Sha256"
		msm   = "github.com/perfbot/perfbot/prover/groth16.msmG1"
		main  = "main.main"
	)
	base := FakeProfile(t,
		FakeSample{"synthesis", []string{mul, eval, synth, main}, 30},
		FakeSample{"synthesis", []string{add, synth, main}, 10},
		// mul inlined into eval, eval recursive: eval counts once.
		FakeSample{"synthesis", []string{mul + "+" + eval, eval, synth, main}, 60},
		FakeSample{"msm_h", []string{add, msm, main}, 500},
		FakeSample{"", []string{add, main}, 700},
	)
	head := FakeProfile(t,
		FakeSample{"synthesis", []string{mul, eval, synth, main}, 30},
		FakeSample{"synthesis", []string{add, synth, main}, 110},
		FakeSample{"synthesis", []string{mul + "+" + eval, eval, synth, main}, 60},
		FakeSample{"msm_h", []string{add, msm, main}, 900},
		FakeSample{"", []string{add, main}, 100},
	)
	d, warnings := DiffProfiles([][]byte{base}, [][]byte{head}, "synthesis", ProfileOptions{Top: 2})
	if len(warnings) > 0 {
		t.Errorf("warnings: %q", warnings)
	}
	// Base: 100 samples of synthesis, head 200; msm_h's and the
	// unlabelled samples are left out.
	if d.BaseSamples != 100 || d.HeadSamples != 200 || d.BaseValue != 100*10_000_000 || d.HeadValue != 200*10_000_000 {
		t.Errorf("samples base %d (%d ns), head %d (%d ns); want 100 and 200 (1s and 2s)", d.BaseSamples, d.BaseValue, d.HeadSamples, d.HeadValue)
	}
	// Flat: add 10% → 55%; mul 90% → 45% shrank. Cum: add 10% → 55%,
	// eval 90% → 45% (once per sample, not 150%), synth and main 100%.
	// add's table, 10 of 100 against 110 of 200, is mul's and eval's
	// mirrored, so the three share one p-value; Holm multiplies the
	// smallest by the family's size: 2 functions flat, 5 cum.
	p := fisherReference(10, 100, 110, 200)
	wantFlat := []FuncShare{{Name: add, Base: 10, Head: 55, Delta: 45, BaseSamples: 10, HeadSamples: 110, P: 2 * p}}
	wantCum := []FuncShare{{Name: add, Base: 10, Head: 55, Delta: 45, BaseSamples: 10, HeadSamples: 110, P: 5 * p}}
	checkShares(t, "flat", d.Flat, wantFlat)
	checkShares(t, "cum", d.Cum, wantCum)
	tally := tallyPhase([]*profile.Profile{mustParse(t, base)}, "synthesis", "cpu")
	want := map[string]int64{mul: 90, eval: 90, add: 10, synth: 100, main: 100}
	for name, n := range want {
		if tally.cum.value[name] != n*10_000_000 || tally.cum.samples[name] != n {
			t.Errorf("cum[%s] = %d ns in %d samples, want %d samples", name, tally.cum.value[name], tally.cum.samples[name], n)
		}
	}
	if tally.flat.value[mul] != 90*10_000_000 || tally.flat.samples[mul] != 90 || tally.flat.value[eval] != 0 || tally.flat.samples[eval] != 0 {
		t.Errorf("flat = %v, %v; want mul (the innermost inlined frame) to hold 90 samples and eval none", tally.flat.value, tally.flat.samples)
	}

	m, _ := DiffProfiles([][]byte{base}, [][]byte{head}, "msm_h", ProfileOptions{Top: 1})
	if m.BaseSamples != 500 || m.HeadSamples != 900 || len(m.Flat) != 0 || len(m.Cum) != 0 {
		t.Errorf("msm_h: %+v; want 500 and 900 samples and no share grown (every share is the same)", m)
	}
}

// fisherReference returns the two-sided p-value of Fisher's exact test
// of k1 of n1 against k2 of n2 the long way: in exact integer arithmetic,
// every table with the same margins weighed by its number of ways, the
// tables no more likely than the observed one (within 10⁻⁷, as R's
// fisher.test) summed.
func fisherReference(k1, n1, k2, n2 int64) float64 {
	n, k := n1+n2, k1+k2
	ways := func(y int64) *big.Int {
		return new(big.Int).Mul(new(big.Int).Binomial(k, y), new(big.Int).Binomial(n-k, n2-y))
	}
	return minLikelihoodReference(max(0, k-n1), min(k, n2), k2, ways, new(big.Int).Binomial(n, n2))
}

// minLikelihoodReference sums, over the outcomes lo…hi, the weights no
// larger than x's times 1+10⁻⁷, and divides by total.
func minLikelihoodReference(lo, hi, x int64, weight func(int64) *big.Int, total *big.Int) float64 {
	limit := new(big.Int).Mul(weight(x), big.NewInt(10_000_001))
	sum := new(big.Int)
	for y := lo; y <= hi; y++ {
		w := weight(y)
		if new(big.Int).Mul(w, big.NewInt(10_000_000)).Cmp(limit) <= 0 {
			sum.Add(sum, w)
		}
	}
	p, _ := new(big.Rat).SetFrac(sum, total).Float64()
	return p
}

// checkShares compares shares with want field by field, P to a relative
// 10⁻⁹ (the reference p-values are exact, fisherExactP's are floating
// point).
func checkShares(t *testing.T, list string, got, want []FuncShare) {
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

// closeRel reports whether a and b differ by at most tol of b.
func closeRel(a, b, tol float64) bool {
	return math.Abs(a-b) <= tol*math.Abs(b)
}

func TestFisherExactPMatchesKnownValues(t *testing.T) {
	t.Parallel()
	// Fisher's tea-tasting table: 3 of 4 cups right against 1 of 4. With
	// 4 of 8 in all, the tables 0…4 have 1, 16, 36, 16 and 1 of the 70
	// ways; those no likelier than 3's 16 are 0, 1, 3 and 4: 34/70.
	if got := stats.FisherExactP(3, 4, 1, 4); !closeRel(got, 34.0/70, 1e-12) {
		t.Errorf("tea tasting: p = %.15g, want 34/70 = %.15g", got, 34.0/70)
	}
	// Wikipedia's example of the test: 1 of 10 dieters are men, 11 of 14
	// non-dieters; the two-sided p-value it gives is 0.002759, which is
	// 41/14858 exactly.
	if got := stats.FisherExactP(1, 10, 11, 14); !closeRel(got, 41.0/14858, 1e-9) || math.Abs(got-0.002759) > 5e-7 {
		t.Errorf("dieting: p = %.15g, want 41/14858 = %.15g", got, 41.0/14858)
	}
	// 1 of 232 against 0 of 232: the two tables are equally likely, p 1.
	if got := stats.FisherExactP(0, 232, 1, 232); got != 1 {
		t.Errorf("1 of 232 against none: p = %g, want 1", got)
	}
	for _, c := range [][4]int64{
		{15, 300, 60, 300},    // 5% → 20%
		{0, 5000, 6, 300},     // a few samples against many
		{20, 3000, 42, 3000},  // a small difference
		{33, 4180, 146, 5035}, // the golden memmove
		{7, 7, 0, 9},          // every sample on one side
		{5, 20, 5, 20},        // no difference at all
	} {
		got := stats.FisherExactP(c[0], c[1], c[2], c[3])
		want := fisherReference(c[0], c[1], c[2], c[3])
		if !closeRel(got, want, 1e-9) {
			t.Errorf("%d of %d against %d of %d: p = %.15g, want %.15g", c[0], c[1], c[2], c[3], got, want)
		}
		if swapped := stats.FisherExactP(c[2], c[3], c[0], c[1]); !closeRel(swapped, got, 1e-9) {
			t.Errorf("%d of %d against %d of %d: p = %.15g, but %.15g with the sides swapped", c[0], c[1], c[2], c[3], got, swapped)
		}
	}
	if got := stats.FisherExactP(5, 4, 1, 4); got != 1 {
		t.Errorf("a part larger than its whole: p = %g, want 1", got)
	}
}

// countTally returns a phase's tally from each function's count of 10 ms
// samples, each sample's only function (flat and cum alike).
func countTally(counts map[string]int64) phaseTally {
	t := phaseTally{profiles: 1, unit: "nanoseconds", flat: newFuncTally(), cum: newFuncTally()}
	for name, n := range counts {
		t.samples += n
		t.value += n * 10_000_000
		t.flat.add(name, n*10_000_000, n)
		t.cum.add(name, n*10_000_000, n)
	}
	return t
}

func TestDiffProfilesNeedsTheMinimumOfHeadSamplesEvenWhenSignificant(t *testing.T) {
	t.Parallel()
	// 6 samples in head's 300 against none of base's 5000 is significant,
	// but 6 samples are too few to say what grew.
	base := countTally(map[string]int64{"pkg.work": 5000})
	head := countTally(map[string]int64{"pkg.work": 294, "pkg.rare": 6})
	if p := stats.FisherExactP(0, 5000, 6, 300); !(p < profileAlpha/2) {
		t.Fatalf("p = %g; the test wants a table significant among two functions", p)
	}
	d := diffTallies("msm_h", ProfileOptions{}.withDefaults(), base, head)
	if len(d.Flat) != 0 || len(d.Cum) != 0 {
		t.Errorf("flat %+v, cum %+v; want nothing with fewer than %d head samples", d.Flat, d.Cum, minFuncSamples)
	}
}

func TestDiffProfilesListsAShareThatGrewFrom5To20Percent(t *testing.T) {
	t.Parallel()
	const f, g = "pkg.f", "pkg.g"
	base := FakeProfile(t, FakeSample{"synthesis", []string{f, "main.main"}, 15}, FakeSample{"synthesis", []string{g, "main.main"}, 285})
	head := FakeProfile(t, FakeSample{"synthesis", []string{f, "main.main"}, 60}, FakeSample{"synthesis", []string{g, "main.main"}, 240})
	d, _ := DiffProfiles([][]byte{base}, [][]byte{head}, "synthesis", ProfileOptions{})
	// Flat: f and g, mirror images, one p times 2. Cum: f, g and
	// main.main (100% on both sides, p 1): f's p times 3.
	p := fisherReference(15, 300, 60, 300)
	checkShares(t, "flat", d.Flat, []FuncShare{{Name: f, Base: 5, Head: 20, Delta: 15, BaseSamples: 15, HeadSamples: 60, P: 2 * p}})
	checkShares(t, "cum", d.Cum, []FuncShare{{Name: f, Base: 5, Head: 20, Delta: 15, BaseSamples: 15, HeadSamples: 60, P: 3 * p}})
	if len(d.Flat) == 1 && !(d.Flat[0].P < profileAlpha) {
		t.Errorf("p = %g, want below %g", d.Flat[0].P, profileAlpha)
	}
}

func TestDiffProfilesListsNoneOfManyDifferencesThatHolmDoesNotKeep(t *testing.T) {
	t.Parallel()
	// 20 functions each grow from 20 to 42 of 3000 samples: each alone
	// is significant at α, but not among the 21 functions tested.
	base, head := map[string]int64{"pkg.work": 2600}, map[string]int64{"pkg.work": 2160}
	for i := range 20 {
		name := fmt.Sprintf("pkg.f%02d", i)
		base[name], head[name] = 20, 42
	}
	p := stats.FisherExactP(20, 3000, 42, 3000)
	if !(p < profileAlpha) || !(21*p > profileAlpha) {
		t.Fatalf("p = %g; the test wants one below α that 21 tests lift above it", p)
	}
	d := diffTallies("msm_h", ProfileOptions{}.withDefaults(), countTally(base), countTally(head))
	if len(d.Flat) != 0 || len(d.Cum) != 0 {
		t.Errorf("flat %+v, cum %+v; want none listed", d.Flat, d.Cum)
	}
	// One function that grew by far more is listed among them.
	base["pkg.hot"], head["pkg.hot"] = 20, 200
	head["pkg.work"] -= 200
	d = diffTallies("msm_h", ProfileOptions{}.withDefaults(), countTally(base), countTally(head))
	if len(d.Flat) != 1 || d.Flat[0].Name != "pkg.hot" || !(d.Flat[0].P < profileAlpha) {
		t.Errorf("flat %+v; want pkg.hot alone", d.Flat)
	}
}

func TestDiffProfilesRarelyListsAnythingWhenNothingChanged(t *testing.T) {
	t.Parallel()
	// 200 comparisons of two sides of 2000 samples drawn from the same 40
	// functions' shares (function i weighs i+1). Holm keeps the chance
	// that a comparison lists anything at most 1%: 2 of 200 expected at
	// worst; 7 or more would have a chance below 0.5%.
	const functions, samples, comparisons = 40, 2000, 200
	rng := rand.New(rand.NewPCG(1, 2))
	draw := func() phaseTally {
		counts := make(map[string]int64)
		total := functions * (functions + 1) / 2
		for range samples {
			u := rng.IntN(total)
			i := 0
			for u >= i+1 {
				u -= i + 1
				i++
			}
			counts[fmt.Sprintf("pkg.f%02d", i)]++
		}
		return countTally(counts)
	}
	listed := 0
	for range comparisons {
		d := diffTallies("msm_h", ProfileOptions{}.withDefaults(), draw(), draw())
		if len(d.Flat) > 0 {
			listed++
		}
	}
	t.Logf("%d of %d comparisons listed a function", listed, comparisons)
	if listed > 6 {
		t.Errorf("%d of %d comparisons of unchanged profiles listed a function; want at most 6", listed, comparisons)
	}
}

func TestDiffProfilesMergesEachSidesProfiles(t *testing.T) {
	t.Parallel()
	const f, g = "pkg.f", "pkg.g"
	b1 := FakeProfile(t, FakeSample{"synthesis", []string{f}, 30}, FakeSample{"synthesis", []string{g}, 10})
	b2 := FakeProfile(t, FakeSample{"synthesis", []string{f}, 50}, FakeSample{"synthesis", []string{g}, 10})
	h := FakeProfile(t, FakeSample{"synthesis", []string{f}, 50}, FakeSample{"synthesis", []string{g}, 50})
	d, _ := DiffProfiles([][]byte{b1, b2}, [][]byte{h}, "synthesis", ProfileOptions{})
	// Base merged: f 80, g 20 of 100. f's table mirrors g's: the same p,
	// times 2 functions.
	if d.BaseProfiles != 2 || d.BaseSamples != 100 {
		t.Errorf("diff %+v; want 2 base profiles of 100 samples", d)
	}
	checkShares(t, "flat", d.Flat, []FuncShare{{Name: g, Base: 20, Head: 50, Delta: 30, BaseSamples: 20, HeadSamples: 50, P: 2 * fisherReference(20, 100, 50, 100)}})
}

func TestDiffProfilesSkipsProfilesThatDoNotParseWithAWarning(t *testing.T) {
	t.Parallel()
	good := FakeProfile(t, FakeSample{"synthesis", []string{"pkg.f"}, 40})
	head := FakeProfile(t, FakeSample{"synthesis", []string{"pkg.f"}, 20}, FakeSample{"synthesis", []string{"pkg.g"}, 20})
	heap := &profile.Profile{SampleType: []*profile.ValueType{{Type: "alloc_space", Unit: "bytes"}}}
	var heapData bytes.Buffer
	if err := heap.Write(&heapData); err != nil {
		t.Fatal(err)
	}
	want, _ := DiffProfiles([][]byte{good}, [][]byte{head}, "synthesis", ProfileOptions{})
	got, warnings := DiffProfiles([][]byte{[]byte("not a profile"), good, {0x1f, 0x8b, 1, 2}}, [][]byte{head, heapData.Bytes()}, "synthesis", ProfileOptions{})
	if !reflect.DeepEqual(got, want) {
		t.Errorf("diff with bad profiles %+v, want %+v", got, want)
	}
	if len(warnings) != 2 || !strings.HasPrefix(warnings[0], "base: skipped 2 of 3 profiles that did not parse (") ||
		warnings[1] != `head: skipped 1 of 2 profiles that have no "cpu" samples` {
		t.Errorf("warnings %q; want one about base's 2 unparsable profiles, one about head's heap profile", warnings)
	}
}

// WithProfiles returns copies of runs as runs of the benchmark command
// cmd (named by a process sample as the runner names it), the i-th
// carrying profiles[i%len(profiles)] as its CPU profile.
func WithProfiles(runs []Run, cmd string, profiles ...[]byte) []Run {
	out := make([]Run, len(runs))
	for i, run := range runs {
		run.Samples = append(slices.Clone(run.Samples), Sample{Key{"process/benchmark=" + cmd, "", "wall-sec/run"}, 3})
		if len(profiles) > 0 {
			run.Profiles = []Profile{{Benchmark: cmd, Kind: ProfileCPU, Data: profiles[i%len(profiles)]}}
		}
		out[i] = run
	}
	return out
}

// gpuLikeProfile has many synthesis samples and n of msm_h, whose work
// runs on the GPU; extra samples of fn join synthesis.
func gpuLikeProfile(t *testing.T, msmSamples, extra int64, fn string) []byte {
	return FakeProfile(t,
		FakeSample{"synthesis", []string{"pkg.synthesize", "main.main"}, 100},
		FakeSample{"synthesis", []string{fn, "pkg.synthesize", "main.main"}, extra},
		FakeSample{"msm_h", []string{"pkg.waitGPU", "main.main"}, msmSamples},
	)
}

func TestCompareExplainsOnlyPhasesWithEnoughCPUSamples(t *testing.T) {
	t.Parallel()
	g := NewSynth(62, 0.004)
	regressed := map[string]float64{"synthesis": 1.1, "msm_h": 1.1, "ntt": 1.1}
	// 6 runs a side; msm_h has 3 samples a profile (18 a side, below
	// 20), ntt none at all.
	in := Input{
		BaseRev: BaseRev, HeadRev: HeadRev,
		Base: WithProfiles(g.Runs(BaseRev, 6, nil), "prove", gpuLikeProfile(t, 3, 1, "pkg.slow")),
		Head: WithProfiles(g.Runs(HeadRev, 6, regressed), "prove", gpuLikeProfile(t, 3, 50, "pkg.slow")),
	}
	r := Compare(in, DefaultOptions())
	if len(r.ProfileDiffs) != 1 || r.ProfileDiffs[0].Phase != "synthesis" {
		t.Fatalf("profile diffs %+v; want synthesis's only", r.ProfileDiffs)
	}
	if d := r.ProfileDiffs[0]; d.Flat[0].Name != "pkg.slow" || d.BaseSamples != 606 || d.HeadSamples != 900 {
		t.Errorf("synthesis diff %+v; want pkg.slow first, 606 and 900 samples", d)
	}

	// At 4 samples a profile msm_h has 24 a side: a CPU phase.
	in.Base = WithProfiles(g.Runs(BaseRev, 6, nil), "prove", gpuLikeProfile(t, 4, 1, "pkg.slow"))
	in.Head = WithProfiles(g.Runs(HeadRev, 6, regressed), "prove", gpuLikeProfile(t, 4, 50, "pkg.slow"))
	r = Compare(in, DefaultOptions())
	if len(r.ProfileDiffs) != 2 || r.ProfileDiffs[1].Phase != "msm_h" || r.ProfileDiffs[1].BaseSamples != 24 {
		t.Errorf("profile diffs %+v; want synthesis's and msm_h's (24 samples a side)", r.ProfileDiffs)
	}
}

func TestCompareWithoutProfilesOnASideExplainsNothingAndSaysNothing(t *testing.T) {
	t.Parallel()
	prof := gpuLikeProfile(t, 0, 50, "pkg.slow")
	g := NewSynth(63, 0.004)
	regressed := map[string]float64{"synthesis": 1.1}
	for _, c := range []struct {
		name       string
		base, head []Run
	}{
		{"neither", g.Runs(BaseRev, 6, nil), g.Runs(HeadRev, 6, regressed)},
		{"head only", WithProfiles(g.Runs(BaseRev, 6, nil), "prove"), WithProfiles(g.Runs(HeadRev, 6, regressed), "prove", prof)},
		{"base only", WithProfiles(g.Runs(BaseRev, 6, nil), "prove", prof), WithProfiles(g.Runs(HeadRev, 6, regressed), "prove")},
	} {
		r := Compare(Input{Base: c.base, Head: c.head}, DefaultOptions())
		if Find(r, "synthesis").Verdict != VerdictRegression {
			t.Fatalf("%s: synthesis %s, want a regression", c.name, Find(r, "synthesis").Verdict)
		}
		if r.ProfileDiffs != nil {
			t.Errorf("%s: profile diffs %+v, want none", c.name, r.ProfileDiffs)
		}
		if HasWarning(r, "profile") {
			t.Errorf("%s: warnings %q; want none about profiles", c.name, r.Warnings)
		}
	}
}

func TestCompareSkipsProfilesThatDoNotParseWithAWarning(t *testing.T) {
	t.Parallel()
	g := NewSynth(64, 0.004)
	base := WithProfiles(g.Runs(BaseRev, 6, nil), "prove", gpuLikeProfile(t, 0, 1, "pkg.slow"))
	base[2].Profiles[0].Data = []byte("truncated")
	in := Input{
		Base: base,
		Head: WithProfiles(g.Runs(HeadRev, 6, map[string]float64{"synthesis": 1.1}), "prove", gpuLikeProfile(t, 0, 50, "pkg.slow")),
	}
	r := Compare(in, DefaultOptions())
	if len(r.ProfileDiffs) != 1 || r.ProfileDiffs[0].BaseProfiles != 5 || r.ProfileDiffs[0].HeadProfiles != 6 {
		t.Fatalf("profile diffs %+v; want synthesis's from 5 base and 6 head profiles", r.ProfileDiffs)
	}
	if !HasWarning(r, "base: skipped 1 of 6 CPU profiles of prove that did not parse") {
		t.Errorf("warnings %q; want one about base's bad profile", r.Warnings)
	}
}

func TestCompareFindsARowsProfilesThroughItsCommandName(t *testing.T) {
	t.Parallel()
	// Two commands in one comparison: prove measures ProveBench, other
	// measures Other/size=1, both with a synthesis phase. Each command's
	// profiles explain its own rows only.
	const otherBench = "Other/size=1"
	g := NewSynth(65, 0.004)
	otherRuns := func(rev string, n int, f float64) []Run {
		runs := make([]Run, n)
		for i := range runs {
			runs[i] = Run{Revision: rev, Status: StatusOK, Samples: []Sample{{Key{otherBench, "synthesis", "sec/op"}, 0.5 * f * g.jitter()}}}
		}
		return runs
	}
	proveBase := WithProfiles(g.Runs(BaseRev, 6, nil), "prove", gpuLikeProfile(t, 0, 1, "pkg.proveSlow"))
	proveHead := WithProfiles(g.Runs(HeadRev, 6, map[string]float64{"synthesis": 1.1}), "prove", gpuLikeProfile(t, 0, 50, "pkg.proveSlow"))
	otherBase := WithProfiles(otherRuns(BaseRev, 6, 1), "other", gpuLikeProfile(t, 0, 1, "pkg.otherSlow"))
	otherHead := WithProfiles(otherRuns(HeadRev, 6, 1.2), "other", gpuLikeProfile(t, 0, 80, "pkg.otherSlow"))
	// A profile that does not say which command wrote it belongs to its
	// run's; a heap profile is no CPU profile.
	for i := range proveHead {
		proveHead[i].Profiles[0].Benchmark = ""
		proveHead[i].Profiles = append(proveHead[i].Profiles, Profile{Benchmark: "prove", Kind: "heap", Data: []byte("not read")})
	}
	var base, head []Run
	for i := range 6 {
		base = append(base, proveBase[i], otherBase[i])
		head = append(head, proveHead[i], otherHead[i])
	}
	r := Compare(Input{Base: base, Head: head}, DefaultOptions())
	if len(r.ProfileDiffs) != 2 {
		t.Fatalf("profile diffs %+v; want one for each benchmark's synthesis", r.ProfileDiffs)
	}
	for _, d := range r.ProfileDiffs {
		want, not := "pkg.proveSlow", "pkg.otherSlow"
		if d.Benchmark == otherBench {
			want, not = not, want
		}
		if d.BaseProfiles != 6 || d.HeadProfiles != 6 || d.Flat[0].Name != want {
			t.Errorf("%s: %d and %d profiles, flat %+v; want 6 a side and %s first", d.Benchmark, d.BaseProfiles, d.HeadProfiles, d.Flat, want)
		}
		if _, ok := ShareOf(slices.Concat(d.Flat, d.Cum), not); ok {
			t.Errorf("%s's diff lists %s, from the other command's profiles", d.Benchmark, not)
		}
	}
	if HasWarning(r, "profile") {
		t.Errorf("warnings %q; want none about profiles", r.Warnings)
	}
}

func TestCompareWarnsWhenOneCommandsProfilesMixBenchmarks(t *testing.T) {
	t.Parallel()
	// One command measures two sizes in one process: their synthesis
	// samples carry the same label.
	const small = "Prove/circuit=sha256/constraints=1024/backend=cpu"
	g := NewSynth(66, 0.004)
	add := func(runs []Run) []Run {
		for i := range runs {
			runs[i].Samples = append(runs[i].Samples, Sample{Key{small, "synthesis", "sec/op"}, 0.01 * g.jitter()})
		}
		return runs
	}
	in := Input{
		Base: WithProfiles(add(g.Runs(BaseRev, 6, nil)), "prove", gpuLikeProfile(t, 0, 1, "pkg.slow")),
		Head: WithProfiles(add(g.Runs(HeadRev, 6, map[string]float64{"synthesis": 1.1})), "prove", gpuLikeProfile(t, 0, 50, "pkg.slow")),
	}
	r := Compare(in, DefaultOptions())
	if len(r.ProfileDiffs) != 1 {
		t.Fatalf("profile diffs %+v; want synthesis's", r.ProfileDiffs)
	}
	if !HasWarning(r, ProveBench+"/phase=synthesis: the CPU profiles that explain it also hold "+small, "mixes them") {
		t.Errorf("warnings %q; want one that the profiles mix %s in", r.Warnings, small)
	}
}

func TestShortFuncNameDropsOnlyPerfbotsModule(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"github.com/perfbot/perfbot/prover/r1cs.(*LC).Add":                  "prover/r1cs.(*LC).Add",
		"github.com/consensys/gnark-crypto/ecc/bls12-381.(*G1Jac).AddMixed": "github.com/consensys/gnark-crypto/ecc/bls12-381.(*G1Jac).AddMixed",
		"runtime.memmove":                                      "runtime.memmove",
		"github.com/perfbot/perfbot-fork/x.f":                  "github.com/perfbot/perfbot-fork/x.f",
		"github.com/perfbot/perfbot/prover/groth16.split[...]": "prover/groth16.split[...]",
	}
	for in, want := range cases {
		if got := ShortFuncName(in); got != want {
			t.Errorf("shortFuncName(%q) = %q, want %q", in, got, want)
		}
	}
}
