package main

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/runner"
	"github.com/perfbot/perfbot/store"
)

// Exit codes of compare beyond the common ones.
const (
	exitRegression = 1 // with --fail-on-regression
	exitRunsFailed = 3 // a build or a run failed: the comparison is incomplete
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
		c               common
		base, head      string
		count, maxCount int
		format          string
		failOnReg       bool
	)
	cmd := &cobra.Command{
		Use:   "compare",
		Short: "Build two revisions, run their benchmarks interleaved, store every run and compare",
		Long: `compare builds the base and the head revision of a repository, runs each
benchmark of the base revision's .perfbot.yml (or the default, which runs this
repository's prover) warm-ups first, then base and head alternately, stores
every run in the database and compares head against base per benchmark,
phase and unit: Mann-Whitney U and median intervals (as benchstat), Holm
correction, and a noise floor learned from the stored baseline history.
Inconclusive comparisons get more runs, in batches, up to --max-count.

Exit status: 0 done; 1 a regression with --fail-on-regression; 2 bad input;
3 builds or runs failed (they are reported as failures, never as changes).`,
		Example: `  perfbot compare --base HEAD~1 --head HEAD
  perfbot compare --repo ../prover --base main --head my-branch --count 20 --format markdown
  perfbot compare --base v1.2.0 --head HEAD --db postgres://perfbot@db/perfbot --fail-on-regression`,
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
			ctx := cmd.Context()
			r, closeDB, err := c.open(cmd)
			if err != nil {
				return err
			}
			defer closeDB()
			res, err := r.Compare(ctx, runner.CompareRequest{
				Source: c.repo, Base: base, Head: head, Count: count, MaxCount: maxCount,
			})
			if err != nil {
				return inputError(cmd, err)
			}
			if err := render(cmd.OutOrStdout(), format, res); err != nil {
				return err
			}
			r.Logger.Info("stored", "comparison", res.ComparisonID, "verdict", res.Report.Verdict, "rounds", res.Rounds)
			return compareStatus(res, failOnReg)
		},
	}
	c.register(cmd, true)
	f := cmd.Flags()
	f.StringVar(&base, "base", "", "base revision (any git revision: branch, tag, SHA, HEAD~1)")
	f.StringVar(&head, "head", "HEAD", "head revision")
	f.IntVar(&count, "count", 0, "measured runs per side (default: the config's count)")
	f.IntVar(&maxCount, "max-count", 0, "cap on runs per side when adding runs to settle an inconclusive result (default: the config's max_count)")
	f.StringVar(&format, "format", "text", "report format: "+strings.Join(formats, ", "))
	f.BoolVar(&failOnReg, "fail-on-regression", false, "exit 1 when the verdict is a regression")
	return cmd
}

// compareStatus is a finished comparison's exit status: runs failed (3),
// a regression with --fail-on-regression (1), or nil.
func compareStatus(res *runner.CompareResult, failOnReg bool) error {
	switch {
	case res.FailedRuns > 0 || res.Report.Verdict == analysis.VerdictError:
		return &statusError{exitRunsFailed, fmt.Sprintf("%d runs failed; the comparison is incomplete", res.FailedRuns)}
	case failOnReg && res.Report.Verdict == analysis.VerdictRegression:
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

func render(w io.Writer, format string, res *runner.CompareResult) error {
	switch format {
	case "markdown":
		_, err := io.WriteString(w, res.Markdown)
		return err
	case "json":
		return analysis.RenderJSON(w, res.Report)
	default:
		return analysis.RenderText(w, res.Report)
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
noise floors of later comparisons are learned from consecutive baselines.`,
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
	cmd.Flags().StringVar(&rev, "rev", "HEAD", "revision to measure")
	cmd.Flags().IntVar(&count, "count", 0, "measured runs (default: the config's count)")
	return cmd
}

var kinds = []string{"all", string(store.KindBaseline), string(store.KindCompare), string(store.KindCalibrate)}

func newExportCommand() *cobra.Command {
	var (
		c    common
		rev  string
		kind string
	)
	cmd := &cobra.Command{
		Use:   "export",
		Short: "Print the stored samples of a revision in Go benchmark format, for benchstat",
		Long: `export prints every ok run stored for a revision as Go benchmark lines,
one line per benchmark and phase per run with all its units, so anyone can
check perfbot's numbers with benchstat:

  perfbot export --rev main > base.txt
  perfbot export --rev my-branch > head.txt
  benchstat -row /phase base.txt head.txt`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := oneOfFlag(cmd, "kind", kind, kinds); err != nil {
				return err
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
			db, err := c.openStore(ctx, cmd, log)
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
			if len(runs) == 0 {
				return fmt.Errorf("no ok runs stored for %s in %s: run perfbot run --rev %s (or a compare) first", commit.Short(), ws.Source(), rev)
			}
			return writeBenchfmt(cmd.OutOrStdout(), runs)
		},
	}
	c.register(cmd, true)
	cmd.Flags().StringVar(&rev, "rev", "HEAD", "revision whose runs to print")
	cmd.Flags().StringVar(&kind, "kind", "all", "which runs: "+strings.Join(kinds, ", "))
	return cmd
}

// writeBenchfmt prints runs as Go benchmark lines: per run, one line per
// (benchmark, phase) with every unit in the order first seen.
func writeBenchfmt(w io.Writer, runs []store.RunRecord) error {
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
the thresholds in .perfbot.yml. An A/A comparison should find no change.`,
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
			fmt.Fprintf(out, "calibration of %s: %d runs per side, A/A verdict %s\n\n", res.Base.Short(), res.Rounds, res.Report.Verdict)
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintf(tw, "benchmark\tphase\tunit\truns\tmedian\tCV\tMAD\tdetectable at %d/side\n", res.Rounds)
			for _, n := range noise {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%.4g\t%.2f%%\t%.2f%%\t%.2f%%\n",
					n.Benchmark, n.Phase, n.Unit, n.N, n.Median, n.CVPct, n.MADPct, n.DetectablePct)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			if res.FailedRuns > 0 {
				return &statusError{exitRunsFailed, fmt.Sprintf("%d runs failed", res.FailedRuns)}
			}
			return nil
		},
	}
	c.register(cmd, true)
	cmd.Flags().StringVar(&rev, "rev", "HEAD", "revision to calibrate")
	cmd.Flags().IntVar(&count, "count", 0, "runs per side (default: the config's count)")
	return cmd
}
