package analysis

import (
	"cmp"
	"maps"
	"math"
	"slices"

	"github.com/perfbot/perfbot/analysis/stats"
	"golang.org/x/perf/benchmath"
)

// An Input is what Compare compares.
type Input struct {
	// BaseRev and HeadRev are the revisions (full SHAs). When empty, the
	// first run's Revision is used.
	BaseRev, HeadRev string
	// BaseArgs and HeadArgs are the variant arguments each side's
	// benchmarks ran with beyond their configured ones (perfbot compare
	// --base-args, --head-args), nil for none: one revision with two
	// flag sets is an A/B comparison, not an A/A one.
	BaseArgs, HeadArgs []string
	// Base and Head are each side's runs, in the order they ran (the
	// drift check relies on it), failed runs included.
	Base, Head []Run
	// History is the baseline history of each series, for noise floors;
	// it may be nil.
	History History
	// BaseEnv and HeadEnv describe where each side ran; either may be
	// nil. Compare warns about every key whose values differ.
	BaseEnv, HeadEnv Env
	// Looks says which look of a sequential comparison this is (the
	// runs a side at every look so far, and the design's most); the zero
	// value is a single look, tested at α itself. Every look tests at
	// the thresholds of Options.Spending, so that all of them together
	// keep the chance of a false alarm at Options.Alpha.
	Looks stats.Looks
	// Order and Seed say how the runner ordered the sides within its
	// rounds, for the report to state (perfbot compare's order: and
	// --seed); empty and 0 when it did not say.
	Order string
	Seed  uint64
	// ConfigSource says where the config that measured both sides came
	// from ("ci/prover.yml (--config)", ".perfbot.yml at 0123456789ab",
	// "default (…)"), for the report's first lines; "" when not said.
	ConfigSource string
	// ConfigPath is the absolute path of the config file both sides were
	// measured with when it came from outside the repository (--config,
	// or the server config's config: file), so that printed commands can
	// pass it again; "" for a .perfbot.yml, the default or an inline one.
	ConfigPath string
	// Caveats are the runner's own warnings, such as other processes
	// busy on the machine during the runs; they go to Report.Warnings.
	Caveats []string
}

