package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func ExampleNewDesign() {
	d := NewDesign(10, 30)
	fmt.Println(d.Planned())
	// Output: [10 15 20 25 30]
}

// Published Lan–DeMets boundaries for five equally spaced looks at
// two-sided α = 0.05 (Jennison and Turnbull 2000, table 7.6; the same
// values gsDesign and ldbounds print): the O'Brien–Fleming-type and the
// Pocock-type spending functions.
func TestBoundariesMatchPublishedValues(t *testing.T) {
	looks := []float64{0.2, 0.4, 0.6, 0.8, 1}
	for _, tc := range []struct {
		spending string
		want     []float64
	}{
		{SpendingOBrienFleming, []float64{4.877, 3.357, 2.680, 2.290, 2.031}},
		{SpendingPocock, []float64{2.438, 2.427, 2.410, 2.397, 2.386}},
	} {
		got := boundaries(func(f float64) float64 { return spent(tc.spending, 0.05, f) }, looks)
		for i := range got {
			if math.Abs(got[i]-tc.want[i]) > 0.002 {
				t.Errorf("%s look %d: boundary %.4f, want %.3f (all: %.4f)", tc.spending, i+1, got[i], tc.want[i], got)
			}
		}
	}
}

// TestBoundariesSpendAlpha checks the integration by simulation: a
// Brownian motion observed at unequally spaced looks crosses the computed
// boundaries with the probability the spending function says, look by
// look, for both functions and a small and a usual α.
func TestBoundariesSpendAlpha(t *testing.T) {
	looks := []float64{1.0 / 3, 0.5, 2.0 / 3, 5.0 / 6, 1}
	rng := rand.New(rand.NewPCG(1, 2))
	const trials = 400_000
	for _, spending := range Spendings {
		for _, alpha := range []float64{0.05, 0.005} {
			c := boundaries(func(f float64) float64 { return spent(spending, alpha, f) }, looks)
			crossed := make([]int, len(looks))
			for range trials {
				s, prev := 0.0, 0.0
				for k, tk := range looks {
					s += rng.NormFloat64() * math.Sqrt(tk-prev)
					prev = tk
					if math.Abs(s/math.Sqrt(tk)) >= c[k] {
						crossed[k]++
						break
					}
				}
			}
			total := 0
			for k := range looks {
				total += crossed[k]
				want := spent(spending, alpha, looks[k])
				got := float64(total) / trials
				// Four binomial standard errors, plus a little for the grid.
				tol := 4*math.Sqrt(want*(1-want)/trials) + 1e-5
				if math.Abs(got-want) > tol {
					t.Errorf("%s α=%v: by look %d crossed %.5f, want %.5f ± %.5f (boundaries %.3f)", spending, alpha, k+1, got, want, tol, c)
				}
			}
		}
	}
}

// One look at fraction 1 is a fixed design: its threshold is α itself.
func TestThresholdsOfOneLookAreAlpha(t *testing.T) {
	for _, spending := range Spendings {
		for _, alpha := range []float64{0.05, 0.01, 0.0125} {
			th := Thresholds(spending, alpha, []float64{1})
			if math.Abs(th[0]-alpha) > 1e-9 {
				t.Errorf("%s α=%v: one look's threshold %v", spending, alpha, th[0])
			}
		}
	}
}

// The nominal thresholds of perfbot's default design (10 runs a side, up
// to 30 in batches of 5) are below α at every look, and their sum is
// above α: the looks share α rather than each using all of it.
func TestDefaultDesignThresholds(t *testing.T) {
	d := NewDesign(10, 30)
	if got := d.Planned(); !slices.Equal(got, []int{10, 15, 20, 25, 30}) {
		t.Fatalf("planned looks %v", got)
	}
	frac := Looks{Runs: d.Planned(), Max: d.Max}.Fractions(6)
	for _, spending := range Spendings {
		th := Thresholds(spending, 0.05, frac)
		sum := 0.0
		for i, p := range th {
			if !(p > 0 && p < 0.05) {
				t.Errorf("%s look %d: threshold %v, want in (0, 0.05)", spending, i+1, p)
			}
			sum += p
		}
		if sum <= 0.05 {
			t.Errorf("%s: thresholds %v sum to %v; the looks are correlated, so they should sum above α", spending, th, sum)
		}
	}
	// O'Brien–Fleming keeps most of α for the last look.
	if th := Thresholds(SpendingOBrienFleming, 0.05, frac); th[4] < 0.035 || th[0] > 0.001 {
		t.Errorf("O'Brien–Fleming thresholds %v: want the first below 0.001 and the last above 0.035", th)
	}
}

