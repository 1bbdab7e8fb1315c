package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/analysis/render"
	"github.com/perfbot/perfbot/runner"
	"github.com/perfbot/perfbot/store"
)

// A statusError ends a command that ran to completion with a non-zero
// exit code and a one-line reason.
type statusError struct {
	code int
	msg  string
}

func (e *statusError) Error() string { return e.msg }

var formats = []string{"text", "markdown", "json"}

func newCompareCommand() *cobra.Command {
	var (
		c                  common
		base, head         string
		baseArgs, headArgs string
		count, maxCount    int
		timeout            time.Duration
		format             string
		failOnReg          bool
		verbose            bool
		seed               string
	)
	cmd := &cobra.Command{
		Use:   "compare",
		Short: "Build two revisions, run their benchmarks interleaved, store every run and compare",
		Long: `compare builds the base and the head revision of a repository, runs each
benchmark of the base revision's .perfbot.yml (or the default, which runs this
repository's prover) warm-ups first, then base and head interleaved, stores
every run in the database and compares head against base per benchmark,
phase and unit: Mann-Whitney U (as benchstat), Holm correction, a noise
floor learned from the stored baseline history, and one estimate of each
change with its own interval (Hodges–Lehmann), which the verdict, the
values shown beside it and the attribution all use: "no change" means the
interval lies within the floor. The text report fits a screen (the
verdict, the primary unit's table and the explanation lines); --verbose,
--format markdown and --format json hold everything. Each round runs the sides in the order
.perfbot.yml's order: gives (random by default; --seed replays one).
Inconclusive comparisons get more runs, in batches, up to --max-count;
every look tests at its share of α (a group-sequential design), so adding
runs does not raise the false-alarm rate.

--base-args and --head-args compare variants: their arguments are appended
to every benchmark's on that side (split as a shell would, with quotes; no
shell runs them). With --head left out, head is base: one build, two flag
sets, A B A B. Each run is stored with its side's arguments as part of its
config (and config hash), so variants never share a series; the report
names each side as its revision with its arguments, and perfbot export
--args selects a variant's runs.

Exit status (perfbot --help has the table): 0 done; 1 a regression with
--fail-on-regression; 2 bad input, nothing created or stored (a --timeout
its runs cannot fit is refused so: before building by this machine's stored
runs, else once the warm-up rounds have run, before any run is stored);
3 builds or runs failed (reported as failures, never as changes); 4 could
not run (the database unreachable, --timeout ran out, interrupted).`,
		Example: `  perfbot compare --base HEAD~1 --head HEAD
  perfbot compare --repo ../prover --base main --head my-branch --count 20 --format markdown
  perfbot compare --base v1.2.0 --head HEAD --db postgres://perfbot@db/perfbot --fail-on-regression
  perfbot compare --base HEAD --base-args "--lc-storage heap" --head-args "--lc-storage inline"`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := oneOfFlag(cmd, "format", format, formats); err != nil {
				return err
			}
			if base == "" {
				return usagef(cmd, "--base is required: the revision to compare against, e.g. --base main or --base HEAD~1")
			}
			if count < 0 || maxCount < 0 {
				return usagef(cmd, "--count and --max-count must be positive (0 keeps the config's values)")
			}
			if maxCount > 0 && count > 0 && maxCount < count {
				return usagef(cmd, "--max-count %d is below --count %d", maxCount, count)
			}
			req := runner.CompareRequest{Source: c.repo, Base: base, Head: head, Count: count, MaxCount: maxCount}
			if seed != "" {
				v, err := runner.ParseSeed(seed)
				if err != nil {
					return usagef(cmd, "--seed: %v", err)
				}
				req.Seed = v
			}
			if err := variantArgs(cmd, &req, baseArgs, headArgs); err != nil {
				return err
			}
			ctx := cmd.Context()
			if timeout < 0 {
				return usagef(cmd, "--timeout %v: give a positive duration such as 10m, or leave it out", timeout)
			}
			if timeout > 0 {
				req.Timeout = timeout
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, timeout)
				defer cancel()
			}
			r, closeDB, err := c.open(cmd)
			if err != nil {
				return err
			}
			defer closeDB()
			res, err := r.Compare(ctx, req)
			if err != nil {
				if timeout > 0 && !errors.Is(err, runner.ErrUnreachable) && cmd.Context().Err() == nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
					return &statusError{exitCannotRun, fmt.Sprintf("--timeout %v ran out: %v; runs that ended before it, if any, are stored. "+
						"Give more time (--timeout), or fewer runs (--count, --max-count)", timeout, err)}
				}
				return inputError(cmd, err)
			}
			if err := renderResult(cmd.OutOrStdout(), format, res, verbose); err != nil {
				return err
			}
			r.Logger.Info("stored", "comparison", res.ComparisonID, "verdict", res.Report.Verdict, "rounds", res.Rounds)
			return compareStatus(res, failOnReg)
		},
	}
	c.register(cmd, true)
	c.registerConfig(cmd)
	f := cmd.Flags()
	f.StringVar(&base, "base", "", "base revision (any git revision: branch, tag, SHA, HEAD~1)")
	f.StringVar(&head, "head", "HEAD", "head revision (with --base-args or --head-args: default the base revision)")
	f.StringVar(&baseArgs, "base-args", "", "append `ARGS` (split as a shell would) to every benchmark's arguments on the base side")
	f.StringVar(&headArgs, "head-args", "", "append `ARGS` (split as a shell would) to every benchmark's arguments on the head side")
	f.IntVar(&count, "count", 0, "measured runs per side (default: the config's count)")
	f.IntVar(&maxCount, "max-count", 0, "cap on runs per side when adding runs to settle an inconclusive result (default: the config's max_count)")
	f.DurationVar(&timeout, "timeout", 0, "time the whole comparison has; a --count or --max-count whose runs cannot end in it, by this machine's stored runs, is refused before building (default: no limit)")
	f.StringVar(&format, "format", "text", "report format: "+strings.Join(formats, ", "))
	f.BoolVar(&failOnReg, "fail-on-regression", false, "exit 1 when a headline series (thresholds.headline, default total) regressed; with thresholds.fail_on: any-phase, when any phase did")
	f.BoolVarP(&verbose, "verbose", "v", false, "text format: the whole report (other units, attribution table, warnings, profiles, environment), not just what fits a screen")
	f.StringVar(&seed, "seed", "", "seed of the sides' random order within rounds, as a report prints it: replays that comparison's order (default: a new seed)")
	return cmd
}