// Compare compares head against base and returns the report. For every
// series measured by ok runs of both sides it takes one value per run (the
// median of the run's values for the series), summarizes each side with
// the median and its confidence interval and tests the difference with
// Mann-Whitney U (benchmath.AssumeNothing, as benchstat does), corrects
// the p-values with Holm's method within a family, and compares |Δ%| with
// the series' noise floor. Failed runs are counted and reported, never
// compared. Every regressed sec/op row of a CPU phase is then explained
// by the CPU profiles of the runs, where both sides have them (see
// ProfileDiff), and every regressed sec/op row of a phase by the phase's
// other units (see Explanation). Zero fields of opts take their defaults.
func Compare(in Input, opts Options) *Report {
	opts = opts.withDefaults()
	opts.PrimaryUnits = slices.Clone(opts.PrimaryUnits)
	opts.HigherBetterUnits = slices.Clone(opts.HigherBetterUnits)
	c := &comparer{opts: opts, order: make(map[Key]int), simOrder: make(map[Key]int), looks: in.Looks, shifts: make(map[Key]stats.Shift),
		waits: waitsOf(in.Base, in.Head)}
	r := &Report{
		Base:       cmp.Or(in.BaseRev, firstRevision(in.Base)),
		Head:       cmp.Or(in.HeadRev, firstRevision(in.Head)),
		BaseArgs:   slices.Clone(in.BaseArgs),
		HeadArgs:   slices.Clone(in.HeadArgs),
		BaseEnv:    in.BaseEnv,
		HeadEnv:    in.HeadEnv,
		Options:    opts,
		Phases:     []Row{},
		Warnings:   []string{},
		Order:      in.Order,
		Seed:       in.Seed,
		Config:     in.ConfigSource,
		ConfigPath: in.ConfigPath,
	}

	base := c.collect("base", r.Base, in.Base)
	head := c.collect("head", r.Head, in.Head)
	for _, s := range []*side{base, head} {
		named := maps.Clone(s.byCommand)
		if delete(named, ""); len(named) > 1 {
			s.runs.ByBenchmark = named
		}
	}
	c.sortKeys()
	r.Runs = Runs{Base: base.runs, Head: head.runs}
	if len(c.looks.Runs) == 0 {
		c.looks = stats.FixedLooks(min(base.runs.OK, head.runs.OK))
	}
	r.Sequential = stats.NewSequentialDesign(opts.Spending, opts.Alpha, c.looks, opts.MinRuns)
	r.Looks = len(r.Sequential.Looks)
	r.Failures = slices.Concat(base.failures, head.failures, base.simFailures, head.simFailures)
	r.OnlyBase, r.OnlyHead = c.onlyOne(base, head)
	c.label = Labeler(c.keys)

	c.warnRuns(r, base, head)
	if base.withSamples == 0 || head.withSamples == 0 {
		r.Verdict = VerdictError
		c.warnEnv(r)
		r.Warnings = append(r.Warnings, c.warnings...)
		r.Warnings = append(r.Warnings, in.Caveats...)
		return r
	}

	for _, k := range c.keys {
		bv, hv := base.series[k], head.series[k]
		pairs := stats.PairedLogRatios(bv, hv, base.rounds[k], head.rounds[k])
		if bv == nil || hv == nil {
			continue
		}
		r.Phases = append(r.Phases, c.row(k, bv, hv, pairs, NoiseFloor(in.History[k], opts)))
	}
	r.HolmFamily = c.adjust(r.Phases)
	for i := range r.Phases {
		c.decide(&r.Phases[i], base, head)
		c.reshape(&r.Phases[i], base.series[r.Phases[i].Key], head.series[r.Phases[i].Key])
	}
	c.detectable(r.Phases)
	// Simulated counts are exact: decided by simRow, outside Holm's
	// families, never primary.
	r.Phases = append(r.Phases, c.simRows(base, head)...)
	r.Simulations = c.simulations(base, head)
	r.Attribution = attribute(r.Phases, overlaps(in.Base, in.Head))
	markHeadlines(r.Phases, c.opts.Headline)
	r.Verdict = overall(r.Phases)

	c.warnRows(r, base, head, in.History)
	c.warnDrift(r.Phases, base, head)
	c.warnAttribution(r.Attribution)
	c.warnEnv(r)
	c.warnGPU(in, base, head)
	c.warnIdleGPU(r, base, head)
	c.warnSimulated(base, head)
	r.ProfileDiffs = c.explainProfiles(in, r.Phases)
	r.MemoryDiffs = c.explainMemory(in, r.Phases)
	r.Explanations = explain(r.Phases, r.ProfileDiffs, processesFunc(processesOf(in.Base, in.Head)))
	r.Warnings = append(r.Warnings, c.warnings...)
	r.Warnings = append(r.Warnings, in.Caveats...)
	return r
}

// A comparer holds the state of one Compare call.
type comparer struct {
	opts     Options
	looks    stats.Looks
	order    map[Key]int // first appearance of each key, base runs first
	keys     []Key       // every key, sorted for display
	label    func(Key) string
	warnings []string
	// simKeys are the keys of the callgrind runs' samples, in order of
	// first appearance (simOrder), kept apart from the timed keys.
	simKeys  []Key
	simOrder map[Key]int
	// families holds the indexes of the tested rows of each Holm family
	// ("" the primary one), once adjust has run.
	families map[string][]int
	// shifts holds each row's Hodges–Lehmann shift, for its MDE.
	shifts map[Key]stats.Shift
	// blind holds, per primary row whose runs cannot reach the threshold
	// a change needs at this look, that threshold (detectable sets it).
	blind map[Key]float64
	// waits holds, per benchmark and phase of a wait, what it waits for
	// (from the runs' spans).
	waits map[[2]string]string
}

