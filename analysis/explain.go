package analysis

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/perfbot/perfbot/analysis/internal/fmtx"
	"github.com/perfbot/perfbot/analysis/stats"
)

// This file explains each regressed phase in one line: the phase's other
// rows in the report (the counters the prover prints per phase, with
// their own significance), two ratios derived from them, and where a
// ProfileDiff exists, the function whose share grew most.

// An Explanation explains one regressed sec/op row of a phase by the
// phase's other rows and, where one exists, its ProfileDiff. Compare
// makes one for every regressed sec/op row of a phase that has at least
// one item or a profile diff, in the order of Phases.
type Explanation struct {
	// Benchmark and Phase name the explained series, as in Key.
	Benchmark string `json:"benchmark"`
	Phase     string `json:"phase"`
	// DeltaPct and P are the sec/op row's change (Row.Change) and its
	// p-value adjusted for the family and the looks (Row.PValue).
	DeltaPct float64 `json:"delta_pct"`
	P        float64 `json:"p_value"`
	// Simulated is the phase's simulated instruction count from the
	// callgrind runs (SimInstructionsUnit), exact, when both sides have
	// one; nil otherwise.
	Simulated *ExplanationItem `json:"simulated,omitempty"`
	// Items are the phase's counters and derived ratios, in
	// explanationOrder, at most maxExplanationItems of them.
	Items []ExplanationItem `json:"items,omitempty"`
	// Steps are the phase's GPU kernel steps (units "<step>-sec/op")
	// whose device time changed significantly, by the size of the change
	// in seconds, largest first, at most maxStepItems.
	Steps []ExplanationItem `json:"steps,omitempty"`
	// Telemetry is, for a GPU phase (one with kernel steps), the GPU
	// telemetry of the runs that measured it that changed significantly,
	// and throttling whenever head throttled; at most maxTelemetryItems.
	// It is per run, not per phase.
	Telemetry []ExplanationItem `json:"telemetry,omitempty"`
	// Profile indexes the Report's ProfileDiffs: the diff of the same
	// phase, or nil when there is none.
	Profile *int `json:"profile,omitempty"`
}

// An ExplanationItem is one counter or derived ratio of a phase.
type ExplanationItem struct {
	// Name is the short name shown: "instructions", "IPC".
	Name string `json:"name"`
	// DeltaPct is the row's change (Row.Change; for a derived ratio, the
	// change of the ratio of the rows' values, Row.BaseValue and
	// Row.HeadValue) in percent; NaN (JSON null) when the base is 0.
	DeltaPct float64 `json:"delta_pct"`
	// Significant is true when the row's verdict is a regression or an
	// improvement; for a derived ratio, when either row's verdict is and
	// the ratio itself moved by more than derivedFloorPct (unchanged
	// instructions over significantly more cycles is a real IPC drop;
	// both up by the same amount is no change of IPC). For an exact
	// simulated count, when it moved by SimFloorPct and
	// SimFloorInstructions.
	Significant bool `json:"significant"`
	// Exact marks a simulated count: DeltaPct is exact, not a change of
	// medians.
	Exact bool `json:"exact,omitempty"`
	// Unit, Base and Head are the values the change compares
	// (Row.BaseValue, Row.HeadValue) in the row's unit; for a step "sec"
	// (its device time), for telemetry the unit without its "gpu-"
	// prefix ("throttled-fraction/run"). A derived ratio has none.
	Unit string  `json:"unit,omitempty"`
	Base float64 `json:"base,omitempty"`
	Head float64 `json:"head,omitempty"`
}

// maxExplanationItems is how many items an explanation lists at most, so
// that its line stays short. When more are present, the significant ones
// are kept first, then the others in explanationOrder; either way the
// kept items are listed in explanationOrder.
const maxExplanationItems = 6

// derivedFloorPct is the smallest change of a derived ratio (IPC, miss
// rate) that counts, when a row under it changed significantly: the
// default practical floor of the rows themselves.
const derivedFloorPct = 1.0

// explanationOrder is the fixed order of an explanation's items: a unit
// of the phase's rows, or a ratio ("a÷b") of two of them, with the short
// name shown.
var explanationOrder = []struct{ unit, name string }{
	{"instructions/op", "instructions"},
	{"instructions/op÷cycles/op", "IPC"},
	{"cycles/op", "cycles"},
	{"cache-misses/op÷cache-references/op", "cache-miss rate"},
	{"cache-misses/op", "cache misses"},
	{"cache-references/op", "cache refs"},
	{"branch-misses/op", "branch misses"},
	{"branch-instructions/op", "branches"},
	{"page-faults/op", "page faults"},
	{"context-switches/op", "ctx switches"},
	{"cpu-migrations/op", "migrations"},
	{"task-clock-sec/op", "task-clock"},
	{"B/op", "B/op"},
	{"allocs/op", "allocs/op"},
}

// Explain returns the explanations of rows' regressed sec/op phase rows
// (see Explanation); diffs are the report's ProfileDiffs. Without the
// runs it cannot tell which command measured which benchmark, so it
// gives a GPU phase the telemetry of the report's only command, and
// none when there are several (Compare knows better).
func Explain(rows []Row, diffs []ProfileDiff) []Explanation {
	return explain(rows, diffs, processesOfRows(rows))
}

