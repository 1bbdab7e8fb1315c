package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/analysis/changepoint"
	"github.com/perfbot/perfbot/analysis/render"
	"github.com/perfbot/perfbot/chart"
	"github.com/perfbot/perfbot/runner/workspace"
	"github.com/perfbot/perfbot/store"
)

var trendFormats = []string{"table", "csv", "json", chart.SVG, chart.PNG}

// trendFlags are perfbot trend's flags.
type trendFlags struct {
	common
	benchmark, phase, unit string
	since                  string
	format, out            string
	gitDir                 string
	machine                string
	alpha, minChange       float64
	minSegment             int
	size                   string
}

func newTrendCommand() *cobra.Command {
	var f trendFlags
	cmd := &cobra.Command{
		Use:   "trend",
		Short: "Show one benchmark phase's history: per-commit medians with intervals, and change points",
		Long: `trend charts the stored baseline runs (perfbot run, pushes to the default
branch) of one benchmark, phase and unit: per commit, the median of its runs'
values with its 95% interval (benchmath, as compare computes them), and the
change points of the medians (E-Divisive means with a permutation test, see
analysis/changepoint), each marked on the commit that starts the new
segment with its p-value and change.

Order: with --git DIR (a clone of the repository), commits are in the
first-parent history of DIR's HEAD; stored commits that are not on it are
left out and counted in a note. Without --git, commits are in the order of
their first runs, which is the branch's order only if they were measured in
that order; the output says which order it used.

Machines: runs of different machines are never mixed (a different host
would show as a change point). --machine picks one; by default trend charts
the machine with the most runs in the window and names the others.

--repo is the repository as run and compare stored it: a local clone's
directory (resolved to its top directory, as they store it) or a clone URL.
Nothing is fetched. --since takes a duration back from now (36h, 90d, 12w),
a date (2026-01-31, midnight UTC) or all.

Formats: table (aligned text), csv and json (documented, stable fields; see
README.md), svg and png (a chart: medians, interval bars, segment medians,
change points as red vertical lines). svg and png go to --out FILE, or to
standard output when it is not a terminal. --out writes the whole file or,
on any error, nothing.

Exit status (perfbot --help has the table): 0 done; 2 bad input: a bad
flag, no database at --db, no data for the repository, benchmark, phase,
unit, machine or window (the message says what is stored), --git not a
repository; 4 could not run (the database unreachable, git, writing the
output). trend only reads: it never creates a database.`,
		Example: `  perfbot trend --benchmark Prove/circuit=sha256/constraints=65536/backend=cpu --phase total
  perfbot trend --repo ../prover --git ../prover --benchmark Prove/circuit=sha256/constraints=65536/backend=gpu \
      --phase msm_h --since 12w --format svg --out msm_h.svg
  perfbot trend --repo https://github.com/o/prover.git --benchmark … --phase ntt --format csv --machine gpu-2`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runTrend(cmd, &f) },
	}
	f.register(cmd, true)
	fl := cmd.Flags()
	fl.StringVar(&f.benchmark, "benchmark", "", "the benchmark `NAME` without the Benchmark prefix and phase, as perfbot export prints it (required; a full name with /phase=P also sets --phase)")
	fl.StringVar(&f.phase, "phase", "", "the `PHASE`, e.g. total, synthesis, msm_h (required; '' for a benchmark without phases)")
	fl.StringVar(&f.unit, "unit", "sec/op", "the `UNIT`")
	fl.StringVar(&f.since, "since", "90d", "the window: runs since a duration ago (36h, 90d, 12w), a `DATE` (YYYY-MM-DD) or all")
	fl.StringVar(&f.format, "format", "table", "output format: "+strings.Join(trendFormats, ", "))
	fl.StringVar(&f.out, "out", "", "write to `FILE` instead of standard output (written whole or not at all)")
	fl.StringVar(&f.gitDir, "git", "", "order commits by the first-parent history of HEAD in this git clone `DIR` (default: by first run)")
	fl.StringVar(&f.machine, "machine", "", "chart the runs of machine `NAME` (default: the machine with the most runs in the window)")
	fl.Float64Var(&f.alpha, "alpha", 0, "significance level of each change point (0: the detector's default, 0.01)")
	fl.Float64Var(&f.minChange, "min-change", 0, "drop change points smaller than this `FRACTION` of the median (0.02 is 2%; 0: keep every significant one)")
	fl.IntVar(&f.minSegment, "min-segment", 0, "fewest commits on each side of a change point (0: the detector's default, 5)")
	fl.StringVar(&f.size, "size", "", fmt.Sprintf("chart size in pixels, `WxH` (svg and png; default %dx%d)", chart.DefaultWidth, chart.DefaultHeight))
	return cmd
}

