package analysis

import (
	"cmp"
	"encoding/json"
	"math"
	"slices"

	"github.com/perfbot/perfbot/analysis/stats"
)

// A Verdict is the outcome of a comparison, for one row or a whole report.
type Verdict string

// The verdicts. A failed run is never a regression: it makes a row
// inconclusive or, when a side has no ok run at all, the report an error.
const (
	VerdictRegression   Verdict = "regression"   // significant, above the floor, worse
	VerdictImprovement  Verdict = "improvement"  // significant, above the floor, better
	VerdictNoChange     Verdict = "no-change"    // not significant, or below the floor, with enough runs
	VerdictInconclusive Verdict = "inconclusive" // see the row's Reason
	VerdictError        Verdict = "error"        // a side has no ok run: nothing to compare
	// VerdictWait is the verdict of every row of a wait (a phase whose
	// span waits for a phase on another lane): its time is what it waits
	// for, so it is never a regression or an improvement of its own. The
	// row keeps its numbers; Row.Waits names what it waits for, and the
	// attribution charges the change to the branch that caused it.
	VerdictWait Verdict = "wait"
)

// The reasons a row gives for its verdict.
const (
	// ReasonTooFewRuns: a side has fewer than Options.MinRuns ok runs
	// measuring the row, and failed runs do not explain the shortfall.
	ReasonTooFewRuns = "too few runs"
	// ReasonTooNoisy (inconclusive): the change's interval reaches both
	// within and beyond the floor, so the runs neither show a change of
	// floor size nor rule one out.
	ReasonTooNoisy = "too noisy"
	// ReasonUnconfirmed (inconclusive), of reports stored before the
	// verdict was read off the printed interval: that interval (at 95%)
	// lay wholly beyond the floor while the test at the look's level was
	// not significant. New reports never give it.
	ReasonUnconfirmed = "unconfirmed"
	// ReasonRunsFailed: a side has fewer than Options.MinRuns ok runs
	// measuring the row, and would have had enough had its failed runs
	// succeeded.
	ReasonRunsFailed = "runs failed"
	// ReasonWithinFloor (no-change): the change's interval lies within
	// ±floor: any change larger than the floor is ruled out.
	ReasonWithinFloor = "within floor"
	// ReasonBelowFloor (no-change): the test is significant, but the
	// change's whole interval lies within ±floor: a change too small to
	// count.
	ReasonBelowFloor = "below floor"
)