// explain is Explain with processes, which names the process benchmarks
// of the commands that measured a benchmark, the telemetry's source.
func explain(rows []Row, diffs []ProfileDiff, processes func(benchmark string) []string) []Explanation {
	var out []Explanation
	for _, row := range rows {
		if row.Verdict != VerdictRegression || row.Unit != TimeUnit || row.Phase == "" {
			continue
		}
		e := Explanation{Benchmark: row.Benchmark, Phase: row.Phase, DeltaPct: row.Change(), P: row.PValue}
		e.Items = explanationItems(rows, row.Benchmark, row.Phase)
		e.Simulated = simulatedItem(rows, row.Benchmark, row.Phase)
		var gpu bool
		e.Steps, gpu = stepItems(rows, row.Benchmark, row.Phase)
		if gpu {
			e.Telemetry = telemetryItems(rows, processes(row.Benchmark))
		}
		for i, d := range diffs {
			if d.Benchmark == row.Benchmark && d.Phase == row.Phase {
				e.Profile = &i
				break
			}
		}
		if len(e.Items) > 0 || e.Profile != nil || e.Simulated != nil || len(e.Steps) > 0 || len(e.Telemetry) > 0 {
			out = append(out, e)
		}
	}
	return out
}

// simulatedItem returns the item of a phase's simulated instruction
// count, or nil when rows have none.
func simulatedItem(rows []Row, benchmark, phase string) *ExplanationItem {
	for _, row := range rows {
		if row.Simulated && row.Unit == SimInstructionsUnit && row.Benchmark == benchmark && row.Phase == phase {
			return &ExplanationItem{
				Name:        "sim-instructions",
				DeltaPct:    row.Change(),
				Significant: row.Verdict == VerdictRegression || row.Verdict == VerdictImprovement,
				Exact:       true,
			}
		}
	}
	return nil
}

// manyfoldPct is the change from which an item shows its two values
// instead of a percentage (from 11 times as much).
const manyfoldPct = 1000

// itemText formats an item: "IPC -8.7%", "page faults +0.2% (~)",
// "sim-instructions +4.21% (exact)".
func itemText(it ExplanationItem) string {
	if it.Exact {
		mark := " (exact)"
		if !it.Significant {
			mark = " (exact, ~)"
		}
		return it.Name + " " + formatExactPct(it.DeltaPct) + mark
	}
	p := it.Name + " " + fmtx.FormatPct(it.DeltaPct)
	switch {
	case !stats.Finite(it.DeltaPct):
		// A count from a base of 0: the change in the unit.
		p = it.Name + " " + fmtx.FormatDelta(it.Head-it.Base, it.Unit)
	case math.Abs(it.DeltaPct) >= manyfoldPct && it.Unit != "" && it.Base > 0:
		// "+409500.0%" reads as noise: the two values say it plainly.
		p = fmt.Sprintf("%s %s → %s", it.Name, fmtx.FormatValue(it.Base, it.Unit), fmtx.FormatValue(it.Head, it.Unit))
	}
	if !it.Significant {
		p += " (~)"
	}
	return p
}

// explanationItems returns the items of one phase, chosen and ordered as
// maxExplanationItems says.
func explanationItems(rows []Row, benchmark, phase string) []ExplanationItem {
	units := make(map[string]Row)
	for _, row := range rows {
		if row.Benchmark == benchmark && row.Phase == phase {
			units[row.Unit] = row
		}
	}
	significant := func(r Row) bool { return r.Verdict == VerdictRegression || r.Verdict == VerdictImprovement }
	var items []ExplanationItem
	for _, o := range explanationOrder {
		num, den, ratio := strings.Cut(o.unit, "÷")
		if !ratio {
			if r, ok := units[o.unit]; ok {
				items = append(items, ExplanationItem{Name: o.name, DeltaPct: r.Change(), Significant: significant(r),
					Unit: r.Unit, Base: r.BaseValue, Head: r.HeadValue})
			}
			continue
		}
		n, okN := units[num]
		d, okD := units[den]
		if !okN || !okD {
			continue
		}
		base, head := n.BaseValue/d.BaseValue, n.HeadValue/d.HeadValue
		delta := math.NaN()
		if stats.Finite(base) && stats.Finite(head) {
			delta = deltaPct(base, head)
		}
		if !stats.Finite(delta) {
			continue // a ratio with a zero side says nothing
		}
		sig := (significant(n) || significant(d)) && math.Abs(delta) > derivedFloorPct
		items = append(items, ExplanationItem{Name: o.name, DeltaPct: delta, Significant: sig})
	}
	if len(items) <= maxExplanationItems {
		return items
	}
	keep := make([]bool, len(items))
	kept := 0
	for _, sig := range []bool{true, false} {
		for i, it := range items {
			if kept < maxExplanationItems && !keep[i] && it.Significant == sig {
				keep[i] = true
				kept++
			}
		}
	}
	var out []ExplanationItem
	for i, it := range items {
		if keep[i] {
			out = append(out, it)
		}
	}
	return out
}