// runTrend checks every flag before it reads anything, reads the runs,
// and renders the whole output before it writes any of it.
func runTrend(cmd *cobra.Command, f *trendFlags) error {
	ctx := cmd.Context()
	key, err := f.key(cmd)
	if err != nil {
		return err
	}
	if err := oneOfFlag(cmd, "format", f.format, trendFormats); err != nil {
		return err
	}
	since, err := parseSince(f.since, time.Now())
	if err != nil {
		return usagef(cmd, "--since %q: %v", f.since, err)
	}
	cpOpts, err := f.detectorOptions(cmd)
	if err != nil {
		return err
	}
	size, err := f.chartSize(cmd)
	if err != nil {
		return err
	}
	isChart := f.format == chart.SVG || f.format == chart.PNG
	if isChart && f.out == "" && isTerminal(cmd) {
		return usagef(cmd, "--format %s writes an image: give --out FILE, or redirect standard output to a file or a program", f.format)
	}

	var history []analysis.HistoryCommit
	if f.gitDir != "" {
		if history, err = firstParentHistory(ctx, cmd, f); err != nil {
			return err
		}
	}

	log := f.logger(cmd)
	db, err := f.openExisting(ctx, cmd, log)
	if err != nil {
		return err
	}
	defer db.Close()
	repo := storedRepoName(f.repo)
	points, err := db.Trend(ctx, repo, key, queryTime(since))
	if err != nil {
		return err
	}
	if len(points) == 0 {
		return noTrendData(ctx, cmd, db, repo, key, since, f.since)
	}
	runs := make([]analysis.TrendRun, len(points))
	for i, p := range points {
		runs[i] = analysis.TrendRun{Commit: p.Commit, Machine: p.Machine, Started: p.StartedAt, Value: p.Value}
	}
	t, err := analysis.NewTrend(analysis.TrendInput{
		Repo: repo, Key: key, Since: since, Runs: runs, Machine: f.machine, History: history,
	}, analysis.TrendOptions{ChangePoints: cpOpts})
	switch {
	case errors.Is(err, analysis.ErrUnknownMachine):
		return usagef(cmd, "--machine: %v; pass one of those, or leave --machine out to chart the one with the most runs", err)
	case errors.Is(err, analysis.ErrNotOnHistory):
		return usagef(cmd, "--git %s: %v; give a clone of %s with its default branch checked out (and fetched), or leave --git out to order commits by their runs",
			f.gitDir, err, repo)
	case err != nil:
		return err
	}

	var buf bytes.Buffer
	switch f.format {
	case "table":
		err = render.RenderTrendText(&buf, t)
	case "csv":
		err = render.RenderTrendCSV(&buf, t)
	case "json":
		err = render.RenderTrendJSON(&buf, t)
	default:
		err = chart.Trend(&buf, t, chart.Options{Format: f.format, Width: size[0], Height: size[1]})
	}
	if err != nil {
		return err
	}
	if f.out == "" {
		_, err := cmd.OutOrStdout().Write(buf.Bytes())
		return err
	}
	af, commit, err := createAtomic(f.out)
	if err != nil {
		return err
	}
	// CreateTemp made the file 0600; an output file is for sharing.
	if err := af.Chmod(0o644); err != nil {
		af.abort()
		return fmt.Errorf("write %s: %w", f.out, err)
	}
	if _, err := af.Write(buf.Bytes()); err != nil {
		af.abort()
		return fmt.Errorf("write %s: %w", f.out, err)
	}
	return commit()
}