// variantArgs splits --base-args and --head-args into req. When either is
// given and --head is not, head is base: one revision, two flag sets,
// which must differ.
func variantArgs(cmd *cobra.Command, req *runner.CompareRequest, baseArgs, headArgs string) error {
	f := cmd.Flags()
	if !f.Changed("base-args") && !f.Changed("head-args") {
		return nil
	}
	var err error
	if req.BaseArgs, err = splitArgs(baseArgs); err != nil {
		return usagef(cmd, "--base-args: %v", err)
	}
	if req.HeadArgs, err = splitArgs(headArgs); err != nil {
		return usagef(cmd, "--head-args: %v", err)
	}
	if !f.Changed("head") {
		req.Head = req.Base
		if slices.Equal(req.BaseArgs, req.HeadArgs) {
			return usagef(cmd, "--base-args and --head-args are the same (%s) on one revision: nothing to compare; "+
				"give the flag sets to compare, as --base-args \"\" --head-args \"--lc-storage inline\", or a --head revision",
				describeArgs(req.BaseArgs))
		}
	}
	return nil
}

// describeArgs shows args as typed, or says there are none.
func describeArgs(args []string) string {
	if len(args) == 0 {
		return "no arguments"
	}
	return render.FormatArgs(args)
}

// splitArgs splits s into arguments as a POSIX shell would, without
// expanding anything: blanks separate arguments; single quotes keep
// everything up to the next single quote; double quotes keep everything
// up to the next unescaped double quote, a backslash escaping " and \
// (and $ and `) inside them; outside quotes a backslash escapes the next
// character. A pair of quotes with nothing between is an empty argument.
// It splits what render.FormatArgs writes back into its arguments.
func splitArgs(s string) ([]string, error) {
	var (
		args  []string
		cur   strings.Builder
		inArg bool // cur holds an argument, maybe empty ('')
	)
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == ' ' || ch == '\t' || ch == '\n':
			if inArg {
				args = append(args, cur.String())
				cur.Reset()
				inArg = false
			}
		case ch == '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return nil, fmt.Errorf("unterminated single quote in %q; close it, or escape it as \\'", s)
			}
			cur.WriteString(s[i+1 : i+1+end])
			i += end + 1
			inArg = true
		case ch == '"':
			closed := false
			for i++; i < len(s); i++ {
				if s[i] == '"' {
					closed = true
					break
				}
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`", s[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(s[i])
			}
			if !closed {
				return nil, fmt.Errorf("unterminated double quote in %q; close it, or escape it as \\\"", s)
			}
			inArg = true
		case ch == '\\':
			if i+1 == len(s) {
				return nil, fmt.Errorf("%q ends with a lone backslash; remove it or escape the character after it", s)
			}
			i++
			cur.WriteByte(s[i])
			inArg = true
		default:
			cur.WriteByte(ch)
			inArg = true
		}
	}
	if inArg {
		args = append(args, cur.String())
	}
	return args, nil
}

// compareStatus is a finished comparison's exit status: runs failed (3),
// a regression with --fail-on-regression (1), or nil.
func compareStatus(res *runner.CompareResult, failOnReg bool) error {
	switch {
	case res.FailedRuns > 0 || res.Report.Verdict == analysis.VerdictError:
		return &statusError{exitRunsFailed, fmt.Sprintf("%d runs failed; the comparison is incomplete", res.FailedRuns)}
	case failOnReg && res.Report.Fails():
		return &statusError{exitRegression, "regression found (--fail-on-regression)"}
	}
	return nil
}

func oneOfFlag(cmd *cobra.Command, name, v string, allowed []string) error {
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	return usagef(cmd, "unknown --%s %q: allowed values are %s", name, v, strings.Join(allowed, ", "))
}

// renderResult writes a comparison's report in format; text is the brief
// report that fits a screen unless verbose.
func renderResult(w io.Writer, format string, res *runner.CompareResult, verbose bool) error {
	switch {
	case format == "markdown":
		_, err := io.WriteString(w, res.Markdown)
		return err
	case format == "json":
		return render.RenderJSON(w, res.Report)
	case verbose:
		return render.RenderText(w, res.Report)
	default:
		return render.RenderTextBrief(w, res.Report)
	}
}

func newRunCommand() *cobra.Command {
	var (
		c     common
		rev   string
		count int
	)
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Store baseline runs of one revision (what a push to the default branch records)",
		Long: `run builds one revision with its own .perfbot.yml, runs every benchmark
(warm-ups first) and stores the runs as baseline history: the per-phase
noise floors of later comparisons are learned from consecutive baselines.

Exit status (perfbot --help has the table): 0 done; 2 bad input, nothing
created or stored; 3 the build or runs failed (they are stored); 4 could
not run (the database unreachable, interrupted).`,
		Example: `  perfbot run --rev HEAD
  perfbot run --repo ../prover --rev main --count 5`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if count < 0 {
				return usagef(cmd, "--count must be positive (0 keeps the config's value)")
			}
			ctx := cmd.Context()
			r, closeDB, err := c.open(cmd)
			if err != nil {
				return err
			}
			defer closeDB()
			res, err := r.Baseline(ctx, runner.BaselineRequest{Source: c.repo, Rev: rev, Count: count})
			if err != nil {
				return inputError(cmd, err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "stored %d baseline runs of %s (%s): %d ok, %d failed\n",
				len(res.RunIDs), res.Commit.Short(), res.Commit.Subject, res.OK, res.Failed)
			if res.Failed > 0 {
				return &statusError{exitRunsFailed, fmt.Sprintf("%d runs failed", res.Failed)}
			}
			return nil
		},
	}
	c.register(cmd, true)
	c.registerConfig(cmd)
	cmd.Flags().StringVar(&rev, "rev", "HEAD", "revision to measure")
	cmd.Flags().IntVar(&count, "count", 0, "measured runs (default: the config's count)")
	return cmd
}

var kinds = []string{"all", string(store.KindBaseline), string(store.KindCompare), string(store.KindCalibrate), string(store.KindBisect)}

func newExportCommand() *cobra.Command {
	var (
		c      common
		rev    string
		kind   string
		args   string
		perRun bool
	)
	cmd := &cobra.Command{
		Use:   "export",
		Short: "Print the stored samples of a revision in Go benchmark format, for benchstat",
		Long: `export prints every ok run stored for a revision as Go benchmark lines,
one line per benchmark and phase per run with all its units, so anyone can
check perfbot's numbers with benchstat:

  perfbot export --rev main > base.txt
  perfbot export --rev my-branch > head.txt
  benchstat -row /phase base.txt head.txt

It prints the runs of one variant: by default those that ran the config as
written; --args ARGS those that compare --base-args or --head-args ARGS ran.

A run that printed several values of a benchmark (go test -count, criterion's
samples, hyperfine's or Google Benchmark's repetitions) is printed value by
value, as the program printed it. compare tests one value per run, the median
of the run's values: --per-run prints that, one line per run, so that
benchstat finds the medians and p-values perfbot found.

Exit status (perfbot --help has the table): 0 done; 2 bad input: a bad
flag, --repo not a repository, an unknown revision, no database at --db,
no ok runs stored for the revision; 4 could not run (the database
unreachable). export only reads: it never creates a database.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := oneOfFlag(cmd, "kind", kind, kinds); err != nil {
				return err
			}
			variant, err := splitArgs(args)
			if err != nil {
				return usagef(cmd, "--args: %v", err)
			}
			ctx := cmd.Context()
			log := c.logger(cmd)
			dir, err := c.dataDirectory()
			if err != nil {
				return err
			}
			ws, err := openWorkspace(ctx, c.repo, dir)
			if err != nil {
				return inputError(cmd, err)
			}
			commit, err := ws.Resolve(ctx, rev)
			if err != nil {
				return inputError(cmd, err)
			}
			db, err := c.openExisting(ctx, cmd, log)
			if err != nil {
				return err
			}
			defer db.Close()
			q := store.RunQuery{Repo: ws.Source(), Commits: []string{commit.SHA}, Status: analysis.StatusOK}
			if kind != "all" {
				q.Kind = store.Kind(kind)
			}
			runs, err := db.Runs(ctx, q)
			if err != nil {
				return err
			}
			runs, err = variantRuns(runs, variant)
			if err != nil {
				return err
			}
			if len(runs) == 0 {
				if len(variant) > 0 {
					return usagef(cmd, "no ok runs with args %s stored for %s in %s: compare with --base-args or --head-args %s first",
						render.FormatArgs(variant), commit.Short(), ws.Source(), render.FormatArgs(variant))
				}
				return usagef(cmd, "no ok runs stored for %s in %s: run perfbot run --rev %s (or a compare) first", commit.Short(), ws.Source(), rev)
			}
			return writeBenchfmt(cmd.OutOrStdout(), runs, perRun)
		},
	}
	c.register(cmd, true)
	cmd.Flags().StringVar(&rev, "rev", "HEAD", "revision whose runs to print")
	cmd.Flags().StringVar(&kind, "kind", "all", "which runs: "+strings.Join(kinds, ", "))
	cmd.Flags().StringVar(&args, "args", "", "print the runs of the variant that ran with these extra `ARGS` (compare --base-args or --head-args; default: none, the config as written)")
	cmd.Flags().BoolVar(&perRun, "per-run", false, "print one value per run, benchmark, phase and unit: the median of the run's values, which compare tests (default: every value)")
	return cmd
}