// A Report is the result of Compare: every row, the overall verdict, the
// attribution of total's change to phases and the caveats. It is a pure
// value: RenderMarkdown, RenderText and RenderJSON print it, and its JSON
// form decodes back into an equal Report.
type Report struct {
	// Verdict is the overall verdict, decided by the primary-unit rows.
	Verdict Verdict `json:"verdict"`
	// Base and Head are the compared revisions (full SHAs).
	Base string `json:"base"`
	Head string `json:"head"`
	// BaseArgs and HeadArgs are the sides' variant arguments (see
	// Input), absent for none. Reports name each side as its revision
	// with its arguments when either side has some (Variants).
	BaseArgs []string `json:"base_args,omitempty"`
	HeadArgs []string `json:"head_args,omitempty"`
	// Config says where the config that measured both sides came from
	// (Input.ConfigSource); absent when not said.
	Config string `json:"config,omitempty"`
	// ConfigPath is the config file's path when it came from outside the
	// repository (Input.ConfigPath): printed commands pass it as --config.
	ConfigPath string `json:"config_path,omitempty"`
	// Runs counts the runs of each side by status.
	Runs Runs `json:"runs"`
	// Failures lists the distinct failures, with how often each occurred.
	Failures []Failure `json:"failures,omitempty"`
	// Phases has one row per (benchmark, phase, unit) measured on both
	// sides: primary units first, then in the order the benchmark printed
	// them.
	Phases []Row `json:"phases"`
	// Attribution splits the change in each benchmark's total phase
	// among its phases, for every primary unit.
	Attribution []Attribution `json:"attribution,omitempty"`
	// ProfileDiffs explain regressed CPU phases by their CPU profiles:
	// one for every regressed sec/op row whose phase left enough samples
	// in both sides' profiles, in the order of Phases.
	ProfileDiffs []ProfileDiff `json:"profile_diffs,omitempty"`
	// MemoryDiffs explain a regression by heap profiles: one for every
	// benchmark command that measured a regressed sec/op phase row and
	// whose runs carry memory profiles on both sides, in the order of
	// Phases. They cover whole runs, not phases (see MemoryDiff).
	MemoryDiffs []MemoryDiff `json:"memory_diffs,omitempty"`
	// Simulations describe the callgrind runs, per benchmark command:
	// their slowdown against the timed runs. The simulated counts
	// themselves are rows (Row.Simulated).
	Simulations []Simulation `json:"simulations,omitempty"`
	// Explanations explain regressed phases in one line each: one for
	// every regressed sec/op row of a phase with other units or a
	// profile diff, in the order of Phases (see Explain).
	Explanations []Explanation `json:"explanations,omitempty"`
	// OnlyBase and OnlyHead are series measured on one side only (a
	// phase removed or added); they are not compared.
	OnlyBase []Key `json:"only_base,omitempty"`
	OnlyHead []Key `json:"only_head,omitempty"`
	// BaseEnv and HeadEnv describe where each side ran; EnvDiffers lists
	// the keys whose values differ (or that one side lacks).
	BaseEnv    Env      `json:"base_env,omitempty"`
	HeadEnv    Env      `json:"head_env,omitempty"`
	EnvDiffers []string `json:"env_differs,omitempty"`
	// HolmFamily is the number of tests in the primary family: the
	// primary-unit rows with enough runs, across every benchmark.
	HolmFamily int `json:"holm_family"`
	// Looks is the number of looks the comparison took (1 for a
	// comparison that did not add runs), and Sequential how they kept α:
	// the spending function and each look's runs and threshold.
	Looks      int                    `json:"looks"`
	Sequential stats.SequentialDesign `json:"sequential"`
	// Order is how the runner ordered the sides within each round
	// (random, abba or alternate) and Seed the seed of a random order,
	// which replays it; empty and 0 when the runner did not say.
	Order string `json:"order,omitempty"`
	Seed  uint64 `json:"seed,omitempty"`
	// Options are the options the comparison used, defaults filled in.
	Options Options `json:"options"`
	// Warnings are the caveats a reader must see, in a stable order.
	Warnings []string `json:"warnings"`
}

// Variants reports whether the sides ran with variant arguments: an A/B
// comparison of flag sets (of one revision or two).
func (r *Report) Variants() bool { return len(r.BaseArgs) > 0 || len(r.HeadArgs) > 0 }

// NeedMoreRuns reports whether adding runs could settle the comparison:
// no primary row changed (a regression or an improvement ends a
// sequential comparison at the look that found it, as a group-sequential
// design stops at a crossed boundary), and some primary row is
// inconclusive because it has too few runs, is too noisy or is not yet
// confirmed (Row.NeedMoreRuns). A caller adds runs in batches, up to a cap, while it is true (as
// Chromium's Pinpoint does). It is false for an error report and for rows
// that lack runs because runs failed.
func (r *Report) NeedMoreRuns() bool {
	if r.Verdict == VerdictError || r.Verdict == VerdictRegression || r.Verdict == VerdictImprovement {
		return false
	}
	for _, row := range r.Phases {
		if row.Primary && row.NeedMoreRuns() {
			return true
		}
	}
	return false
}

// Change returns the row's change in percent, the one estimate that
// reports show and verdicts weigh (ShiftPct): NaN when the base's median
// is 0, where the change exists only in the row's unit (Shift).
func (row Row) Change() float64 { return row.ShiftPct }

// Exact reports whether the row's interval is a single point: the
// change of constants (4 → 7 allocs/op on every run of each side) or a
// simulated count. Such a row is shown without an interval.
func (row Row) Exact() bool {
	if !stats.Finite(row.ShiftLo) || !stats.Finite(row.ShiftHi) {
		return false
	}
	return row.ShiftLo == row.ShiftHi
}

// Runs counts the runs of both sides.
type Runs struct {
	Base SideRuns `json:"base"`
	Head SideRuns `json:"head"`
}

// SideRuns counts the runs of one side.
type SideRuns struct {
	Total int `json:"total"`
	OK    int `json:"ok"`
	// Failed counts the runs that did not end ok, by status.
	Failed map[Status]int `json:"failed,omitempty"`
	// ByBenchmark counts the ok runs of each benchmark command, when the
	// side ran more than one (a config of several benchmark entries runs
	// each its count of times): every series is measured by one of them.
	ByBenchmark map[string]int `json:"by_benchmark,omitempty"`
}

