package main

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/riverqueue/river"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/analysis/render"
	"github.com/perfbot/perfbot/github"
	"github.com/perfbot/perfbot/runner"
	"github.com/perfbot/perfbot/runner/workspace"
	"github.com/perfbot/perfbot/store/queue"
)

// UpsertMarked creates or edits the pull request's one comment that holds
// marker (see github.Client.UpsertMarked).
func (p *publisher) UpsertMarked(ctx context.Context, repo string, pr int, marker, body string) error {
	r, err := github.ParseRepo(repo)
	if err != nil {
		return err
	}
	_, err = p.gh.UpsertMarked(ctx, r, pr, marker, body)
	return err
}

// bisectWorker answers /perfbot bisect GOOD BAD [phase=P] on a GPU host:
// it runs runner.Bisect and answers in one comment of its own, found by a
// marker made from the request (repository, pull request, revisions and
// phase) and edited in place: that it started, every probe as it is
// decided, then the result, or why there is none. Run again (a retry, a
// rescued job, the same command later), it measures only what the store
// lacks and edits the same comment.
type bisectWorker struct {
	river.WorkerDefaults[queue.BisectArgs]
	*jobDeps
}

// bisectMarker is the hidden first line of a bisection's comment.
func bisectMarker(a queue.BisectArgs) string {
	sum := sha256.Sum256([]byte(strings.Join([]string{a.Repo, fmt.Sprint(a.PR), a.Good, a.Bad, cmp.Or(a.Phase, "total")}, "\x00")))
	return github.MarkerPrefix + "bisect " + hex.EncodeToString(sum[:8]) + " -->"
}

// bisectProgressEvery is the least time between two progress edits of
// the comment (GitHub's rate limits are per hour); the first probe and
// the result are always published.
const bisectProgressEvery = 10 * time.Second

func (w *bisectWorker) Work(ctx context.Context, job *river.Job[queue.BisectArgs]) (err error) {
	defer func(start time.Time) { w.observe(queue.KindBisect, start, err) }(time.Now())
	ctx = runner.WithSessionLabel(ctx, jobLabel(job.JobRow))
	a := job.Args
	log := w.log.With("job_id", job.ID, "repo", a.Repo, "pr", a.PR, "good", a.Good, "bad", a.Bad)
	log.Info("job started", "kind", job.Kind, "attempt", job.Attempt)
	asked := fmt.Sprintf("/perfbot bisect %s %s", a.Good, a.Bad)
	if a.Phase != "" {
		asked += " phase=" + a.Phase
	}
	marker := bisectMarker(a)
	// Publishing outlives a cancelled job: a stopped bisection still
	// says why.
	pubCtx := context.WithoutCancel(ctx)
	say := func(heading, body string) error {
		text := fmt.Sprintf("%s\n%s\n\n@%s asked for %s.\n\n%s", marker, heading,
			a.Requester, codeSpan(asked), strings.TrimRight(body, "\n"))
		return w.pub.UpsertMarked(pubCtx, a.Repo, a.PR, marker, text+"\n")
	}

	clone := a.CloneURL
	if clone == "" {
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
		clone = pr.CloneURL
	}
	if err := say("### perfbot bisect: running", "Measuring the good and the bad revision first; every probe shows here as it is decided."); err != nil {
		return err
	}

	var (
		mu     sync.Mutex
		probes []analysis.Probe
		last   time.Time
	)
	onProbe := func(p analysis.Probe) {
		mu.Lock()
		defer mu.Unlock()
		probes = append(probes, p)
		if p.End != "" || (p.Step > 1 && time.Since(last) < bisectProgressEvery) {
			return
		}
		last = time.Now()
		var table bytes.Buffer
		if err := render.RenderBisectProgressMarkdown(&table, probes, "sec/op"); err != nil {
			log.Error("render progress", "err", err)
			return
		}
		if err := say("### perfbot bisect: running", fmt.Sprintf("Probe %d decided:\n\n%s", p.Step, table.String())); err != nil {
			log.Error("publish progress", "err", err)
		}
	}
	res, err := w.runnerFor(a.Repo).Bisect(ctx, runner.BisectRequest{Source: clone, Good: a.Good, Bad: a.Bad, Phase: a.Phase, OnProbe: onProbe})
	if err != nil {
		return w.bisectFailed(ctx, job, say, err)
	}
	var md bytes.Buffer
	if err := render.RenderBisectMarkdown(&md, res.Report); err != nil {
		return err
	}
	// The report's own heading opens the comment.
	heading, rest, _ := strings.Cut(md.String(), "\n")
	if err := say(heading, strings.TrimLeft(rest, "\n")); err != nil {
		// Measured and stored: the retry finds every run in the store
		// and publishes.
		log.Error("publish result", "err", err)
		return err
	}
	log.Info("bisected", "first_bad", res.FirstBad.Short(), "exact", res.Report.Exact(), "measured", res.Measured, "reused", res.Reused)
	return nil
}