// key returns the series the flags name. --benchmark may be a full name
// as benchstat and perfbot export print it ("BenchmarkProve/x=1/phase=
// total"): the Benchmark prefix is dropped, and a phase=… part sets the
// phase unless --phase does.
func (f *trendFlags) key(cmd *cobra.Command) (analysis.Key, error) {
	if f.benchmark == "" {
		return analysis.Key{}, usagef(cmd, "--benchmark is required: the benchmark's name without the Benchmark prefix and the phase, "+
			"as perfbot export prints it, e.g. --benchmark Prove/circuit=sha256/constraints=65536/backend=cpu")
	}
	name := strings.TrimPrefix(f.benchmark, "Benchmark")
	bench, phase := name, f.phase
	if i := strings.Index(name, "/phase="); i >= 0 {
		bench, phase = analysis.SplitName([]byte(name))
		if cmd.Flags().Changed("phase") && f.phase != phase {
			return analysis.Key{}, usagef(cmd, "--benchmark %s names phase %q and --phase says %q; give the phase once", f.benchmark, phase, f.phase)
		}
	} else if !cmd.Flags().Changed("phase") {
		return analysis.Key{}, usagef(cmd, "--phase is required: e.g. --phase total (the whole proof) or --phase msm_h; --phase '' for a benchmark without phases")
	}
	if f.unit == "" {
		return analysis.Key{}, usagef(cmd, "--unit is empty: give the unit, e.g. sec/op (the default) or instructions/op")
	}
	return analysis.Key{Benchmark: bench, Phase: phase, Unit: f.unit}, nil
}

// minAlpha is the smallest --alpha: it takes 2/alpha − 1 permutations a
// test (19,999 here), each costing a pass over the series.
const minAlpha = 0.0001

// detectorOptions checks --alpha, --min-change and --min-segment and
// returns them as the change-point detector's options (0: its defaults).
func (f *trendFlags) detectorOptions(cmd *cobra.Command) (changepoint.Options, error) {
	switch {
	case f.alpha != 0 && !(f.alpha >= minAlpha && f.alpha < 1):
		return changepoint.Options{}, usagef(cmd, "--alpha %v: want a significance level from %v to below 1, such as 0.01 (the default) or 0.05", f.alpha, minAlpha)
	case f.minChange < 0 || math.IsNaN(f.minChange) || math.IsInf(f.minChange, 0):
		return changepoint.Options{}, usagef(cmd, "--min-change %v: want a fraction of 0 or more, such as 0.02 for 2%%", f.minChange)
	case f.minChange >= 1:
		return changepoint.Options{}, usagef(cmd, "--min-change %v: that is %v%%; a fraction is wanted, such as 0.02 for 2%%", f.minChange, f.minChange*100)
	case f.minSegment < 0 || f.minSegment == 1:
		return changepoint.Options{}, usagef(cmd, "--min-segment %d: want at least 2 commits a side (or 0 for the default, 5)", f.minSegment)
	}
	return changepoint.Options{Alpha: f.alpha, MinChange: f.minChange, MinSegment: f.minSegment}, nil
}

var sizeRE = regexp.MustCompile(`^([0-9]+)[xX×]([0-9]+)$`)

// chartSize reads --size, which only charts take.
func (f *trendFlags) chartSize(cmd *cobra.Command) ([2]int, error) {
	if f.size == "" {
		return [2]int{}, nil
	}
	if f.format != chart.SVG && f.format != chart.PNG {
		return [2]int{}, usagef(cmd, "--size sets a chart's size: use it with --format svg or png, not %s", f.format)
	}
	m := sizeRE.FindStringSubmatch(f.size)
	if m == nil {
		return [2]int{}, usagef(cmd, "--size %q: want WIDTHxHEIGHT in pixels, such as 1200x600", f.size)
	}
	w, _ := strconv.Atoi(m[1])
	h, _ := strconv.Atoi(m[2])
	if w < chart.MinSize || h < chart.MinSize || w > chart.MaxSize || h > chart.MaxSize {
		return [2]int{}, usagef(cmd, "--size %q: want %d to %d pixels a side", f.size, chart.MinSize, chart.MaxSize)
	}
	return [2]int{w, h}, nil
}

