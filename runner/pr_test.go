package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/analysis/render"
	"github.com/perfbot/perfbot/runner/workspace/workspacetest"
	"github.com/perfbot/perfbot/store"
)

// recorder is a Publisher that keeps what a pull request would show: one
// summary per pull request and every check update per commit.
type recorder struct {
	mu        sync.Mutex
	summaries map[int][]string // every body upserted, in order
	checks    map[string][]Check
	fail      error // returned by every call when set
}

func newRecorder() *recorder {
	return &recorder{summaries: map[int][]string{}, checks: map[string][]Check{}}
}

func (r *recorder) UpsertSummary(_ context.Context, _ string, pr int, body string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !strings.HasPrefix(body, render.SummaryMarker) {
		return fmt.Errorf("summary without the marker: %q", body)
	}
	r.summaries[pr] = append(r.summaries[pr], body)
	return r.fail
}

func (r *recorder) SetCheck(_ context.Context, _, sha string, c Check) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.checks[sha] = append(r.checks[sha], c)
	return r.fail
}

func (r *recorder) last(sha string) Check {
	r.mu.Lock()
	defer r.mu.Unlock()
	cs := r.checks[sha]
	if len(cs) == 0 {
		return Check{}
	}
	return cs[len(cs)-1]
}

// valueBench prints phase a from the worktree's file "value" and a total
// 2000 ns above it, varying a little with the process id.
const valueBench = `v=$(cat value); echo "BenchmarkX/phase=a 1 $((v + $$ % 7)) ns/op"; echo "BenchmarkX/phase=total 1 $((v + 2000 + $$ % 11)) ns/op"`

func valueConfig(count int) string {
	b, _ := json.Marshal(valueBench)
	return fmt.Sprintf("build:\n  - [\"true\"]\nbenchmarks:\n  - name: sh\n    command: [sh, -c, %s]\ncount: %d\nwarmup: 1\nmax_count: %d\ntimeout: 30s\n", b, count, count)
}

func newPRRunner(t *testing.T) *Runner {
	t.Helper()
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "perfbot.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return &Runner{DataDir: t.TempDir(), Store: db}
}

func TestPullRequestPublishesARegressionAsAFailedCheckAndOneSummary(t *testing.T) {
	t.Parallel()
	repo := workspacetest.New(t)
	base := repo.Commit(t, "base", map[string]string{".perfbot.yml": valueConfig(8), "value": "1000\n"})
	head := repo.Commit(t, "slower a", map[string]string{"value": "1300\n"})
	r := newPRRunner(t)
	pub := newRecorder()
	pr := PullRequest{Repo: "o/r", Number: 7, Source: repo.Dir, BaseSHA: base, HeadSHA: head, Attempt: 1, FinalAttempt: true, ProgressEvery: time.Nanosecond}

	res, err := r.PullRequest(context.Background(), pub, pr)
	if err != nil {
		t.Fatal(err)
	}
	if res.Report.Verdict != analysis.VerdictRegression {
		t.Fatalf("verdict %s, want regression", res.Report.Verdict)
	}
	checks := pub.checks[head]
	if len(checks) < 3 || checks[0].Status != CheckInProgress {
		t.Fatalf("checks %+v; want in_progress first, progress updates, then completed", checks)
	}
	// With ProgressEvery 1ns every run is offered (1 warm-up and 8
	// measured runs a side); updates are posted off the measuring
	// goroutine, one at a time, the latest replacing any waiting: in
	// order, the last one the 18th, before the final check.
	var progress []int
	for _, c := range checks[1 : len(checks)-1] {
		var n, of int
		if _, err := fmt.Sscanf(c.Title, "Measuring: run %d of %d", &n, &of); c.Status != CheckInProgress || err != nil || of != 18 {
			t.Errorf("check update %+v between the first and the last; want a progress update of 18 runs", c)
		}
		progress = append(progress, n)
	}
	if len(progress) == 0 || len(progress) > 18 || progress[len(progress)-1] != 18 || !slices.IsSorted(progress) {
		t.Errorf("progress updates of runs %v; want some, rising, ending at 18", progress)
	}
	final := checks[len(checks)-1]
	if final.Status != CheckCompleted || final.Conclusion != ConclusionFailure || !strings.HasPrefix(final.Title, "Regression. ") ||
		!strings.Contains(final.Title, " in a +29.") && !strings.Contains(final.Title, " in a +30.") {
		t.Errorf("final check %+v; want completed, failure, a regression of a by ~30%%", final)
	}
	if got := pub.summaries[7]; len(got) != 1 || got[0] != res.Markdown {
		t.Errorf("summaries %q; want the report's markdown once", got)
	}

	// The same job again (a worker was killed and the job rescued): still
	// one summary per publish, the same check, and a second comparison.
	res2, err := r.PullRequest(context.Background(), pub, pr)
	if err != nil {
		t.Fatal(err)
	}
	if res2.ComparisonID == res.ComparisonID || pub.last(head).Conclusion != ConclusionFailure || len(pub.summaries[7]) != 2 {
		t.Errorf("rerun: comparison %d (first %d), last check %+v, %d summary upserts", res2.ComparisonID, res.ComparisonID, pub.last(head), len(pub.summaries[7]))
	}
}

