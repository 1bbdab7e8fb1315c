package analysis

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/perfbot/perfbot/analysis/internal/fmtx"
	"github.com/perfbot/perfbot/analysis/stats"
	"golang.org/x/perf/benchmath"
)

// This file collects the caveats of a comparison into Report.Warnings,
// in a fixed order: runs, rows, history, drift, attribution, environment,
// GPU, then profiles (see explainProfiles in profdiff.go).

// listLimit is how many series a warning names before "and N more".
const listLimit = 6

// noisyFloorPct is the learned noise floor from which a series is called
// noisy in history.
const noisyFloorPct = 5.0

// unexplainedLimitPct is the share of total's change that the phases
// may leave unexplained before a warning says so.
const unexplainedLimitPct = 50.0

// gpuClockLimitPct is how far apart, in percent of base's, the sides'
// median SM clocks may be before a warning says so.
const gpuClockLimitPct = 3.0

func (c *comparer) warnf(format string, args ...any) {
	c.warnings = append(c.warnings, fmt.Sprintf(format, args...))
}

// warnRuns warns about failed runs and about runs that do not belong.
func (c *comparer) warnRuns(r *Report, base, head *side) {
	for _, s := range []*side{base, head} {
		switch {
		case s.runs.Total == 0:
			c.warnf("%s has no runs: nothing to compare", s.name)
		case s.runs.OK == 0:
			c.warnf("every %s run failed (%s): nothing to compare; a failed run is never counted as a regression", s.name, StatusCounts(s.runs))
		case s.withSamples == 0:
			c.warnf("none of the %d ok %s %s printed a benchmark result: nothing to compare", s.runs.OK, s.name, pluralWord(s.runs.OK, "run"))
		case s.runs.FailedRuns() > 0:
			c.warnf("%d of %s's %s failed (%s): their samples are excluded, and a failed run is never counted as a regression",
				s.runs.FailedRuns(), s.name, fmtx.Plural(s.runs.Total, "run"), StatusCounts(s.runs))
		}
		if n := s.runs.OK - s.withSamples; n > 0 && s.withSamples > 0 {
			c.warnf("%d ok %s %s printed no benchmark result", n, s.name, pluralWord(n, "run"))
		}
		if s.otherRev > 0 {
			c.warnf("%d ok %s %s report a revision other than %s: the sides are mixed up", s.otherRev, s.name, pluralWord(s.otherRev, "run"), fmtx.ShortRev(s.rev))
		}
		if s.nonFinite > 0 {
			c.warnf("%s: dropped %s that were NaN or infinite", s.name, fmtx.Plural(s.nonFinite, "value"))
		}
	}
	// One revision with two sets of arguments is an A/B comparison.
	if r.Base != "" && r.Base == r.Head && slices.Equal(r.BaseArgs, r.HeadArgs) {
		c.warnf("base and head are the same revision %s: an A/A comparison, so any change reported is noise", fmtx.ShortRev(r.Base))
	}
}

