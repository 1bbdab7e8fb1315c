package main

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/perfbot/perfbot/github"
	"github.com/perfbot/perfbot/github/githubtest"
	"github.com/perfbot/perfbot/runner"
	"github.com/perfbot/perfbot/store/queue"
)

// A queued-check job whose earlier attempt posted "Queued" and was killed
// before it looked again (serve killed, or GitHub answering an error
// after taking the request) runs again when its comparison is no longer
// waiting: that attempt ends the check, which the newer push's note had
// ended before the late "Queued" landed. The chaos soak left two checks
// "Queued" so, when a later attempt that found nothing waiting did
// nothing.
func TestAQueuedCheckLeftByAKilledAttemptEnds(t *testing.T) {
	e := startBot(t, botOptions{noWorker: true})
	const pr = 22
	ctx := context.Background()
	base := e.repo.Git(t, "rev-parse", "HEAD")
	h0 := e.repo.Commit(t, "push 0", map[string]string{"value": "1000\n"})
	h1 := e.repo.Commit(t, "push 1", map[string]string{"value": "1001\n"})
	e.gh.AddPullRequest(githubtest.PR{Owner: e2eOwner, Repo: e2eName, Number: pr, BaseSHA: base, HeadRef: "feature", HeadSHA: h0})
	if code, body := e.post(t, "pull_request", e.nextDelivery(), e.pullRequestPayload("opened", pr, base, h0)); code != http.StatusAccepted {
		t.Fatalf("opened: %d %q", code, body)
	}
	e.waitFor(t, "h0's check to be queued", 30*time.Second, func() bool { c, _ := e.check(h0); return c.Status == "queued" })
	e.gh.SetHead(e2eOwner, e2eName, pr, h1)
	if code, body := e.post(t, "pull_request", e.nextDelivery(), e.pullRequestPayload("synchronize", pr, base, h1)); code != http.StatusAccepted {
		t.Fatalf("synchronize: %d %q", code, body)
	}
	superseded := "Superseded by " + h1[:12]
	e.waitFor(t, "h0's check to end superseded", 30*time.Second, func() bool { c, _ := e.check(h0); return c.Title == superseded })

	// The killed attempt's "Queued" lands after the note.
	// As the App whose check it is, as perfbot serve is.
	key := filepath.Join(t.TempDir(), "app.pem")
	if err := os.WriteFile(key, e.keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	gh, err := github.New(github.Options{BaseURL: e.gh.URL() + "/",
		App: &github.AppAuth{AppID: e2eAppID, InstallationID: e2eInstallation, PrivateKeyFile: key}})
	if err != nil {
		t.Fatal(err)
	}
	pub := &publisher{gh: gh, checkName: defaultCheckName}
	repo := e2eOwner + "/" + e2eName
	if err := pub.SetCheck(ctx, repo, h0, runner.Check{Status: runner.CheckQueued, Title: "Queued"}); err != nil {
		t.Fatal(err)
	}
	if c, _ := e.check(h0); c.Status != "queued" {
		t.Fatalf("h0's check %+v after the late post; want queued (the test's set-up)", c)
	}
	q, err := queue.New(openStore(t, e), queue.Config{})
	if err != nil {
		t.Fatal(err)
	}
	w := &notifyWorker{jobDeps: &jobDeps{gh: gh, pub: pub, queue: q, log: slog.New(slog.DiscardHandler)}}
	work := func(attempt int) {
		t.Helper()
		job := &river.Job[queue.NotifyArgs]{JobRow: &rivertype.JobRow{ID: 99, Kind: queue.KindNotify, Attempt: attempt},
			Args: queue.NotifyArgs{Repo: repo, PR: pr, CheckSHA: h0, CheckTitle: "Queued"}}
		if err := w.Work(ctx, job); err != nil {
			t.Fatal(err)
		}
	}
	// A first attempt that finds nothing waiting posted nothing, so it
	// leaves the check alone (here, the late "Queued" of the test).
	work(1)
	if c, _ := e.check(h0); c.Status != "queued" {
		t.Errorf("a first attempt with nothing waiting changed h0's check: %+v", c)
	}
	// A later attempt ends it.
	work(2)
	if c, n := e.check(h0); n != 1 || c.Status != "completed" || c.Conclusion != "neutral" || c.Title != superseded {
		t.Errorf("h0: %d check runs, last %+v; want one, completed, neutral, %q", n, c, superseded)
	}
}
