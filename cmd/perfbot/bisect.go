package main

import (
	"bytes"
	"errors"
	"strings"

	"github.com/spf13/cobra"

	"github.com/perfbot/perfbot/analysis"
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
commit whose values of one series (--benchmark, --phase, default total,
--unit, default sec/op) look like the bad revision's rather than the good
one's. The config is the good revision's .perfbot.yml, as compare reads the
base's.

Every commit it measures reuses the runs the database has of it with the
same config on this machine (baselines, comparisons, earlier bisections) and
gets only the runs it lacks, up to --count (default: the config's count),
stored as bisect runs, which stay out of the baseline history. The two ends
are measured first, interleaved: if they do not differ, there is nothing to
bisect and bisect says so with the numbers. Each probe is compared with both
ends by compare's test and noise floor: it is bad if it differs from good
and not from bad, good for the reverse; one that looks like both or neither
gets more runs, up to --max-count, and is then taken for the end whose
median is nearer, marked uncertain. A commit that does not build is skipped
as git bisect skips, and a neighbour is measured instead; when skipped
commits leave a range, bisect lists every candidate.

The result names the first bad commit, compares every series of it against
the last good commit (stored as a comparison), lists every probe with the
runs it reused and measured, and prints the commands that reproduce it.

Exit status (perfbot --help has the table): 0 found; 1 the ends do not
differ, so no commit is named; 2 bad input (unknown revision, good not an
ancestor of bad, a series the runs do not measure); 3 the good or the bad
revision did not build or its runs failed; 4 could not run (the database
unreachable, interrupted).`,
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
			for _, f := range []struct{ name, v string }{{"benchmark", benchmark}, {"phase", phase}, {"unit", unit}} {
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
				err = analysis.RenderBisectMarkdown(&out, res.Report)
			case "json":
				err = analysis.RenderBisectJSON(&out, res.Report)
			default:
				err = analysis.RenderBisectText(&out, res.Report)
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
	f.StringVar(&phase, "phase", "total", "the phase to bisect")
	f.StringVar(&unit, "unit", "sec/op", "the unit to bisect")
	f.BoolVar(&allCommits, "all-commits", false, "search every commit of good..bad in topological order, not only the first-parent chain")
	f.IntVar(&count, "count", 0, "runs each measured commit needs, stored ones included (default: the config's count)")
	f.IntVar(&maxCount, "max-count", 0, "cap on a commit's runs while its comparison is unsettled (default: the config's max_count)")
	f.StringVar(&format, "format", "text", "report format: "+strings.Join(bisectFormats, ", "))
	f.StringVar(&seed, "seed", "", "seed of the ends' random order within rounds (default: a new seed, which the log shows)")
	return cmd
}

// bisectError gives bisect's errors their exit status (exitCodes): bad
// input 2, an end that cannot be measured 3, ends that do not differ 1,
// anything else 4.
func bisectError(cmd *cobra.Command, err error) error {
	if errors.Is(err, runner.ErrNothingToBisect) {
		return &statusError{exitRegression, err.Error()}
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