// ExplanationLine says in one line why a phase regressed: the phase, its
// change, its items ("instructions 0.0% (~), IPC -8.7%") and the
// function whose flat share grew the most (its cumulative share when no
// flat share grew measurably), with its samples and p-value, when the
// explanation has a profile diff; or that no function's share grew
// measurably. strong formats the phase, code a function name and text
// plain text, for the rendering at hand.
func ExplanationLine(e Explanation, diff *ProfileDiff, strong, code, text func(string) string) string {
	s := fmt.Sprintf("%s %s (%s): ", strong(e.Phase), fmtx.FormatPct(e.DeltaPct), text(fmtx.FormatPEq(e.P)))
	var parts []string
	if e.Simulated != nil {
		parts = append(parts, itemText(*e.Simulated))
	}
	for _, it := range e.Items {
		parts = append(parts, itemText(it))
	}
	var groups []string
	if len(parts) > 0 {
		groups = append(groups, strings.Join(parts, ", "))
	}
	for _, g := range []struct {
		label string
		items []ExplanationItem
	}{{"GPU steps ", e.Steps}, {"GPU over the whole run: ", e.Telemetry}} {
		if len(g.items) == 0 {
			continue
		}
		var texts []string
		for _, it := range g.items {
			texts = append(texts, gpuItemText(it))
		}
		groups = append(groups, g.label+strings.Join(texts, ", "))
	}
	s += text(strings.Join(groups, "; "))
	if diff == nil {
		return s
	}
	if len(groups) > 0 {
		s += "; "
	}
	top, kind := diff.Flat, "flat"
	if len(top) == 0 {
		top, kind = diff.Cum, "cum"
	}
	if len(top) == 0 {
		return s + text(fmt.Sprintf("no function's share of the %s samples (base %d, head %d) grew measurably (%s)",
			ProfileWhat(*diff), diff.BaseSamples, diff.HeadSamples, ProfileTestNote()))
	}
	f := top[0]
	return s + fmt.Sprintf("grew most: %s %s %s (%s → %s%s)",
		code(ShortFuncName(f.Name)), fmtx.FormatPP(f.Delta), kind, fmtx.FormatShare(f.Base), fmtx.FormatShare(f.Head), text(shareEvidence(f)))
}

// ProfileTestNote names the rule by which a profile diff lists a
// function: "Fisher's exact test, Holm α 0.01, ≥10 samples".
func ProfileTestNote() string {
	return fmt.Sprintf("Fisher's exact test, Holm α %g, ≥%d samples", profileAlpha, minFuncSamples)
}

// shareEvidence formats a listed share's samples and p-value after its
// shares: ", 130 → 493 samples, p<0.001", or "" for a share of a report
// stored without them.
func shareEvidence(f FuncShare) string {
	if !f.HasEvidence() {
		return ""
	}
	return fmt.Sprintf(", %d → %d samples, %s", f.BaseSamples, f.HeadSamples, fmtx.FormatPEq(f.P))
}

// ReportExplanations returns r's explanations, made from its rows and
// profile diffs when r has none (a report decoded from older JSON).
func ReportExplanations(r *Report) []Explanation {
	if r.Explanations != nil {
		return r.Explanations
	}
	return Explain(r.Phases, r.ProfileDiffs)
}

// processesFunc turns processesOf's map into explain's function.
func processesFunc(m map[string][]string) func(string) []string {
	return func(benchmark string) []string { return m[benchmark] }
}

// MarshalJSON writes a NaN DeltaPct as null.
func (e Explanation) MarshalJSON() ([]byte, error) {
	type plain Explanation
	return json.Marshal(struct {
		plain
		DeltaPct *float64 `json:"delta_pct"`
	}{plain(e), nullable(e.DeltaPct)})
}

// UnmarshalJSON reads a null DeltaPct as NaN.
func (e *Explanation) UnmarshalJSON(b []byte) error {
	type plain Explanation
	v := struct {
		*plain
		DeltaPct *float64 `json:"delta_pct"`
	}{plain: (*plain)(e)}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	e.DeltaPct = orElse(v.DeltaPct, math.NaN())
	return nil
}

// MarshalJSON writes a NaN DeltaPct as null.
func (it ExplanationItem) MarshalJSON() ([]byte, error) {
	type plain ExplanationItem
	return json.Marshal(struct {
		plain
		DeltaPct *float64 `json:"delta_pct"`
	}{plain(it), nullable(it.DeltaPct)})
}

// UnmarshalJSON reads a null DeltaPct as NaN.
func (it *ExplanationItem) UnmarshalJSON(b []byte) error {
	type plain ExplanationItem
	v := struct {
		*plain
		DeltaPct *float64 `json:"delta_pct"`
	}{plain: (*plain)(it)}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	it.DeltaPct = orElse(v.DeltaPct, math.NaN())
	return nil
}

// ProfileWhat names what a profile diff compares: "CPU", or its sample
// type.
func ProfileWhat(d ProfileDiff) string {
	if d.SampleType == cpuSampleType {
		return "CPU"
	}
	return d.SampleType
}
