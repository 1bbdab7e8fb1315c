package analysis

import (
	"math"

	"github.com/perfbot/perfbot/analysis/stats"
)

// A History holds, per series, the values of consecutive baseline runs
// (pushes to the default branch) in chronological order: one value per
// run, as Compare computes them (the run's median for the key).
type History map[Key][]float64

// The sources of a noise floor.
const (
	FloorFromHistory = "history" // Q3 + 3·IQR of the series' baseline |Δ%|
	FloorMinimum     = "minimum" // Options.MinChangePct
)

// A Floor is the smallest change, in percent, that counts for one series.
type Floor struct {
	// Pct is the floor in percent, never below Options.MinChangePct.
	Pct float64 `json:"floor_pct"`
	// Source is FloorFromHistory when the floor was learned from at least
	// Options.MinHistory consecutive pairs, FloorMinimum otherwise.
	Source string `json:"floor_source"`
	// Learned is Q3 + 3·IQR itself when Source is FloorFromHistory
	// (it may be below Pct, which is then MinChangePct), 0 otherwise.
	Learned float64 `json:"floor_learned_pct,omitempty"`
	// Pairs is the number of consecutive baseline pairs history held.
	Pairs int `json:"history_pairs"`
}

// NoiseFloor returns the noise floor of a series from its baseline
// history, by rustc-perf's rule: the |Δ%| between each value and the next
// (relative to the earlier one) are the series' run-to-run noise, and a
// change above Q3 + 3·IQR of them is an outlier, not noise. Q1 and Q3 are
// the medians of the lower and upper halves of the sorted |Δ%|, the middle
// value left out when their count is odd (rustc-perf also drops the two
// middle values when the count is even; we keep them). With fewer than
// opts.MinHistory pairs, or a learned floor below opts.MinChangePct, the
// floor is opts.MinChangePct. Pairs with a zero or non-finite value are
// skipped.
func NoiseFloor(values []float64, opts Options) Floor {
	opts = opts.withDefaults()
	var pcts []float64
	for i := 1; i < len(values); i++ {
		a, b := values[i-1], values[i]
		if a == 0 || !stats.Finite(a) || !stats.Finite(b) {
			continue
		}
		pcts = append(pcts, math.Abs(b-a)/math.Abs(a)*100)
	}
	f := Floor{Pct: opts.MinChangePct, Source: FloorMinimum, Pairs: len(pcts)}
	if len(pcts) < opts.MinHistory || len(pcts) < 2 {
		return f
	}
	q1, q3 := stats.Quartiles(pcts)
	f.Source = FloorFromHistory
	f.Learned = q3 + 3*(q3-q1)
	f.Pct = max(f.Learned, opts.MinChangePct)
	return f
}