func TestPullRequestFailuresAreToldAsWhatTheyAre(t *testing.T) {
	t.Parallel()
	repo := workspacetest.New(t)
	base := repo.Commit(t, "base", map[string]string{".perfbot.yml": valueConfig(4), "value": "1000\n"})
	bad := workspacetest.New(t)
	badBase := bad.Commit(t, "bad config", map[string]string{".perfbot.yml": "colour: blue\n"})
	none := workspacetest.New(t)
	noneBase := none.Commit(t, "no config", map[string]string{"main.c": "int main(void) { return 0; }\n"})
	gone := strings.Repeat("ab", 20)

	cases := []struct {
		name           string
		source         string
		baseSHA, head  string
		final          bool
		wantConclusion string
		wantSummary    string // "" = no summary published
		permanent      bool
	}{
		{"head no longer exists", repo.Dir, base, gone, false, ConclusionActionRequired, "no longer exists", true},
		{"invalid config", bad.Dir, badBase, badBase, false, ConclusionActionRequired, "colour", true},
		{"no config", none.Dir, noneBase, noneBase, false, ConclusionActionRequired, "Commit a `.perfbot.yml` to the base branch", true},
		{"transient, not the last attempt", t.TempDir(), base, base, false, "", "", false},
		{"transient, last attempt", t.TempDir(), base, base, true, ConclusionActionRequired, "failed after 3 attempts", false},
	}
	for _, tc := range cases {
		r := newPRRunner(t)
		pub := newRecorder()
		_, err := r.PullRequest(context.Background(), pub, PullRequest{
			Repo: "o/r", Number: 1, Source: tc.source, BaseSHA: tc.baseSHA, HeadSHA: tc.head, Attempt: 3, FinalAttempt: tc.final,
		})
		if err == nil {
			t.Errorf("%s: no error", tc.name)
			continue
		}
		if errors.Is(err, ErrPermanent) != tc.permanent {
			t.Errorf("%s: error %v; permanent = %v, want %v", tc.name, err, errors.Is(err, ErrPermanent), tc.permanent)
		}
		last := pub.last(tc.head)
		if tc.wantConclusion == "" {
			if last.Status != CheckQueued || !strings.Contains(last.Summary, "will be retried") {
				t.Errorf("%s: last check %+v; want queued for a retry", tc.name, last)
			}
		} else if last.Status != CheckCompleted || last.Conclusion != tc.wantConclusion {
			t.Errorf("%s: last check %+v; want completed, %s", tc.name, last, tc.wantConclusion)
		}
		sums := pub.summaries[1]
		switch {
		case tc.wantSummary == "" && len(sums) != 0:
			t.Errorf("%s: published %q; want nothing before the last attempt", tc.name, sums)
		case tc.wantSummary != "" && (len(sums) != 1 || !strings.Contains(sums[0], tc.wantSummary)):
			t.Errorf("%s: summaries %q; want one mentioning %q", tc.name, sums, tc.wantSummary)
		}
		for _, s := range sums {
			if strings.Contains(strings.ToLower(s), "regression") {
				t.Errorf("%s: a failure was published as a regression: %q", tc.name, s)
			}
		}
	}
}

