package changepoint

import (
	"errors"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// noise returns n draws of N(mean, sd) from a seeded generator.
func noise(r *rand.Rand, n int, mean, sd float64) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = mean + sd*r.NormFloat64()
	}
	return x
}

func indices(ps []Point) []int {
	var out []int
	for _, p := range ps {
		out = append(out, p.Index)
	}
	return out
}

func near(got, want, slack int) bool { return got >= want-slack && got <= want+slack }

func TestOneStepIsFoundWhereItIsWithItsSize(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	x := append(noise(r, 60, 100, 1), noise(r, 60, 110, 1)...)
	ps, err := Detect(x, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 1 || ps[0].Index != 60 {
		t.Fatalf("change points at %v, want [60]", indices(ps))
	}
	p := ps[0]
	if p.P > 0.005+1e-12 || math.Abs(p.Before-100) > 0.5 || math.Abs(p.After-110) > 0.5 || math.Abs(p.Change-0.10) > 0.01 {
		t.Errorf("point %+v: want p = 0.005 (the floor at 199 permutations), medians ≈ 100 and 110, change ≈ +10%%", p)
	}
}

func TestAStepOfTwoStandardDeviationsIsFound(t *testing.T) {
	t.Parallel()
	found := 0
	for seed := uint64(0); seed < 20; seed++ {
		r := rand.New(rand.NewPCG(seed, 7))
		x := append(noise(r, 40, 100, 2), noise(r, 40, 104, 2)...)
		ps, err := Detect(x, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(ps) == 1 && near(ps[0].Index, 40, 2) {
			found++
		}
	}
	// A 2σ step between 40-point segments is found nearly every time.
	if found < 19 {
		t.Errorf("2σ step found (within 2 points) in %d of 20 series, want at least 19", found)
	}
}

func TestUpThenDownGivesBothPoints(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	x := noise(r, 50, 50, 1)
	x = append(x, noise(r, 30, 60, 1)...)
	x = append(x, noise(r, 50, 50, 1)...)
	ps, err := Detect(x, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 2 || !near(ps[0].Index, 50, 1) || !near(ps[1].Index, 80, 1) {
		t.Fatalf("change points at %v, want [50 80]", indices(ps))
	}
	if ps[0].Change < 0.15 || ps[1].Change > -0.12 {
		t.Errorf("changes %+.3f and %+.3f, want ≈ +20%% then ≈ −17%%", ps[0].Change, ps[1].Change)
	}
}

func TestNoiseAloneRarelyGivesAPoint(t *testing.T) {
	t.Parallel()
	withPoints := 0
	for seed := uint64(0); seed < 50; seed++ {
		r := rand.New(rand.NewPCG(seed, 11))
		ps, err := Detect(noise(r, 100, 100, 3), Options{Seed: seed + 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(ps) > 0 {
			withPoints++
		}
	}
	// At α = 0.01 about half a series in 50 is expected; 3 or more would
	// happen by chance with probability ≈ 0.014.
	if withPoints > 2 {
		t.Errorf("%d of 50 pure-noise series got change points, want at most 2", withPoints)
	}
}

func TestSingleSpikesAreNotChangePoints(t *testing.T) {
	t.Parallel()
	for seed := uint64(0); seed < 20; seed++ {
		r := rand.New(rand.NewPCG(seed, 5))
		x := noise(r, 120, 100, 1)
		// Isolated spikes: a machine hiccup, a cold cache, a throttled GPU.
		for _, at := range []int{7, 40, 41 + int(seed%30), 99, 118} {
			x[at] *= 3
		}
		x[60] = 0.2 * x[60] // and one dip
		ps, err := Detect(x, Options{Seed: seed + 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(ps) != 0 {
			t.Errorf("seed %d: spikes became change points at %v", seed, indices(ps))
		}
	}
}

func TestSlowDriftBelowTheNoiseIsQuietAndALargeOneIsCut(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(9, 9))
	drift := func(total float64) []float64 {
		x := noise(r, 100, 100, 2)
		for i := range x {
			x[i] += total * float64(i) / float64(len(x)-1)
		}
		return x
	}
	ps, err := Detect(drift(0.5), Options{}) // a quarter of σ over 100 commits
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 0 {
		t.Errorf("drift of σ/4 gave change points at %v, want none", indices(ps))
	}
	// A drift of 10σ is a real slowdown spread over many commits:
	// E-Divisive cuts it into steps, every one of them upward and inside
	// the drift, so the trend chart marks where it went.
	ps, err = Detect(drift(20), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) == 0 {
		t.Fatal("drift of 10σ gave no change points")
	}
	for _, p := range ps {
		if p.Change <= 0 || p.Index < 5 || p.Index > 95 {
			t.Errorf("drift point %+v: want an upward change inside the series", p)
		}
	}
}

func TestMinChangeDropsSmallPointsAndMergesTheirSegments(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(5, 6))
	x := noise(r, 60, 100, 0.2)
	x = append(x, noise(r, 60, 101, 0.2)...) // +1%: significant, but small
	x = append(x, noise(r, 60, 111, 0.2)...) // +10%
	all, err := Detect(x, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 2 || all[0].Index != 60 || all[1].Index != 120 {
		t.Fatalf("change points at %v, want [60 120]", indices(all))
	}
	big, err := Detect(x, Options{MinChange: 0.02})
	if err != nil {
		t.Fatal(err)
	}
	if len(big) != 1 || big[0].Index != 120 {
		t.Fatalf("with a 2%% minimum: change points at %v, want [120]", indices(big))
	}
	// The 1% segment merged into the first: the median before is now
	// that of 120 points around 100.5, not of the 60 around 101.
	if b := big[0].Before; b < 100.2 || b > 100.8 {
		t.Errorf("median before the remaining point %v, want ≈ 100.5 (the merged segments)", b)
	}
}

func TestConstantShortAndZeroSeries(t *testing.T) {
	t.Parallel()
	for name, x := range map[string][]float64{
		"constant": {5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5},
		"short":    {1, 1, 1, 1, 9, 9, 9, 9, 9}, // under 2 × MinSegment
		"empty":    nil,
	} {
		ps, err := Detect(x, Options{})
		if err != nil || len(ps) != 0 {
			t.Errorf("%s: %v, %v; want no points and no error", name, indices(ps), err)
		}
	}
	// From zero: the change is infinite, not NaN.
	x := append(make([]float64, 30), []float64{3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3}...)
	ps, err := Detect(x, Options{})
	if err != nil || len(ps) != 1 || ps[0].Index != 30 || !math.IsInf(ps[0].Change, 1) {
		t.Errorf("0 → 3: %+v, %v; want one point at 30 with change +Inf", ps, err)
	}
}

func TestTheSameSeriesGivesTheSameAnswer(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(8, 8))
	x := append(noise(r, 50, 10, 1), noise(r, 50, 10.8, 1)...)
	a, err := Detect(x, Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Detect(x, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(a) != len(b) {
		t.Fatalf("two runs: %v and %v", a, b)
	}
	for i := range a {
		if a[i] != b[i] {
			t.Errorf("point %d: %+v then %+v", i, a[i], b[i])
		}
	}
}

func TestBadInputSaysWhatIsWrong(t *testing.T) {
	t.Parallel()
	ok := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
	for _, c := range []struct {
		x    []float64
		opt  Options
		want string
	}{
		{[]float64{1, math.NaN(), 3}, Options{}, "value 1 is NaN"},
		{[]float64{1, 2, math.Inf(1)}, Options{}, "value 2 is +Inf"},
		{ok, Options{Alpha: 1.5}, "alpha 1.5: want a significance level between 0 and 1"},
		{ok, Options{Permutations: -1}, "permutations -1: want at least 1"},
		{ok, Options{MinSegment: 1}, "minimum segment 1: want at least 2"},
		{ok, Options{MinChange: -0.1}, "minimum change -0.1"},
		{ok, Options{Alpha: 0.001, Permutations: 99}, "99 permutations cannot reach alpha 0.001 (the smallest p-value is 1/100): use at least 999"},
	} {
		_, err := Detect(c.x, c.opt)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Detect(%v, %+v) = %v, want an error containing %q", c.x, c.opt, err, c.want)
		}
	}
	if _, err := Detect([]float64{math.NaN()}, Options{}); !errors.Is(err, ErrBadValue) {
		t.Errorf("NaN: %v, want ErrBadValue", err)
	}
}

func BenchmarkDetect(b *testing.B) {
	for _, n := range []int{100, 500} {
		r := rand.New(rand.NewPCG(1, 1))
		x := append(noise(r, n/2, 100, 1), noise(r, n-n/2, 103, 1)...)
		b.Run("points="+strconv.Itoa(n), func(b *testing.B) {
			for b.Loop() {
				if _, err := Detect(x, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
