package github

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// A PullRequest is what perfbot needs to know about a pull request to
// benchmark it.
type PullRequest struct {
	Repo   Repo
	Number int
	Title  string
	State  string // "open" or "closed"
	Draft  bool
	Merged bool
	Author string // the login of the user who opened it

	BaseRef, BaseSHA string
	HeadRef, HeadSHA string
	// HeadRepo is the full name ("owner/name") of the repository the head
	// branch lives in; empty when that repository was deleted.
	HeadRepo string
	// Fork is set when the head branch lives in another repository (a
	// fork, or a deleted one): its code is untrusted.
	Fork bool

	CloneURL string // the base repository's clone URL
	HTMLURL  string
	// UpdatedAt is GitHub's updated_at: of two heads of the pull request
	// queued for comparison, the later wins (store/queue).
	UpdatedAt time.Time
}

// PullRequest returns pull request number in repo. A pull request that
// does not exist gives an error matching ErrNotFound.
func (c *Client) PullRequest(ctx context.Context, repo Repo, number int) (*PullRequest, error) {
	op := fmt.Sprintf("get pull request %s#%d", repo, number)
	pr, _, err := c.gh.PullRequests.Get(ctx, repo.Owner, repo.Name, number)
	if err != nil {
		return nil, wrap(op, err)
	}
	base, head := pr.GetBase(), pr.GetHead()
	out := &PullRequest{
		Repo:      repo,
		Number:    pr.GetNumber(),
		Title:     pr.GetTitle(),
		State:     pr.GetState(),
		Draft:     pr.GetDraft(),
		Merged:    pr.GetMerged(),
		Author:    pr.GetUser().GetLogin(),
		BaseRef:   base.GetRef(),
		BaseSHA:   base.GetSHA(),
		HeadRef:   head.GetRef(),
		HeadSHA:   head.GetSHA(),
		CloneURL:  base.GetRepo().GetCloneURL(),
		HTMLURL:   pr.GetHTMLURL(),
		UpdatedAt: pr.GetUpdatedAt().Time,
	}
	if head.GetRepo() == nil {
		out.Fork = true // the head repository was deleted
	} else {
		out.HeadRepo = head.GetRepo().GetFullName()
		baseRepo := base.GetRepo().GetFullName()
		if baseRepo == "" {
			baseRepo = repo.String()
		}
		out.Fork = head.GetRepo().GetFork() || !strings.EqualFold(out.HeadRepo, baseRepo)
	}
	return out, nil
}
