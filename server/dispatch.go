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

// Inserter is the part of the job queue the dispatcher uses.
type Inserter interface {
	InsertCompare(ctx context.Context, queueName string, args queue.CompareArgs) (queue.Inserted, error)
	InsertBaseline(ctx context.Context, queueName string, args queue.BaselineArgs) (queue.Inserted, error)
	InsertBisect(ctx context.Context, queueName string, args queue.BisectArgs) (queue.Inserted, error)
	InsertCommand(ctx context.Context, args queue.CommandArgs) (queue.Inserted, error)
	InsertNotify(ctx context.Context, args queue.NotifyArgs) error
}

// A Dispatcher turns webhook events into jobs; it is the webhook
// Handler's Sink. It only inserts rows (GitHub is answered later by the
// control queue's jobs), so a webhook is answered in milliseconds.
type Dispatcher struct {
	Repos  map[string]Repo // by owner/name
	Queue  Inserter
	Logger *slog.Logger
}

// maintainers are the author associations that may command perfbot.
var maintainers = map[string]bool{"OWNER": true, "MEMBER": true, "COLLABORATOR": true}

// Handle implements webhook.Sink.
func (d *Dispatcher) Handle(ctx context.Context, e webhook.Event) error {
	log := d.logger().With("delivery", e.DeliveryID(), "repo", e.RepoName())
	repo, ok := d.Repos[e.RepoName()]
	if !ok {
		log.Info("repository not configured; event ignored (add it to repos in the server config)")
		return nil
	}
	switch e := e.(type) {
	case *webhook.PullRequest:
		return d.pullRequest(ctx, log.With("pr", e.Number, "sha", short(e.HeadSHA)), repo, e)
	case *webhook.Command:
		return d.command(ctx, log.With("pr", e.Number, "author", e.Author), repo, e)
	case *webhook.Push:
		return d.push(ctx, log.With("ref", e.Ref, "sha", short(e.After)), repo, e)
	}
	return fmt.Errorf("unknown event %T", e)
}

func (d *Dispatcher) pullRequest(ctx context.Context, log *slog.Logger, repo Repo, e *webhook.PullRequest) error {
	if e.Draft && !repo.Drafts {
		log.Info("draft pull request; waiting until it is ready for review")
		return nil
	}
	if e.Fork {
		log.Info("pull request from a fork; not built until a maintainer comments /perfbot run")
		if e.Action == "opened" {
			return d.Queue.InsertNotify(ctx, queue.NotifyArgs{Repo: repo.Name, PR: e.Number, Reply: forkNotice})
		}
		return nil
	}
	ins, err := d.Queue.InsertCompare(ctx, repo.Queue, queue.CompareArgs{
		Repo: repo.Name, PR: e.Number, HeadSHA: e.HeadSHA, BaseSHA: e.BaseSHA,
		CloneURL: cloneURL(repo, e.CloneURL), Trigger: e.Action, Requester: e.Sender,
	})
	if err != nil {
		return err
	}
	log.Info("comparison queued", "job_id", ins.ID, "duplicate", ins.Duplicate, "cancelled", ins.Cancelled)
	if ins.Duplicate {
		return nil
	}
	return d.Queue.InsertNotify(ctx, queue.NotifyArgs{Repo: repo.Name, PR: e.Number, CheckSHA: e.HeadSHA, CheckTitle: "Queued"})
}

const forkNotice = "perfbot does not build pull requests from forks on its own: their code would run on our benchmark machines. " +
	"A maintainer can start a comparison by commenting `/perfbot run`."

func (d *Dispatcher) command(ctx context.Context, log *slog.Logger, repo Repo, e *webhook.Command) error {
	reply := func(text string) error {
		return d.Queue.InsertNotify(ctx, queue.NotifyArgs{Repo: repo.Name, PR: e.Number, Reply: text})
	}
	if !maintainers[e.Association] {
		log.Info("command refused: not a maintainer", "association", e.Association)
		return reply(fmt.Sprintf("@%s thanks for asking! perfbot takes commands only from the repository's owners, members and collaborators, "+
			"because they run code on shared benchmark machines. A maintainer can comment `/perfbot run` for you.", e.Author))
	}
	switch {
	case e.Err != nil:
		return reply(fmt.Sprintf("@%s I could not read that command: %v.\n\n%s", e.Author, e.Err, webhook.Usage))
	case e.Run != nil:
		ins, err := d.Queue.InsertCommand(ctx, queue.CommandArgs{
			Repo: repo.Name, PR: e.Number, Count: e.Run.Count, CloneURL: repo.CloneURL,
			Queue: repo.Queue, Requester: e.Author, Delivery: e.Delivery,
		})
		if err != nil {
			return err
		}
		log.Info("run requested", "job_id", ins.ID, "count", e.Run.Count)
		return nil
	case e.Bisect != nil:
		ins, err := d.Queue.InsertBisect(ctx, repo.Queue, queue.BisectArgs{
			Repo: repo.Name, PR: e.Number, Good: e.Bisect.Good, Bad: e.Bisect.Bad, Phase: e.Bisect.Phase,
			CloneURL: repo.CloneURL, Requester: e.Author,
		})
		if err != nil {
			return err
		}
		log.Info("bisect requested", "job_id", ins.ID, "duplicate", ins.Duplicate)
		if ins.Duplicate {
			return reply(fmt.Sprintf("@%s that bisection is already queued.", e.Author))
		}
		return nil
	default:
		return reply(webhook.Usage)
	}
}

func (d *Dispatcher) push(ctx context.Context, log *slog.Logger, repo Repo, e *webhook.Push) error {
	if !e.ToDefaultBranch() || !repo.Baselines {
		return nil
	}
	ins, err := d.Queue.InsertBaseline(ctx, repo.Queue, queue.BaselineArgs{
		Repo: repo.Name, SHA: e.After, CloneURL: cloneURL(repo, e.CloneURL),
	})
	if err != nil {
		return err
	}
	log.Info("baseline queued", "job_id", ins.ID, "duplicate", ins.Duplicate)
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