// A side is one revision's runs, reduced to one value per run and series.
type side struct {
	name, rev string
	runs      SideRuns
	failures  []Failure
	// series holds, per key, one value per ok run that measured it, in
	// run order, and rounds the Run.Round of each.
	series      map[Key][]float64
	rounds      map[Key][]int
	withSamples int // ok runs that carried at least one sample
	// byCommand counts those runs per benchmark command (commandName, ""
	// for runs that do not name theirs), and command is the command of
	// the runs that measured each series: a series of one command is
	// measured by that command's runs only.
	byCommand map[string]int
	command   map[Key]string
	nonFinite int // NaN or infinite values dropped
	otherRev  int // ok runs whose Revision is not rev
	// sim holds, per key, one value per ok callgrind run (Run.Tool);
	// simRuns and simOK count those runs, simFailures their failures.
	// None of them counts in runs, failures or series.
	sim         map[Key][]float64
	simRuns     int
	simOK       int
	simFailures []Failure
}

// collect reduces runs to a side.
func (c *comparer) collect(name, rev string, runs []Run) *side {
	s := &side{name: name, rev: rev, series: make(map[Key][]float64), rounds: make(map[Key][]int), sim: make(map[Key][]float64),
		byCommand: make(map[string]int), command: make(map[Key]string)}
	failureIndex := make(map[Failure]int)
	for _, run := range runs {
		if run.Tool != "" {
			c.collectSimulated(s, run)
			continue
		}
		s.runs.Total++
		if run.Status != StatusOK {
			if s.runs.Failed == nil {
				s.runs.Failed = make(map[Status]int)
			}
			s.runs.Failed[run.Status]++
			f := Failure{Side: name, Status: run.Status, Detail: run.Detail}
			if i, ok := failureIndex[f]; ok {
				s.failures[i].Count++
			} else {
				failureIndex[f] = len(s.failures)
				f.Count = 1
				s.failures = append(s.failures, f)
			}
			continue
		}
		s.runs.OK++
		if rev != "" && run.Revision != "" && run.Revision != rev {
			s.otherRev++
		}
		values := make(map[Key][]float64)
		var keys []Key
		for _, smp := range run.Samples {
			if !stats.Finite(smp.Value) {
				s.nonFinite++
				continue
			}
			if _, ok := values[smp.Key]; !ok {
				keys = append(keys, smp.Key)
			}
			values[smp.Key] = append(values[smp.Key], smp.Value)
			if _, ok := c.order[smp.Key]; !ok {
				c.order[smp.Key] = len(c.order)
				c.keys = append(c.keys, smp.Key)
			}
		}
		if len(keys) > 0 {
			s.withSamples++
			s.byCommand[commandName(run)]++
		}
		for _, k := range keys {
			if _, ok := s.command[k]; !ok {
				s.command[k] = commandName(run)
			}
			vs := values[k]
			slices.Sort(vs)
			s.series[k] = append(s.series[k], stats.Median(vs))
			s.rounds[k] = append(s.rounds[k], run.Round)
		}
	}
	return s
}

// sortKeys orders c.keys for display: primary units first (in their
// configured order), then by the first appearance of the unit, of the
// benchmark and of the key itself — the order the benchmark printed them.
func (c *comparer) sortKeys() {
	unitFirst, benchFirst := make(map[string]int), make(map[string]int)
	for _, k := range c.keys { // still in order of appearance
		if _, ok := unitFirst[k.Unit]; !ok {
			unitFirst[k.Unit] = c.order[k]
		}
		if _, ok := benchFirst[k.Benchmark]; !ok {
			benchFirst[k.Benchmark] = c.order[k]
		}
	}
	slices.SortFunc(c.keys, func(a, b Key) int {
		return cmp.Or(
			cmp.Compare(c.opts.unitRank(a.Unit), c.opts.unitRank(b.Unit)),
			cmp.Compare(unitFirst[a.Unit], unitFirst[b.Unit]),
			cmp.Compare(benchFirst[a.Benchmark], benchFirst[b.Benchmark]),
			cmp.Compare(c.order[a], c.order[b]),
		)
	})
}

// onlyOne returns the keys that only one side measured.
func (c *comparer) onlyOne(base, head *side) (onlyBase, onlyHead []Key) {
	for _, k := range c.keys {
		_, inBase := base.series[k]
		_, inHead := head.series[k]
		switch {
		case inBase && !inHead:
			onlyBase = append(onlyBase, k)
		case inHead && !inBase:
			onlyHead = append(onlyHead, k)
		}
	}
	return onlyBase, onlyHead
}