// warnRows warns about primary rows that could not be decided, series
// measured on one side only or by some runs only, and short or noisy
// history.
func (c *comparer) warnRows(r *Report, base, head *side, hist History) {
	var fewRuns, failed, noisy, spread, partial, shortHist, noisyHist []string
	primary, fewestPairs := 0, -1
	for _, row := range r.Phases {
		if !row.Primary {
			continue
		}
		primary++
		label := c.label(row.Key)
		switch row.Reason {
		case ReasonTooFewRuns:
			fewRuns = append(fewRuns, fmt.Sprintf("%s (base %d, head %d)", label, row.Base.N, row.Head.N))
		case ReasonRunsFailed:
			failed = append(failed, fmt.Sprintf("%s (base %d, head %d)", label, row.Base.N, row.Head.N))
		case ReasonSpread:
			spread = append(spread, fmt.Sprintf("%s (head's runs spread ×%s as much as base's, %s%s)", label, fmtx.FormatRatio(row.SpreadRatio), fmtx.FormatPct(row.Change()), formatInterval(row.DeltaLoPct, row.DeltaHiPct)))
		case ReasonTooNoisy:
			if _, blind := c.blind[row.Key]; blind {
				break // warnBlind says why, and what it takes
			}
			noisy = append(noisy, fmt.Sprintf("%s (%s%s vs floor %s)", label, fmtx.FormatPct(row.Change()), formatInterval(row.DeltaLoPct, row.DeltaHiPct), FormatFloor(row.Floor)))
		}
		for _, s := range []*side{base, head} {
			if n, of := len(s.series[row.Key]), s.byCommand[s.command[row.Key]]; n < of {
				partial = append(partial, fmt.Sprintf("%s (%d of %d %s runs)", label, n, of, s.name))
			}
		}
		if row.Floor.Source == FloorMinimum && row.Floor.Pairs < c.opts.MinHistory {
			shortHist = append(shortHist, label)
			if fewestPairs < 0 || row.Floor.Pairs < fewestPairs {
				fewestPairs = row.Floor.Pairs
			}
		}
		if row.Floor.Source == FloorFromHistory && row.Floor.Pct >= noisyFloorPct {
			noisyHist = append(noisyHist, fmt.Sprintf("%s (%s)", label, FormatFloor(row.Floor)))
		}
	}
	units := strings.Join(c.opts.PrimaryUnits, ", ")
	if primary == 0 {
		c.warnf("no series in %s was measured on both sides: nothing decides the verdict", units)
	}
	c.warnBlind(r)
	if len(fewRuns) > 0 {
		c.warnf("too few runs: %s; a series needs %d ok runs a side to be tested; add runs",
			fmtx.List(fewRuns, listLimit), c.opts.MinRuns)
	}
	if len(failed) > 0 {
		c.warnf("runs failed: %s would have had %d ok runs a side but for failed runs", fmtx.List(failed, listLimit), c.opts.MinRuns)
	}
	if len(noisy) > 0 {
		c.warnf("too noisy: %s; the change's interval, at the level this look needs, reaches beyond the noise floor without a change of floor size at its centre, so the runs neither show a change of floor size nor rule one out; add runs or quiet the machine (perfbot system lists what else runs)",
			fmtx.List(noisy, listLimit))
	}
	if len(spread) > 0 {
		c.warnf("spread changed: %s; the centre did not settle because head's runs vary differently from base's on the same machine (Mann-Whitney on each run's distance from its side's median), which is the change's doing, not the machine's: look at what the change does on some runs only",
			fmtx.List(spread, listLimit))
	}
	if len(partial) > 0 {
		c.warnf("measured by only some ok runs: %s", fmtx.List(partial, listLimit))
	}
	c.warnOneSided(r.OnlyBase, "base", "removed")
	c.warnOneSided(r.OnlyHead, "head", "new")
	switch {
	case len(shortHist) > 0 && len(hist) == 0:
		c.warnf("no baseline history yet: every noise floor is the %.1f%% minimum (pushes to the default branch record history)", c.opts.MinChangePct)
	case len(shortHist) > 0:
		c.warnf("history too short to learn a noise floor for %s (a floor needs %d consecutive baseline pairs; the shortest has %d): they use the %.1f%% minimum",
			fmtx.List(shortHist, listLimit), c.opts.MinHistory, fewestPairs, c.opts.MinChangePct)
	}
	if len(noisyHist) > 0 {
		c.warnf("noisy in history: %s; smaller changes are not reported for these series", fmtx.List(noisyHist, listLimit))
	}
}

// warnOneSided names the primary series that only one side measured and
// counts the others.
func (c *comparer) warnOneSided(keys []Key, sideName, what string) {
	var primary []string
	others := 0
	for _, k := range keys {
		if c.opts.isPrimary(k.Unit) {
			primary = append(primary, c.label(k)+" "+k.Unit)
		} else {
			others++
		}
	}
	if others > 0 {
		primary = append(primary, fmtx.Plural(others, "series")+" in other units")
	}
	if len(primary) > 0 {
		c.warnf("only in %s (%s, not compared): %s", sideName, what, fmtx.List(primary, listLimit))
	}
}