func TestLooksFractions(t *testing.T) {
	for _, tc := range []struct {
		looks Looks
		want  []float64
	}{
		{Looks{}, []float64{1}},
		{FixedLooks(12), []float64{1}},
		{Looks{Runs: []int{10, 15, 20}, Max: 30}, []float64{1.0 / 3, 0.5, 2.0 / 3}},
		// Too few runs for a test at the first look: it spent nothing.
		{Looks{Runs: []int{4, 8, 12}, Max: 12}, []float64{2.0 / 3, 1}},
		// A look that added no runs is the same test again.
		{Looks{Runs: []int{10, 10, 20}, Max: 20}, []float64{0.5, 1}},
		// More runs than the planned most: the last look is fraction 1.
		{Looks{Runs: []int{10, 40}, Max: 30}, []float64{0.25, 1}},
	} {
		if got := tc.looks.Fractions(6); !slices.Equal(got, tc.want) {
			t.Errorf("%+v: fractions %v, want %v", tc.looks, got, tc.want)
		}
	}
}

func TestDesignRunStopsWhenSettledOrAtMax(t *testing.T) {
	d := NewDesign(10, 30)
	var measured []int
	measure := func(n int) error { measured = append(measured, n); return nil }
	looks, err := d.Run(measure, func(looks []int) (bool, error) { return looks[len(looks)-1] >= 20, nil })
	if err != nil || !slices.Equal(looks, []int{10, 15, 20}) || !slices.Equal(measured, []int{10, 5, 5}) {
		t.Errorf("settled at 20: looks %v, measured %v, err %v", looks, measured, err)
	}
	measured = nil
	looks, _ = NewDesign(10, 27).Run(measure, func([]int) (bool, error) { return false, nil })
	if !slices.Equal(looks, []int{10, 15, 20, 25, 27}) || !slices.Equal(measured, []int{10, 5, 5, 5, 2}) {
		t.Errorf("never settled, cap 27: looks %v, measured %v", looks, measured)
	}
}

// StepDown at one look is Holm's method: the same adjusted p-values.
func TestStepDownAtOneLookIsHolm(t *testing.T) {
	p := []float64{0.01, 0.04, 0.002, 0.3, 0.011}
	_, adj := StepDown(p, 0.05, SpendingOBrienFleming, []float64{1})
	want := Holm(p)
	for i := range p {
		if math.Abs(adj[i]-want[i]) > 1e-12 {
			t.Errorf("p %v: adjusted %v, Holm %v", p, adj, want)
			break
		}
	}
}

// At a later look of a sequential design each step's threshold is the
// look's threshold at α/(m−i), and a test is rejected exactly when its
// adjusted p-value is below α.
func TestStepDownThresholdsAndRejection(t *testing.T) {
	frac := []float64{1.0 / 3, 2.0 / 3, 1}
	p := []float64{0.0001, 0.02, 0.012, 0.9}
	th, adj := StepDown(p, 0.05, SpendingOBrienFleming, frac)
	order := []int{0, 2, 1, 3} // p ascending
	for k, i := range order {
		want := Thresholds(SpendingOBrienFleming, 0.05/float64(len(p)-k), frac)[2]
		if th[i] != want {
			t.Errorf("step %d (p=%v): threshold %v, want %v", k, p[i], th[i], want)
		}
	}
	rejecting := true
	for _, i := range order {
		rejecting = rejecting && p[i] < th[i]
		if (adj[i] < 0.05) != rejecting {
			t.Errorf("p=%v threshold %v adjusted %v: rejected %v, want %v", p[i], th[i], adj[i], adj[i] < 0.05, rejecting)
		}
	}
}
