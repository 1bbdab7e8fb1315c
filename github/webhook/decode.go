package webhook

import (
	"encoding/json"
	"fmt"
	"strings"

	gh "github.com/google/go-github/v60/github"
)

// Each decode function turns a verified payload into an Event, or returns
// a nil Event and the reason it is ignored, or an error that says what is
// wrong with the payload.

func decodePullRequest(delivery string, payload []byte) (Event, string, error) {
	var ev gh.PullRequestEvent
	if err := json.Unmarshal(payload, &ev); err != nil {
		return nil, "", fmt.Errorf("malformed pull_request payload: %v", err)
	}
	switch action := ev.GetAction(); action {
	case "opened", "synchronize", "reopened", "ready_for_review", "closed":
	default:
		return nil, fmt.Sprintf("pull_request action %q", action), nil
	}
	pr := ev.GetPullRequest()
	base, head := pr.GetBase(), pr.GetHead()
	baseRepo := base.GetRepo()
	if baseRepo == nil {
		baseRepo = ev.GetRepo()
	}
	p := &PullRequest{
		Delivery:  delivery,
		Repo:      ev.GetRepo().GetFullName(),
		Action:    ev.GetAction(),
		Number:    ev.GetNumber(),
		Draft:     pr.GetDraft(),
		Fork:      isFork(baseRepo, head.GetRepo()),
		BaseRef:   base.GetRef(),
		BaseSHA:   base.GetSHA(),
		HeadRef:   head.GetRef(),
		HeadSHA:   head.GetSHA(),
		CloneURL:  ev.GetRepo().GetCloneURL(),
		Sender:    ev.GetSender().GetLogin(),
		UpdatedAt: pr.GetUpdatedAt().Time,
	}
	if p.Number == 0 {
		p.Number = pr.GetNumber()
	}
	switch {
	case p.Repo == "":
		return nil, "", noField("pull_request", "repository.full_name")
	case p.Number == 0:
		return nil, "", noField("pull_request", "number")
	case p.BaseSHA == "":
		return nil, "", noField("pull_request", "pull_request.base.sha")
	case p.HeadSHA == "":
		return nil, "", noField("pull_request", "pull_request.head.sha")
	}
	return p, "", nil
}

// isFork reports whether a pull request's head repository is another one
// than its base. A nil head repository is a deleted fork. The "fork" flag
// of the head repository is not the test: a branch of a repository that
// is itself a fork has it set.
func isFork(base, head *gh.Repository) bool {
	switch {
	case head == nil || base == nil:
		return true
	case head.ID != nil && base.ID != nil:
		return head.GetID() != base.GetID()
	}
	return !strings.EqualFold(head.GetFullName(), base.GetFullName())
}

func decodeIssueComment(delivery string, payload []byte) (Event, string, error) {
	var ev gh.IssueCommentEvent
	if err := json.Unmarshal(payload, &ev); err != nil {
		return nil, "", fmt.Errorf("malformed issue_comment payload: %v", err)
	}
	if action := ev.GetAction(); action != "created" {
		return nil, fmt.Sprintf("issue_comment action %q", action), nil
	}
	if ev.Issue == nil || ev.Comment == nil {
		return nil, "", noField("issue_comment", "issue or comment")
	}
	if !ev.Issue.IsPullRequest() {
		return nil, "comment on an issue, not a pull request", nil
	}
	// A GitHub App's comments come from a user of type Bot: never take
	// commands from one, perfbot's own replies included.
	if ev.Comment.GetUser().GetType() == "Bot" {
		return nil, "comment by a bot", nil
	}
	cmd, ok := ParseCommand(ev.Comment.GetBody())
	if !ok {
		return nil, "comment has no /perfbot command", nil
	}
	cmd.Delivery = delivery
	cmd.Repo = ev.GetRepo().GetFullName()
	cmd.Number = ev.Issue.GetNumber()
	cmd.CommentID = ev.Comment.GetID()
	cmd.Author = ev.Comment.GetUser().GetLogin()
	cmd.Association = ev.Comment.GetAuthorAssociation()
	switch {
	case cmd.Repo == "":
		return nil, "", noField("issue_comment", "repository.full_name")
	case cmd.Number == 0:
		return nil, "", noField("issue_comment", "issue.number")
	case cmd.CommentID == 0:
		return nil, "", noField("issue_comment", "comment.id")
	}
	return cmd, "", nil
}

func decodePush(delivery string, payload []byte) (Event, string, error) {
	var ev gh.PushEvent
	if err := json.Unmarshal(payload, &ev); err != nil {
		return nil, "", fmt.Errorf("malformed push payload: %v", err)
	}
	repo := ev.GetRepo()
	p := &Push{
		Delivery:      delivery,
		Repo:          repo.GetFullName(),
		Ref:           ev.GetRef(),
		Before:        ev.GetBefore(),
		After:         ev.GetAfter(),
		DefaultBranch: repo.GetDefaultBranch(),
		CloneURL:      repo.GetCloneURL(),
		Sender:        ev.GetSender().GetLogin(),
	}
	switch {
	case p.Repo == "":
		return nil, "", noField("push", "repository.full_name")
	case p.Ref == "":
		return nil, "", noField("push", "ref")
	case p.After == "":
		return nil, "", noField("push", "after")
	}
	return p, "", nil
}

// noField says which required field a payload lacks.
func noField(event, field string) error {
	return fmt.Errorf("malformed %s payload: no %s", event, field)
}