// row summarizes and tests one series. The verdict comes later, once the
// p-values are adjusted.
func (c *comparer) row(k Key, bv, hv, pairs []float64, floor Floor) Row {
	th := c.opts.thresholds()
	// NewSample sorts its slice in place: keep the run order in bv, hv.
	bs := benchmath.NewSample(slices.Clone(bv), th)
	hs := benchmath.NewSample(slices.Clone(hv), th)
	row := Row{
		Key:     k,
		Primary: c.opts.isPrimary(k.Unit),
		Better:  "lower",
		Base:    summarize(bs, c.opts.Confidence),
		Head:    summarize(hs, c.opts.Confidence),
		Floor:   floor,
		Waits:   c.waits[[2]string{k.Benchmark, k.Phase}],
	}
	if c.opts.higherIsBetter(k.Unit) {
		row.Better = "higher"
	}
	row.PRaw = benchmath.AssumeNothing.Compare(bs, hs).P
	row.PValue = row.PRaw
	row.Threshold, row.MDEPct = math.NaN(), math.NaN()
	var sh stats.Shift
	if c.opts.Paired && len(pairs) >= c.opts.MinRuns {
		sh = stats.PairedShiftOf(pairs, row.Base.Median, c.opts.Confidence)
		row.Paired, row.PUnpaired = true, row.PRaw
		row.PRaw, row.PValue = sh.PairedP(), sh.PairedP()
	} else {
		sh = stats.HodgesLehmann(bv, hv, c.opts.Confidence)
	}
	row.ShiftPct, row.DeltaLoPct, row.DeltaHiPct, row.Confidence = sh.Pct, sh.Lo, sh.Hi, c.opts.Confidence
	row.BaseValue, row.Shift, row.ShiftLo, row.ShiftHi = row.Base.Median, sh.Abs, sh.AbsLo, sh.AbsHi
	row.HeadValue = row.BaseValue + row.Shift
	if c.shifts != nil {
		c.shifts[k] = sh
	}
	return row
}

func summarize(s *benchmath.Sample, confidence float64) Summary {
	sum := benchmath.AssumeNothing.Summary(s, confidence)
	return Summary{Median: sum.Center, Lo: sum.Lo, Hi: sum.Hi, N: len(s.Values)}
}

// deltaPct returns (head − base) / base × 100, 0 when both are 0 and NaN
// when only base is.
func deltaPct(base, head float64) float64 {
	switch {
	case base == head:
		return 0
	case base == 0:
		return math.NaN()
	}
	return (head - base) / math.Abs(base) * 100
}

// tested reports whether a row has enough runs on both sides to be
// tested, and is not a wait's.
func (c *comparer) tested(row *Row) bool {
	return row.Base.N >= c.opts.MinRuns && row.Head.N >= c.opts.MinRuns && row.Waits == ""
}

// adjust tests the tested rows, family by family, at this look's
// thresholds (stats.StepDown: Holm's step-down over the family, each step at
// the sequential boundary of its share of α): the primary units form one
// family, because together they decide the verdict; every other unit
// forms its own, so that adding a counter never weakens the tests that
// decide. It sets each row's Threshold and PValue and returns the size of
// the primary family.
func (c *comparer) adjust(rows []Row) int {
	families := make(map[string][]int) // "" is the primary family
	var names []string
	for i := range rows {
		if !c.tested(&rows[i]) {
			continue
		}
		name := rows[i].Unit
		if rows[i].Primary {
			name = ""
		}
		if _, ok := families[name]; !ok {
			names = append(names, name)
		}
		families[name] = append(families[name], i)
	}
	frac := c.looks.Fractions(c.opts.MinRuns)
	for _, name := range names {
		idx := families[name]
		p := make([]float64, len(idx))
		for j, i := range idx {
			p[j] = rows[i].PRaw
		}
		th, adj := stats.StepDown(p, c.opts.Alpha, c.opts.Spending, frac)
		holmStop(p, th)
		for j, i := range idx {
			rows[i].Threshold, rows[i].PValue = th[j], adj[j]
		}
	}
	c.families = families
	return len(families[""])
}

