package github

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/github/githubtest"
)

func TestDryRunReadsButSendsNoWrites(t *testing.T) {
	t.Parallel()
	for _, auth := range []string{"token", "app"} {
		t.Run(auth, func(t *testing.T) {
			t.Parallel()
			srv := githubtest.New(t)
			addPR(srv)
			existing := srv.AddComment(testRepo.Owner, testRepo.Name, 1, githubtest.AppUser, report("perfbot: no change", "old"))
			var logs bytes.Buffer
			dry := func(o *Options) {
				o.DryRun = true
				o.Logger = slog.New(slog.NewTextHandler(&logs, nil))
			}
			var c *Client
			if auth == "token" {
				c, _ = newTokenClient(t, srv, dry)
			} else {
				c, _ = newAppClient(t, srv, dry)
			}
			ctx := context.Background()

			if _, err := c.PullRequest(ctx, testRepo, 1); err != nil {
				t.Fatal(err)
			}
			res, err := c.UpsertComment(ctx, testRepo, 1, report("perfbot: regression", "new"))
			if err != nil || res.ID != existing.ID || res.Created {
				t.Errorf("dry upsert = %+v, %v; want the existing comment %d", res, err, existing.ID)
			}
			srv.RemovePullRequest(testRepo.Owner, testRepo.Name, 1)
			addPR(srv)
			res, err = c.UpsertComment(ctx, testRepo, 1, report("perfbot: regression", "new"))
			if err != nil || !res.Created || res.ID != 0 {
				t.Errorf("dry upsert without a comment = %+v, %v; want Created and no ID", res, err)
			}
			if _, err := c.Comment(ctx, testRepo, 1, "hello"); err != nil {
				t.Fatal(err)
			}
			for _, st := range []string{"queued", "completed"} {
				ch := Check{Name: "perfbot", Status: st}
				if st == "completed" {
					ch.Conclusion = "success"
				}
				if err := c.SetCheck(ctx, testRepo, shaHead, ch); err != nil {
					t.Fatal(err)
				}
			}

			if w := writes(srv); len(w) != 0 {
				t.Errorf("dry run sent %d writes, first %s %s", len(w), w[0].Method, w[0].Path)
			}
			if len(srv.Requests()) == 0 {
				t.Error("dry run sent no reads either")
			}
			for _, want := range []string{"would edit the perfbot comment", "would create the perfbot comment", "would comment", "would"} {
				if !strings.Contains(logs.String(), want) {
					t.Errorf("logs lack %q:\n%s", want, logs.String())
				}
			}
			want := "would set the commit status"
			if auth == "app" {
				want = "would create the check run"
			}
			if !strings.Contains(logs.String(), want) {
				t.Errorf("logs lack %q:\n%s", want, logs.String())
			}
		})
	}
}
