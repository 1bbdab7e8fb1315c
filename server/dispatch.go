package server

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/perfbot/perfbot/github/webhook"
	"github.com/perfbot/perfbot/store/queue"
)

// A Repo is a repository perfbot serves, as its server config names it.
type Repo struct {
	Name string // owner/name
	// CloneURL is where workers mirror it from; "" = the URL in the
	// webhook payload.
	CloneURL string
	// Queue is the worker queue its benchmark jobs go to; "" =
	// queue.DefaultQueue.
	Queue string
	// Drafts: benchmark draft pull requests too (default: wait until
	// ready for review).
	Drafts bool
	// Baselines: record baseline runs on pushes to the default branch.
	Baselines bool
}

// Inserter is the part of the job queue the dispatcher uses: a
// queue.Client, or a queue.Tx inside one transaction.
type Inserter interface {
	InsertCompare(ctx context.Context, queueName string, args queue.CompareArgs) (queue.Inserted, error)
	InsertBaseline(ctx context.Context, queueName string, args queue.BaselineArgs) (queue.Inserted, error)
	InsertBisect(ctx context.Context, queueName string, args queue.BisectArgs) (queue.Inserted, error)
	InsertCommand(ctx context.Context, args queue.CommandArgs) (queue.Inserted, error)
	InsertNotify(ctx context.Context, args queue.NotifyArgs) error
	ClosePullRequest(ctx context.Context, repo string, pr int) ([]string, error)
}

// A Dispatcher turns webhook events into jobs; it is the webhook
// Handler's Sink (a webhook.OnceSink). It only inserts rows (GitHub is
// answered later by the control queue's jobs), so a webhook is answered
// in milliseconds. Everything one event inserts, and the record of its
// delivery ID, commits in one transaction: when any of it fails, none of
// it is kept and the Handler's 500 means "nothing happened, redeliver".
type Dispatcher struct {
	Repos  map[string]Repo // by owner/name
	Queue  *queue.Client
	Logger *slog.Logger
}

var _ webhook.OnceSink = (*Dispatcher)(nil)

// HandleOnce implements webhook.OnceSink: the delivery ID is recorded in
// the transaction that inserts the event's jobs. An event perfbot does not
// act on (see ignored) is answered as ignored and records nothing.
func (d *Dispatcher) HandleOnce(ctx context.Context, e webhook.Event) (webhook.Handled, error) {
	if _, reason := d.ignored(e); reason != "" {
		d.logger().Info("event ignored", "delivery", e.DeliveryID(), "repo", e.RepoName(), "reason", reason)
		return webhook.Handled{Ignored: reason}, nil
	}
	var done webhook.Handled
	var c committed
	err := d.Queue.InTx(ctx, func(tx *queue.Tx) error {
		first, err := tx.FirstSeen(ctx, e.DeliveryID())
		if err != nil {
			return err
		}
		if !first {
			done.Duplicate = true
			return nil
		}
		return d.handle(ctx, tx, e, &c)
	})
	if err == nil {
		c.flush()
	}
	return done, err
}

// Handle implements webhook.Sink: the event's jobs commit together,
// without a delivery record.
func (d *Dispatcher) Handle(ctx context.Context, e webhook.Event) error {
	var c committed
	err := d.Queue.InTx(ctx, func(tx *queue.Tx) error { return d.handle(ctx, tx, e, &c) })
	if err == nil {
		c.flush()
	}
	return err
}

// committed holds what a delivery's transaction has to say, said once it
// commits: a "comparison queued" line must not belong to a delivery that
// then rolled back and was answered 500.
type committed struct{ lines []func() }

func (c *committed) info(log *slog.Logger, msg string, args ...any) {
	c.lines = append(c.lines, func() { log.Info(msg, args...) })
}

func (c *committed) flush() {
	for _, line := range c.lines {
		line()
	}
}

// repo finds the configured repository named name. GitHub's owner and
// repository names are not case-sensitive, so neither is the lookup.
func (d *Dispatcher) repo(name string) (Repo, bool) {
	if r, ok := d.Repos[name]; ok {
		return r, true
	}
	for n, r := range d.Repos {
		if strings.EqualFold(n, name) {
			return r, true
		}
	}
	return Repo{}, false
}

// ignored returns e's repository and why e queues nothing, or "" when
// it may queue something: the decisions that need no database, so that
// HandleOnce makes them before it records the delivery.
func (d *Dispatcher) ignored(e webhook.Event) (Repo, string) {
	repo, ok := d.repo(e.RepoName())
	if !ok {
		return repo, "repository not configured: " + e.RepoName() + " (add it to repos in the server config)"
	}
	switch e := e.(type) {
	case *webhook.PullRequest:
		if e.Draft && !repo.Drafts {
			return repo, "draft pull request; measured once it is ready for review"
		}
		if e.Fork && e.Action != "opened" {
			return repo, "pull request from a fork; not built until a maintainer comments /perfbot run"
		}
	case *webhook.Push:
		if !e.ToDefaultBranch() {
			return repo, "push to a branch other than the default"
		}
		if !repo.Baselines {
			return repo, "baselines are off for " + repo.Name
		}
	}
	return repo, ""
}

// maintainers are the author associations that may command perfbot.
var maintainers = map[string]bool{"OWNER": true, "MEMBER": true, "COLLABORATOR": true}

