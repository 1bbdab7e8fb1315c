package main

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/perfbot/perfbot/github"
	"github.com/perfbot/perfbot/github/githubtest"
	"github.com/perfbot/perfbot/runner"
	"github.com/perfbot/perfbot/store"
	"github.com/perfbot/perfbot/store/queue"
)

// bisectJobEnv is a bisect worker against a fake GitHub, with a real
// runner and SQLite store.
type bisectJobEnv struct {
	gh  *githubtest.Server
	db  *store.DB
	w   *bisectWorker
	ids int64
}

func newBisectJobEnv(t *testing.T, cloneURL string) *bisectJobEnv {
	t.Helper()
	srv := githubtest.New(t)
	srv.AddPullRequest(githubtest.PR{Owner: e2eOwner, Repo: e2eName, Number: 42, BaseSHA: strings.Repeat("1", 40),
		HeadRef: "feature", HeadSHA: strings.Repeat("2", 40), CloneURL: cloneURL})
	gh, err := github.New(github.Options{BaseURL: srv.URL() + "/", Token: githubtest.DefaultToken})
	if err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "perfbot.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	log := slog.New(slog.DiscardHandler)
	deps := &jobDeps{
		runner: &runner.Runner{DataDir: t.TempDir(), Store: db, Logger: log},
		store:  db, gh: gh, pub: &publisher{gh: gh}, log: log,
	}
	return &bisectJobEnv{gh: srv, db: db, w: &bisectWorker{jobDeps: deps}}
}

// work runs one attempt of a bisect job.
func (e *bisectJobEnv) work(args queue.BisectArgs, attempt int) error {
	e.ids++
	return e.w.Work(context.Background(), &river.Job[queue.BisectArgs]{
		JobRow: &rivertype.JobRow{ID: e.ids, Kind: queue.KindBisect, Attempt: attempt, MaxAttempts: 3},
		Args:   args,
	})
}

func (e *bisectJobEnv) comments() []githubtest.IssueComment {
	return e.gh.Comments(e2eOwner, e2eName, 42)
}

func (e *bisectJobEnv) runs(t *testing.T) int {
	t.Helper()
	rs, err := e.db.Runs(context.Background(), store.RunQuery{})
	if err != nil {
		t.Fatal(err)
	}
	return len(rs)
}

func TestBisectJobAnswersInOneCommentEditedInPlace(t *testing.T) {
	t.Parallel()
	dir, shas := stepRepo(t, 12, 7)
	e := newBisectJobEnv(t, dir)
	// No clone URL in the job: the worker takes the pull request's.
	args := queue.BisectArgs{Repo: e2eOwner + "/" + e2eName, PR: 42, Good: shas[0], Bad: shas[11], Phase: "a", Requester: "ada"}
	if err := e.work(args, 1); err != nil {
		t.Fatal(err)
	}
	cs := e.comments()
	if len(cs) != 1 {
		t.Fatalf("%d comments, want one", len(cs))
	}
	body := cs[0].Body
	for _, want := range []string{
		bisectMarker(args),
		"### perfbot bisect: the first bad commit is `" + shas[7][:7] + "`",
		"@ada asked for ` /perfbot bisect " + shas[0] + " " + shas[11] + " phase=a `",
		"made `X/phase=a` (sec/op) worse:",
		"regression) against the last good commit `" + shas[6][:7] + "`",
		"| step | commit | at | subject | verdict | median | vs good | vs bad | runs reused + new |",
		"| good | `" + shas[0][:7] + "` | 0/11 | c0 | good end |",
		"perfbot compare --repo " + dir + " --base " + shas[6] + " --head " + shas[7] + " --count 6",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the answer lacks %q:\n%s", want, body)
		}
	}
	// It said it started, then showed probes as they were decided, in
	// the same comment.
	creates, edits := 0, 0
	var started, progress bool
	for _, r := range e.gh.Requests() {
		switch {
		case r.Method == "POST" && strings.HasSuffix(r.Path, "/issues/42/comments"):
			creates++
			started = strings.Contains(string(r.Body), "perfbot bisect: running") && strings.Contains(string(r.Body), "Measuring the good and the bad revision first")
		case r.Method == "PATCH" && strings.Contains(r.Path, "/issues/comments/"):
			edits++
			progress = progress || strings.Contains(string(r.Body), "Probe 1 decided") &&
				strings.Contains(string(r.Body), "| 1 | `"+shas[5][:7]+"` | c5 | good | 1.0")
		}
	}
	if creates != 1 || edits < 2 || !started || !progress {
		t.Errorf("%d creates and %d edits, started %v, progress shown %v; want one comment that said it started, then showed the first probe, then the result",
			creates, edits, started, progress)
	}
	first := cs[0].ID

	// The same command again (or a retry): the same comment, edited, and
	// no new run.
	runs := e.runs(t)
	if err := e.work(args, 1); err != nil {
		t.Fatal(err)
	}
	if cs := e.comments(); len(cs) != 1 || cs[0].ID != first || !strings.Contains(cs[0].Body, "0 runs measured") {
		t.Errorf("after the second job: %d comments; want the one, saying nothing was measured", len(cs))
	}
	if n := e.runs(t); n != runs {
		t.Errorf("the second job stored %d runs; want none", n-runs)
	}
}

