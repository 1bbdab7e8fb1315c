package github

import (
	"context"
	"fmt"

	gh "github.com/google/go-github/v60/github"
)

// CommitComment posts body as a comment on commit sha (on the whole
// commit, not a line of it). It is sent once, never retried: a comment
// that may have landed is not posted again; callers that must not post
// twice remember what they posted (perfbot's change-point reports keep it
// in the store). In a dry run it only logs.
func (c *Client) CommitComment(ctx context.Context, repo Repo, sha, body string) (Comment, error) {
	op := fmt.Sprintf("comment on commit %s of %s", shortSHA(sha), repo)
	if len(body) > maxCommentLen {
		return Comment{}, fmt.Errorf("%s: the body is %d bytes, over GitHub's limit of %d characters", op, len(body), maxCommentLen)
	}
	log := c.log.With("repo", repo.String(), "sha", sha)
	if c.dryRun {
		log.Info("github: dry run: would comment on the commit", "bytes", len(body))
		return Comment{Created: true}, nil
	}
	created, _, err := c.gh.Repositories.CreateComment(sendOnce(ctx), repo.Owner, repo.Name, sha, &gh.RepositoryComment{Body: &body})
	if err != nil {
		return Comment{}, wrap(op, err)
	}
	log.Info("github: commented on the commit", "comment_id", created.GetID())
	return Comment{ID: created.GetID(), URL: created.GetHTMLURL(), Created: true}, nil
}