// isTerminal reports whether the command's standard output is a terminal.
func isTerminal(cmd *cobra.Command) bool {
	f, ok := cmd.OutOrStdout().(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

// sinceRE matches a duration in hours, days or weeks: "36h", "90d", "12w".
var sinceRE = regexp.MustCompile(`^([0-9]+(?:\.[0-9]+)?)([hdw])$`)

// parseSince reads --since relative to now: "all" (every run); a
// duration back from now in hours, days or weeks ("36h", "90d", "12w")
// or as Go writes durations ("90m", "1h30m"); or a date, YYYY-MM-DD
// (midnight UTC), or an RFC 3339 time.
func parseSince(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "all" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	var d time.Duration
	if m := sinceRE.FindStringSubmatch(s); m != nil {
		n, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			return time.Time{}, err
		}
		unit := map[string]time.Duration{"h": time.Hour, "d": 24 * time.Hour, "w": 7 * 24 * time.Hour}[m[2]]
		if n*float64(unit) > float64(math.MaxInt64) {
			return time.Time{}, errors.New("too long ago; give a date or all")
		}
		d = time.Duration(n * float64(unit))
	} else if gd, err := time.ParseDuration(s); err == nil {
		d = gd
	} else {
		return time.Time{}, errors.New("want a duration back from now such as 36h, 90d or 12w, a date such as 2026-01-31, or all")
	}
	if d <= 0 {
		return time.Time{}, errors.New("want a positive duration, such as 90d")
	}
	return now.Add(-d), nil
}

// firstParentHistory reads the first-parent history of HEAD in --git's
// repository.
func firstParentHistory(ctx context.Context, cmd *cobra.Command, f *trendFlags) ([]analysis.HistoryCommit, error) {
	if isCloneURL(f.gitDir) {
		return nil, usagef(cmd, "--git %s: want the directory of a local clone (trend fetches nothing); clone it first", f.gitDir)
	}
	dir, err := f.dataDirectory()
	if err != nil {
		return nil, err
	}
	ws, err := openWorkspace(ctx, f.gitDir, dir)
	if errors.Is(err, workspace.ErrNotRepository) {
		why := "git finds no repository there"
		if _, serr := os.Stat(f.gitDir); serr != nil {
			why = "no such directory"
		}
		return nil, usagef(cmd, "--git %s is not a git repository (%s); give the directory of a local clone of the repository, "+
			"with the branch to chart checked out", f.gitDir, why)
	}
	if err != nil {
		return nil, fmt.Errorf("--git: %w", err)
	}
	cs, err := ws.FirstParentHistory(ctx, "HEAD")
	if errors.Is(err, workspace.ErrUnknownRevision) {
		return nil, usagef(cmd, "--git %s: %v (a repository without commits?)", f.gitDir, err)
	}
	if err != nil {
		return nil, fmt.Errorf("--git %s: %w", f.gitDir, err)
	}
	history := make([]analysis.HistoryCommit, len(cs))
	for i, c := range cs {
		history[i] = analysis.HistoryCommit{SHA: c.SHA, Subject: c.Subject}
	}
	return history, nil
}

// storedRepoName returns the name the store knows a repository by, as
// run and compare store it: a local directory as the absolute path of
// its work tree's top directory (the nearest directory up that holds a
// .git, symbolic links resolved; the directory itself when none does, as
// for a bare repository); anything else (a clone URL, a path that does
// not exist) as given. It runs no git and fetches nothing.
func storedRepoName(repo string) string {
	if isCloneURL(repo) {
		return repo
	}
	abs, err := filepath.Abs(repo)
	if err != nil {
		return repo
	}
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		return repo
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	for d := abs; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return abs
		}
	}
}