// FailedRuns returns the number of runs that did not end ok.
func (s SideRuns) FailedRuns() int { return s.Total - s.OK }

// A Failure is one distinct way runs of a side failed.
type Failure struct {
	Side string `json:"side"` // "base" or "head"
	// Tool is the failed runs' Run.Tool: "" for timed runs.
	Tool   string `json:"tool,omitempty"`
	Status Status `json:"status"`
	Detail string `json:"detail,omitempty"`
	Count  int    `json:"count"`
}

// An Env describes the machine and toolchain a side ran on, as the runner
// fingerprinted it: "cpu", "gpu", "gpu-driver", "go", "kernel" and so on.
type Env map[string]string

// A Row compares one series, a (benchmark, phase, unit), between base and
// head.
type Row struct {
	Key
	// Primary reports whether the row's unit decides verdicts.
	Primary bool `json:"primary"`
	// Headline marks a primary row that is its benchmark's headline
	// series (Options.Headline): the report's verdict is about these.
	Headline bool `json:"headline,omitempty"`
	// Simulated marks a row of simulated instruction counts from
	// callgrind runs (IsSimulatedUnit): exact, one run a side, compared
	// without a test. Its PRaw and PValue are NaN (JSON null), its
	// Floor is SimFloorPct, and it is never primary.
	Simulated bool `json:"simulated,omitempty"`
	// Better is "lower" or "higher": which way is an improvement.
	Better string `json:"better"`
	// Base and Head summarize each side's runs.
	Base Summary `json:"base"`
	Head Summary `json:"head"`
	// BaseValue and HeadValue are the two values the row's change
	// compares, the ones every rendering shows beside it: BaseValue is
	// the base's median, HeadValue is BaseValue moved by the change
	// (BaseValue + Shift). So Δ, the values beside it, the verdict and
	// the attribution are one estimate and cannot disagree; the head's
	// own median (Head.Median) can, when the two sides differ in shape
	// rather than by a shift (two modes, say), and is kept for export
	// and for the JSON reader, not shown.
	BaseValue float64 `json:"base_value"`
	HeadValue float64 `json:"head_value"`
	// Shift is the change in the row's unit (HeadValue − BaseValue), and
	// ShiftLo … ShiftHi its interval, infinite (JSON null) without one:
	// the same estimate as ShiftPct, and the only one where a base whose
	// median is 0 leaves no percentage (a count from 0 to 3).
	Shift   float64 `json:"shift"`
	ShiftLo float64 `json:"shift_lo"`
	ShiftHi float64 `json:"shift_hi"`
	// PRaw is the Mann-Whitney U p-value, as benchstat prints it; for a
	// Paired row, the signed-rank test's, and benchstat's is PUnpaired.
	PRaw float64 `json:"p_raw"`
	// Paired says the row was decided on its rounds' own ratios
	// (Options.Paired): PRaw is Wilcoxon's signed-rank p-value of the
	// rounds' log ratios, and the change their Hodges–Lehmann estimate
	// with its interval.
	Paired    bool    `json:"paired,omitempty"`
	PUnpaired float64 `json:"p_unpaired,omitempty"`
	// PValue is PRaw adjusted for the row's family (the primary units
	// together; every other unit by itself) and for the looks: the
	// largest p·α/threshold over Holm's steps up to the row's own, so
	// that the row is significant exactly when PValue < α. In a
	// comparison of one look it is Holm's adjusted p-value. Rows with too
	// few runs are not tested and keep PValue = PRaw.
	PValue float64 `json:"p_value"`
	// Threshold is the nominal p-value PRaw had to fall below at this
	// look: the sequential boundary (Report.Sequential) of α/(m−i), for
	// the row's place i in its family of m tests sorted by p (Holm's
	// step-down), or, for a row at or after the step where Holm stopped,
	// that step's. NaN (JSON null) for a row not tested.
	Threshold float64 `json:"threshold"`
	// Confidence is the level of the change's interval (DeltaLoPct …
	// DeltaHiPct, ShiftLo … ShiftHi): 1 − Threshold for a tested row,
	// the interval its verdict was decided on; Options.Confidence for a
	// row not tested.
	Confidence float64 `json:"confidence"`
	// ShiftPct is the row's change: the Hodges–Lehmann estimate, in
	// percent of base (the median of every head/base ratio, or for values
	// that are not all positive, of every difference over the base
	// median), and DeltaLoPct … DeltaHiPct its distribution-free interval
	// at Confidence; for a simulated row, the exact change of the counts,
	// with an interval of that one point. The interval decides the
	// verdict: a change when it excludes 0 and the change is at least the
	// floor, no change when it lies within ±floor, not settled otherwise. ShiftPct is NaN (JSON null) and the
	// bounds infinite when the base's median is 0 (see Shift); the
	// bounds are infinite too for samples too small for an interval.
	ShiftPct   float64 `json:"shift_pct"`
	DeltaLoPct float64 `json:"delta_lo_pct"`
	DeltaHiPct float64 `json:"delta_hi_pct"`
	// MDEPct is the minimum detectable change, in percent: the smallest
	// change the row's runs could have called at this look, half the
	// width of its interval, and never below its floor. NaN (JSON null)
	// for a row not tested.
	MDEPct float64 `json:"mde_pct"`
	// RunsToFloor is, for a primary row not settled, about how many runs
	// a side would narrow its interval, at the level of the design's last
	// look, to its floor; 0 when not estimated.
	RunsToFloor int `json:"runs_to_floor,omitempty"`
	// Distribution, when set, is the change of the row's runs that its
	// shift could not show (runs on a few values, or often zero), which
	// decided its verdict: its Reason is the change's Kind.
	Distribution *DistributionChange `json:"distribution,omitempty"`
	// MultiModal marks a row not called a change whose runs sit on a few
	// values on both sides while the sides' own medians (Base.Median,
	// Head.Median) differ by at least the floor: the medians jump between
	// the values (a count that is 19 or 79) where the shift does not, and
	// the report shows both rather than a bare "no change".
	MultiModal bool `json:"multi_modal,omitempty"`
	// SpreadRatio is head's interquartile range over base's for a row
	// whose spread changed (ReasonSpread); 0 otherwise.
	SpreadRatio float64 `json:"spread_ratio,omitempty"`
	// Floor is the smallest |DeltaPct| that counts.
	Floor
	// Verdict and Reason are the row's outcome.
	Verdict Verdict `json:"verdict"`
	Reason  string  `json:"reason,omitempty"`
	// Waits names the phase a wait row waits for (VerdictWait); such a
	// row is not tested and takes no share of α.
	Waits string `json:"waits,omitempty"`
}

