package github

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/analysis/render"
	"github.com/perfbot/perfbot/github/githubtest"
)

func TestUpsertMarkedCreatesOnceThenEditsInPlace(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t)
	addPR(srv)
	const marker, other = "<!-- perfbot:bisect 1a2b3c -->", "<!-- perfbot:bisect 4d5e6f -->"
	srv.AddComment(testRepo.Owner, testRepo.Name, 1, "reviewer", "unrelated")
	c, _ := newTokenClient(t, srv)
	ctx := context.Background()
	first, err := c.UpsertMarked(ctx, testRepo, 1, marker, marker+"\nbisecting…")
	if err != nil || !first.Created || first.ID == 0 {
		t.Fatalf("first upsert = %+v, %v; want a created comment", first, err)
	}
	// Another bisection's comment is its own.
	if o, err := c.UpsertMarked(ctx, testRepo, 1, other, other+"\nbisecting another range"); err != nil || !o.Created || o.ID == first.ID {
		t.Fatalf("other marker = %+v, %v; want a comment of its own", o, err)
	}
	for _, body := range []string{marker + "\nstep 1", marker + "\nfound", marker + "\nfound"} {
		got, err := c.UpsertMarked(ctx, testRepo, 1, marker, body)
		if err != nil || got.Created || got.ID != first.ID {
			t.Fatalf("upsert %q = %+v, %v; want an edit of comment %d", body, got, err, first.ID)
		}
	}
	all := srv.Comments(testRepo.Owner, testRepo.Name, 1)
	if len(all) != 3 || all[1].Body != marker+"\nfound" {
		t.Errorf("comments %+v; want the unrelated one, the marked one (now \"found\") and the other", all)
	}
	// The unchanged third body is not sent again.
	if n, e := count(srv, "POST", "/repos/acme/prover/issues/1/comments"), count(srv, "PATCH", fmt.Sprintf("/repos/acme/prover/issues/comments/%d", first.ID)); n != 2 || e != 2 {
		t.Errorf("%d creates and %d edits, want 2 and 2", n, e)
	}
}

func TestUpsertMarkedCreatesOnceWhenTheAnswerIsLost(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t)
	addPR(srv)
	srv.Fail("POST", "/repos/acme/prover/issues/1/comments", 1, githubtest.Fault{Status: http.StatusBadGateway, AfterServing: true})
	c, _ := newTokenClient(t, srv)
	const marker = "<!-- perfbot:bisect x -->"
	if _, err := c.UpsertMarked(context.Background(), testRepo, 1, marker, marker+" answer"); err != nil {
		t.Fatal(err)
	}
	if all := srv.Comments(testRepo.Owner, testRepo.Name, 1); len(all) != 1 {
		t.Errorf("%d comments, want the one the lost answer made, found again", len(all))
	}
}

func TestUpsertMarkedRefusesBadMarkersAndBodies(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t)
	addPR(srv)
	c, _ := newTokenClient(t, srv)
	const marker = "<!-- perfbot:bisect x -->"
	for _, tc := range []struct{ marker, body, want string }{
		{"bisect x", "bisect x", "marker must be"},
		{"<!-- perfbot:a --> <!-- perfbot:b -->", "<!-- perfbot:a --> <!-- perfbot:b -->", "marker must be"},
		{render.SummaryMarker, render.SummaryMarker, "UpsertComment"},
		{marker, marker + render.SummaryMarker, "UpsertComment"},
		{marker, "no marker", "lacks the marker"},
		{marker, marker + strings.Repeat("x", maxCommentLen), "over GitHub's limit"},
	} {
		if _, err := c.UpsertMarked(context.Background(), testRepo, 1, tc.marker, tc.body); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("UpsertMarked(%q) = %v; want an error saying %q", tc.marker, err, tc.want)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests sent for refused comments", n)
	}
}