func TestPullRequestTimeoutAndCancellation(t *testing.T) {
	t.Parallel()
	repo := workspacetest.New(t)
	slow := `sleep 5; echo "BenchmarkX/phase=total 1 1000 ns/op"`
	b, _ := json.Marshal(slow)
	base := repo.Commit(t, "slow", map[string]string{".perfbot.yml": fmt.Sprintf(
		"build:\n  - [\"true\"]\nbenchmarks:\n  - name: sh\n    command: [sh, -c, %s]\ncount: 4\nwarmup: 0\ntimeout: 30s\n", b)})

	// Past the job's deadline: told on the pull request, never retried.
	r := newPRRunner(t)
	pub := newRecorder()
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := r.PullRequest(ctx, pub, PullRequest{Repo: "o/r", Number: 2, Source: repo.Dir, BaseSHA: base, HeadSHA: base, Attempt: 1})
	if !errors.Is(err, ErrPermanent) {
		t.Errorf("timeout: error %v, want ErrPermanent", err)
	}
	if d := time.Since(start); d > 4*time.Second {
		t.Errorf("timeout: returned after %s; the running benchmark was not stopped", d)
	}
	if last := pub.last(base); last.Conclusion != ConclusionTimedOut {
		t.Errorf("timeout: last check %+v, want timed_out", last)
	}
	if s := pub.summaries[2]; len(s) != 1 || !strings.Contains(s[0], "job timeout") {
		t.Errorf("timeout: summaries %q; want one about the job timeout", s)
	}

	// Cancelled: by a newer push, the check ends neutral naming it; by
	// the worker stopping (no newer head), neutral "Stopped". Never
	// "cancelled", which a commit status shows as an error. No summary.
	newer := strings.Repeat("f", 40)
	for i, tc := range []struct {
		newer, title string
	}{{newer, "Superseded by " + newer[:12]}, {"", "Stopped"}} {
		pub = newRecorder()
		ctx, cancel = context.WithCancel(context.Background())
		time.AfterFunc(500*time.Millisecond, cancel)
		_, err = r.PullRequest(ctx, pub, PullRequest{Repo: "o/r", Number: 3 + i, Source: repo.Dir, BaseSHA: base, HeadSHA: base, Attempt: 1,
			Newer: func(context.Context) string { return tc.newer }})
		if err == nil || errors.Is(err, ErrPermanent) {
			t.Errorf("cancelled (newer %q): error %v; want a non-permanent error", tc.newer, err)
		}
		if last := pub.last(base); last.Status != CheckCompleted || last.Conclusion != ConclusionNeutral || last.Title != tc.title {
			t.Errorf("cancelled (newer %q): last check %+v, want completed, neutral, %q", tc.newer, last, tc.title)
		}
		if len(pub.summaries[3+i]) != 0 {
			t.Errorf("cancelled: summaries %q; want none", pub.summaries[3+i])
		}
	}
	if c := SupersededCheck("o/r", 3, base, newer); !strings.Contains(c.Summary, "https://github.com/o/r/pull/3/commits/"+newer) {
		t.Errorf("superseded check's summary %q lacks the link to the newer head", c.Summary)
	}
}

func TestConclusionOfEveryVerdict(t *testing.T) {
	t.Parallel()
	want := map[analysis.Verdict]string{
		analysis.VerdictRegression:   ConclusionFailure,
		analysis.VerdictImprovement:  ConclusionSuccess,
		analysis.VerdictNoChange:     ConclusionSuccess,
		analysis.VerdictInconclusive: ConclusionNeutral,
		analysis.VerdictError:        ConclusionActionRequired,
	}
	for v, c := range want {
		if got := Conclusion(&analysis.Report{Verdict: v}); got != c {
			t.Errorf("Conclusion(%s) = %s, want %s", v, got, c)
		}
	}
	// A trade-off (the headline no slower, a phase worse) fails only with
	// fail_on: any-phase.
	tradeOff := &analysis.Report{Verdict: analysis.VerdictNoChange, Phases: []analysis.Row{
		{Key: analysis.Key{Benchmark: "X", Phase: "total", Unit: "sec/op"}, Primary: true, Headline: true, Verdict: analysis.VerdictNoChange},
		{Key: analysis.Key{Benchmark: "X", Phase: "msm_b1", Unit: "sec/op"}, Primary: true, Verdict: analysis.VerdictRegression},
	}}
	if got := Conclusion(tradeOff); got != ConclusionSuccess {
		t.Errorf("a trade-off: %s, want %s", got, ConclusionSuccess)
	}
	tradeOff.Options.FailOn = analysis.FailOnAnyPhase
	if got := Conclusion(tradeOff); got != ConclusionFailure {
		t.Errorf("a trade-off with fail_on: any-phase: %s, want %s", got, ConclusionFailure)
	}
}

