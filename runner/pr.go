package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/analysis/render"
	"github.com/perfbot/perfbot/runner/workspace"
)

// A Publisher reports on pull requests: perfbot's one summary comment per
// pull request (edited in place) and a check on a commit. cmd/perfbot
// adapts the github package's client to it; tests record.
type Publisher interface {
	// UpsertSummary creates or edits the pull request's one perfbot
	// comment; body starts with render.SummaryMarker.
	UpsertSummary(ctx context.Context, repo string, pr int, body string) error
	// SetCheck creates or updates perfbot's check on commit sha.
	SetCheck(ctx context.Context, repo, sha string, c Check) error
}

// A Check is the state of perfbot's check on a commit, as GitHub's Checks
// API names it.
type Check struct {
	Status     string // CheckQueued, CheckInProgress or CheckCompleted
	Conclusion string // with CheckCompleted: success, neutral, failure, action_required, cancelled, timed_out
	Title      string
	Summary    string // markdown
}

// Check statuses and conclusions.
const (
	CheckQueued     = "queued"
	CheckInProgress = "in_progress"
	CheckCompleted  = "completed"

	ConclusionSuccess        = "success"
	ConclusionNeutral        = "neutral"
	ConclusionFailure        = "failure"
	ConclusionActionRequired = "action_required"
	ConclusionCancelled      = "cancelled"
	ConclusionTimedOut       = "timed_out"
)

// SupersededCheck is the check of a head whose comparison a newer push
// cancelled: completed, neutral (GitHub's convention for a run that did
// not judge the commit: it blocks no merge, and a commit status maps it to
// success), naming the head that superseded it, with a link when repo is
// on GitHub.
func SupersededCheck(repo string, pr int, head, newer string) Check {
	link := "`" + short(newer) + "`"
	if strings.Count(repo, "/") == 1 && !strings.Contains(repo, ":") {
		link = fmt.Sprintf("[`%s`](https://github.com/%s/pull/%d/commits/%s)", short(newer), repo, pr, newer)
	}
	return Check{Status: CheckCompleted, Conclusion: ConclusionNeutral, Title: "Superseded by " + short(newer),
		Summary: fmt.Sprintf("A newer push superseded head `%s` before its comparison finished: perfbot compares %s instead.", short(head), link)}
}

// ClosedCheck is the check of a head whose queued comparison was dropped
// because its pull request was closed: completed, neutral.
func ClosedCheck(head string) Check {
	return Check{Status: CheckCompleted, Conclusion: ConclusionNeutral, Title: "Pull request closed",
		Summary: fmt.Sprintf("The pull request was closed before head `%s` was compared; reopening it queues a comparison.", short(head))}
}

// Conclusion maps a report to the check's conclusion: a regression that
// fails checks (analysis.Report.Fails: the headline's, or any phase's
// with fail_on: any-phase) fails it, runs that failed ask a maintainer to
// act, an inconclusive comparison is neutral, and no change or an
// improvement succeeds (a trade-off too, unless fail_on says otherwise).
func Conclusion(rep *analysis.Report) string {
	if rep.Fails() {
		return ConclusionFailure
	}
	switch rep.Verdict {
	case analysis.VerdictError:
		return ConclusionActionRequired
	case analysis.VerdictInconclusive:
		return ConclusionNeutral
	default:
		return ConclusionSuccess
	}
}

// A PullRequest asks for one pull request's head to be compared against
// its base and the result published on it.
type PullRequest struct {
	Repo             string // owner/name, as the Publisher names it
	Number           int
	Source           string // clone URL or path the workspace opens
	BaseSHA, HeadSHA string
	Count            int // runs per side; 0 = the config's
	// Attempt and FinalAttempt: a failure that may pass on a retry (the
	// database was down, say) is published only on the final attempt;
	// before it the check goes back to queued.
	Attempt      int
	FinalAttempt bool
	// ProgressEvery is the least time between two progress updates of the
	// check; default 30 seconds (GitHub's rate limits are per hour).
	ProgressEvery time.Duration
	// Newer, when set, says which head superseded this one when the job
	// is cancelled ("" when none did: the worker is stopping, and the job
	// runs again). A superseded head's check ends neutral, naming it.
	Newer func(context.Context) string
}

// ErrPermanent marks a job failure that no retry can fix (the head commit
// is gone, the job timed out, the config is invalid): the job queue must
// not run it again. The pull request has been told.
var ErrPermanent = errors.New("permanent failure")