// A Summary summarizes one side of a row: the median of the runs' values
// and its confidence interval (benchmath.AssumeNothing). Lo and Hi are
// infinite when there are too few runs for an interval at the configured
// confidence (fewer than 6 at 95%); JSON writes them as null.
type Summary struct {
	Median float64 `json:"median"`
	Lo     float64 `json:"lo"`
	Hi     float64 `json:"hi"`
	N      int     `json:"n"`
}

// An Attribution splits the change of one benchmark's total phase among
// its phases, in one unit: each phase's part along the critical path,
// and shares of total's change only when total itself changed (a
// regression or an improvement), so that no share is ever of noise.
type Attribution struct {
	Benchmark string `json:"benchmark"`
	Unit      string `json:"unit"`
	// Base and Head are total's values (Row.BaseValue, Row.HeadValue);
	// Delta is its change, Head − Base (Row.Shift), and DeltaLo …
	// DeltaHi that change's interval (infinite, JSON null, without one).
	Base     float64 `json:"base"`
	Head     float64 `json:"head"`
	Delta    float64 `json:"delta"`
	DeltaLo  float64 `json:"delta_lo"`
	DeltaHi  float64 `json:"delta_hi"`
	DeltaPct float64 `json:"delta_pct"`
	// Verdict is total's row verdict. Shares exist only when it is a
	// regression or an improvement (Changed).
	Verdict Verdict `json:"verdict"`
	// Phases are the top-level phases measured on both sides (sub-steps
	// such as "msm_h/step=sort" are inside their parent and left out),
	// by |Attributed| descending, then |Delta|.
	Phases []PhaseShare `json:"phases"`
	// ExplainedBy names the phases that changed significantly
	// (regression or improvement) on the critical path, by |Attributed|
	// descending.
	ExplainedBy []string `json:"explained_by"`
	// Unexplained is Delta − Σ Attributed of ExplainedBy: the rest of
	// total's change, which no significant phase accounts for (phases
	// that moved within their noise, and time outside the phases).
	// UnexplainedSharePct is its share (see PhaseShare.SharePct), NaN
	// (JSON null) when total did not change or the rest moved against
	// it.
	Unexplained         float64 `json:"unexplained"`
	UnexplainedSharePct float64 `json:"unexplained_share_pct"`
	// Notes say what took part of total's change back: the parts that
	// moved against it, which get no share.
	Notes []string `json:"notes,omitempty"`
	// Overlaps are the parts of the benchmark's proofs where phases ran
	// at once (from the runs' spans; sec/op only), with how their change
	// was split along the critical path.
	Overlaps []Overlap `json:"overlaps,omitempty"`
}

