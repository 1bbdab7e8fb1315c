package analysis

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/perfbot/perfbot/analysis/stats"
	"golang.org/x/perf/benchmath"
)

// Options configures Compare. The zero value of a field means its default,
// so Options{} behaves as DefaultOptions().
type Options struct {
	// Alpha is the family-wise false-alarm rate a comparison keeps,
	// over its phases (Holm) and over every look of its sequential design
	// together (Spending): a row's PValue, adjusted for both, must fall
	// below it for a change to count (default 0.05).
	Alpha float64 `json:"alpha"`
	// Spending is the α-spending function of the sequential design
	// (Spendings; default SpendingOBrienFleming): how Alpha is shared
	// between the looks.
	Spending string `json:"spending"`
	// Confidence is the level of the medians' confidence intervals
	// (default 0.95).
	Confidence float64 `json:"confidence"`
	// MinChangePct is the practical floor, in percent: a significant
	// change smaller than this never counts, whatever the history says
	// (default 1.0).
	MinChangePct float64 `json:"min_change_pct"`
	// MinHistory is how many consecutive baseline pairs a series needs
	// before its noise floor is learned from history rather than taken to
	// be MinChangePct (default 10).
	MinHistory int `json:"min_history"`
	// PrimaryUnits are the units that decide verdicts (default
	// ["sec/op"]). Rows in other units are compared and shown but never
	// change the overall verdict.
	PrimaryUnits []string `json:"primary_units"`
	// MinRuns is the number of ok runs a side needs before a row is
	// tested at all (default 6: Mann-Whitney U cannot reach p < 0.05 with
	// fewer than 4 runs a side, and a 95% interval of the median needs 6).
	MinRuns int `json:"min_runs"`
	// Paired decides each row on its rounds' own ratios: when base's and
	// head's runs carry their round (Run.Round), a row whose values pair
	// in at least MinRuns rounds is tested with Wilcoxon's signed-rank
	// test of the rounds' log ratios, and its change is their
	// Hodges–Lehmann estimate with its interval (Row.Paired); what a
	// round's machine did to both of its runs cancels. benchstat's
	// unpaired p stays in Row.PUnpaired, and the medians in Base and
	// Head.
	Paired bool `json:"paired,omitempty"`
	// HigherBetterUnits lists units, beyond the rates that HigherIsBetter
	// recognizes, whose higher values are better (benchfmt's
	// "Unit U better=higher" metadata), such as "ipc".
	HigherBetterUnits []string `json:"higher_better_units,omitempty"`
	// Headline is the phase whose series is each benchmark's headline,
	// what its user waits for (default "total"): the report's verdict is
	// about the headline series (Row.Headline). A benchmark that does not
	// measure that phase, or measures no phases, has every primary series
	// as a headline.
	Headline string `json:"headline,omitempty"`
	// FailOn says which regressions fail a check (Report.Fails): FailOnHeadline
	// (the default) a headline series', FailOnAnyPhase any primary
	// series'.
	FailOn string `json:"fail_on,omitempty"`
}

// The values of Options.FailOn.
const (
	FailOnHeadline = "headline"
	FailOnAnyPhase = "any-phase"
)

// FailOns are the allowed values of Options.FailOn.
var FailOns = []string{FailOnHeadline, FailOnAnyPhase}

// DefaultOptions returns the options perfbot uses unless configured
// otherwise.
func DefaultOptions() Options {
	return Options{
		Alpha:        0.05,
		Spending:     stats.SpendingOBrienFleming,
		Confidence:   0.95,
		MinChangePct: 1.0,
		MinHistory:   10,
		PrimaryUnits: []string{"sec/op"},
		MinRuns:      6,
		Headline:     "total",
		FailOn:       FailOnHeadline,
	}
}

// withDefaults returns o with every zero field set to its default.
func (o Options) withDefaults() Options {
	d := DefaultOptions()
	if o.Alpha == 0 {
		o.Alpha = d.Alpha
	}
	if o.Spending == "" {
		o.Spending = d.Spending
	}
	if o.Confidence == 0 {
		o.Confidence = d.Confidence
	}
	if o.MinChangePct == 0 {
		o.MinChangePct = d.MinChangePct
	}
	if o.MinHistory == 0 {
		o.MinHistory = d.MinHistory
	}
	if len(o.PrimaryUnits) == 0 {
		o.PrimaryUnits = d.PrimaryUnits
	}
	if o.MinRuns == 0 {
		o.MinRuns = d.MinRuns
	}
	if o.Headline == "" {
		o.Headline = d.Headline
	}
	if o.FailOn == "" {
		o.FailOn = d.FailOn
	}
	return o
}

// Validate reports what is wrong with o, after defaults are applied to its
// zero fields. Compare does not validate; callers that read options from
// configuration should.
func (o Options) Validate() error {
	o = o.withDefaults()
	var errs []error
	if !(o.Alpha > 0 && o.Alpha < 0.5) {
		errs = append(errs, fmt.Errorf("alpha %v: must be above 0 and below 0.5, e.g. 0.05", o.Alpha))
	}
	if err := stats.ValidSpending(o.Spending); err != nil {
		errs = append(errs, err)
	}
	if !(o.Confidence > 0 && o.Confidence < 1) {
		errs = append(errs, fmt.Errorf("confidence %v: must be between 0 and 1, e.g. 0.95", o.Confidence))
	}
	if o.MinChangePct < 0 {
		errs = append(errs, fmt.Errorf("min change %v%%: must not be negative", o.MinChangePct))
	}
	if o.MinHistory < 2 {
		errs = append(errs, fmt.Errorf("min history %d: need at least 2 baseline pairs to learn a floor", o.MinHistory))
	}
	if !slices.Contains(FailOns, o.FailOn) {
		errs = append(errs, fmt.Errorf("fail_on %q: allowed values are %s", o.FailOn, strings.Join(FailOns, ", ")))
	}
	if o.MinRuns < 4 {
		errs = append(errs, fmt.Errorf("min runs %d: Mann-Whitney U needs at least 4 runs a side to reach p < 0.05", o.MinRuns))
	}
	return errors.Join(errs...)
}

// isPrimary reports whether unit decides verdicts.
func (o Options) isPrimary(unit string) bool {
	return slices.Contains(o.PrimaryUnits, unit)
}

// unitRank orders units: the primary units in their configured order,
// then every other unit.
func (o Options) unitRank(unit string) int {
	if i := slices.Index(o.PrimaryUnits, unit); i >= 0 {
		return i
	}
	return len(o.PrimaryUnits)
}

// higherIsBetter reports whether higher values of unit are better, by
// HigherIsBetter's rule or because the caller listed the unit.
func (o Options) higherIsBetter(unit string) bool {
	return HigherIsBetter(unit) || slices.Contains(o.HigherBetterUnits, unit)
}

// thresholds returns benchmath's default thresholds with o's alpha.
func (o Options) thresholds() *benchmath.Thresholds {
	th := benchmath.DefaultThresholds
	th.CompareAlpha = o.Alpha
	return &th
}