// queryTime is since for store.Trend: the zero time (all runs) goes as
// the Unix epoch, before any run, because the store writes a zero time
// as NULL, which no run's start time is at or after.
func queryTime(since time.Time) time.Time {
	if since.IsZero() {
		return time.Unix(0, 0).UTC()
	}
	return since
}

// isCloneURL reports whether s is a clone URL rather than a path, as git
// decides: it has a scheme (https://, file://) or is scp-like
// (git@host:owner/repo.git, a colon before any slash).
func isCloneURL(s string) bool {
	if strings.Contains(s, "://") {
		return true
	}
	colon, slash := strings.IndexByte(s, ':'), strings.IndexByte(s, '/')
	return colon > 0 && (slash < 0 || colon < slash)
}

// noTrendData explains why a trend has no runs: no runs of the
// repository at all, no such benchmark, phase or unit (listing what the
// newest runs measured), or none in the window (naming the newest run).
// All are bad input.
func noTrendData(ctx context.Context, cmd *cobra.Command, db *store.DB, repo string, key analysis.Key, since time.Time, sinceFlag string) error {
	if !since.IsZero() {
		all, err := db.Trend(ctx, repo, key, queryTime(time.Time{}))
		if err != nil {
			return err
		}
		if n := len(all); n > 0 {
			newest := all[n-1].StartedAt.UTC()
			return usagef(cmd, "no baseline runs of %s in %s since %s (--since %s); the newest of its %s is from %s: "+
				"widen the window, e.g. --since %s or --since all",
				key, repo, formatWhen(since), sinceFlag, pluralRuns(n), formatWhen(newest),
				newest.Add(-30*24*time.Hour).Format(time.DateOnly))
		}
	}
	// What the newest runs measured: enough to name what exists.
	hist, err := db.History(ctx, store.HistoryQuery{Repo: repo, Limit: 200})
	if err != nil {
		return err
	}
	if len(hist) == 0 {
		return usagef(cmd, "no baseline runs of repository %q are stored in %s: check --repo (a clone URL as run and compare were given it, "+
			"or a local clone's directory; perfbot stores it under its top directory's absolute path) and --db; "+
			"perfbot run --repo %s stores baseline runs", repo, db, repo)
	}
	var benchmarks, phases, units []string
	for k := range hist {
		benchmarks = appendNew(benchmarks, k.Benchmark)
		if k.Benchmark == key.Benchmark {
			phases = appendNew(phases, k.Phase)
			if k.Phase == key.Phase {
				units = appendNew(units, k.Unit)
			}
		}
	}
	switch {
	case len(phases) == 0:
		return usagef(cmd, "no baseline runs of benchmark %q in %s; its newest runs measured %s", key.Benchmark, repo, quoteList(benchmarks))
	case len(units) == 0:
		return usagef(cmd, "benchmark %s in %s has no phase %q; its phases are %s", key.Benchmark, repo, key.Phase, quoteList(phases))
	default:
		return usagef(cmd, "no %s values of %s/phase=%s in %s; its units are %s: pick one with --unit",
			key.Unit, key.Benchmark, key.Phase, repo, quoteList(units))
	}
}

// formatWhen formats a time in UTC, as a date alone at midnight.
func formatWhen(t time.Time) string {
	t = t.UTC()
	if t.Equal(t.Truncate(24 * time.Hour)) {
		return t.Format(time.DateOnly)
	}
	return t.Format("2006-01-02 15:04 UTC")
}

func appendNew(xs []string, x string) []string {
	if slices.Contains(xs, x) {
		return xs
	}
	return append(xs, x)
}

// quoteList sorts and quotes names for a message: "total", "ntt".
func quoteList(xs []string) string {
	slices.Sort(xs)
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = strconv.Quote(x)
	}
	const limit = 20
	if len(q) > limit {
		return strings.Join(q[:limit], ", ") + fmt.Sprintf(" and %d more", len(q)-limit)
	}
	return strings.Join(q, ", ")
}

func pluralRuns(n int) string {
	if n == 1 {
		return "1 run"
	}
	return strconv.Itoa(n) + " runs"
}