// Changed reports whether total changed: only then are there shares.
func (a Attribution) Changed() bool {
	return a.Verdict == VerdictRegression || a.Verdict == VerdictImprovement
}

// A PhaseShare is one phase's part in the change of total.
type PhaseShare struct {
	Phase    string  `json:"phase"`
	Delta    float64 `json:"delta"`     // the phase's change, in the unit (Row.Shift)
	DeltaPct float64 `json:"delta_pct"` // the same, in percent of its base (Row.Change)
	// Attributed is the part of total's change charged to the phase along
	// the critical path: Delta for a phase that runs alone; for phases
	// that overlap, their branch's Shapley share (Overlap), split among a
	// branch's phases in proportion to their Delta; 0 for a wait.
	Attributed float64 `json:"attributed"`
	// SharePct is the phase's share of total's change, given only when
	// total changed, to a phase of ExplainedBy that moved with total: its
	// Attributed over the sum of every part that moved with total (the
	// phases of ExplainedBy and the rest), so shares lie in [0, 100]%
	// and add up to 100%. NaN (JSON null) otherwise.
	SharePct float64 `json:"share_pct"`
	Verdict  Verdict `json:"verdict"`
	// OffCriticalPath marks a phase that overlapped another branch which
	// was the longer on both sides: however it changed, total did not
	// wait for it.
	OffCriticalPath bool `json:"off_critical_path,omitempty"`
	// Slack is, for a phase off the critical path, how much longer its
	// branch could have been on each side before total waited for it.
	Slack *Slack `json:"slack,omitempty"`
	// Waits names what a wait phase waits for.
	Waits string `json:"waits,omitempty"`
}

// A Slack is how much a branch that is off the critical path may still
// grow before it lengthens the proof: the longer branch's length minus
// its own, on each side (medians over the runs), in seconds.
type Slack struct {
	// Behind names the longer branch: the phase that ran beside this
	// one, or the main lane's phases.
	Behind string  `json:"behind"`
	Base   float64 `json:"base"`
	Head   float64 `json:"head"`
}

// nullable returns x, or nil when x is NaN or infinite (JSON has no
// encoding for those).
func nullable(x float64) *float64 {
	if !stats.Finite(x) {
		return nil
	}
	return &x
}

// orElse returns *p, or def when p is nil.
func orElse(p *float64, def float64) float64 {
	if p == nil {
		return def
	}
	return *p
}

// MarshalJSON writes infinite bounds as null.
func (s Summary) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Median float64  `json:"median"`
		Lo     *float64 `json:"lo"`
		Hi     *float64 `json:"hi"`
		N      int      `json:"n"`
	}{s.Median, nullable(s.Lo), nullable(s.Hi), s.N})
}

// UnmarshalJSON reads null bounds as −∞ and +∞.
func (s *Summary) UnmarshalJSON(b []byte) error {
	type plain Summary
	v := struct {
		*plain
		Lo *float64 `json:"lo"`
		Hi *float64 `json:"hi"`
	}{plain: (*plain)(s)}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	s.Lo, s.Hi = orElse(v.Lo, math.Inf(-1)), orElse(v.Hi, math.Inf(1))
	return nil
}

