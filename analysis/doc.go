// Package analysis compares samples of a base and a head revision and
// explains the difference, phase by phase.
//
// In flow the runs of both sides (a Run per execution of a revision's
// benchmark, with its Status and Samples), the baseline History of every
// series and, optionally, each side's Env. Compare reduces every ok run to
// one value per series (Key: benchmark, phase, unit), then for every
// series measured on both sides:
//
//   - summarizes each side with the median and its confidence interval and
//     tests the difference with Mann-Whitney U, through
//     golang.org/x/perf/benchmath.AssumeNothing: the same numbers benchstat
//     prints;
//   - corrects the p-values with Holm's method: the rows in the primary
//     units (Options.PrimaryUnits, "sec/op" by default) form one family,
//     since together they decide the verdict; every other unit is a family
//     of its own;
//   - compares |Δ%| with the series' noise floor, learned from history by
//     rustc-perf's rule (NoiseFloor) and never below Options.MinChangePct;
//   - gives a verdict: regression or improvement (significant and above the
//     floor; HigherIsBetter says which way is worse), no-change, or
//     inconclusive with a reason (too few runs, too noisy, runs failed).
//
// Where runs carry CPU profiles (Run.Profiles, samples labelled
// phase=NAME), every regressed sec/op row of a CPU phase is explained by a
// ProfileDiff: each side's profiles merged, the phase's samples kept, and
// the functions whose flat and cumulative shares grew the most, each
// only when its samples show it grew beyond sampling noise (Fisher's
// exact test, Holm-corrected; see ProfileDiff). A phase counts as a CPU phase when both sides' profiles
// hold enough of its samples; GPU phases hold few. Every regressed sec/op
// row of a phase is also explained in one line (Explanation, see
// Explain): the phase's counters from its other rows, each with its own
// significance, IPC and the cache-miss rate derived from them, and the
// profile diff's top function where there is one; for a phase that ran
// on the GPU (its line carries kernel steps, units "<step>-sec/op"), the
// steps whose device time changed significantly, largest first, and the
// GPU telemetry of the runs that measured it that changed, or throttled.
//
// When a phase regressed and the runs of the benchmark command that
// measured it carry heap profiles (Profile kind ProfileMem), a
// MemoryDiff lists the allocation sites whose bytes and objects per run
// grew most, each only when the sampled allocations show it grew beyond
// sampling noise (see MemoryDiff). Go's heap profiles carry no labels, so it covers whole runs,
// not phases.
//
// Runs under valgrind's callgrind (Run.Tool ToolCallgrind) are kept apart
// from the timed runs: their simulated instruction counts
// (SimInstructionsUnit per phase, SimProcessInstructionsUnit per process)
// repeat exactly, so one run a side is compared without a test. Such a
// row is marked Simulated, its change is exact, and it is a regression
// or an improvement only from SimFloorPct and SimFloorInstructions; it is
// never primary, so it decides nothing on its own. A regressed phase's
// explanation leads with its simulated count, and Report.Simulations
// gives each command's slowdown under callgrind against its timed runs.
//
// Out flows a Report: the rows, the overall verdict, the attribution of the
// change in each benchmark's total phase to its phases, the profile diffs,
// the explanations, run counts and failures, and Warnings, the caveats a
// reader must see (among them GPU throttling and a difference in the
// sides' SM clocks, from the GPU telemetry samples GPUThrottledFractionUnit
// and GPUSMClockMeanUnit, and profiles that did not parse).
// analysis/render's RenderMarkdown (the PR comment), RenderText (a
// terminal) and RenderJSON print it.
//
// NewTrend is the other flow: the stored baseline runs of one series
// (TrendRun: commit, machine, start, value), optionally a branch's
// first-parent history, in; a Trend out: per commit, in branch order, the
// median of its runs and its interval (as Compare summarizes a side), and
// the change points of the medians (analysis/changepoint). analysis/render's
// RenderTrendText, RenderTrendCSV and RenderTrendJSON print it.
//
// Bisection is bisect's strategy: which commit of a range to measure next
// (binary search, stepping around skipped commits as git bisect does) and,
// through Classify, whether a measured commit's values look like the good
// end's or the bad end's (CompareSeries: Compare's test, floor and
// verdicts for one series). A BisectReport, assembled by the runner, is
// printed by analysis/render's RenderBisectMarkdown, RenderBisectText and
// RenderBisectJSON.
//
// The numbers computed from samples alone (the Hodges–Lehmann shift and
// its rank-test intervals, the exact tests, Holm's correction, the
// sequential design's boundaries) are package analysis/stats, which
// imports nothing of this package; this package builds the Report on them.
//
// Rendering is package analysis/render, which imports this package and
// only formats; this package must never import it. The formatting of
// numbers that both the explanations and warnings here and the renderings
// share is analysis/internal/fmtx. The tests that render are this
// package's external tests (package analysis_test).
//
// The package does no I/O: it never opens a file, a socket or a database
// and never reads the clock or the environment. Profiles arrive as bytes
// and are parsed with github.com/google/pprof/profile.
package analysis
