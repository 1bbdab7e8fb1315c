package analysis

import (
	"fmt"
	"math"
	"slices"

	"github.com/perfbot/perfbot/analysis/internal/fmtx"
	"github.com/perfbot/perfbot/analysis/stats"
)

// This file finds the changes of a row that its shift cannot show. The
// Hodges–Lehmann shift is the median of every head − base difference
// (on the logarithms for times); when runs sit on a few values — a count
// that is usually 79 and now and then 19, a phase that is usually 0 —
// more than half of those differences are 0 and the shift and its
// interval say 0 however the proportions moved, while Mann-Whitney's
// tie-corrected test sees the sides differ. And a change can widen the
// runs without moving their centre, which the shift does not measure at
// all and the report used to blame on the machine.

// The Reasons of a row decided by its distribution rather than its
// shift (DistributionChange), and of a row whose spread changed.
const (
	// ReasonNonZero: the share of runs with a non-zero value changed
	// (Fisher's exact test at the row's threshold).
	ReasonNonZero = "share of non-zero runs"
	// ReasonModes: the runs sit on a few values in other proportions;
	// Mann-Whitney sees it, the shift (0) does not, the medians differ.
	ReasonModes = "multi-modal"
	// ReasonSpread (inconclusive): the centre did not settle, and head's
	// runs spread much more or much less than base's (SpreadRatio).
	ReasonSpread = "spread changed"
)

// A DistributionChange is a change of a row's runs that its shift does
// not show, found at the row's threshold.
type DistributionChange struct {
	// Kind is ReasonNonZero or ReasonModes.
	Kind string `json:"kind"`
	// BaseNonZero of BaseN base runs and HeadNonZero of HeadN head runs
	// had a non-zero value.
	BaseNonZero int `json:"base_nonzero"`
	BaseN       int `json:"base_n"`
	HeadNonZero int `json:"head_nonzero"`
	HeadN       int `json:"head_n"`
	// BaseMedian and HeadMedian are the sides' own medians.
	BaseMedian float64 `json:"base_median"`
	HeadMedian float64 `json:"head_median"`
	// P is the test's raw p-value: Fisher's exact test of the two shares
	// (ReasonNonZero) or Mann-Whitney U, tie-corrected (ReasonModes).
	P float64 `json:"p"`
}

// Describe says the change in the row's unit: "non-zero in 19 of 48 runs
// (was 4 of 48)" or "median 79.00 → 19.00, the runs are multi-modal".
func (d DistributionChange) Describe(unit string) string {
	if d.Kind == ReasonNonZero {
		return fmt.Sprintf("non-zero in %d of %d runs (was %d of %d)", d.HeadNonZero, d.HeadN, d.BaseNonZero, d.BaseN)
	}
	s := fmtx.Scaler(unit, d.BaseMedian, d.HeadMedian)
	return fmt.Sprintf("median %s → %s, the runs are multi-modal", fmtx.FormatScaled(s, d.BaseMedian, unit), fmtx.FormatScaled(s, d.HeadMedian, unit))
}

// minShareChange is the smallest change of the share of non-zero runs
// that counts, the floor of ReasonNonZero: 10 points.
const minShareChange = 0.10

// zeroShare is the share of a row's runs at 0 from which the share of
// non-zero runs, rather than the medians, describes it.
const zeroShare = 0.2

// distribution returns the change of a row's runs (bv, hv) that its
// shift missed, or nil: for a row not called a change, a share of
// non-zero runs that moved by at least minShareChange, or medians that
// moved by at least the floor while Mann-Whitney's tie-corrected test is
// significant — runs on a few values, where the shift's interval, made
// of head − base differences that are mostly equal, reaches 0 (or is 0)
// while the test, which counts ties, does not. Either must pass the
// row's threshold.
func distribution(row *Row, bv, hv []float64) *DistributionChange {
	if row.Changed() || !(row.Threshold > 0) || len(bv) == 0 || len(hv) == 0 {
		return nil
	}
	nonZero := func(v []float64) int {
		n := 0
		for _, x := range v {
			if x != 0 {
				n++
			}
		}
		return n
	}
	d := DistributionChange{BaseNonZero: nonZero(bv), BaseN: len(bv), HeadNonZero: nonZero(hv), HeadN: len(hv),
		BaseMedian: stats.Median(slices.Sorted(slices.Values(bv))), HeadMedian: stats.Median(slices.Sorted(slices.Values(hv)))}
	zeros := d.BaseN - d.BaseNonZero + d.HeadN - d.HeadNonZero
	if float64(zeros) >= zeroShare*float64(d.BaseN+d.HeadN) {
		sb, sh := float64(d.BaseNonZero)/float64(d.BaseN), float64(d.HeadNonZero)/float64(d.HeadN)
		d.Kind, d.P = ReasonNonZero, stats.FisherExact(d.BaseNonZero, d.BaseN, d.HeadNonZero, d.HeadN)
		if math.Abs(sh-sb) >= minShareChange && d.P < row.Threshold {
			return &d
		}
		return nil
	}
	if row.PRaw < row.Threshold && math.Abs(deltaPct(d.BaseMedian, d.HeadMedian)) >= row.Floor.Pct {
		d.Kind, d.P = ReasonModes, row.PRaw
		return &d
	}
	return nil
}

// worse reports whether d is a change for the worse in a row whose
// better direction is better: more runs non-zero, or a higher median,
// where lower is better.
func (d DistributionChange) worse(better string) bool {
	w := d.HeadMedian > d.BaseMedian
	if d.Kind == ReasonNonZero {
		w = d.HeadNonZero*d.BaseN > d.BaseNonZero*d.HeadN
	}
	if better == "higher" {
		w = !w
	}
	return w
}

// minSpreadRatio is the factor by which one side's interquartile range
// must exceed the other's for a change of spread to be named.
const minSpreadRatio = 2