func TestBisectJobExplainsWhyThereIsNoResultAndStops(t *testing.T) {
	t.Parallel()
	dir, shas := stepRepo(t, 5, -1)
	e := newBisectJobEnv(t, dir)
	repo := e2eOwner + "/" + e2eName
	for _, tc := range []struct {
		args queue.BisectArgs
		want []string
	}{
		{queue.BisectArgs{Repo: repo, PR: 42, Good: shas[0], Bad: shas[4], CloneURL: dir, Requester: "ada"},
			[]string{"### perfbot bisect: no result", "Nothing to bisect", "do not differ in X/phase=total sec/op", "p="}},
		{queue.BisectArgs{Repo: repo, PR: 42, Good: "v9.9.9", Bad: shas[4], CloneURL: dir, Requester: "ada"},
			[]string{"### perfbot bisect: no result", "A revision was not found", `resolve "v9.9.9"`}},
		{queue.BisectArgs{Repo: repo, PR: 42, Good: shas[4], Bad: shas[0], CloneURL: dir, Requester: "ada"},
			[]string{"GOOD must be an older revision than BAD", "is not an ancestor"}},
		{queue.BisectArgs{Repo: repo, PR: 42, Good: shas[0], Bad: shas[4], Phase: "msm_h", CloneURL: dir, Requester: "ada"},
			[]string{"do not measure that phase", `no phase "msm_h"`}},
	} {
		err := e.work(tc.args, 1)
		var cancel *rivertype.JobCancelError
		if !errors.As(err, &cancel) {
			t.Errorf("%+v: error %v; want the job cancelled, as retrying cannot help", tc.args, err)
		}
		var body string
		for _, c := range e.comments() {
			if strings.HasPrefix(c.Body, bisectMarker(tc.args)) {
				body = c.Body
			}
		}
		for _, want := range tc.want {
			if !strings.Contains(body, want) {
				t.Errorf("%+v: the answer lacks %q:\n%s", tc.args, want, body)
			}
		}
	}
	if n := len(e.comments()); n != 4 {
		t.Errorf("%d comments; want one per distinct request", n)
	}
}

func TestBisectMarkerIsOnePerRequest(t *testing.T) {
	t.Parallel()
	a := queue.BisectArgs{Repo: "o/r", PR: 1, Good: "v1", Bad: "main"}
	b := a
	b.Phase = "total"
	c := a
	c.Phase = "msm_h"
	d := a
	d.PR = 2
	if bisectMarker(a) != bisectMarker(b) {
		t.Error("phase \"\" and phase=total are one request but got two markers")
	}
	if bisectMarker(a) == bisectMarker(c) || bisectMarker(a) == bisectMarker(d) {
		t.Error("different requests share a marker")
	}
	if m := bisectMarker(a); !strings.HasPrefix(m, github.MarkerPrefix+"bisect ") || !strings.HasSuffix(m, " -->") {
		t.Errorf("marker %q", m)
	}
}
