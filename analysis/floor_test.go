package analysis

import (
	"math"
	"testing"
)

// seriesWithChanges returns a baseline series starting at 100 whose
// consecutive |Δ%| are pcts, alternating up and down.
func seriesWithChanges(pcts ...float64) []float64 {
	vs := []float64{100}
	for i, p := range pcts {
		sign := 1.0
		if i%2 == 1 {
			sign = -1
		}
		vs = append(vs, vs[len(vs)-1]*(1+sign*p/100))
	}
	return vs
}

func TestNoiseFloorIsQ3Plus3IQROfHistoricalChanges(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		pcts    []float64
		learned float64
	}{
		// 11 pairs, |Δ%| 0.1 … 1.1 (shuffled; order does not matter).
		// Odd count: the median 0.6 is left out. Lower half 0.1–0.5,
		// Q1 = 0.3; upper half 0.7–1.1, Q3 = 0.9; IQR = 0.6.
		// Floor = 0.9 + 3·0.6 = 2.7%.
		{"odd count", []float64{0.5, 0.1, 1.1, 0.3, 0.9, 0.7, 0.2, 1.0, 0.4, 0.8, 0.6}, 2.7},
		// 12 pairs, 0.1 … 1.2. Lower half 0.1–0.6, Q1 = (0.3+0.4)/2 =
		// 0.35; upper half 0.7–1.2, Q3 = (0.9+1.0)/2 = 0.95; IQR = 0.6.
		// Floor = 0.95 + 1.8 = 2.75%.
		{"even count", []float64{0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2}, 2.75},
		// 10 pairs (exactly MinHistory): 0.5 ×5 and 1.5 ×5. Q1 = 0.5,
		// Q3 = 1.5, IQR = 1. Floor = 1.5 + 3 = 4.5%.
		{"exactly min history", []float64{0.5, 1.5, 0.5, 1.5, 0.5, 1.5, 0.5, 1.5, 0.5, 1.5}, 4.5},
	}
	for _, c := range cases {
		f := NoiseFloor(seriesWithChanges(c.pcts...), DefaultOptions())
		if f.Source != FloorFromHistory || f.Pairs != len(c.pcts) || math.Abs(f.Learned-c.learned) > 1e-9 || math.Abs(f.Pct-c.learned) > 1e-9 {
			t.Errorf("%s: floor %+v, want %.2f%% learned from %d pairs", c.name, f, c.learned, len(c.pcts))
		}
	}
}

func TestNoiseFloorFallsBackToTheMinimum(t *testing.T) {
	t.Parallel()
	// 9 pairs is one short of MinHistory = 10.
	short := NoiseFloor(seriesWithChanges(5, 5, 5, 5, 5, 5, 5, 5, 5), DefaultOptions())
	if short != (Floor{Pct: 1, Source: FloorMinimum, Pairs: 9}) {
		t.Errorf("short history: %+v, want the 1%% minimum from 9 pairs", short)
	}
	if f := NoiseFloor(nil, DefaultOptions()); f != (Floor{Pct: 1, Source: FloorMinimum}) {
		t.Errorf("no history: %+v", f)
	}
	// A quiet series learns 0.1% + 0, below the minimum: the minimum
	// wins, but the learned value is kept.
	quiet := NoiseFloor(seriesWithChanges(0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1), DefaultOptions())
	if quiet.Pct != 1 || quiet.Source != FloorFromHistory || math.Abs(quiet.Learned-0.1) > 1e-9 {
		t.Errorf("quiet history: %+v, want 1%% (learned 0.1%%)", quiet)
	}
	// A custom minimum and a shorter required history.
	opts := Options{MinChangePct: 0.2, MinHistory: 4}
	f := NoiseFloor(seriesWithChanges(0.1, 0.1, 0.1, 0.1), opts)
	if f.Pct != 0.2 || f.Source != FloorFromHistory {
		t.Errorf("custom options: %+v", f)
	}
	// Zero values cannot give a relative change: those pairs are skipped.
	if f := NoiseFloor([]float64{0, 1, 0, 1}, DefaultOptions()); f.Pairs != 1 {
		t.Errorf("zeros: %d pairs, want 1 (1 → 0)", f.Pairs)
	}
}