// MarshalJSON writes a NaN PRaw, PValue, Threshold, ShiftPct or MDEPct,
// and infinite interval bounds, as null.
func (r Row) MarshalJSON() ([]byte, error) {
	type plain Row
	return json.Marshal(struct {
		plain
		PRaw       *float64 `json:"p_raw"`
		PValue     *float64 `json:"p_value"`
		Threshold  *float64 `json:"threshold"`
		ShiftPct   *float64 `json:"shift_pct"`
		DeltaLoPct *float64 `json:"delta_lo_pct"`
		DeltaHiPct *float64 `json:"delta_hi_pct"`
		ShiftLo    *float64 `json:"shift_lo"`
		ShiftHi    *float64 `json:"shift_hi"`
		MDEPct     *float64 `json:"mde_pct"`
	}{plain(r), nullable(r.PRaw), nullable(r.PValue), nullable(r.Threshold),
		nullable(r.ShiftPct), nullable(r.DeltaLoPct), nullable(r.DeltaHiPct),
		nullable(r.ShiftLo), nullable(r.ShiftHi), nullable(r.MDEPct)})
}

// UnmarshalJSON reads null numbers as NaN, and null interval bounds as
// −∞ and +∞. A report stored before BaseValue existed gets the values
// its change implies: the base's median, moved by ShiftPct (or, for a
// zero base, the head's median).
func (r *Row) UnmarshalJSON(b []byte) error {
	type plain Row
	v := struct {
		*plain
		PRaw       *float64 `json:"p_raw"`
		PValue     *float64 `json:"p_value"`
		Threshold  *float64 `json:"threshold"`
		ShiftPct   *float64 `json:"shift_pct"`
		DeltaLoPct *float64 `json:"delta_lo_pct"`
		DeltaHiPct *float64 `json:"delta_hi_pct"`
		BaseValue  *float64 `json:"base_value"`
		Shift      *float64 `json:"shift"`
		ShiftLo    *float64 `json:"shift_lo"`
		ShiftHi    *float64 `json:"shift_hi"`
		MDEPct     *float64 `json:"mde_pct"`
	}{plain: (*plain)(r)}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	r.PRaw = orElse(v.PRaw, math.NaN())
	r.PValue = orElse(v.PValue, math.NaN())
	r.Threshold = orElse(v.Threshold, math.NaN())
	r.ShiftPct = orElse(v.ShiftPct, math.NaN())
	r.DeltaLoPct = orElse(v.DeltaLoPct, math.Inf(-1))
	r.DeltaHiPct = orElse(v.DeltaHiPct, math.Inf(1))
	r.ShiftLo = orElse(v.ShiftLo, math.Inf(-1))
	r.ShiftHi = orElse(v.ShiftHi, math.Inf(1))
	r.MDEPct = orElse(v.MDEPct, math.NaN())
	if v.BaseValue == nil {
		r.setValues()
		return nil
	}
	r.BaseValue, r.Shift = *v.BaseValue, orElse(v.Shift, math.NaN())
	return nil
}

// setValues sets BaseValue, HeadValue and Shift from the base's median
// and ShiftPct, and ShiftLo … ShiftHi from the interval in percent;
// where the base's median is 0, Shift is the medians' difference.
func (r *Row) setValues() {
	base := r.Base.Median
	r.BaseValue = base
	r.Shift = r.ShiftPct / 100 * math.Abs(base)
	r.ShiftLo, r.ShiftHi = math.Inf(-1), math.Inf(1)
	if stats.Finite(r.DeltaLoPct) && stats.Finite(r.DeltaHiPct) {
		r.ShiftLo, r.ShiftHi = r.DeltaLoPct/100*math.Abs(base), r.DeltaHiPct/100*math.Abs(base)
	}
	if !stats.Finite(r.ShiftPct) {
		r.Shift = r.Head.Median - base
		r.ShiftLo, r.ShiftHi = math.Inf(-1), math.Inf(1)
	}
	r.HeadValue = base + r.Shift
}

// MarshalJSON writes NaN percentages and infinite bounds as null.
func (a Attribution) MarshalJSON() ([]byte, error) {
	type plain Attribution
	return json.Marshal(struct {
		plain
		DeltaLo             *float64 `json:"delta_lo"`
		DeltaHi             *float64 `json:"delta_hi"`
		DeltaPct            *float64 `json:"delta_pct"`
		UnexplainedSharePct *float64 `json:"unexplained_share_pct"`
	}{plain(a), nullable(a.DeltaLo), nullable(a.DeltaHi), nullable(a.DeltaPct), nullable(a.UnexplainedSharePct)})
}

