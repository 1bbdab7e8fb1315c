package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/github"
	"github.com/perfbot/perfbot/runner"
	"github.com/perfbot/perfbot/server"
	"github.com/perfbot/perfbot/store"
	"github.com/perfbot/perfbot/store/queue"
)

// publisher adapts the GitHub client to runner.Publisher.
type publisher struct {
	gh        *github.Client
	checkName string
	detailURL string
}

var _ runner.Publisher = (*publisher)(nil)

func (p *publisher) UpsertSummary(ctx context.Context, repo string, pr int, body string) error {
	r, err := github.ParseRepo(repo)
	if err != nil {
		return err
	}
	_, err = p.gh.UpsertComment(ctx, r, pr, body)
	return err
}

// Reply makes body perfbot's one comment answering key (a delivery, a
// command, a job): a hidden marker names the key, and a retried job edits
// the comment it posted before instead of posting it again.
func (p *publisher) Reply(ctx context.Context, repo string, pr int, key, body string) error {
	marker := replyMarker(key)
	return p.UpsertMarked(ctx, repo, pr, marker, marker+"\n"+body)
}

// replyMarker is the hidden first line of the reply that answers key.
func replyMarker(key string) string {
	key = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == '-' || r == '>' {
			return '_'
		}
		return r
	}, key)
	return github.MarkerPrefix + "reply " + key + " -->"
}

func (p *publisher) SetCheck(ctx context.Context, repo, sha string, c runner.Check) error {
	r, err := github.ParseRepo(repo)
	if err != nil {
		return err
	}
	return p.gh.SetCheck(ctx, r, sha, github.Check{
		Name: p.checkName, Status: c.Status, Conclusion: c.Conclusion,
		Title: c.Title, Summary: c.Summary, DetailsURL: p.detailURL,
	})
}

// jobDeps is what the job workers share.
type jobDeps struct {
	runner  *runner.Runner
	store   *store.DB
	pub     *publisher
	gh      *github.Client
	queue   *queue.Client
	metrics *server.Metrics
	log     *slog.Logger
	// changes is each repository's change-point reporting config (by
	// owner/name); a repository not in it reports nothing.
	changes map[string]changePointConfig
	// configs holds the measurement config of each repository whose
	// server config gives one (by lowercased owner/name).
	configs map[string]*runner.ExternalConfig
}

// runnerFor returns the runner for a job of repo: the shared one, with
// the repository's config from the server config when it has one.
func (d *jobDeps) runnerFor(repo string) *runner.Runner {
	ext := d.configs[strings.ToLower(repo)]
	if ext == nil {
		return d.runner
	}
	r := *d.runner
	r.Config = ext
	return &r
}

// observe records a finished job's duration and outcome.
func (d *jobDeps) observe(kind string, start time.Time, err error) {
	if d.metrics == nil {
		return
	}
	outcome := "ok"
	switch {
	case errors.Is(err, context.Canceled):
		outcome = "cancelled"
	case err != nil:
		outcome = "error"
	}
	d.metrics.ObserveJob(kind, outcome, time.Since(start))
}

// allWorkers registers every job kind. Each process works only its own
// queues (serve: control; a worker: its --queue), but every River client
// must know every kind: the one that leads rescues abandoned jobs of any
// kind, and discards those it does not know.
func allWorkers(deps *jobDeps) *river.Workers {
	w := river.NewWorkers()
	river.AddWorker(w, &compareWorker{jobDeps: deps})
	river.AddWorker(w, &baselineWorker{jobDeps: deps})
	river.AddWorker(w, &bisectWorker{jobDeps: deps})
	river.AddWorker(w, &commandWorker{jobDeps: deps})
	river.AddWorker(w, &notifyWorker{jobDeps: deps})
	return w
}

// permanent turns runner.ErrPermanent into River's "do not retry".
func permanent(err error) error {
	if errors.Is(err, runner.ErrPermanent) {
		return river.JobCancel(err)
	}
	return err
}

// compareWorker compares a pull request's head against its base on a GPU
// host and publishes the result.
type compareWorker struct {
	river.WorkerDefaults[queue.CompareArgs]
	*jobDeps
}

