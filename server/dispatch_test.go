package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/github/webhook"
	"github.com/perfbot/perfbot/store"
	"github.com/perfbot/perfbot/store/queue"
	"github.com/perfbot/perfbot/store/storetest"
)

// job is a row of River's job table, as the dispatcher left it.
type job struct {
	Kind, Queue, State string
	Args               map[string]any
}

type dispatchEnv struct {
	d   *Dispatcher
	db  *store.DB
	log *bytes.Buffer
}

func newDispatchEnv(t *testing.T) *dispatchEnv {
	t.Helper()
	db, err := store.Open(context.Background(), storetest.FreshPostgres(t), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	q, err := queue.New(db, queue.Config{})
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	return &dispatchEnv{db: db, log: &log, d: &Dispatcher{
		Repos: map[string]Repo{
			"acme/prover": {Name: "acme/prover", Queue: "h200", Baselines: true},
			"acme/drafty": {Name: "acme/drafty", Queue: "gpu", Drafts: true, CloneURL: "https://git.example/drafty.git"},
			"acme/quiet":  {Name: "acme/quiet", Queue: "gpu"},
		},
		Queue:  q,
		Logger: slog.New(slog.NewTextHandler(&log, nil)),
	}}
}

func (e *dispatchEnv) handle(t *testing.T, ev webhook.Event) {
	t.Helper()
	if err := e.d.Handle(context.Background(), ev); err != nil {
		t.Fatalf("Handle(%+v): %v", ev, err)
	}
}

// jobs returns every job, oldest first.
func (e *dispatchEnv) jobs(t *testing.T) []job {
	t.Helper()
	return riverJobs(t, e.db)
}

// riverJobs returns every job in db, oldest first.
func riverJobs(t *testing.T, db *store.DB) []job {
	t.Helper()
	rows, err := db.SQL().Query(`SELECT kind, queue, state::text, args FROM river_job ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []job
	for rows.Next() {
		var j job
		var args []byte
		if err := rows.Scan(&j.Kind, &j.Queue, &j.State, &args); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(args, &j.Args); err != nil {
			t.Fatal(err)
		}
		out = append(out, j)
	}
	return out
}

func pr(repo string, number int, action, head string) *webhook.PullRequest {
	return &webhook.PullRequest{Delivery: "d-" + head, Repo: repo, Action: action, Number: number,
		BaseSHA: strings.Repeat("b", 40), HeadSHA: head, CloneURL: "https://github.com/" + repo + ".git", Sender: "ada"}
}

var (
	sha1 = strings.Repeat("1", 40)
	sha2 = strings.Repeat("2", 40)
)

func TestDispatchPullRequestQueuesOneComparisonAndSupersedesOldHeads(t *testing.T) {
	t.Parallel()
	e := newDispatchEnv(t)
	e.handle(t, pr("acme/prover", 5, "opened", sha1))
	e.handle(t, pr("acme/prover", 5, "reopened", sha1)) // same head: not a second job
	jobs := e.jobs(t)
	if len(jobs) != 2 {
		t.Fatalf("jobs %+v; want one comparison and one queued-check notice", jobs)
	}
	cmp, note := jobs[0], jobs[1]
	if cmp.Kind != queue.KindCompare || cmp.Queue != "h200" || cmp.State != "available" ||
		cmp.Args["head_sha"] != sha1 || cmp.Args["pr"] != 5.0 || cmp.Args["clone_url"] != "https://github.com/acme/prover.git" ||
		cmp.Args["trigger"] != "opened" {
		t.Errorf("comparison job %+v", cmp)
	}
	if note.Kind != queue.KindNotify || note.Queue != queue.ControlQueue || note.Args["check_sha"] != sha1 {
		t.Errorf("notice job %+v; want a queued check for %s on the control queue", note, sha1[:7])
	}

	// A push to the pull request: the old head's job is cancelled.
	e.handle(t, pr("acme/prover", 5, "synchronize", sha2))
	states := map[string]string{}
	for _, j := range e.jobs(t) {
		if j.Kind == queue.KindCompare {
			states[j.Args["head_sha"].(string)] = j.State
		}
	}
	if states[sha1] != "cancelled" || states[sha2] != "available" {
		t.Errorf("after the push: comparison states %v; want the old head cancelled, the new one available", states)
	}
	// Another pull request's jobs are left alone.
	e.handle(t, pr("acme/prover", 6, "opened", sha1))
	n := 0
	for _, j := range e.jobs(t) {
		if j.Kind == queue.KindCompare && j.State == "available" {
			n++
		}
	}
	if n != 2 {
		t.Errorf("%d available comparisons; want #5's new head and #6", n)
	}
}

func TestDispatchDraftsForksAndUnknownRepositories(t *testing.T) {
	t.Parallel()
	e := newDispatchEnv(t)
	draft := pr("acme/prover", 1, "opened", sha1)
	draft.Draft = true
	e.handle(t, draft) // drafts wait in acme/prover
	draft = pr("acme/drafty", 1, "opened", sha1)
	draft.Draft = true
	e.handle(t, draft) // but acme/drafty measures them, from its own clone URL
	fork := pr("acme/prover", 2, "opened", sha2)
	fork.Fork = true
	e.handle(t, fork)
	fork.Action = "synchronize"
	e.handle(t, fork) // no second notice
	e.handle(t, pr("someone/else", 3, "opened", sha1))

	jobs := e.jobs(t)
	var kinds []string
	for _, j := range jobs {
		kinds = append(kinds, j.Kind+"@"+j.Args["repo"].(string))
	}
	want := []string{"perfbot_compare@acme/drafty", "perfbot_notify@acme/drafty", "perfbot_notify@acme/prover"}
	if strings.Join(kinds, " ") != strings.Join(want, " ") {
		t.Fatalf("jobs %v, want %v", kinds, want)
	}
	if jobs[0].Args["clone_url"] != "https://git.example/drafty.git" {
		t.Errorf("drafty clone URL %v; want the configured one", jobs[0].Args["clone_url"])
	}
	if reply, _ := jobs[2].Args["reply"].(string); !strings.Contains(reply, "forks") || !strings.Contains(reply, "/perfbot run") {
		t.Errorf("fork notice %q", reply)
	}
	if !strings.Contains(e.log.String(), "repository not configured") || !strings.Contains(e.log.String(), "someone/else") {
		t.Errorf("log lacks the ignored repository:\n%s", e.log)
	}
}

func TestDispatchCommandsCheckWhoAsksAndWhatTheyAsk(t *testing.T) {
	t.Parallel()
	e := newDispatchEnv(t)
	cmd := func(assoc string, c *webhook.Command) *webhook.Command {
		c.Repo, c.Number, c.Author, c.Association = "acme/prover", 9, "grace", assoc
		c.Delivery = "d-" + assoc + c.Author
		return c
	}
	e.handle(t, cmd("CONTRIBUTOR", &webhook.Command{Run: &webhook.RunCommand{}}))
	e.handle(t, cmd("MEMBER", &webhook.Command{Err: errors.New(`unknown option "colour=blue"`)}))
	e.handle(t, cmd("OWNER", &webhook.Command{}))
	run := cmd("COLLABORATOR", &webhook.Command{Run: &webhook.RunCommand{Count: 12}})
	e.handle(t, run)
	e.handle(t, run) // a redelivered command is one job
	e.handle(t, cmd("MEMBER", &webhook.Command{Bisect: &webhook.BisectCommand{Good: "v1.0", Bad: "main", Phase: "msm_h"}}))

	jobs := e.jobs(t)
	if len(jobs) != 5 {
		t.Fatalf("jobs %+v; want 3 replies, one run, one bisect", jobs)
	}
	replies := []string{jobs[0].Args["reply"].(string), jobs[1].Args["reply"].(string), jobs[2].Args["reply"].(string)}
	if !strings.Contains(replies[0], "@grace") || !strings.Contains(replies[0], "owners, members and collaborators") {
		t.Errorf("reply to a contributor: %q", replies[0])
	}
	if !strings.Contains(replies[1], `unknown option "colour=blue"`) || !strings.Contains(replies[1], webhook.Usage) {
		t.Errorf("reply to bad arguments: %q; want the error and the usage", replies[1])
	}
	if replies[2] != webhook.Usage {
		t.Errorf("reply to help: %q; want the usage", replies[2])
	}
	if j := jobs[3]; j.Kind != queue.KindCommand || j.Queue != queue.ControlQueue || j.Args["count"] != 12.0 || j.Args["queue"] != "h200" {
		t.Errorf("run job %+v; want a command job for queue h200 with count 12", j)
	}
	if j := jobs[4]; j.Kind != queue.KindBisect || j.Queue != "h200" || j.Args["good"] != "v1.0" || j.Args["phase"] != "msm_h" {
		t.Errorf("bisect job %+v", j)
	}
}

func TestDispatchPushRecordsBaselinesOfTheDefaultBranchOnly(t *testing.T) {
	t.Parallel()
	e := newDispatchEnv(t)
	push := func(repo, ref, after string) *webhook.Push {
		return &webhook.Push{Delivery: "p-" + repo + ref, Repo: repo, Ref: ref, After: after, DefaultBranch: "main",
			CloneURL: "https://github.com/" + repo + ".git"}
	}
	e.handle(t, push("acme/prover", "refs/heads/main", sha1))
	e.handle(t, push("acme/prover", "refs/heads/feature", sha2))
	e.handle(t, push("acme/prover", "refs/heads/main", strings.Repeat("0", 40))) // deleted
	e.handle(t, push("acme/quiet", "refs/heads/main", sha2))                     // baselines off
	jobs := e.jobs(t)
	if len(jobs) != 1 || jobs[0].Kind != queue.KindBaseline || jobs[0].Args["sha"] != sha1 || jobs[0].Queue != "h200" {
		t.Errorf("jobs %+v; want one baseline of %s on h200", jobs, sha1[:7])
	}
}

func TestQueueRefusesSQLite(t *testing.T) {
	t.Parallel()
	db, err := store.Open(context.Background(), t.TempDir()+"/perfbot.db", store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := queue.New(db, queue.Config{}); err == nil || !strings.Contains(err.Error(), "postgres://") {
		t.Errorf("queue.New on SQLite: %v; want an error asking for PostgreSQL", err)
	}
}
