package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/perfbot/perfbot/runner/workspace"
	"github.com/perfbot/perfbot/store"
)

// A BackfillRequest asks for baseline runs of every commit of a branch's
// first-parent history since a date that has none yet on this machine.
type BackfillRequest struct {
	Source string // repository path or clone URL
	// Branch is the revision whose first-parent history is walked;
	// "" is HEAD (a clone URL's mirror: the remote's default branch).
	Branch string
	// Since keeps the commits whose author date is at or after it; the
	// zero time keeps the whole history.
	Since time.Time
	// Count overrides the config's measured runs per commit; 0 keeps it.
	Count int
	// DryRun lists the commits Backfill would measure and measures none.
	DryRun bool
	// OnCommit, when set, is called before each commit is measured (or,
	// with DryRun, listed) and after it is done, from the goroutine that
	// called Backfill.
	OnCommit func(BackfillStep)
}

// A BackfillStep is one commit of a backfill: which of how many, and,
// once done, what it stored.
type BackfillStep struct {
	Index, Total int // 1-based position among the commits to measure
	Commit       workspace.Commit
	// Done is false when the commit is about to be measured, true after.
	Done bool
	// Result is what the commit's baseline stored (when Done and Err is nil).
	Result *BaselineResult
	// Err says why the commit could not be measured at all (an invalid
	// config at that commit); the walk goes on.
	Err error
}

// A BackfillResult is what a backfill found and did.
type BackfillResult struct {
	// Commits are the commits of the walked history since the date,
	// oldest first.
	Commits []workspace.Commit
	// Missing are those without baseline runs of their config on this
	// machine: what was measured (or, with DryRun, would be).
	Missing []workspace.Commit
	// Measured counts the commits measured, BuildFailed those among them
	// whose build failed (recorded as build-failed runs, as Baseline
	// records them), FailedRuns their timed runs that did not end ok,
	// and Skipped the commits that could not be measured at all (their
	// config is invalid): each is logged and the walk goes on.
	Measured, BuildFailed, FailedRuns, Skipped int
}

// Backfill walks the first-parent history of req.Branch since req.Since,
// oldest first, and stores baseline runs (as Baseline does) of every
// commit that has no baseline run yet with its own config's hash on this
// machine. A commit that does not build is recorded as build-failed runs,
// which count as its baseline: a second backfill does not build it again.
func (r *Runner) Backfill(ctx context.Context, req BackfillRequest) (*BackfillResult, error) {
	ws, err := r.open(ctx, req.Source)
	if err != nil {
		return nil, err
	}
	branch := req.Branch
	if branch == "" {
		branch = "HEAD"
	}
	history, err := ws.FirstParentHistory(ctx, branch)
	if err != nil {
		return nil, fmt.Errorf("backfill: %w", err)
	}
	res := &BackfillResult{}
	for _, c := range history {
		if !c.AuthorTime.Before(req.Since) {
			res.Commits = append(res.Commits, c)
		}
	}
	machine := r.env(ctx).ID()
	for _, c := range res.Commits {
		cfg, _, err := r.loadConfig(ctx, ws, c.SHA)
		if errors.Is(err, ErrInvalidConfig) || errors.Is(err, ErrNoConfig) {
			// Baseline refuses it too; say so when it comes to it.
			res.Missing = append(res.Missing, c)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("backfill: %s: %w", c.Short(), err)
		}
		runs, err := r.Store.Runs(ctx, store.RunQuery{
			Repo: ws.Source(), Commits: []string{c.SHA}, Kind: store.KindBaseline,
			ConfigHash: cfg.Hash(), Machine: machine, Limit: 1, Whole: true,
		})
		if err != nil {
			return nil, fmt.Errorf("backfill: %w", err)
		}
		if len(runs) == 0 {
			res.Missing = append(res.Missing, c)
		}
	}
	r.log().Info("backfill", "branch", branch, "commits", len(res.Commits), "missing", len(res.Missing), "machine", machine)
	step := func(s BackfillStep) {
		if req.OnCommit != nil {
			req.OnCommit(s)
		}
	}
	for i, c := range res.Missing {
		s := BackfillStep{Index: i + 1, Total: len(res.Missing), Commit: c}
		step(s)
		if req.DryRun {
			continue
		}
		b, err := r.baseline(ctx, ws, c, req.Count)
		s.Done = true
		switch {
		case errors.Is(err, ErrInvalidConfig):
			r.log().Warn("backfill: commit skipped", "sha", c.Short(), "err", err)
			res.Skipped++
			s.Err = err
		case err != nil:
			return res, fmt.Errorf("backfill: %s: %w", c.Short(), err)
		default:
			res.Measured++
			res.FailedRuns += b.Failed
			if b.BuildFailed {
				res.BuildFailed++
			}
			s.Result = b
		}
		step(s)
	}
	return res, nil
}