// PullRequest compares pr's head against its base and publishes the result:
// the check goes in_progress with a progress summary, then completed with
// the verdict's conclusion, and the summary comment is created or edited.
// Run again for the same head (a rescued job), it ends with the same one
// comment and one check. Failures are published as what they are —
// never as a regression — and the returned error wraps ErrPermanent when
// retrying cannot help.
func (r *Runner) PullRequest(ctx context.Context, pub Publisher, pr PullRequest) (*CompareResult, error) {
	log := r.log().With("repo", pr.Repo, "pr", pr.Number, "sha", short(pr.HeadSHA))
	// Publishing must outlive a cancelled job context: a cancelled or
	// timed-out job still tells the pull request why it stopped.
	pubCtx := context.WithoutCancel(ctx)
	publish := func(what string, err error) {
		if err != nil {
			log.Error("publish "+what, "err", err)
		}
	}
	base, head := short(pr.BaseSHA), short(pr.HeadSHA)
	what := fmt.Sprintf("base `%s` against head `%s`", base, head)
	if pr.Attempt > 1 {
		what += fmt.Sprintf(" (attempt %d)", pr.Attempt)
	}
	publish("check", pub.SetCheck(pubCtx, pr.Repo, pr.HeadSHA, Check{
		Status: CheckInProgress, Title: "Building base and head", Summary: "Comparing " + what + ".",
	}))

	every := pr.ProgressEvery
	if every <= 0 {
		every = 30 * time.Second
	}
	var (
		mu   sync.Mutex
		last time.Time
	)
	progress := &progressSender{send: func(c Check) { publish("progress", pub.SetCheck(pubCtx, pr.Repo, pr.HeadSHA, c)) }}
	onProgress := func(p Progress) {
		mu.Lock()
		defer mu.Unlock()
		if time.Since(last) < every && p.Finished < p.Total {
			return
		}
		last = time.Now()
		title := fmt.Sprintf("Measuring: run %d of %d", p.Finished, p.Total)
		if p.Left > 0 {
			title += fmt.Sprintf(", about %s left", p.Left.Round(time.Second))
		}
		progress.post(Check{Status: CheckInProgress, Title: title, Summary: "Comparing " + what + "."})
	}

	req := CompareRequest{Source: pr.Source, Base: pr.BaseSHA, Head: pr.HeadSHA, Count: pr.Count, OnProgress: onProgress, PR: pr.Number}
	if dl, ok := ctx.Deadline(); ok {
		// The job's limit: a count or cap that cannot end within it is
		// refused before anything is built (ErrUnreachable).
		req.Timeout = time.Until(dl)
	}
	res, err := r.Compare(ctx, req)
	// The last progress update lands before the final check, never after.
	progress.wait()
	if err != nil {
		return nil, publishFailure(pubCtx, ctx, log, pub, pr, err)
	}
	if err := PublishResult(pubCtx, pub, pr.Repo, pr.Number, pr.HeadSHA, res.Report, res.Markdown); err != nil {
		// The comparison is stored; only telling GitHub failed (after the
		// client's own retries). The caller queues a retry of the
		// publishing alone rather than measuring again.
		log.Error("publish result", "err", err, "comparison", res.ComparisonID)
		return res, fmt.Errorf("%w: comparison %d: %w", ErrPublish, res.ComparisonID, err)
	}
	log.Info("published", "verdict", res.Report.Verdict, "comparison", res.ComparisonID)
	return res, nil
}

// ErrPublish means a comparison finished and was stored but its result
// could not be published; PullRequest returns it with the result.
var ErrPublish = errors.New("publish result")

// PublishResult posts a finished comparison: the summary comment, then
// the completed check with the verdict's conclusion. It is what a retry
// runs from the stored comparison when publishing failed the first time.
func PublishResult(ctx context.Context, pub Publisher, repo string, number int, headSHA string, rep *analysis.Report, markdown string) error {
	if err := pub.UpsertSummary(ctx, repo, number, markdown); err != nil {
		return err
	}
	return pub.SetCheck(ctx, repo, headSHA, Check{
		Status: CheckCompleted, Conclusion: Conclusion(rep),
		Title: truncate(render.Headline(rep), 200), Summary: markdown,
	})
}

