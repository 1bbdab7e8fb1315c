package github

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	gh "github.com/google/go-github/v60/github"
)

// A Check is the state of one of perfbot's checks on a commit.
type Check struct {
	// Name identifies the check on the commit ("perfbot"); setting a
	// check with the same name again updates it.
	Name string
	// Status is "queued", "in_progress" or "completed".
	Status string
	// Conclusion is required with status "completed", and only then:
	// "success", "neutral", "failure", "action_required", "cancelled" or
	// "timed_out".
	Conclusion string
	// Title is the one-line result; Summary and Text are Markdown shown
	// on the check's page. Title defaults to Name and Summary to Title
	// when Summary or Text is set. A commit status shows only Title (or,
	// without one, Summary's first line), cut to 140 characters.
	Title, Summary, Text string
	// DetailsURL links to the full results (a check's "Details" link, a
	// status's target URL).
	DetailsURL string
}

var (
	checkStatuses    = []string{"queued", "in_progress", "completed"}
	checkConclusions = []string{"success", "neutral", "failure", "action_required", "cancelled", "timed_out"}
)

const (
	// maxOutputLen is GitHub's limit on a check run's summary and text.
	maxOutputLen = 65535
	// maxDescription is GitHub's limit on a commit status's description.
	maxDescription = 140
)

// validate says what is wrong with ch, if anything.
func (ch Check) validate() error {
	switch {
	case strings.TrimSpace(ch.Name) == "":
		return fmt.Errorf("check has no name: set Check.Name (such as \"perfbot\")")
	case !slices.Contains(checkStatuses, ch.Status):
		return fmt.Errorf("check %q: status %q is not one of %s", ch.Name, ch.Status, strings.Join(checkStatuses, ", "))
	case ch.Status == "completed" && ch.Conclusion == "":
		return fmt.Errorf("check %q: status completed needs a conclusion: one of %s", ch.Name, strings.Join(checkConclusions, ", "))
	case ch.Status != "completed" && ch.Conclusion != "":
		return fmt.Errorf("check %q: conclusion %q given with status %q: only a completed check has a conclusion", ch.Name, ch.Conclusion, ch.Status)
	case ch.Conclusion != "" && !slices.Contains(checkConclusions, ch.Conclusion):
		return fmt.Errorf("check %q: conclusion %q is not one of %s", ch.Name, ch.Conclusion, strings.Join(checkConclusions, ", "))
	}
	return nil
}

// SetCheck sets check ch on commit sha (a full SHA). With App auth it
// writes a check run, updating the one perfbot already made with that
// name on the commit, so a retried job never makes a second. With token
// auth, which the Checks API refuses, or with Options.UseStatuses, it
// writes a commit status with context ch.Name: queued and in_progress
// become pending, success and neutral success, failure failure, and
// action_required, cancelled and timed_out error.
func (c *Client) SetCheck(ctx context.Context, repo Repo, sha string, ch Check) error {
	op := fmt.Sprintf("set check %q on %s@%s", ch.Name, repo, shortSHA(sha))
	if !isFullSHA(sha) {
		return fmt.Errorf("%s: %q is not a full commit SHA (40 or 64 hex digits)", op, sha)
	}
	if err := ch.validate(); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	log := c.log.With("repo", repo.String(), "sha", sha, "check", ch.Name, "status", ch.Status, "conclusion", ch.Conclusion)
	if c.useStatuses {
		return c.setStatus(ctx, op, log, repo, sha, ch)
	}

	output := checkOutput(ch)
	var details *string
	if ch.DetailsURL != "" {
		details = gh.String(ch.DetailsURL)
	}
	var conclusion *string
	var completedAt *gh.Timestamp
	if ch.Conclusion != "" {
		conclusion = gh.String(ch.Conclusion)
		completedAt = &gh.Timestamp{Time: time.Now()}
	}
	for round := 1; ; round++ {
		id, err := c.findCheckRun(ctx, repo, sha, ch.Name)
		if err != nil {
			return wrap(op, err)
		}
		if id != 0 {
			if c.dryRun {
				log.Info("github: dry run: would update the check run", "check_run_id", id)
				return nil
			}
			_, _, err := c.gh.Checks.UpdateCheckRun(ctx, repo.Owner, repo.Name, id, gh.UpdateCheckRunOptions{
				Name: ch.Name, Status: gh.String(ch.Status), Conclusion: conclusion,
				CompletedAt: completedAt, DetailsURL: details, Output: output,
			})
			if err != nil {
				return wrap(op, err)
			}
			log.Info("github: updated the check run", "check_run_id", id)
			return nil
		}
		if c.dryRun {
			log.Info("github: dry run: would create the check run")
			return nil
		}
		run, _, err := c.gh.Checks.CreateCheckRun(sendOnce(ctx), repo.Owner, repo.Name, gh.CreateCheckRunOptions{
			Name: ch.Name, HeadSHA: sha, Status: gh.String(ch.Status), Conclusion: conclusion,
			CompletedAt: completedAt, DetailsURL: details, Output: output,
		})
		if err == nil {
			log.Info("github: created the check run", "check_run_id", run.GetID())
			return nil
		}
		if !c.again(ctx, log, err, round, "create the check run") {
			return createFailed(op, err, round)
		}
	}
}