// warnDrift looks for a trend within each side's runs: the first half of
// a side's runs against its second half, for every primary series with at
// least 8 runs on that side (4 a half, the fewest that Mann-Whitney U can
// separate at α = 0.05). The tests are Holm-corrected together, and a
// drift counts only when it also reaches the series' floor. Interleaving
// base and head runs keeps drift from biasing the comparison, but it adds
// noise and usually means thermal throttling or background load.
func (c *comparer) warnDrift(rows []Row, base, head *side) {
	type check struct {
		row  *Row
		side string
		pct  float64
	}
	var checks []check
	var ps []float64
	th := c.opts.thresholds()
	for i := range rows {
		row := &rows[i]
		if !row.Primary {
			continue
		}
		for _, s := range []*side{base, head} {
			v := s.series[row.Key]
			if len(v) < 8 {
				continue
			}
			first := benchmath.NewSample(slices.Clone(v[:len(v)/2]), th)
			second := benchmath.NewSample(slices.Clone(v[len(v)/2:]), th)
			checks = append(checks, check{row, s.name, deltaPct(stats.Median(first.Values), stats.Median(second.Values))})
			ps = append(ps, benchmath.AssumeNothing.Compare(first, second).P)
		}
	}
	var drifted []check
	for i, p := range stats.Holm(ps) {
		ch := checks[i]
		if p < c.opts.Alpha && (math.Abs(ch.pct) >= ch.row.Floor.Pct || math.IsNaN(ch.pct)) {
			drifted = append(drifted, ch)
		}
	}
	if len(drifted) == 0 {
		return
	}
	// One warning for what is usually one event on the machine: each
	// series it touched, with the drift of each side.
	var names []string
	bySeries := make(map[string][]string)
	for _, ch := range drifted {
		name := c.label(ch.row.Key)
		if _, ok := bySeries[name]; !ok {
			names = append(names, name)
		}
		bySeries[name] = append(bySeries[name], fmt.Sprintf("%s (%s)", fmtx.FormatPct(ch.pct), ch.side))
	}
	items := make([]string, len(names))
	for i, name := range names {
		items[i] = name + " " + strings.Join(bySeries[name], " and ")
	}
	c.warnf("the machine drifted between the first and the second half of a side's runs: %s (Holm-corrected, beyond their floors); interleaving keeps drift off the comparison but widens its intervals: look for thermal throttling or background load",
		fmtx.List(items, listLimit))
}

// warnAttribution warns when the phases do not explain a change in total,
// or when phases changed although total did not.
func (c *comparer) warnAttribution(attr []Attribution) {
	for _, a := range attr {
		name := c.label(Key{Benchmark: a.Benchmark, Phase: "total"})
		changed := a.Verdict == VerdictRegression || a.Verdict == VerdictImprovement
		if changed && a.UnexplainedSharePct > unexplainedLimitPct {
			c.warnf("%s: the phases that changed significantly account for only %s of total's change (%s); the rest is in phases that moved within their noise or outside the measured phases",
				name, fmtx.FormatShare(100-a.UnexplainedSharePct), fmtx.FormatDelta(a.Delta, a.Unit))
		}
		if !changed && len(a.ExplainedBy) > 0 {
			c.warnf("%s did not change significantly although %s did: other phases may compensate, or total is noisier than its parts",
				name, fmtx.List(a.ExplainedBy, listLimit))
		}
	}
}

// warnEnv records which environment keys differ and warns about them.
func (c *comparer) warnEnv(r *Report) {
	if len(r.BaseEnv) == 0 && len(r.HeadEnv) == 0 {
		return
	}
	if len(r.BaseEnv) == 0 || len(r.HeadEnv) == 0 {
		missing := "base"
		if len(r.HeadEnv) == 0 {
			missing = "head"
		}
		c.warnf("no environment recorded for %s: cannot check that both sides ran on the same machine", missing)
		return
	}
	var diffs []string
	for _, k := range r.EnvKeys() {
		b, inBase := r.BaseEnv[k]
		h, inHead := r.HeadEnv[k]
		if inBase && inHead && b == h {
			continue
		}
		r.EnvDiffers = append(r.EnvDiffers, k)
		diffs = append(diffs, fmt.Sprintf("%s (base %s, head %s)", k, envValue(b, inBase), envValue(h, inHead)))
	}
	if len(diffs) > 0 {
		c.warnf("base and head ran in different environments: %s; differences may come from the machine, not the change", fmtx.List(diffs, listLimit))
	}
}

