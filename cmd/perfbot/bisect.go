package main

import (
	"bytes"
	"errors"
	"strings"

	"github.com/spf13/cobra"

	"github.com/perfbot/perfbot/analysis/render"
	"github.com/perfbot/perfbot/runner"
	"github.com/perfbot/perfbot/runner/workspace"
)

var bisectFormats = []string{"text", "markdown", "json"}

func newBisectCommand() *cobra.Command {
	var (
		c                      common
		good, bad              string
		benchmark, phase, unit string
		allCommits             bool
		count, maxCount        int
		format                 string
		seed                   string
	)
	cmd := &cobra.Command{
		Use:   "bisect",
		Short: "Find the first commit between a good and a bad revision that changed a phase",
		Long: `bisect searches the first-parent history from --good to --bad (every
commit of good..bad in topological order with --all-commits) for the first
commit whose values of one series (--benchmark; --phase, default the
config's headline phase, total, or a benchmark's own value when it has no
phases; --unit, default sec/op) look like the bad revision's rather than
the good one's. The config is the good revision's .perfbot.yml, as compare
reads the base's, or --config.

Every comparison is made on rounds in which its commits ran beside each
other (each once a round, in the config's order), so a machine that drifts
over the bisection moves both sides alike. The two ends first, --count
rounds (default: the config's count), more while unsettled up to
--max-count: if they do not differ, there is nothing to bisect and bisect
says so with the numbers. Then each probe runs beside the current last good
and first bad commit and is judged on those rounds alone, at its share of
α over the whole bisection: bad if it differs from good and not from bad,
good for the reverse. One that is neither at --max-count rounds stops the
search, and the answer is the range left, never a guess. Last, the last good
and the first bad commit are compared beside each other as compare does;
the answer is exact only when that shows the change. Rounds stored by
earlier sessions (same config, this machine) count where the commits
compared all ran in them; runs measured apart count for nothing. Runs are
stored as bisect runs, which stay out of the baseline history. A commit that
does not build is skipped as git bisect skips, and a neighbour is measured
instead; when skipped commits leave a range, bisect lists every candidate.

The result names the first bad commit and its change with the interval
measured beside the last good commit (every series compared, stored as a
comparison), lists every probe with the runs it reused and measured, and
prints the commands that reproduce it.

Exit status (perfbot --help has the table): 0 done (found, or a range
when skips or an unplaced probe leave one); 2 bad input (unknown revision,
good not an ancestor of bad, a series the runs do not measure); 3 the good
or the bad revision did not build or its runs failed; 4 could not run (the
database unreachable, interrupted); 5 the ends do not differ, so there is
nothing to bisect.`,
		Example: `  perfbot bisect --good v1.4.0 --bad main
  perfbot bisect --repo ../prover --good HEAD~40 --bad HEAD --phase msm_h --count 6
  perfbot bisect --good v1.4.0 --bad main --all-commits --format markdown`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := oneOfFlag(cmd, "format", format, bisectFormats); err != nil {
				return err
			}
			if good == "" {
				return usagef(cmd, "--good is required: a revision that is not slow yet, e.g. --good v1.4.0 or --good HEAD~20")
			}
			if bad == "" {
				return usagef(cmd, "--bad is empty: give the revision that is slow, e.g. --bad main (default HEAD)")
			}
			if count < 0 || maxCount < 0 {
				return usagef(cmd, "--count and --max-count must be positive (0 keeps the config's values)")
			}
			if maxCount > 0 && count > 0 && maxCount < count {
				return usagef(cmd, "--max-count %d is below --count %d", maxCount, count)
			}
			// An empty --phase is the default (the headline, or a
			// benchmark's own value); an empty benchmark or unit names none.
			for _, f := range []struct{ name, v string }{{"benchmark", benchmark}, {"unit", unit}} {
				if cmd.Flags().Changed(f.name) && strings.TrimSpace(f.v) == "" {
					return usagef(cmd, "--%s is empty: leave it out for the default, or name one", f.name)
				}
			}
			var seedValue uint64
			if seed != "" {
				v, err := runner.ParseSeed(seed)
				if err != nil {
					return usagef(cmd, "--seed: %v", err)
				}
				seedValue = v
			}
			r, closeDB, err := c.open(cmd)
			if err != nil {
				return err
			}
			defer closeDB()
			res, err := r.Bisect(cmd.Context(), runner.BisectRequest{
				Source: c.repo, Good: good, Bad: bad, Benchmark: benchmark, Phase: phase, Unit: unit,
				AllCommits: allCommits, Count: count, MaxCount: maxCount, Seed: seedValue,
			})
			if err != nil {
				return bisectError(cmd, err)
			}
			var out bytes.Buffer
			switch format {
			case "markdown":
				err = render.RenderBisectMarkdown(&out, res.Report)
			case "json":
				err = render.RenderBisectJSON(&out, res.Report)
			default:
				err = render.RenderBisectText(&out, res.Report)
			}
			if err != nil {
				return err
			}
			if _, err := cmd.OutOrStdout().Write(out.Bytes()); err != nil {
				return err
			}
			r.Logger.Info("bisected", "first_bad", res.FirstBad.Short(), "exact", res.Report.Exact(),
				"measured", res.Measured, "reused", res.Reused, "comparison", res.ComparisonID)
			return nil
		},
	}
	c.register(cmd, true)
	c.registerConfig(cmd)
	f := cmd.Flags()
	f.StringVar(&good, "good", "", "a revision without the change (any git revision: tag, branch, SHA, HEAD~20)")
	f.StringVar(&bad, "bad", "HEAD", "a revision with the change; --good must be an ancestor of it")
	f.StringVar(&benchmark, "benchmark", "", "the benchmark, as its runs name it (e.g. Prove/circuit=sha256/constraints=65536/backend=cpu; default: the one that measures --phase)")
	f.StringVar(&phase, "phase", "", "the phase to bisect (default: the config's headline phase, total; for a benchmark without phases, its own value)")
	f.StringVar(&unit, "unit", "sec/op", "the unit to bisect")
	f.BoolVar(&allCommits, "all-commits", false, "search every commit of good..bad in topological order, not only the first-parent chain")
	f.IntVar(&count, "count", 0, "runs each measured commit needs, stored ones included (default: the config's count)")
	f.IntVar(&maxCount, "max-count", 0, "cap on a commit's runs while its comparison is unsettled (default: the config's max_count)")
	f.StringVar(&format, "format", "text", "report format: "+strings.Join(bisectFormats, ", "))
	f.StringVar(&seed, "seed", "", "seed of the ends' random order within rounds (default: a new seed, which the log shows)")
	return cmd
}

// bisectError gives bisect's errors their exit status (exitCodes): bad
// input 2, an end that cannot be measured 3, ends that do not differ 5,
// anything else 4.
func bisectError(cmd *cobra.Command, err error) error {
	if errors.Is(err, runner.ErrNothingToBisect) {
		return &statusError{exitNoChange, err.Error()}
	}
	for _, target := range []error{workspace.ErrNotAncestor, runner.ErrEmptyRange, runner.ErrUnknownSeries} {
		if errors.Is(err, target) {
			return &usageError{cmd: cmd.CommandPath(), err: err}
		}
	}
	if errors.Is(err, runner.ErrEndFailed) {
		return &statusError{exitRunsFailed, err.Error()}
	}
	return inputError(cmd, err)
}
