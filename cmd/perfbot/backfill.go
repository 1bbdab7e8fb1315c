package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/perfbot/perfbot/runner"
)

func newBackfillCommand() *cobra.Command {
	var (
		c      common
		since  string
		branch string
		count  int
		dryRun bool
	)
	cmd := &cobra.Command{
		Use:   "backfill",
		Short: "Store baseline runs of every commit of the default branch since a date that has none yet",
		Long: `backfill walks the first-parent history of the default branch (--branch to
pick another) since --since, oldest first, and stores baseline runs, as
perfbot run does, of every commit that has no baseline run yet with its own
.perfbot.yml on this machine: it fills the gaps in the history that trend
charts and that the noise floors come from, on a GPU host.

A commit that does not build is recorded as a build-failed run (so a later
backfill does not build it again) and the walk goes on; so does a commit
whose config is invalid, which is only logged. --dry-run lists the commits
it would measure and measures nothing.

--since takes a date (2026-01-31, midnight UTC), a duration back from now
(36h, 90d, 12w) or all; commits are kept by their author date.

Exit status (perfbot --help has the table): 0 done; 2 bad input (a bad
flag or date, --repo not a repository, an unknown branch); 3 some runs or
builds failed (they are stored); 4 could not run (the database
unreachable, interrupted).`,
		Example: `  perfbot backfill --since 2026-09-01 --dry-run
  perfbot backfill --repo https://github.com/o/prover.git --since 90d --count 3`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if since == "" {
				return usagef(cmd, "--since is required: a date such as 2026-01-31, a duration such as 90d, or all")
			}
			from, err := parseSince(since, time.Now())
			if err != nil {
				return usagef(cmd, "--since %q: %v", since, err)
			}
			if count < 0 {
				return usagef(cmd, "--count must be positive (0 keeps the config's value)")
			}
			ctx := cmd.Context()
			r, closeDB, err := c.open(cmd)
			if err != nil {
				return err
			}
			defer closeDB()
			out := cmd.OutOrStdout()
			res, err := r.Backfill(ctx, runner.BackfillRequest{
				Source: c.repo, Branch: branch, Since: from, Count: count, DryRun: dryRun,
				OnCommit: func(s runner.BackfillStep) { printBackfillStep(out, dryRun, s) },
			})
			if err != nil {
				return inputError(cmd, err)
			}
			have := len(res.Commits) - len(res.Missing)
			if dryRun {
				fmt.Fprintf(out, "dry run: %d of %d commits since %s lack baseline runs on this machine (%d have them); nothing measured\n",
					len(res.Missing), len(res.Commits), since, have)
				return nil
			}
			fmt.Fprintf(out, "backfill: %d commits since %s, %d already had baseline runs, %d measured (%d did not build), %d skipped\n",
				len(res.Commits), since, have, res.Measured, res.BuildFailed, res.Skipped)
			if res.FailedRuns > 0 {
				return &statusError{exitRunsFailed, fmt.Sprintf("%d runs failed (%d builds)", res.FailedRuns, res.BuildFailed)}
			}
			return nil
		},
	}
	c.register(cmd, true)
	c.registerConfig(cmd)
	fl := cmd.Flags()
	fl.StringVar(&since, "since", "", "measure commits since this `DATE` (YYYY-MM-DD), duration ago (90d) or all (required)")
	fl.StringVar(&branch, "branch", "", "the `BRANCH` whose first-parent history is walked (default: the default branch, HEAD)")
	fl.IntVar(&count, "count", 0, "measured runs per commit (default: the config's count)")
	fl.BoolVar(&dryRun, "dry-run", false, "list the commits that would be measured; measure nothing")
	return cmd
}

// printBackfillStep prints one line per commit: "[2/5] abc1234 subject".
func printBackfillStep(w io.Writer, dryRun bool, s runner.BackfillStep) {
	switch {
	case dryRun:
		fmt.Fprintf(w, "would measure %s %s %s\n", s.Commit.Short(), s.Commit.AuthorTime.UTC().Format(time.DateOnly), s.Commit.Subject)
	case !s.Done:
		fmt.Fprintf(w, "[%d/%d] %s %s: measuring\n", s.Index, s.Total, s.Commit.Short(), s.Commit.Subject)
	case s.Err != nil:
		fmt.Fprintf(w, "[%d/%d] %s: skipped: %v\n", s.Index, s.Total, s.Commit.Short(), s.Err)
	case s.Result.BuildFailed:
		fmt.Fprintf(w, "[%d/%d] %s: build failed (recorded)\n", s.Index, s.Total, s.Commit.Short())
	default:
		fmt.Fprintf(w, "[%d/%d] %s: stored %d runs, %d ok\n", s.Index, s.Total, s.Commit.Short(), len(s.Result.RunIDs), s.Result.OK)
	}
}