func (w *compareWorker) Work(ctx context.Context, job *river.Job[queue.CompareArgs]) (err error) {
	defer func(start time.Time) { w.observe(queue.KindCompare, start, err) }(time.Now())
	ctx = runner.WithSessionLabel(ctx, jobLabel(job.JobRow))
	a := job.Args
	w.log.Info("job started", "job_id", job.ID, "kind", job.Kind, "repo", a.Repo, "pr", a.PR, "sha", a.HeadSHA, "attempt", job.Attempt)
	if job.Attempt > 1 {
		// An earlier attempt may have measured and stored its comparison
		// and then been killed, or had its completion lost (River's
		// completer gives up while the database is away): publish what
		// it stored rather than measure again.
		id, err := w.store.EndedSessionComparison(ctx, fmt.Sprintf("%s job %d attempt ", job.Kind, job.ID))
		if err != nil {
			return err
		}
		if id != 0 {
			w.log.Info("an earlier attempt stored this comparison: publishing it", "job_id", job.ID, "comparison", id)
			return (&notifyWorker{jobDeps: w.jobDeps}).publishStored(ctx, queue.NotifyArgs{Repo: a.Repo, PR: a.PR, CheckSHA: a.HeadSHA, Comparison: id})
		}
	}
	res, err := w.runnerFor(a.Repo).PullRequest(ctx, w.pub, runner.PullRequest{
		Repo: a.Repo, Number: a.PR, Source: a.CloneURL, BaseSHA: a.BaseSHA, HeadSHA: a.HeadSHA, Count: a.Count,
		Attempt: job.Attempt, FinalAttempt: job.Attempt >= job.MaxAttempts,
		Newer: func(ctx context.Context) string {
			newest, err := w.queue.NewestHead(ctx, a.Repo, a.PR)
			if err != nil {
				w.log.Warn("read the newest head", "job_id", job.ID, "err", err)
			}
			return newest
		},
	})
	if errors.Is(err, runner.ErrPublish) {
		// Measured and stored, but GitHub did not take the result: retry
		// the publishing alone, from the stored comparison.
		w.log.Warn("result not published; queued for retry", "job_id", job.ID, "comparison", res.ComparisonID, "err", err)
		return w.queue.InsertNotify(context.WithoutCancel(ctx), queue.NotifyArgs{
			Repo: a.Repo, PR: a.PR, CheckSHA: a.HeadSHA, Comparison: res.ComparisonID,
		})
	}
	return permanent(err)
}

// baselineWorker records baseline runs of a default-branch commit.
type baselineWorker struct {
	river.WorkerDefaults[queue.BaselineArgs]
	*jobDeps
}

func (w *baselineWorker) Work(ctx context.Context, job *river.Job[queue.BaselineArgs]) (err error) {
	defer func(start time.Time) { w.observe(queue.KindBaseline, start, err) }(time.Now())
	ctx = runner.WithSessionLabel(ctx, jobLabel(job.JobRow))
	res, err := w.runnerFor(job.Args.Repo).Baseline(ctx, runner.BaselineRequest{Source: job.Args.CloneURL, Rev: job.Args.SHA,
		History: w.changes[job.Args.Repo].Report})
	if errors.Is(err, runner.ErrNoConfig) || errors.Is(err, runner.ErrInvalidConfig) {
		// No retry can help: the commit says nothing (or nothing valid)
		// about how to measure it.
		w.log.Warn("baseline not measured", "repo", job.Args.Repo, "sha", job.Args.SHA, "err", err)
		return river.JobCancel(err)
	}
	if err != nil {
		return err
	}
	w.log.Info("baseline stored", "job_id", job.ID, "repo", job.Args.Repo, "sha", job.Args.SHA, "ok", res.OK, "failed", res.Failed)
	w.reportChanges(ctx, job.Args.Repo, res)
	return nil
}