// variantRuns keeps the runs whose stored config ran with exactly the
// variant args (none: the config as written).
func variantRuns(runs []store.RunRecord, args []string) ([]store.RunRecord, error) {
	var keep []store.RunRecord
	for _, r := range runs {
		v, err := runner.StoredVariant(r.Config)
		if err != nil {
			return nil, fmt.Errorf("run %d: %w", r.ID, err)
		}
		if slices.Equal(v, args) {
			keep = append(keep, r)
		}
	}
	return keep, nil
}

// writeBenchfmt prints runs as Go benchmark lines: per run, one line per
// (benchmark, phase) with every unit in the order first seen. With perRun,
// each unit's value is the median of the run's values of it (what
// analysis.Compare tests), so a run is one line per (benchmark, phase)
// even where it printed several values.
func writeBenchfmt(w io.Writer, runs []store.RunRecord, perRun bool) error {
	// Oldest first, as they ran.
	sort.SliceStable(runs, func(i, j int) bool { return runs[i].StartedAt.Before(runs[j].StartedAt) })
	var sb strings.Builder
	type line struct {
		name  string
		units []string
		vals  []float64
	}
	for _, r := range runs {
		var lines []*line
		byName := map[string]*line{}
		for _, s := range r.Samples {
			name := s.Benchmark
			if s.Phase != "" {
				name += "/phase=" + s.Phase
			}
			l := byName[name]
			if l == nil {
				l = &line{name: name}
				byName[name] = l
				lines = append(lines, l)
			}
			l.units = append(l.units, s.Unit)
			l.vals = append(l.vals, s.Value)
		}
		if perRun {
			for _, l := range lines {
				l.units, l.vals = runMedians(l.units, l.vals)
			}
		}
		for _, l := range lines {
			// A unit repeated within one run (a benchmark run with -count)
			// starts a new line, as go test would print it.
			seen := map[string]bool{}
			sb.WriteString("Benchmark" + l.name + " 1")
			for i, u := range l.units {
				if seen[u] {
					sb.WriteString("\nBenchmark" + l.name + " 1")
					seen = map[string]bool{}
				}
				seen[u] = true
				sb.WriteString(" " + strconv.FormatFloat(l.vals[i], 'g', -1, 64) + " " + u)
			}
			sb.WriteByte('\n')
		}
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

// runMedians returns, per unit in the order first seen, the median of
// its values (the mean of the middle two of an even number), as
// analysis.Compare reduces a run.
func runMedians(units []string, vals []float64) ([]string, []float64) {
	byUnit := map[string][]float64{}
	var order []string
	for i, u := range units {
		if _, ok := byUnit[u]; !ok {
			order = append(order, u)
		}
		byUnit[u] = append(byUnit[u], vals[i])
	}
	meds := make([]float64, len(order))
	for i, u := range order {
		v := byUnit[u]
		slices.Sort(v)
		if n := len(v); n%2 == 1 {
			meds[i] = v[n/2]
		} else {
			meds[i] = (v[n/2-1] + v[n/2]) / 2
		}
	}
	return order, meds
}

func newCalibrateCommand() *cobra.Command {
	var (
		c     common
		rev   string
		count int
	)
	cmd := &cobra.Command{
		Use:   "calibrate",
		Short: "Run A/A comparisons of one revision and report each phase's noise",
		Long: `calibrate compares a revision against itself (interleaved A/A runs, stored
as calibration runs) and reports, per benchmark, phase and unit, the
run-to-run variation (CV and MAD) and the smallest change a comparison with
--count runs a side would detect (80% power). Use it to choose --count and
the thresholds in .perfbot.yml. An A/A comparison should find no change.

Exit status (perfbot --help has the table): 0 done; 2 bad input, nothing
created or stored; 3 builds or runs failed; 4 could not run (the database
unreachable, interrupted).`,
		Example: `  perfbot calibrate --rev HEAD --count 10`,
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if count < 0 {
				return usagef(cmd, "--count must be positive (0 keeps the config's value)")
			}
			ctx := cmd.Context()
			r, closeDB, err := c.open(cmd)
			if err != nil {
				return err
			}
			defer closeDB()
			res, err := r.Compare(ctx, runner.CompareRequest{
				Source: c.repo, Base: rev, Head: rev, Count: count, MaxCount: count, Kind: store.KindCalibrate,
			})
			if err != nil {
				return inputError(cmd, err)
			}
			opts := analysis.Options{Alpha: res.Config.Thresholds.Alpha}
			noise := analysis.MeasureNoise(append(res.BaseRuns, res.HeadRuns...), res.Rounds, opts)
			out := cmd.OutOrStdout()
			floor := res.Config.Thresholds.MinChangePct
			fmt.Fprintf(out, "calibration of %s: %d runs per side, A/A verdict %s\n\n", res.Base.Short(), res.Rounds, res.Report.Verdict)
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintf(tw, "benchmark\tphase\tunit\truns\tmedian\tCV\tMAD\tdetectable at %d/side\truns/side for %.1f%%\n", res.Rounds, floor)
			primary := map[string]bool{}
			for _, u := range res.Config.PrimaryUnits {
				primary[u] = true
			}
			worst, worstName := 0, ""
			for _, n := range noise {
				need := n.RunsFor(floor)
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%.4g\t%.2f%%\t%.2f%%\t%.2f%%\t%d\n",
					n.Benchmark, n.Phase, n.Unit, n.N, n.Median, n.CVPct, n.MADPct, n.DetectablePct, need)
				if primary[n.Unit] && need > worst {
					worst, worstName = need, n.Phase
				}
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			if worst > 0 {
				fmt.Fprintf(out, "\nTo see %.1f%% (min_change_pct) in every %s phase at α = %v with 80%% power, a comparison needs about %d runs a side (the noisiest: %s): "+
					"set max_count to at least that in .perfbot.yml, or quiet the machine (perfbot system). Holm's correction over the phases and the looks of a sequential design raise it somewhat.\n",
					floor, strings.Join(res.Config.PrimaryUnits, ", "), opts.Alpha, worst, worstName)
			}
			if res.FailedRuns > 0 {
				return &statusError{exitRunsFailed, fmt.Sprintf("%d runs failed", res.FailedRuns)}
			}
			return nil
		},
	}
	c.register(cmd, true)
	c.registerConfig(cmd)
	cmd.Flags().StringVar(&rev, "rev", "HEAD", "revision to calibrate")
	cmd.Flags().IntVar(&count, "count", 0, "runs per side (default: the config's count)")
	return cmd
}
