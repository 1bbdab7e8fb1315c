package github

import (
	"context"
	"errors"
	"strings"
	"testing"

	gh "github.com/google/go-github/v60/github"

	"github.com/perfbot/perfbot/github/githubtest"
)

func TestCommitCommentIsPostedOnceOnTheCommit(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t)
	c, _ := newTokenClient(t, srv)
	ctx := context.Background()
	got, err := c.CommitComment(ctx, testRepo, shaHead, "msm_h +16%")
	if err != nil {
		t.Fatal(err)
	}
	cs := srv.CommitComments(testRepo.Owner, testRepo.Name, shaHead)
	if len(cs) != 1 || cs[0].Body != "msm_h +16%" || cs[0].ID != got.ID || cs[0].HTMLURL != got.URL || !got.Created {
		t.Fatalf("comments %+v, result %+v; want the one comment", cs, got)
	}
	if n := count(srv, "POST", "/repos/acme/prover/commits/"+shaHead+"/comments"); n != 1 {
		t.Errorf("%d POSTs; want 1", n)
	}

	// A server error is not retried: the comment may have landed.
	srv.Fail("POST", "/repos/acme/prover/commits/", 1, githubtest.Fault{Status: 502, AfterServing: true})
	if _, err := c.CommitComment(ctx, testRepo, shaBase, "x"); err == nil {
		t.Error("a 502 gave no error")
	}
	if n := len(srv.CommitComments(testRepo.Owner, testRepo.Name, shaBase)); n != 1 {
		t.Errorf("%d comments after a lost answer; want the 1 that landed, not retried", n)
	}
	// A SHA that names no commit is GitHub's 422.
	_, err = c.CommitComment(ctx, testRepo, "nope", "x")
	var er *gh.ErrorResponse
	if !errors.As(err, &er) || er.Response.StatusCode != 422 || !strings.Contains(err.Error(), "No commit found for SHA: nope") {
		t.Errorf("unknown SHA: %v; want GitHub's 422", err)
	}
	if _, err := c.CommitComment(ctx, testRepo, shaHead, strings.Repeat("x", maxCommentLen+1)); err == nil {
		t.Error("an over-long body was sent")
	}
}

func TestCommitCommentDryRunSendsNothing(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t)
	c, _ := newTokenClient(t, srv, func(o *Options) { o.DryRun = true })
	got, err := c.CommitComment(context.Background(), testRepo, shaHead, "body")
	if err != nil || !got.Created || got.ID != 0 {
		t.Errorf("dry run = %+v, %v; want Created, no ID", got, err)
	}
	if w := writes(srv); len(w) != 0 {
		t.Errorf("dry run sent %d writes", len(w))
	}
}