// reportChanges reports new change points after a push's baseline runs,
// when the repository's config asks for it. A failure is logged and
// leaves the job done: the runs are stored, and the change points not
// posted are tried again after the next push.
func (w *baselineWorker) reportChanges(ctx context.Context, repo string, res *runner.BaselineResult) {
	cfg, ok := w.changes[repo]
	if !ok || !cfg.Report || res.BuildFailed {
		return
	}
	r := &changeReporter{store: w.store, gh: w.gh, log: w.log}
	p := pushedBaseline{Repo: repo, StoredRepo: res.Repo, Machine: res.Machine, SHA: res.Commit.SHA}
	if ext := w.configs[strings.ToLower(repo)]; ext != nil {
		p.ConfigPath = ext.Path
	}
	for _, c := range res.History {
		p.History = append(p.History, analysis.HistoryCommit{SHA: c.SHA, Subject: c.Subject})
	}
	n, err := r.report(ctx, cfg, p)
	if err != nil {
		w.log.Error("change points not reported", "repo", repo, "sha", res.Commit.SHA, "posted", n, "err", err)
	}
}

// commandWorker resolves a maintainer's /perfbot run: it reads the pull
// request's base and head from GitHub and queues the comparison. perfbot
// serve works it, on the control queue.
type commandWorker struct {
	river.WorkerDefaults[queue.CommandArgs]
	*jobDeps
}

// controlTimeout bounds a control job: a few GitHub API calls.
const controlTimeout = time.Minute

// Timeout implements river.Worker.
func (w *commandWorker) Timeout(*river.Job[queue.CommandArgs]) time.Duration { return controlTimeout }

func (w *commandWorker) Work(ctx context.Context, job *river.Job[queue.CommandArgs]) (err error) {
	defer func(start time.Time) { w.observe(queue.KindCommand, start, err) }(time.Now())
	ctx = runner.WithSessionLabel(ctx, jobLabel(job.JobRow))
	a := job.Args
	// One reply a command, whichever of its attempts posts it.
	replyKey := "command " + a.Delivery
	if a.Delivery == "" {
		replyKey = fmt.Sprintf("job %d", job.ID)
	}
	repo, err := github.ParseRepo(a.Repo)
	if err != nil {
		return river.JobCancel(err)
	}
	pr, err := w.gh.PullRequest(ctx, repo, a.PR)
	if errors.Is(err, github.ErrNotFound) {
		return river.JobCancel(err)
	}
	if err != nil {
		return err
	}
	if pr.State != "open" {
		return w.pub.Reply(ctx, a.Repo, a.PR, replyKey, fmt.Sprintf("@%s this pull request is %s; perfbot compares open pull requests only.", a.Requester, pr.State))
	}
	clone := a.CloneURL
	if clone == "" {
		clone = pr.CloneURL
	}
	ins, err := w.queue.InsertCompare(ctx, a.Queue, queue.CompareArgs{
		Repo: a.Repo, PR: a.PR, HeadSHA: pr.HeadSHA, BaseSHA: pr.BaseSHA, CloneURL: clone,
		Count: a.Count, Trigger: "command", Requester: a.Requester, UpdatedAt: pr.UpdatedAt,
	})
	if err != nil {
		return err
	}
	if ins.Superseded {
		return w.pub.Reply(ctx, a.Repo, a.PR, replyKey, fmt.Sprintf("@%s a newer head, `%s`, is queued already; perfbot compares that one.", a.Requester, short(ins.Newer)))
	}
	if ins.Duplicate {
		return w.pub.Reply(ctx, a.Repo, a.PR, replyKey, fmt.Sprintf("@%s a comparison of `%s` is already queued or running.", a.Requester, short(pr.HeadSHA)))
	}
	if err := w.pub.SetCheck(ctx, a.Repo, pr.HeadSHA, runner.Check{Status: runner.CheckQueued, Title: "Queued by /perfbot run"}); err != nil {
		return err
	}
	count := "the configured number of"
	if a.Count > 0 {
		count = fmt.Sprint(a.Count)
	}
	return w.pub.Reply(ctx, a.Repo, a.PR, replyKey, fmt.Sprintf("@%s queued: `%s` against `%s`, %s runs a side.", a.Requester, short(pr.BaseSHA), short(pr.HeadSHA), count))
}

// notifyWorker posts replies and queued checks; perfbot serve works it.
type notifyWorker struct {
	river.WorkerDefaults[queue.NotifyArgs]
	*jobDeps
}

