package github

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	gh "github.com/google/go-github/v60/github"
	"github.com/perfbot/perfbot/analysis/render"
)

// maxPages bounds how many pages of comments are read, against a server
// whose Link header never ends.
const maxPages = 1000

// A Comment is an issue comment perfbot wrote (or, in a dry run, would
// have written).
type Comment struct {
	ID  int64  // 0 when a dry run would have created it
	URL string // the comment's page; "" when a dry run would have created it
	// Created is set when the comment is new rather than edited.
	Created bool
}

// UpsertComment makes body perfbot's comment on pull request number:
// it edits the first comment that holds render.SummaryMarker, or
// creates one, so a pull request has one perfbot comment however often a
// job runs or a request is retried. The report body replaces is folded
// into a collapsed history at the bottom (newest first, at most 10,
// within GitHub's 65,536-character limit); an unchanged report is not
// added again and the comment is then left as it is. A body over the
// limit is cut, with a note saying so. body must hold
// render.SummaryMarker.
func (c *Client) UpsertComment(ctx context.Context, repo Repo, number int, body string) (Comment, error) {
	op := fmt.Sprintf("update the perfbot comment on %s#%d", repo, number)
	if !strings.Contains(body, render.SummaryMarker) {
		return Comment{}, fmt.Errorf("%s: the body lacks render.SummaryMarker %q, by which perfbot finds its comment again: render it with render.RenderMarkdown", op, render.SummaryMarker)
	}
	if strings.Contains(body, historyMarker) || strings.Contains(body, entryMarker) {
		return Comment{}, fmt.Errorf("%s: the body holds %q or %q, which perfbot keeps for the comment's history: pass only the new report", op, historyMarker, entryMarker)
	}
	log := c.log.With("repo", repo.String(), "pr", number)
	for round := 1; ; round++ {
		existing, err := c.findComment(ctx, repo, number)
		if err != nil {
			return Comment{}, wrap(op, err)
		}
		if existing != nil {
			return c.editComment(ctx, op, log, repo, existing, body)
		}
		text := fitComment(body)
		if c.dryRun {
			log.Info("github: dry run: would create the perfbot comment", "bytes", len(text))
			return Comment{Created: true}, nil
		}
		created, _, err := c.gh.Issues.CreateComment(sendOnce(ctx), repo.Owner, repo.Name, number, &gh.IssueComment{Body: &text})
		if err == nil {
			log.Info("github: created the perfbot comment", "comment_id", created.GetID())
			return Comment{ID: created.GetID(), URL: created.GetHTMLURL(), Created: true}, nil
		}
		if !c.again(ctx, log, err, round, "create the perfbot comment") {
			return Comment{}, createFailed(op, err, round)
		}
	}
}

// again reports whether a create that failed with err should be tried
// again, after waiting: when it may have taken effect (a server or
// network error), the caller looks for its result before creating again.
func (c *Client) again(ctx context.Context, log *slog.Logger, err error, round int, what string) bool {
	if !mayHaveLanded(ctx, err) || round >= c.retry.policy.MaxAttempts {
		return false
	}
	wait := c.retry.backoff(round)
	log.Warn("github: "+what+" failed; looking whether it took effect before trying again",
		"err", err, "wait", wait, "attempt", round)
	return c.retry.policy.Sleep(ctx, wait) == nil && ctx.Err() == nil
}

// createFailed is the error of a create that failed after round rounds.
func createFailed(op string, err error, round int) error {
	if round == 1 {
		return wrap(op, err)
	}
	return fmt.Errorf("%w (gave up after %d attempts, each after making sure the one before had not taken effect)", wrap(op, err), round)
}

// editComment replaces existing's body with body, keeping the history.
func (c *Client) editComment(ctx context.Context, op string, log *slog.Logger, repo Repo, existing *gh.IssueComment, body string) (Comment, error) {
	out := Comment{ID: existing.GetID(), URL: existing.GetHTMLURL()}
	text := foldHistory(existing.GetBody(), body)
	if text == existing.GetBody() {
		log.Info("github: the perfbot comment is up to date", "comment_id", out.ID)
		return out, nil
	}
	if c.dryRun {
		log.Info("github: dry run: would edit the perfbot comment", "comment_id", out.ID, "bytes", len(text))
		return out, nil
	}
	edited, _, err := c.gh.Issues.EditComment(ctx, repo.Owner, repo.Name, existing.GetID(), &gh.IssueComment{Body: &text})
	if err != nil {
		return Comment{}, wrap(op, err)
	}
	log.Info("github: edited the perfbot comment", "comment_id", out.ID)
	out.URL = edited.GetHTMLURL()
	return out, nil
}

// findComment returns the first comment on the pull request that holds
// render.SummaryMarker, or nil, reading every page.
func (c *Client) findComment(ctx context.Context, repo Repo, number int) (*gh.IssueComment, error) {
	return c.findMarked(ctx, repo, number, render.SummaryMarker)
}

// findMarked returns the first comment on the pull request that holds
// marker, or nil, reading every page.
func (c *Client) findMarked(ctx context.Context, repo Repo, number int, marker string) (*gh.IssueComment, error) {
	opts := &gh.IssueListCommentsOptions{ListOptions: gh.ListOptions{PerPage: 100}}
	for range maxPages {
		page, resp, err := c.gh.Issues.ListComments(ctx, repo.Owner, repo.Name, number, opts)
		if err != nil {
			return nil, err
		}
		for _, cm := range page {
			if strings.Contains(cm.GetBody(), marker) {
				return cm, nil
			}
		}
		if resp.NextPage == 0 || resp.NextPage == opts.Page {
			return nil, nil
		}
		opts.Page = resp.NextPage
	}
	return nil, errors.New("list comments: more than 1000 pages")
}

// Comment adds a new comment to pull request number: a reply to a
// maintainer or usage text, never perfbot's report (UpsertComment keeps
// that one), so body must not hold render.SummaryMarker. It is retried
// like any request: an answer lost after GitHub saved the comment can,
// rarely, post it twice, which for a reply beats not posting it.
func (c *Client) Comment(ctx context.Context, repo Repo, number int, body string) (Comment, error) {
	op := fmt.Sprintf("comment on %s#%d", repo, number)
	switch {
	case strings.TrimSpace(body) == "":
		return Comment{}, fmt.Errorf("%s: the body is empty", op)
	case strings.Contains(body, render.SummaryMarker):
		return Comment{}, fmt.Errorf("%s: the body holds render.SummaryMarker, which marks the report comment: use UpsertComment", op)
	case len(body) > maxCommentLen:
		return Comment{}, fmt.Errorf("%s: the body is %d bytes, over GitHub's limit of %d characters", op, len(body), maxCommentLen)
	}
	log := c.log.With("repo", repo.String(), "pr", number)
	if c.dryRun {
		log.Info("github: dry run: would comment", "bytes", len(body))
		return Comment{Created: true}, nil
	}
	created, _, err := c.gh.Issues.CreateComment(ctx, repo.Owner, repo.Name, number, &gh.IssueComment{Body: &body})
	if err != nil {
		return Comment{}, wrap(op, err)
	}
	log.Info("github: commented", "comment_id", created.GetID())
	return Comment{ID: created.GetID(), URL: created.GetHTMLURL(), Created: true}, nil
}