// holmStop gives every test from Holm's first non-rejection on the
// threshold of that step, in place: the step-down stops there, so none
// of them can be rejected at this look, and the interval each is judged
// by (decide) must say so too. Thresholds grow along the order, so a
// later test's own step would be looser than the one that stopped it.
func holmStop(p, th []float64) {
	order := make([]int, len(p))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return stats.CmpFloat(p[a], p[b]) })
	stop := -1
	for _, i := range order {
		if stop < 0 && !(p[i] < th[i]) {
			stop = i
		}
		if stop >= 0 {
			th[i] = th[stop]
		}
	}
}

// detectable sets each tested row's MDEPct, the smallest change its
// runs could have called at this look: half the width of the interval
// that decided it (DeltaLoPct … DeltaHiPct), never below its floor, since
// a smaller change does not count. A change that large, estimated
// exactly, puts the interval's edge at 0; the interval already rules out
// every change beyond its far end, which is never nearer 0 than its half
// width, so the MDE never claims a size unseeable that the row excludes.
// It also sets RunsToFloor for a primary row not settled: the runs a
// side whose interval, at the level the design's last look would use,
// narrows to the floor (the half width falls as one over the root of the
// runs). A row whose runs could call no change however large (its
// interval is unbounded at this level) is marked blind for warnRows.
func (c *comparer) detectable(rows []Row) {
	final := c.looks.Final(c.opts.MinRuns)
	for _, idx := range c.families {
		open := 0
		for _, i := range idx {
			if !rows[i].Changed() {
				open++
			}
		}
		last := stats.Thresholds(c.opts.Spending, c.opts.Alpha/float64(max(open, 1)), final)
		for _, i := range idx {
			row := &rows[i]
			sh := c.shifts[row.Key]
			if hw := (row.DeltaHiPct - row.DeltaLoPct) / 2; stats.Finite(hw) {
				row.MDEPct = math.Max(hw, row.Floor.Pct)
			}
			if !row.Primary || row.Verdict != VerdictInconclusive {
				continue
			}
			if !stats.Finite(row.MDEPct) {
				if smallestP(*row) > row.Threshold {
					// No shift however large could be called with these
					// runs: warnRows says so and how many it takes.
					if c.blind == nil {
						c.blind = make(map[Key]float64)
					}
					c.blind[row.Key] = row.Threshold
				}
				continue
			}
			at := sh.At(1 - last[len(last)-1])
			if hw := (at.Hi - at.Lo) / 2; stats.Finite(hw) && row.Floor.Pct > 0 {
				n := float64(min(row.Base.N, row.Head.N))
				row.RunsToFloor = int(math.Ceil(n * math.Pow(hw/row.Floor.Pct, 2)))
			}
		}
	}
}

