package github

import (
	"context"
	"fmt"
	"strings"

	gh "github.com/google/go-github/v60/github"

	"github.com/perfbot/perfbot/analysis/render"
)

// MarkerPrefix starts every hidden marker by which perfbot finds one of
// its comments again, as in render.SummaryMarker.
const MarkerPrefix = "<!-- perfbot:"

// UpsertMarked makes body the one comment on pull request number that
// holds marker, a hidden HTML comment of perfbot's own ("<!--
// perfbot:bisect 1a2b3c4d -->"): it edits the first comment that holds
// marker, when its body differs, or creates one. It is how perfbot
// answers a command whose job may run again (a retry, a repeated
// command): the answer is edited in place, never posted twice. It keeps
// no history, unlike UpsertComment, whose SummaryMarker body must not
// hold. body must hold marker and fit in a comment.
func (c *Client) UpsertMarked(ctx context.Context, repo Repo, number int, marker, body string) (Comment, error) {
	op := fmt.Sprintf("update perfbot's %s comment on %s#%d", marker, repo, number)
	switch {
	case !strings.HasPrefix(marker, MarkerPrefix) || !strings.HasSuffix(marker, "-->") ||
		strings.ContainsAny(marker, "\n\r") || strings.Count(marker, "-->") != 1:
		return Comment{}, fmt.Errorf("%s: the marker must be one line %q…\"-->\"", op, MarkerPrefix)
	case strings.Contains(marker, render.SummaryMarker) || strings.Contains(body, render.SummaryMarker):
		return Comment{}, fmt.Errorf("%s: render.SummaryMarker marks the report comment: use UpsertComment", op)
	case !strings.Contains(body, marker):
		return Comment{}, fmt.Errorf("%s: the body lacks the marker, by which perfbot finds the comment again", op)
	case len(body) > maxCommentLen:
		return Comment{}, fmt.Errorf("%s: the body is %d bytes, over GitHub's limit of %d characters", op, len(body), maxCommentLen)
	}
	log := c.log.With("repo", repo.String(), "pr", number, "marker", marker)
	for round := 1; ; round++ {
		existing, err := c.findMarked(ctx, repo, number, marker)
		if err != nil {
			return Comment{}, wrap(op, err)
		}
		if existing != nil {
			out := Comment{ID: existing.GetID(), URL: existing.GetHTMLURL()}
			if existing.GetBody() == body {
				log.Info("github: the comment is up to date", "comment_id", out.ID)
				return out, nil
			}
			if c.dryRun {
				log.Info("github: dry run: would edit the comment", "comment_id", out.ID, "bytes", len(body))
				return out, nil
			}
			edited, _, err := c.gh.Issues.EditComment(ctx, repo.Owner, repo.Name, existing.GetID(), &gh.IssueComment{Body: &body})
			if err != nil {
				return Comment{}, wrap(op, err)
			}
			log.Info("github: edited the comment", "comment_id", out.ID)
			out.URL = edited.GetHTMLURL()
			return out, nil
		}
		if c.dryRun {
			log.Info("github: dry run: would create the comment", "bytes", len(body))
			return Comment{Created: true}, nil
		}
		created, _, err := c.gh.Issues.CreateComment(sendOnce(ctx), repo.Owner, repo.Name, number, &gh.IssueComment{Body: &body})
		if err == nil {
			log.Info("github: created the comment", "comment_id", created.GetID())
			return Comment{ID: created.GetID(), URL: created.GetHTMLURL(), Created: true}, nil
		}
		// A create whose answer was lost may have landed: look for it
		// before creating again.
		if !c.again(ctx, log, err, round, "create the comment") {
			return Comment{}, createFailed(op, err, round)
		}
	}
}
