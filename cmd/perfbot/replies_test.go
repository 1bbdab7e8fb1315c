package main

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/perfbot/perfbot/github"
	"github.com/perfbot/perfbot/github/githubtest"
	"github.com/perfbot/perfbot/store/queue"
)

// A reply is perfbot's one comment answering its key: a notify job that
// runs again (serve killed after GitHub took the comment, before River
// recorded the job done) edits the comment it posted instead of posting
// a second; another key gets its own comment, and a job queued without a
// key answers under its job id.
func TestReplyIsPostedOnceHoweverOftenItsJobRuns(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t)
	srv.AddPullRequest(githubtest.PR{Owner: e2eOwner, Repo: e2eName, Number: 7, BaseSHA: strings.Repeat("1", 40), HeadRef: "f", HeadSHA: strings.Repeat("2", 40)})
	gh, err := github.New(github.Options{BaseURL: srv.URL() + "/", Token: githubtest.DefaultToken})
	if err != nil {
		t.Fatal(err)
	}
	w := &notifyWorker{jobDeps: &jobDeps{gh: gh, pub: &publisher{gh: gh}, log: slog.New(slog.DiscardHandler)}}
	work := func(id int64, args queue.NotifyArgs) {
		t.Helper()
		err := w.Work(context.Background(), &river.Job[queue.NotifyArgs]{JobRow: &rivertype.JobRow{ID: id, Kind: queue.KindNotify, Attempt: 1}, Args: args})
		if err != nil {
			t.Fatal(err)
		}
	}
	repo := e2eOwner + "/" + e2eName
	for range 3 {
		work(1, queue.NotifyArgs{Repo: repo, PR: 7, Reply: "@ann thanks for asking!", ReplyKey: "delivery d-1"})
	}
	work(2, queue.NotifyArgs{Repo: repo, PR: 7, Reply: "@bob thanks for asking!", ReplyKey: "delivery d-2"})
	work(3, queue.NotifyArgs{Repo: repo, PR: 7, Reply: "an old job's reply"})
	work(3, queue.NotifyArgs{Repo: repo, PR: 7, Reply: "an old job's reply"})
	var bodies []string
	for _, c := range srv.Comments(e2eOwner, e2eName, 7) {
		bodies = append(bodies, c.Body)
	}
	want := []string{
		replyMarker("delivery d-1") + "\n@ann thanks for asking!",
		replyMarker("delivery d-2") + "\n@bob thanks for asking!",
		replyMarker("job 3") + "\nan old job's reply",
	}
	if strings.Join(bodies, "\n---\n") != strings.Join(want, "\n---\n") {
		t.Errorf("comments:\n%s\nwant:\n%s", strings.Join(bodies, "\n---\n"), strings.Join(want, "\n---\n"))
	}
	if m := replyMarker("x-->y\n"); m != "<!-- perfbot:reply x___y_ -->" {
		t.Errorf("a key with a marker's end and a newline: %q", m)
	}
}