// handle inserts e's jobs through q; c says what it did once that commits.
func (d *Dispatcher) handle(ctx context.Context, q Inserter, e webhook.Event, c *committed) error {
	log := d.logger().With("delivery", e.DeliveryID(), "repo", e.RepoName())
	repo, reason := d.ignored(e)
	if reason != "" {
		c.info(log, "event ignored", "reason", reason)
		return nil
	}
	switch e := e.(type) {
	case *webhook.PullRequest:
		return d.pullRequest(ctx, q, c, log.With("pr", e.Number, "sha", short(e.HeadSHA)), repo, e)
	case *webhook.Command:
		return d.command(ctx, q, c, log.With("pr", e.Number, "author", e.Author), repo, e)
	case *webhook.Push:
		return d.push(ctx, q, c, log.With("ref", e.Ref, "sha", short(e.After)), repo, e)
	}
	return fmt.Errorf("unknown event %T", e)
}

func (d *Dispatcher) pullRequest(ctx context.Context, q Inserter, c *committed, log *slog.Logger, repo Repo, e *webhook.PullRequest) error {
	if e.Action == "closed" {
		// Its queued comparisons will never be wanted: drop them, and end
		// the checks they left "Queued".
		heads, err := q.ClosePullRequest(ctx, repo.Name, e.Number)
		if err != nil {
			return err
		}
		c.info(log, "pull request closed", "dropped_heads", len(heads))
		return nil
	}
	if e.Fork {
		c.info(log, "pull request from a fork; not built until a maintainer comments /perfbot run")
		// One notice a pull request, edited in place on every push.
		return q.InsertNotify(ctx, queue.NotifyArgs{Repo: repo.Name, PR: e.Number, Reply: forkNotice, ReplyKey: "fork notice"})
	}
	ins, err := q.InsertCompare(ctx, repo.Queue, queue.CompareArgs{
		Repo: repo.Name, PR: e.Number, HeadSHA: e.HeadSHA, BaseSHA: e.BaseSHA,
		CloneURL: cloneURL(repo, e.CloneURL), Trigger: e.Action, Requester: e.Sender, UpdatedAt: e.UpdatedAt,
	})
	if err != nil {
		return err
	}
	if ins.Superseded {
		c.info(log, "comparison not queued: a newer head is queued", "newer", short(ins.Newer), "updated_at", e.UpdatedAt)
		return nil
	}
	c.info(log, "comparison queued", "job_id", ins.ID, "duplicate", ins.Duplicate, "cancelled", ins.Cancelled)
	if ins.Duplicate {
		return nil
	}
	return q.InsertNotify(ctx, queue.NotifyArgs{Repo: repo.Name, PR: e.Number, CheckSHA: e.HeadSHA, CheckTitle: "Queued"})
}

const forkNotice = "perfbot does not build pull requests from forks on its own: their code would run on our benchmark machines. " +
	"A maintainer can start a comparison by commenting `/perfbot run`."

func (d *Dispatcher) command(ctx context.Context, q Inserter, c *committed, log *slog.Logger, repo Repo, e *webhook.Command) error {
	reply := func(text string) error {
		return q.InsertNotify(ctx, queue.NotifyArgs{Repo: repo.Name, PR: e.Number, Reply: text, ReplyKey: "delivery " + e.Delivery})
	}
	if !maintainers[e.Association] {
		c.info(log, "command refused: not a maintainer", "association", e.Association)
		return reply(fmt.Sprintf("@%s thanks for asking! perfbot takes commands only from the repository's owners, members and collaborators, "+
			"because they run code on shared benchmark machines. A maintainer can comment `/perfbot run` for you.", e.Author))
	}
	switch {
	case e.Err != nil:
		return reply(fmt.Sprintf("@%s I could not read that command: %v.\n\n%s", e.Author, e.Err, webhook.Usage))
	case e.Run != nil:
		ins, err := q.InsertCommand(ctx, queue.CommandArgs{
			Repo: repo.Name, PR: e.Number, Count: e.Run.Count, CloneURL: repo.CloneURL,
			Queue: repo.Queue, Requester: e.Author, Delivery: e.Delivery,
		})
		if err != nil {
			return err
		}
		c.info(log, "run requested", "job_id", ins.ID, "count", e.Run.Count)
		return nil
	case e.Bisect != nil:
		ins, err := q.InsertBisect(ctx, repo.Queue, queue.BisectArgs{
			Repo: repo.Name, PR: e.Number, Good: e.Bisect.Good, Bad: e.Bisect.Bad, Phase: e.Bisect.Phase,
			CloneURL: repo.CloneURL, Requester: e.Author,
		})
		if err != nil {
			return err
		}
		c.info(log, "bisect requested", "job_id", ins.ID, "duplicate", ins.Duplicate)
		if ins.Duplicate {
			return reply(fmt.Sprintf("@%s that bisection is already queued.", e.Author))
		}
		return nil
	default:
		return reply(webhook.Usage)
	}
}

func (d *Dispatcher) push(ctx context.Context, q Inserter, c *committed, log *slog.Logger, repo Repo, e *webhook.Push) error {
	ins, err := q.InsertBaseline(ctx, repo.Queue, queue.BaselineArgs{
		Repo: repo.Name, SHA: e.After, CloneURL: cloneURL(repo, e.CloneURL),
	})
	if err != nil {
		return err
	}
	c.info(log, "baseline queued", "job_id", ins.ID, "duplicate", ins.Duplicate)
	return nil
}

func cloneURL(repo Repo, fromPayload string) string {
	if repo.CloneURL != "" {
		return repo.CloneURL
	}
	return fromPayload
}

func (d *Dispatcher) logger() *slog.Logger {
	if d.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return d.Logger
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return strings.TrimSpace(sha)
}
