package github

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/github/githubtest"
)

func TestPullRequestDetails(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t)
	srv.AddPullRequest(githubtest.PR{
		Owner: "acme", Repo: "prover", Number: 7, Title: "Faster MSM", Draft: true,
		BaseRef: "main", BaseSHA: shaBase, HeadRef: "msm", HeadSHA: shaHead, Author: "alice",
		CloneURL: "https://github.example/acme/prover.git",
	})
	srv.AddPullRequest(githubtest.PR{
		Owner: "acme", Repo: "prover", Number: 8, Title: "From a fork", State: "closed", Merged: true,
		BaseSHA: shaBase, HeadRef: "patch-1", HeadSHA: shaHead, Author: "mallory", Fork: true,
	})
	srv.AddPullRequest(githubtest.PR{
		Owner: "acme", Repo: "prover", Number: 9, Title: "Fork deleted",
		BaseSHA: shaBase, HeadRef: "gone", HeadSHA: shaHead, Author: "bob", Fork: true, HeadRepoDeleted: true,
	})
	c, _ := newTokenClient(t, srv)
	ctx := context.Background()

	pr, err := c.PullRequest(ctx, testRepo, 7)
	if err != nil {
		t.Fatal(err)
	}
	want := PullRequest{
		Repo: testRepo, Number: 7, Title: "Faster MSM", State: "open", Draft: true, Author: "alice",
		BaseRef: "main", BaseSHA: shaBase, HeadRef: "msm", HeadSHA: shaHead, HeadRepo: "acme/prover",
		CloneURL: "https://github.example/acme/prover.git", HTMLURL: srv.URL() + "/acme/prover/pull/7",
	}
	if *pr != want {
		t.Errorf("PR 7:\n got %+v\nwant %+v", *pr, want)
	}

	fork, err := c.PullRequest(ctx, testRepo, 8)
	if err != nil {
		t.Fatal(err)
	}
	if !fork.Fork || fork.HeadRepo != "mallory/prover" || fork.State != "closed" || !fork.Merged ||
		fork.CloneURL != srv.URL()+"/acme/prover.git" {
		t.Errorf("fork PR 8 = %+v; want Fork, head repo mallory/prover, closed and merged, base clone URL", *fork)
	}

	gone, err := c.PullRequest(ctx, testRepo, 9)
	if err != nil {
		t.Fatal(err)
	}
	if !gone.Fork || gone.HeadRepo != "" || gone.HeadSHA != shaHead {
		t.Errorf("PR 9 with a deleted head repo = %+v; want Fork and no head repo", *gone)
	}
}

func TestPullRequestFollowsPushesAndRemoval(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t)
	addPR(srv)
	c, _ := newTokenClient(t, srv)
	ctx := context.Background()

	const pushed = "3333333333333333333333333333333333333333"
	srv.SetHead(testRepo.Owner, testRepo.Name, 1, pushed)
	pr, err := c.PullRequest(ctx, testRepo, 1)
	if err != nil || pr.HeadSHA != pushed {
		t.Fatalf("after a push: %+v, %v; want head %s", pr, err, pushed)
	}

	srv.RemovePullRequest(testRepo.Owner, testRepo.Name, 1)
	_, err = c.PullRequest(ctx, testRepo, 1)
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("removed PR: err = %v, want ErrNotFound", err)
	}
	if want := "get pull request acme/prover#1: GitHub answered 404 Not Found"; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("err = %q, want it to start %q", err, want)
	}
	if _, err := c.PullRequest(ctx, Repo{"acme", "nope"}, 99); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown repo: err = %v, want ErrNotFound", err)
	}
}