// publishFailure tells the pull request why its comparison stopped and
// returns the job's error.
// ctx publishes; jobCtx is the job's, whose end says why it stopped.
func publishFailure(ctx, jobCtx context.Context, log *slog.Logger, pub Publisher, pr PullRequest, err error) error {
	check := func(c Check) {
		if perr := pub.SetCheck(ctx, pr.Repo, pr.HeadSHA, c); perr != nil {
			log.Error("publish check", "err", perr)
		}
	}
	summary := func(text string) {
		body := render.SummaryMarker + "\n### perfbot: could not compare\n\n" + text + "\n"
		if perr := pub.UpsertSummary(ctx, pr.Repo, pr.Number, body); perr != nil {
			log.Error("publish summary", "err", perr)
		}
	}
	head := "`" + short(pr.HeadSHA) + "`"
	switch {
	case errors.Is(jobCtx.Err(), context.DeadlineExceeded):
		text := fmt.Sprintf("The comparison of head %s stopped at the job timeout, before it finished: %v. "+
			"Lower `count` or `max_count` in `.perfbot.yml`, or raise the worker's `--job-timeout`, then comment `/perfbot run`.", head, err)
		summary(text)
		check(Check{Status: CheckCompleted, Conclusion: ConclusionTimedOut, Title: "Timed out", Summary: text})
		return fmt.Errorf("%w: %w", ErrPermanent, err)
	case jobCtx.Err() != nil:
		// Cancelled: a newer push superseded this head, or the worker is
		// stopping (then the job runs again and says so). Neither is the
		// commit's fault: the check ends neutral, never as a red cross.
		newer := ""
		if pr.Newer != nil {
			newer = pr.Newer(ctx)
		}
		if newer != "" && newer != pr.HeadSHA {
			check(SupersededCheck(pr.Repo, pr.Number, pr.HeadSHA, newer))
		} else {
			check(Check{Status: CheckCompleted, Conclusion: ConclusionNeutral, Title: "Stopped",
				Summary: fmt.Sprintf("The comparison of head %s was stopped before it finished: its worker stopped, and the job runs again.", head)})
		}
		log.Info("stopped", "err", err, "newer", short(newer))
		return err
	case errors.Is(err, workspace.ErrUnknownRevision):
		text := fmt.Sprintf("A revision to compare no longer exists in the repository (was the branch force-pushed or deleted?): %v.", err)
		summary(text)
		check(Check{Status: CheckCompleted, Conclusion: ConclusionActionRequired, Title: "Revision not found", Summary: text})
		return fmt.Errorf("%w: %w", ErrPermanent, err)
	case errors.Is(err, ErrInvalidConfig):
		text := fmt.Sprintf("The base revision's `.perfbot.yml` is invalid, so nothing was measured:\n\n```\n%v\n```", err)
		summary(text)
		check(Check{Status: CheckCompleted, Conclusion: ConclusionActionRequired, Title: "Invalid .perfbot.yml", Summary: text})
		return fmt.Errorf("%w: %w", ErrPermanent, err)
	case errors.Is(err, ErrUnreachable):
		// Retrying cannot make the runs faster.
		text := fmt.Sprintf("Nothing was measured: %v. perfbot's operator can raise the bot's job_timeout, "+
			"or the repository's .perfbot.yml can ask for fewer runs (count, max_count).", err)
		summary(text)
		check(Check{Status: CheckCompleted, Conclusion: ConclusionActionRequired, Title: "Runs cannot fit the job's time", Summary: text})
		return fmt.Errorf("%w: %w", ErrPermanent, err)
	case errors.Is(err, ErrNoConfig):
		// No retry can help, and the error's advice (pass --config FILE)
		// is the command line's: say what to write where the pull
		// request's author and the bot's operator can.
		text := fmt.Sprintf("Nothing was measured: perfbot has no config saying how to measure this repository. "+
			"The base revision `%s` has no `.perfbot.yml`, and perfbot was given none from outside the repository.\n\n"+
			"Commit a `.perfbot.yml` to the base branch (perfbot's runner/testdata/perfbot.example.yml documents every field), "+
			"or ask perfbot's operator to give this repository a `config:` in the server config "+
			"(in a GitHub Actions workflow: `perfbot pr --config FILE`). "+
			"A pull request's own `.perfbot.yml` is not read: a pull request cannot change how it is measured.",
			short(pr.BaseSHA))
		summary(text)
		check(Check{Status: CheckCompleted, Conclusion: ConclusionActionRequired, Title: "No perfbot config", Summary: text})
		return fmt.Errorf("%w: %w", ErrPermanent, err)
	case !pr.FinalAttempt:
		check(Check{Status: CheckQueued, Title: "Retrying after an error",
			Summary: fmt.Sprintf("Attempt %d failed and will be retried: %v", max(pr.Attempt, 1), err)})
		return err
	default:
		text := fmt.Sprintf("The comparison of head %s failed after %d attempts: %v. A maintainer can retry with `/perfbot run`.", head, max(pr.Attempt, 1), err)
		summary(text)
		check(Check{Status: CheckCompleted, Conclusion: ConclusionActionRequired, Title: "perfbot failed", Summary: text})
		return err
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8Start(s[cut]) {
		cut--
	}
	return strings.TrimSpace(s[:cut]) + "…"
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// progressSender posts a check's progress updates off the measuring
// goroutine: a slow or failing GitHub (a 502 retried with backoff for ten
// seconds, a rate limit) must not stall the runs between which it is
// called, nor change what they measure. One update is in flight at a
// time; while it is, a newer one replaces any waiting, so the latest
// always lands and stale ones are dropped.
type progressSender struct {
	send    func(Check)
	mu      sync.Mutex
	pending *Check
	running bool
	done    sync.WaitGroup
}

func (s *progressSender) post(c Check) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending = &c
	if s.running {
		return
	}
	s.running = true
	s.done.Add(1)
	go s.loop()
}

func (s *progressSender) loop() {
	defer s.done.Done()
	for {
		s.mu.Lock()
		c := s.pending
		s.pending = nil
		if c == nil {
			s.running = false
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		s.send(*c)
	}
}

// wait returns once no update is in flight or waiting; call it after the
// last post.
func (s *progressSender) wait() { s.done.Wait() }