// findCheckRun returns the ID of the newest check run named name on sha
// that this App made, or 0.
func (c *Client) findCheckRun(ctx context.Context, repo Repo, sha, name string) (int64, error) {
	opts := &gh.ListCheckRunsOptions{
		CheckName:   gh.String(name),
		AppID:       gh.Int64(c.appID),
		ListOptions: gh.ListOptions{PerPage: 100},
	}
	res, _, err := c.gh.Checks.ListCheckRunsForRef(ctx, repo.Owner, repo.Name, sha, opts)
	if err != nil {
		return 0, err
	}
	var newest int64
	for _, run := range res.CheckRuns {
		if run.GetName() == name && (run.GetApp() == nil || run.GetApp().GetID() == c.appID) {
			newest = max(newest, run.GetID())
		}
	}
	return newest, nil
}

// checkOutput is the output of ch's check run, nil when it has none.
func checkOutput(ch Check) *gh.CheckRunOutput {
	if ch.Title == "" && ch.Summary == "" && ch.Text == "" {
		return nil
	}
	title := cmp.Or(ch.Title, ch.Name)
	out := &gh.CheckRunOutput{
		Title:   gh.String(title),
		Summary: gh.String(cutOutput(cmp.Or(ch.Summary, title))),
	}
	if ch.Text != "" {
		out.Text = gh.String(cutOutput(ch.Text))
	}
	return out
}

// cutOutput cuts s to GitHub's limit on a check run's summary or text.
func cutOutput(s string) string {
	if len(s) <= maxOutputLen {
		return s
	}
	note := fmt.Sprintf("\n\n**Truncated:** %d bytes, over GitHub's limit of %d.\n", len(s), maxOutputLen)
	cut := maxOutputLen - len(note)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + note
}

// statusState maps a check's status and conclusion to a commit status
// state.
func statusState(ch Check) string {
	switch {
	case ch.Status != "completed":
		return "pending"
	case ch.Conclusion == "success" || ch.Conclusion == "neutral":
		return "success"
	case ch.Conclusion == "failure":
		return "failure"
	default:
		return "error"
	}
}

// statusDescription is the one line a commit status shows: ch.Title, or
// the first line of ch.Summary, cut to 140 characters with an ellipsis.
func statusDescription(ch Check) string {
	d := ch.Title
	if d == "" {
		d, _, _ = strings.Cut(strings.TrimSpace(ch.Summary), "\n")
	}
	d = strings.TrimSpace(d)
	if utf8.RuneCountInString(d) > maxDescription {
		d = string([]rune(d)[:maxDescription-1]) + "…"
	}
	return d
}

func (c *Client) setStatus(ctx context.Context, op string, log *slog.Logger, repo Repo, sha string, ch Check) error {
	st := &gh.RepoStatus{
		State:   gh.String(statusState(ch)),
		Context: gh.String(ch.Name),
	}
	if d := statusDescription(ch); d != "" {
		st.Description = gh.String(d)
	}
	if ch.DetailsURL != "" {
		st.TargetURL = gh.String(ch.DetailsURL)
	}
	if c.dryRun {
		log.Info("github: dry run: would set the commit status", "state", st.GetState())
		return nil
	}
	// A status with the same context replaces the last one, so sending
	// it twice is harmless.
	if _, _, err := c.gh.Repositories.CreateStatus(ctx, repo.Owner, repo.Name, sha, st); err != nil {
		return wrap(op, err)
	}
	log.Info("github: set the commit status", "state", st.GetState())
	return nil
}

func isFullSHA(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, r := range s {
		if !strings.ContainsRune("0123456789abcdefABCDEF", r) {
			return false
		}
	}
	return true
}

func shortSHA(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}
