package workspace

import (
	"context"
	"fmt"
	"slices"
)

// FirstParentHistory returns every commit on the first-parent chain of
// the commit rev names, oldest first: what `git rev-list --first-parent
// rev` lists, reversed. Commits that reached rev's branch through a merge
// are not on it (the merge commit is). An unknown rev gives an error
// wrapping ErrUnknownRevision. It is the order of a branch's history, as
// perfbot trend charts it.
func (w *Workspace) FirstParentHistory(ctx context.Context, rev string) ([]Commit, error) {
	sha, err := w.resolveSHA(ctx, rev)
	if err != nil {
		return nil, fmt.Errorf("first-parent history of %s: %w", rev, err)
	}
	cs, err := w.log(ctx, "--first-parent", sha)
	if err != nil {
		return nil, fmt.Errorf("first-parent history of %s: %w", rev, err)
	}
	slices.Reverse(cs)
	return cs, nil
}
