package server

import (
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/store/queue"
	"github.com/perfbot/perfbot/store/storetest"
)

// Events the dispatcher does not act on (drafts, repositories not
// configured, pushes to other branches) were answered 202 "accepted",
// counted as accepted, and each wrote a delivery row. They are answered
// "ignored: " with the reason, counted as ignored, and write nothing; and
// a repository is found whatever the case of its name in the payload, as
// GitHub's names are not case-sensitive.
func TestIgnoredEventsAreAnsweredAsSuchAndWriteNothing(t *testing.T) {
	secret := []byte("ignored-secret")
	url, srv, db := webhookServer(t, storetest.FreshPostgres(t), secret,
		map[string]Repo{"acme/prover": {Name: "acme/prover", Queue: "gpu", Baselines: true}})

	pull := func(id, repoName string, pr int, draft bool) signedDelivery {
		return signed(secret, "pull_request", id, pullPayload(repoName, "opened", pr, fmt.Sprintf("%040x", 0x1000+pr), draft))
	}
	push := func(id, ref string) signedDelivery {
		repo := map[string]any{"id": 1, "full_name": "acme/prover", "default_branch": "main", "clone_url": "https://github.com/acme/prover.git"}
		return signed(secret, "push", id, map[string]any{
			"ref": ref, "before": fmt.Sprintf("%040x", 1), "after": fmt.Sprintf("%040x", 2),
			"repository": repo, "sender": map[string]any{"login": "ada"},
		})
	}
	for _, c := range []struct {
		d    signedDelivery
		want string
	}{
		{pull("d-draft", "acme/prover", 1, true), "ignored: draft pull request; measured once it is ready for review"},
		{pull("d-other", "someone/else", 2, false), "ignored: repository not configured: someone/else (add it to repos in the server config)"},
		{push("d-branch", "refs/heads/feature"), "ignored: push to a branch other than the default"},
		{pull("d-case", "ACME/Prover", 3, false), "accepted"},
	} {
		code, text, err := c.d.send(url)
		want := http.StatusAccepted
		if err != nil || code != want || text != c.want {
			t.Errorf("%s: %d %q (%v); want %d %q", c.d.id, code, text, err, want, c.want)
		}
	}
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`perfbot_webhooks_total{event="pull_request",outcome="ignored"} 2`,
		`perfbot_webhooks_total{event="push",outcome="ignored"} 1`,
		`perfbot_webhooks_total{event="pull_request",outcome="accepted"} 1`,
	} {
		if !strings.Contains(string(metrics), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	var ids sql.NullString
	if err := db.SQL().QueryRow(`SELECT string_agg(id, ',' ORDER BY id) FROM webhook_deliveries`).Scan(&ids); err != nil {
		t.Fatal(err)
	}
	if ids.String != "d-case" {
		t.Errorf("delivery rows %q; want only the accepted one's", ids.String)
	}
	var repo string
	var n int
	if err := db.SQL().QueryRow(`SELECT count(*), max(args->>'repo') FROM river_job WHERE kind = $1`, queue.KindCompare).Scan(&n, &repo); err != nil {
		t.Fatal(err)
	}
	if n != 1 || repo != "acme/prover" {
		t.Errorf("%d comparison jobs for %q; want one, for the configured acme/prover", n, repo)
	}
}