// Timeout implements river.Worker.
func (w *notifyWorker) Timeout(*river.Job[queue.NotifyArgs]) time.Duration { return controlTimeout }

func (w *notifyWorker) Work(ctx context.Context, job *river.Job[queue.NotifyArgs]) (err error) {
	defer func(start time.Time) { w.observe(queue.KindNotify, start, err) }(time.Now())
	a := job.Args
	if a.Comparison != 0 {
		return w.publishStored(ctx, a)
	}
	if a.CheckSHA != "" && (a.SupersededBy != "" || a.Closed) {
		// The comparison of CheckSHA was dropped: end its check, unless
		// it finished first and published its own.
		done, err := w.queue.Finished(ctx, a.Repo, a.PR, a.CheckSHA)
		if err != nil || done {
			return err
		}
		ch := runner.ClosedCheck(a.CheckSHA)
		if a.SupersededBy != "" {
			ch = runner.SupersededCheck(a.Repo, a.PR, a.CheckSHA, a.SupersededBy)
		}
		return w.pub.SetCheck(ctx, a.Repo, a.CheckSHA, ch)
	}
	if a.CheckSHA != "" {
		// A worker may have started (or finished) the comparison already:
		// then "queued" would be a step back.
		waiting, err := w.queue.Waiting(ctx, a.Repo, a.PR, a.CheckSHA)
		if err != nil {
			return err
		}
		if waiting {
			if err := w.pub.SetCheck(ctx, a.Repo, a.CheckSHA, runner.Check{Status: runner.CheckQueued, Title: a.CheckTitle}); err != nil {
				return err
			}
		}
		// A newer push, or the pull request closing, may have dropped the
		// comparison while "queued" was being posted, and the note that
		// ends the check may have run first: end it now. (A note inserted
		// after this look posts after "queued" did.) On a later attempt
		// too, waiting or not: an earlier one may have posted "queued" and
		// then been killed (serve killed, or GitHub answered an error
		// after taking it) before this look; the chaos soak left two
		// checks "Queued" so.
		if waiting || job.Attempt > 1 {
			if err := w.endIfDropped(ctx, a.Repo, a.PR, a.CheckSHA); err != nil {
				return err
			}
		}
	}
	if a.Reply != "" {
		return w.pub.Reply(ctx, a.Repo, a.PR, cmp.Or(a.ReplyKey, fmt.Sprintf("job %d", job.ID)), a.Reply)
	}
	return nil
}

// endIfDropped ends the check of head neutral when its comparison was
// dropped: superseded by the pull request's newest head, or, when it is
// the newest, because the pull request was closed.
func (w *notifyWorker) endIfDropped(ctx context.Context, repo string, pr int, head string) error {
	dropped, err := w.queue.Dropped(ctx, repo, pr, head)
	if err != nil || !dropped {
		return err
	}
	newest, err := w.queue.NewestHead(ctx, repo, pr)
	if err != nil {
		return err
	}
	ch := runner.ClosedCheck(head)
	if newest != "" && newest != head {
		ch = runner.SupersededCheck(repo, pr, head, newest)
	}
	return w.pub.SetCheck(ctx, repo, head, ch)
}

// publishStored publishes a stored comparison whose worker could not.
func (w *notifyWorker) publishStored(ctx context.Context, a queue.NotifyArgs) error {
	c, err := w.store.Comparison(ctx, a.Comparison)
	if errors.Is(err, store.ErrNotFound) {
		return river.JobCancel(err)
	}
	if err != nil {
		return err
	}
	var rep analysis.Report
	if err := json.Unmarshal([]byte(c.Report), &rep); err != nil {
		return river.JobCancel(fmt.Errorf("comparison %d: stored report: %w", a.Comparison, err))
	}
	return runner.PublishResult(ctx, w.pub, a.Repo, a.PR, a.CheckSHA, &rep, c.Markdown)
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// jobLabel says which job attempt a session belongs to.
func jobLabel(j *rivertype.JobRow) string {
	return fmt.Sprintf("%s job %d attempt %d", j.Kind, j.ID, j.Attempt)
}