// decide sets a row's verdict and reason from its change's intervals
// against 0 and ±floor:
//
//   - regression or improvement: the interval at this look's level
//     excludes 0 (the test is significant at this look) and the change
//     (Change: the Hodges–Lehmann shift) is at least the floor;
//   - no change: the interval at Options.Confidence lies within ±floor,
//     so any change larger than the floor is ruled out (ReasonBelowFloor
//     when it excludes 0: a change too small to count; ReasonWithinFloor
//     otherwise);
//   - inconclusive: neither (ReasonTooNoisy).
//
// The row keeps the interval that decided it (see the comment inside).
// ReasonUnconfirmed, a 95% interval wholly beyond the floor beside a
// test not yet significant, is no longer given: such a row now shows its
// look's interval, which reaches 0, and is too noisy.
func (c *comparer) decide(row *Row, base, head *side) {
	if row.Waits != "" && row.Base.N >= c.opts.MinRuns && row.Head.N >= c.opts.MinRuns {
		row.Verdict, row.Reason = VerdictWait, "waits for "+row.Waits
		return
	}
	if !c.tested(row) {
		row.Verdict = VerdictInconclusive
		row.Reason = ReasonTooFewRuns
		// Runs failed if every short side measured the series in each of
		// its ok runs and would have had enough had its failed runs
		// succeeded.
		enoughButForFailures := func(n int, s *side) bool {
			return n >= c.opts.MinRuns || n == s.runs.OK && n+s.runs.FailedRuns() >= c.opts.MinRuns
		}
		if enoughButForFailures(row.Base.N, base) && enoughButForFailures(row.Head.N, head) {
			row.Reason = ReasonRunsFailed
		}
		return
	}
	// Two errors, two intervals. A change is called when the change's
	// interval at this look's level (1 − Threshold: a repeated confidence
	// interval of the sequential design, Jennison and Turnbull 2000,
	// ch. 9) excludes 0, which it does exactly when the test is
	// significant at this look, and the change reaches the floor: that
	// keeps the chance of any false alarm, over the family and the looks,
	// at α. A change is ruled out ("no change") when the interval at
	// Options.Confidence lies within ±floor: missing a change of floor
	// size is the lesser error (a comparison's power is 80–95%, not
	// 1 − α), and asking the look's level of it too would hold every
	// A/A comparison for the design's last looks (simulated, 0.3% noise
	// a phase, floor 1%, α 0.01, cap 60: an A/A settled in a median of 25
	// rounds instead of 10, a planted +5% in msm_h in 50 instead of 20). The row shows the interval that decided it — the
	// look's for a change or a row not settled, the fixed one for no
	// change — so the one rule of the legend (excludes 0 with Δ at the
	// floor: a change; within ±floor: no change; else not settled) gives
	// its verdict from its printed numbers: a row not settled never has
	// the look's interval within ±floor, as it holds the fixed one.
	fixed := *row
	c.decisionInterval(row)
	significant := row.DeltaLoPct > 0 || row.DeltaHiPct < 0
	change := row.Change()
	aboveFloor := math.Abs(change) >= row.Floor.Pct
	within := fixed.DeltaLoPct >= -row.Floor.Pct && fixed.DeltaHiPct <= row.Floor.Pct
	fixedSignificant := fixed.DeltaLoPct > 0 || fixed.DeltaHiPct < 0
	if !stats.Finite(change) {
		// A base whose median is 0 has no percentage: the change is in
		// the unit (Shift), and only no change at all is within a floor.
		significant = row.ShiftLo > 0 || row.ShiftHi < 0
		aboveFloor = row.Shift != 0
		within = fixed.ShiftLo == 0 && fixed.ShiftHi == 0
		fixedSignificant = fixed.ShiftLo > 0 || fixed.ShiftHi < 0
	}
	switch {
	case significant && aboveFloor:
		worse := row.Shift > 0
		if row.Better == "higher" {
			worse = !worse
		}
		row.Verdict = VerdictImprovement
		if worse {
			row.Verdict = VerdictRegression
		}
		return
	case within:
		row.Verdict, row.Reason = VerdictNoChange, ReasonWithinFloor
		if fixedSignificant {
			row.Reason = ReasonBelowFloor
		}
		row.Confidence = fixed.Confidence
		row.DeltaLoPct, row.DeltaHiPct = fixed.DeltaLoPct, fixed.DeltaHiPct
		row.ShiftLo, row.ShiftHi = fixed.ShiftLo, fixed.ShiftHi
	default:
		row.Verdict, row.Reason = VerdictInconclusive, ReasonTooNoisy
	}
}

// reshape looks, in a tested row not called a change, for what its
// shift cannot show: a change of distribution at the row's threshold
// (distribution), which then decides the row, or, in a row not settled,
// a change of spread, which says why instead of "too noisy".
func (c *comparer) reshape(row *Row, bv, hv []float64) {
	if !c.tested(row) || row.Changed() || row.Verdict == VerdictWait {
		return
	}
	if d := distribution(row, bv, hv); d != nil {
		row.Distribution, row.Reason = d, d.Kind
		row.Verdict = VerdictImprovement
		if d.worse(row.Better) {
			row.Verdict = VerdictRegression
		}
		return
	}
	row.MultiModal = fewValues(bv) && fewValues(hv) && math.Abs(deltaPct(row.Base.Median, row.Head.Median)) >= row.Floor.Pct
	if row.Verdict != VerdictInconclusive {
		return
	}
	// The ratio first: the test runs only where the spread moved enough
	// to name, which few rows do (it runs at every look).
	if ib, ih := stats.IQR(bv), stats.IQR(hv); ib > 0 && (ih >= minSpreadRatio*ib || ih*minSpreadRatio <= ib) && stats.SpreadP(bv, hv) < row.Threshold {
		row.Reason, row.SpreadRatio = ReasonSpread, ih/ib
	}
}

