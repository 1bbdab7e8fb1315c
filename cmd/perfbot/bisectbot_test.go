package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/perfbot/perfbot/github/githubtest"
	"github.com/perfbot/perfbot/store/queue"
)

// commentPayload is an issue_comment delivery as GitHub sends it for a
// new comment on pull request number, cut to the fields perfbot reads.
func (e *botEnv) commentPayload(number int, author, association, body string) map[string]any {
	repo := map[string]any{
		"id": 1296269, "name": e2eName, "full_name": e2eOwner + "/" + e2eName, "private": false, "fork": false,
		"owner":     map[string]any{"login": e2eOwner, "id": 1, "type": "Organization"},
		"clone_url": "https://github.com/" + e2eOwner + "/" + e2eName + ".git", "default_branch": "main",
	}
	user := map[string]any{"login": author, "id": 2, "type": "User"}
	return map[string]any{
		"action": "created",
		"issue": map[string]any{
			"id": 2000 + number, "number": number, "state": "open", "title": "Faster phase a?", "user": user,
			"pull_request": map[string]any{"url": fmt.Sprintf("https://api.github.com/repos/%s/%s/pulls/%d", e2eOwner, e2eName, number)},
		},
		"comment": map[string]any{
			"id": 9000 + number, "user": user, "author_association": association, "body": body,
		},
		"repository": repo,
		"sender":     user,
	}
}

// TestBotBisectCommandIsAnsweredInOneComment: a maintainer's
// /perfbot bisect comment goes through perfbot serve's webhook and the
// job queue to a worker, which bisects and answers in one comment.
func TestBotBisectCommandIsAnsweredInOneComment(t *testing.T) {
	e := startBot(t, botOptions{sleep: "0"})
	good := e.repo.Git(t, "rev-parse", "HEAD")
	var shas []string
	for i := 1; i <= 6; i++ {
		v := 1000
		if i >= 4 {
			v = 1300
		}
		shas = append(shas, e.repo.Commit(t, fmt.Sprintf("c%d", i), map[string]string{"value": fmt.Sprintf("%d\n", v), "n": fmt.Sprint(i)}))
	}
	const pr = 51
	bad := shas[5]
	e.gh.AddPullRequest(githubtest.PR{Owner: e2eOwner, Repo: e2eName, Number: pr, BaseSHA: good, HeadRef: "feature", HeadSHA: bad})
	cmd := "/perfbot bisect " + good[:12] + " " + bad[:12] + " phase=a"
	if code, body := e.post(t, "issue_comment", e.nextDelivery(), e.commentPayload(pr, "ada", "MEMBER", "Which commit?\r\n\r\n"+cmd)); code != http.StatusAccepted {
		t.Fatalf("comment: %d %q, want 202", code, body)
	}
	marker := bisectMarker(queue.BisectArgs{Repo: e2eOwner + "/" + e2eName, PR: pr, Good: good[:12], Bad: bad[:12], Phase: "a"})
	answer := func() (string, int) {
		var body string
		n := 0
		for _, c := range e.gh.Comments(e2eOwner, e2eName, pr) {
			if strings.Contains(c.Body, marker) {
				body, n = c.Body, n+1
			}
		}
		return body, n
	}
	state := func() string {
		var s string
		e.db.QueryRow(`SELECT state::text FROM river_job WHERE kind = $1`, queue.KindBisect).Scan(&s)
		return s
	}
	e.waitFor(t, "the bisection's answer and its job to complete", 120*time.Second, func() bool {
		body, _ := answer()
		return strings.Contains(body, "### perfbot bisect: the first bad commit") && state() == "completed"
	})
	body, n := answer()
	if n != 1 || !strings.Contains(body, "the first bad commit is `"+shas[3][:7]+"`") || !strings.Contains(body, "@ada asked for") {
		t.Errorf("%d answers; want one naming c4 (%s):\n%s", n, shas[3][:7], body)
	}
}