// warnGPU warns, from the GPU telemetry samples, about GPU throttling
// during any ok run of a side (GPUThrottledFractionUnit above 0 for any
// device) and about a difference of more than gpuClockLimitPct between
// the sides' median SM clocks (GPUSMClockMeanUnit, series by series).
func (c *comparer) warnGPU(in Input, base, head *side) {
	for _, s := range []struct {
		name string
		runs []Run
	}{{base.name, in.Base}, {head.name, in.Head}} {
		throttled, measured, worst := gpuThrottling(s.runs)
		if throttled > 0 {
			c.warnf("GPU throttled during %d of %s (%s), in up to %s of a run's readings: timings on that side may be slowed by power or thermal limits",
				throttled, fmtx.Plural(measured, "run"), s.name, fmtx.FormatShare(100*worst))
		}
	}
	var keys []Key
	for _, k := range c.keys {
		if k.Unit == GPUSMClockMeanUnit && base.series[k] != nil && head.series[k] != nil {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		b, h := stats.MedianOf(base.series[k]), stats.MedianOf(head.series[k])
		if !(math.Abs(deltaPct(b, h)) > gpuClockLimitPct) {
			continue
		}
		var which string
		if len(keys) > 1 {
			which = c.label(k) + ": "
		}
		c.warnf("%sbase ran at a median SM clock of %.0f MHz, head at %.0f MHz: a clock difference this large can explain a change in GPU phases",
			which, b, h)
	}
}

// gpuIdlePct is the mean utilization (GPUUtilMeanUnit) at or below which
// a run's GPU counts as idle.
const gpuIdlePct = 1.0

// warnIdleGPU warns about a GPU energy row called a regression or an
// improvement while that GPU was idle in every ok run of both sides (a
// CPU-backend benchmark on a GPU host). An idle GPU draws its idle power
// for as long as the process runs, so the energy follows the run's
// length: the row is real, but it is not GPU work.
func (c *comparer) warnIdleGPU(r *Report, base, head *side) {
	for _, row := range r.Phases {
		if row.Unit != GPUEnergyUnit || row.Phase != "" || !significantRow(row) {
			continue
		}
		util := Key{Benchmark: row.Benchmark, Unit: GPUUtilMeanUnit}
		b, h := base.series[util], head.series[util]
		if len(b) == 0 || len(h) == 0 || slices.Max(b) > gpuIdlePct || slices.Max(h) > gpuIdlePct {
			continue
		}
		c.warnf("GPU energy per run%s %s while the GPU was idle (utilization at most %.0f%% in every run of both sides): an idle GPU draws power for as long as the process runs, so this follows the run's length, not GPU work",
			telemetryOf(row.Benchmark), fmtx.FormatPct(row.Change()), gpuIdlePct)
	}
}

// telemetryOf names the source of a telemetry series for a sentence: ""
// for the only command's process ("process"), " of NAME" for a named
// command's, and the device as " (gpu=N)" where the series is one GPU's.
func telemetryOf(benchmark string) string {
	proc, dev, several := strings.Cut(benchmark, "/gpu=")
	var out string
	if name, ok := strings.CutPrefix(proc, ProcessBenchmark+"/benchmark="); ok {
		out = " of " + name
	}
	if several {
		out += " (gpu=" + dev + ")"
	}
	return out
}

// gpuThrottling counts the ok runs that measured GPUThrottledFractionUnit
// and those in which it was above 0 for any device, and returns the
// largest fraction.
func gpuThrottling(runs []Run) (throttled, measured int, worst float64) {
	for _, run := range runs {
		if run.Status != StatusOK {
			continue
		}
		seen, hot := false, false
		for _, smp := range run.Samples {
			if smp.Unit != GPUThrottledFractionUnit || !stats.Finite(smp.Value) {
				continue
			}
			seen = true
			if smp.Value > 0 {
				hot = true
				worst = max(worst, smp.Value)
			}
		}
		if seen {
			measured++
		}
		if hot {
			throttled++
		}
	}
	return throttled, measured, worst
}

func envValue(v string, ok bool) string {
	if !ok {
		return "unset"
	}
	return fmt.Sprintf("%q", v)
}

// pluralWord returns noun with an s unless n is 1.
func pluralWord(n int, noun string) string {
	if n == 1 {
		return noun
	}
	return noun + "s"
}

// warnBlind warns about primary rows that no change, however large, could
// have made significant: too few runs for the threshold this look needed
// (α shared by the rows and the looks). Their MDE is infinite, so the
// JSON has none; the warning says how many runs it would take.
func (c *comparer) warnBlind(r *Report) {
	var rows []string
	need, worst := 0, 1.0
	for _, row := range r.Phases {
		th, ok := c.blind[row.Key]
		if !ok {
			continue
		}
		rows = append(rows, fmt.Sprintf("%s (base %d, head %d runs)", c.label(row.Key), row.Base.N, row.Head.N))
		need = max(need, stats.RunsToReach(th, max(row.Base.N, row.Head.N)))
		worst = min(worst, th)
	}
	if len(rows) == 0 {
		return
	}
	c.warnf("no change of any size could be called in %s: Mann-Whitney's smallest p with these runs is above the %.2g a change needed at this look (α %g shared by the rows and the looks); it takes %d runs a side, so raise max_count (and count) to at least that",
		fmtx.List(rows, listLimit), worst, c.opts.Alpha, need)
}