// bisectFailed tells the pull request why the bisection stopped and
// returns the job's error: permanent (river.JobCancel) when running it
// again cannot help.
func (w *bisectWorker) bisectFailed(ctx context.Context, job *river.Job[queue.BisectArgs], say func(heading, body string) error, err error) error {
	final := job.Attempt >= job.MaxAttempts
	var (
		text      string
		permanent bool
	)
	detail := "\n\n" + fence(err.Error())
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		text = "The bisection stopped at the job timeout. Every run so far is stored, so the next attempt (or the same command) continues from there; " +
			"raise the worker's `--job-timeout`, or bisect a shorter range." + detail
		permanent = final
	case ctx.Err() != nil:
		text = "The bisection was stopped: its worker is stopping, and the job runs again; the runs so far are stored."
	case errors.Is(err, runner.ErrNothingToBisect):
		text = "Nothing to bisect: the good and the bad revision do not differ in this phase, so no commit between them changed it." + detail +
			"\n\nName another phase with `phase=`, or run `perfbot compare` on the two revisions to see every phase."
		permanent = true
	case errors.Is(err, workspace.ErrUnknownRevision):
		text = "A revision was not found in the repository: give commit SHAs, tags or branch names that exist there." + detail
		permanent = true
	case errors.Is(err, workspace.ErrNotAncestor), errors.Is(err, runner.ErrEmptyRange):
		text = "GOOD must be an older revision than BAD, on its history: `/perfbot bisect GOOD BAD`." + detail
		permanent = true
	case errors.Is(err, runner.ErrUnknownSeries):
		text = "The benchmark runs do not measure that phase." + detail + "\n\nName one of the phases they measure with `phase=`."
		permanent = true
	case errors.Is(err, runner.ErrEndFailed):
		text = "The good or the bad revision could not be measured, so there is nothing to search between." + detail
		permanent = true
	case errors.Is(err, runner.ErrInvalidConfig):
		text = "The good revision's `.perfbot.yml` is invalid, so nothing was measured." + detail
		permanent = true
	case !final:
		text = fmt.Sprintf("Attempt %d failed and will be retried; the runs so far are stored.", job.Attempt) + detail
	default:
		text = fmt.Sprintf("The bisection failed after %d attempts. Comment the command again to retry; the runs so far are stored.", job.Attempt) + detail
	}
	heading := "### perfbot bisect: stopped"
	if permanent || final {
		heading = "### perfbot bisect: no result"
	}
	if perr := say(heading, text); perr != nil {
		w.log.Error("publish bisect failure", "job_id", job.ID, "err", perr)
	}
	if permanent {
		return river.JobCancel(err)
	}
	return err
}

// fence puts text in a Markdown code block that nothing in it closes.
func fence(text string) string {
	f := "```"
	for strings.Contains(text, f) {
		f += "`"
	}
	return f + "text\n" + strings.TrimRight(text, "\n") + "\n" + f
}

// codeSpan formats s as Markdown inline code, with more backticks around
// it than it holds in a row.
func codeSpan(s string) string {
	ticks := "`"
	for strings.Contains(s, ticks) {
		ticks += "`"
	}
	return ticks + " " + s + " " + ticks
}