// UnmarshalJSON reads null percentages as NaN and null bounds as ∓∞.
func (a *Attribution) UnmarshalJSON(b []byte) error {
	type plain Attribution
	v := struct {
		*plain
		DeltaLo             *float64 `json:"delta_lo"`
		DeltaHi             *float64 `json:"delta_hi"`
		DeltaPct            *float64 `json:"delta_pct"`
		UnexplainedSharePct *float64 `json:"unexplained_share_pct"`
	}{plain: (*plain)(a)}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	a.DeltaLo = orElse(v.DeltaLo, math.Inf(-1))
	a.DeltaHi = orElse(v.DeltaHi, math.Inf(1))
	a.DeltaPct = orElse(v.DeltaPct, math.NaN())
	a.UnexplainedSharePct = orElse(v.UnexplainedSharePct, math.NaN())
	return nil
}

// MarshalJSON writes NaN percentages as null.
func (p PhaseShare) MarshalJSON() ([]byte, error) {
	type plain PhaseShare
	return json.Marshal(struct {
		plain
		DeltaPct *float64 `json:"delta_pct"`
		SharePct *float64 `json:"share_pct"`
	}{plain(p), nullable(p.DeltaPct), nullable(p.SharePct)})
}

// UnmarshalJSON reads null percentages as NaN. A share stored before
// Attributed existed was charged its Delta.
func (p *PhaseShare) UnmarshalJSON(b []byte) error {
	type plain PhaseShare
	v := struct {
		*plain
		DeltaPct   *float64 `json:"delta_pct"`
		SharePct   *float64 `json:"share_pct"`
		Attributed *float64 `json:"attributed"`
	}{plain: (*plain)(p)}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	p.DeltaPct = orElse(v.DeltaPct, math.NaN())
	p.SharePct = orElse(v.SharePct, math.NaN())
	p.Attributed = orElse(v.Attributed, p.Delta)
	return nil
}

// Fails reports whether the comparison fails a check (--fail-on-regression,
// the bot's check run): a regression of a headline series (the verdict),
// or, with Options.FailOn any-phase, of any primary series.
func (r *Report) Fails() bool {
	if r.Verdict == VerdictRegression {
		return true
	}
	if r.Options.FailOn == FailOnAnyPhase && r.Verdict != VerdictError {
		for _, row := range r.Phases {
			if row.Primary && row.Verdict == VerdictRegression {
				return true
			}
		}
	}
	return false
}

// TradeOff returns the primary series that are not headlines and changed
// beyond their floors, worst first, when the verdict is no slower overall
// (an improvement or no change) and at least one of them got worse: the
// change traded one phase's time for another's. It returns nil otherwise.
func (r *Report) TradeOff() []Row {
	if r.Verdict != VerdictImprovement && r.Verdict != VerdictNoChange {
		return nil
	}
	headline := r.IsHeadline()
	var rows []Row
	worse := false
	for _, row := range r.Phases {
		if !row.Primary || headline(row) || (row.Verdict != VerdictRegression && row.Verdict != VerdictImprovement) {
			continue
		}
		rows = append(rows, row)
		worse = worse || row.Verdict == VerdictRegression
	}
	if !worse {
		return nil
	}
	slices.SortStableFunc(rows, func(a, b Row) int {
		if a.Verdict != b.Verdict {
			if a.Verdict == VerdictRegression {
				return -1
			}
			return 1
		}
		return cmp.Compare(math.Abs(b.Change()), math.Abs(a.Change()))
	})
	return rows
}

// IsHeadline returns whether a row is a headline series; in a report
// stored by an older perfbot, whose rows carry no headline flag, every
// primary row is one.
func (r *Report) IsHeadline() func(Row) bool {
	for _, row := range r.Phases {
		if row.Headline {
			return func(row Row) bool { return row.Headline }
		}
	}
	return func(row Row) bool { return row.Primary }
}

// EnvKeys returns the keys of both sides' environments, sorted.
func (r *Report) EnvKeys() []string {
	var keys []string
	for k := range r.BaseEnv {
		keys = append(keys, k)
	}
	for k := range r.HeadEnv {
		if _, ok := r.BaseEnv[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}