// fewValues reports whether runs sit on a few values: at most a third
// as many distinct values as runs, so that ties, not noise, make them.
func fewValues(v []float64) bool {
	seen := make(map[float64]bool)
	for _, x := range v {
		seen[x] = true
	}
	return 3*len(seen) <= len(v)
}

// decisionInterval sets a tested row's interval (DeltaLoPct … DeltaHiPct,
// ShiftLo … ShiftHi) at confidence 1 − Threshold, and Confidence to
// that level.
func (c *comparer) decisionInterval(row *Row) {
	sh, ok := c.shifts[row.Key]
	if !ok || !(row.Threshold > 0) {
		return
	}
	row.Confidence = 1 - row.Threshold
	at := sh.At(row.Confidence)
	row.DeltaLoPct, row.DeltaHiPct = at.Lo, at.Hi
	row.ShiftLo, row.ShiftHi = at.AbsLo, at.AbsHi
}

// HalfWidthPct returns how far, in percent of the median, the confidence
// interval reaches from the median on its wider side.
func HalfWidthPct(s Summary) float64 {
	w := max(s.Hi-s.Median, s.Median-s.Lo)
	switch {
	case w == 0:
		return 0
	case s.Median == 0:
		return math.Inf(1)
	}
	return w / math.Abs(s.Median) * 100
}

// overall returns the report's verdict from its rows: regression if any
// primary row regressed, else improvement if any improved, else
// inconclusive if any is inconclusive (or none exists), else no-change.
// markHeadlines marks each benchmark's headline rows: its primary rows of
// phase headline, or, for a benchmark without that phase, every primary
// row of it.
func markHeadlines(rows []Row, headline string) {
	has := map[string]bool{}
	for _, row := range rows {
		if row.Primary && row.Phase == headline {
			has[row.Benchmark] = true
		}
	}
	for i := range rows {
		row := &rows[i]
		row.Headline = row.Primary && (row.Phase == headline || !has[row.Benchmark])
	}
}

// overall is the report's verdict: that of its headline rows (a
// regression in any of them, else an improvement in any, else not
// settled in any, else no change). A phase that moved while the headline
// did not decides nothing: the report names it as a trade-off
// (Report.TradeOff).
func overall(rows []Row) Verdict {
	seen := make(map[Verdict]bool)
	for _, row := range rows {
		if row.Headline {
			seen[row.Verdict] = true
		}
	}
	switch {
	case seen[VerdictRegression]:
		return VerdictRegression
	case seen[VerdictImprovement]:
		return VerdictImprovement
	case seen[VerdictInconclusive] || len(seen) == 0:
		return VerdictInconclusive
	}
	return VerdictNoChange
}

func firstRevision(runs []Run) string {
	for _, r := range runs {
		if r.Revision != "" {
			return r.Revision
		}
	}
	return ""
}

// Labeler returns how warnings name a series: by its phase when one
// benchmark is the only one with phases (the per-process rows that
// perfbot adds to every command have none), by benchmark and phase
// otherwise.
func Labeler(keys []Key) func(Key) string {
	phased := ""
	oneBenchmark := true
	for _, k := range keys {
		if k.Phase == "" {
			continue
		}
		if phased == "" {
			phased = k.Benchmark
		} else if k.Benchmark != phased {
			oneBenchmark = false
		}
	}
	return func(k Key) string {
		if oneBenchmark && k.Phase != "" {
			return k.Phase
		}
		if k.Phase == "" {
			return k.Benchmark
		}
		return k.Benchmark + "/phase=" + k.Phase
	}
}

// smallestP returns the smallest two-sided p-value row's test can give
// its runs: Mann-Whitney U's, or for a paired row the signed-rank test's,
// 2^(1−n) for n pairs that all move one way (n at most the smaller side).
func smallestP(row Row) float64 {
	if row.Paired {
		return math.Min(1, math.Pow(2, 1-float64(min(row.Base.N, row.Head.N))))
	}
	return stats.SmallestUP(row.Base.N, row.Head.N)
}