func TestTruncateKeepsRunesWhole(t *testing.T) {
	t.Parallel()
	if got := truncate("αβγδε", 7); got != "αβ…" {
		t.Errorf("truncate = %q, want αβ…", got)
	}
	if got := truncate("short", 10); got != "short" {
		t.Errorf("truncate = %q", got)
	}
}

func TestPullRequestReturnsTheStoredResultWhenPublishingFails(t *testing.T) {
	t.Parallel()
	repo := workspacetest.New(t)
	base := repo.Commit(t, "base", map[string]string{".perfbot.yml": valueConfig(6), "value": "1000\n"})
	r := newPRRunner(t)
	pub := newRecorder()
	pub.fail = errors.New("github: 502 Bad Gateway after 5 attempts")
	res, err := r.PullRequest(context.Background(), pub, PullRequest{Repo: "o/r", Number: 4, Source: repo.Dir, BaseSHA: base, HeadSHA: base, FinalAttempt: true})
	if !errors.Is(err, ErrPublish) || errors.Is(err, ErrPermanent) {
		t.Fatalf("error %v; want ErrPublish, not permanent", err)
	}
	if res == nil || res.ComparisonID <= 0 {
		t.Fatalf("result %+v; want the stored comparison", res)
	}
	stored, err := r.Store.(*store.DB).Comparison(context.Background(), res.ComparisonID)
	if err != nil || stored.Markdown != res.Markdown || stored.PR != 4 {
		t.Errorf("stored comparison %v, %v; want the same markdown to publish later, for pull request 4", stored, err)
	}
}

// blockingPublisher holds its first progress update until every run of
// the comparison is stored (or 30 s pass): were updates posted on the
// measuring goroutine, no run could be stored meanwhile.
type blockingPublisher struct {
	*recorder
	stored  func() int
	want    int
	blocked bool
	waited  time.Duration
	gotAll  bool
}

func (p *blockingPublisher) SetCheck(ctx context.Context, repo, sha string, c Check) error {
	if c.Status == CheckInProgress && strings.HasPrefix(c.Title, "Measuring: ") && !p.blocked {
		p.blocked = true
		start := time.Now()
		for time.Since(start) < 30*time.Second && !p.gotAll {
			p.gotAll = p.stored() >= p.want
			time.Sleep(10 * time.Millisecond)
		}
		p.waited = time.Since(start)
	}
	return p.recorder.SetCheck(ctx, repo, sha, c)
}

// TestASlowGitHubDoesNotStallTheRuns: a progress update that GitHub
// holds (a 502 retried with backoff, a rate limit) does not hold the
// measurement; the final check still comes after every progress update.
func TestASlowGitHubDoesNotStallTheRuns(t *testing.T) {
	t.Parallel()
	repo := workspacetest.New(t)
	base := repo.Commit(t, "base", map[string]string{".perfbot.yml": valueConfig(8), "value": "1000\n"})
	head := repo.Commit(t, "slower a", map[string]string{"value": "1300\n"})
	r := newPRRunner(t)
	pub := &blockingPublisher{recorder: newRecorder(), want: 16, stored: func() int {
		runs, err := r.Store.Runs(context.Background(), store.RunQuery{})
		if err != nil {
			return 0
		}
		return len(runs)
	}}
	pr := PullRequest{Repo: "o/r", Number: 7, Source: repo.Dir, BaseSHA: base, HeadSHA: head, Attempt: 1, FinalAttempt: true, ProgressEvery: time.Nanosecond}
	if _, err := r.PullRequest(context.Background(), pub, pr); err != nil {
		t.Fatal(err)
	}
	if !pub.gotAll {
		t.Fatalf("the runs did not all finish while a progress update was held (%s): progress blocks the measurement", pub.waited.Round(time.Millisecond))
	}
	checks := pub.checks[head]
	if final := checks[len(checks)-1]; final.Status != CheckCompleted {
		t.Errorf("last check update %+v; want the completed check after every progress update", final)
	}
}
