package analysis

import (
	"math"
	"testing"

	"github.com/perfbot/perfbot/analysis/stats"
)

// SeriesRuns returns one ok run per value, each carrying the value as
// key's sample.
func SeriesRuns(rev string, key Key, values []float64) []Run {
	runs := make([]Run, len(values))
	for i, v := range values {
		runs[i] = Run{Revision: rev, Status: StatusOK, Samples: []Sample{{key, v}}}
	}
	return runs
}

// RepeatValues returns n values: v where pick(i) and else w.
func RepeatValues(n int, pick func(i int) bool, v, w float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = w
		if pick(i) {
			out[i] = v
		}
	}
	return out
}

// Fisher's exact test against values worked by hand: 1 of 4 against 3 of
// 4 has tables x = 0…4 with probabilities 1, 16, 36, 16, 1 over 70; the
// seen table (x = 1, 16/70) and every one no likelier sum to 34/70.
func TestFisherExact(t *testing.T) {
	if got := stats.FisherExact(1, 4, 3, 4); math.Abs(got-34.0/70) > 1e-12 {
		t.Errorf("fisherExact(1, 4, 3, 4) = %v, want 34/70", got)
	}
	if got := stats.FisherExact(2, 4, 2, 4); math.Abs(got-1) > 1e-9 {
		t.Errorf("equal shares: %v, want 1", got)
	}
	if got := stats.FisherExact(0, 5, 5, 5); math.Abs(got-2.0/252) > 1e-12 {
		t.Errorf("0 of 5 against 5 of 5: %v, want 2/C(10,5)", got)
	}
}
