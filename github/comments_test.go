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

// report is a stand-in for a rendered report: the marker, a headline
// and a body.
func report(headline, body string) string {
	return render.SummaryMarker + "\n### " + headline + "\n\n" + body + "\n"
}

// perfbotComments returns the comments on PR 1 that hold the marker.
func perfbotComments(srv *githubtest.Server) []githubtest.IssueComment {
	var out []githubtest.IssueComment
	for _, c := range srv.Comments(testRepo.Owner, testRepo.Name, 1) {
		if strings.Contains(c.Body, render.SummaryMarker) {
			out = append(out, c)
		}
	}
	return out
}

func TestUpsertCommentCreatesOnceThenEditsWithHistory(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t)
	addPR(srv)
	for i := range 150 {
		srv.AddComment(testRepo.Owner, testRepo.Name, 1, "reviewer", fmt.Sprintf("unrelated comment %d", i))
	}
	c, _ := newTokenClient(t, srv)
	ctx := context.Background()

	first, err := c.UpsertComment(ctx, testRepo, 1, report("perfbot: no change", "run 1"))
	if err != nil {
		t.Fatal(err)
	}
	if !first.Created || first.ID == 0 || !strings.Contains(first.URL, "#issuecomment-") {
		t.Fatalf("first upsert = %+v, want a created comment", first)
	}
	for i, verdict := range []string{"perfbot: regression", "perfbot: improvement"} {
		got, err := c.UpsertComment(ctx, testRepo, 1, report(verdict, fmt.Sprintf("run %d", i+2)))
		if err != nil {
			t.Fatal(err)
		}
		if got.Created || got.ID != first.ID || got.URL != first.URL {
			t.Fatalf("upsert %d = %+v, want an edit of comment %d", i+2, got, first.ID)
		}
	}

	if all := srv.Comments(testRepo.Owner, testRepo.Name, 1); len(all) != 151 {
		t.Errorf("%d comments, want the 150 unrelated ones and one perfbot comment", len(all))
	}
	mine := perfbotComments(srv)
	if len(mine) != 1 || mine[0].ID != first.ID {
		t.Fatalf("perfbot comments: %+v, want exactly comment %d", mine, first.ID)
	}
	body := mine[0].Body
	if strings.Count(body, render.SummaryMarker) != 1 || !strings.HasPrefix(body, report("perfbot: improvement", "run 3")) {
		t.Errorf("body does not start with the newest report, marked once:\n%s", body)
	}
	cur, entries := splitHistory(body)
	wantEntries := []string{"### perfbot: regression\n\nrun 2", "### perfbot: no change\n\nrun 1"}
	if normalize(cur) != normalize(report("perfbot: improvement", "run 3")) || fmt.Sprint(entries) != fmt.Sprint(wantEntries) {
		t.Errorf("history = %q, %q; want newest first %q", cur, entries, wantEntries)
	}
	for _, want := range []string{
		"<details><summary>Earlier results (2)</summary>",
		"<details><summary>perfbot: regression</summary>",
		"<details><summary>perfbot: no change</summary>",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("body lacks %q:\n%s", want, body)
		}
	}
	if strings.Index(body, "run 2") > strings.Index(body, "run 1") {
		t.Error("history is not newest first")
	}

	// Every upsert read both pages of comments: 150 unrelated ones come
	// before perfbot's.
	page2 := 0
	for _, r := range srv.Requests() {
		if r.Method == "GET" && r.Query.Get("page") == "2" && r.Query.Get("per_page") == "100" {
			page2++
		}
	}
	if page2 != 3 {
		t.Errorf("page 2 of the comments was read %d times, want 3 (one per upsert)", page2)
	}
	if n, e := count(srv, "POST", "/repos/acme/prover/issues/1/comments"), count(srv, "PATCH", fmt.Sprintf("/repos/acme/prover/issues/comments/%d", first.ID)); n != 1 || e != 2 {
		t.Errorf("%d creates and %d edits, want 1 and 2", n, e)
	}
}

func TestUpsertCommentDoesNotRefoldAnUnchangedReport(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t)
	addPR(srv)
	c, _ := newTokenClient(t, srv)
	ctx := context.Background()
	a, b := report("perfbot: no change", "A"), report("perfbot: regression", "B")

	for range 3 {
		if _, err := c.UpsertComment(ctx, testRepo, 1, a); err != nil {
			t.Fatal(err)
		}
	}
	if got := perfbotComments(srv); len(got) != 1 || got[0].Body != a {
		t.Fatalf("after the same report thrice: %+v, want one comment holding it without history", got)
	}
	if n := len(writes(srv)); n != 1 {
		t.Errorf("%d writes, want 1: an unchanged report is not sent again", n)
	}
	for range 2 {
		if _, err := c.UpsertComment(ctx, testRepo, 1, b); err != nil {
			t.Fatal(err)
		}
	}
	got := perfbotComments(srv)
	_, entries := splitHistory(got[0].Body)
	if len(entries) != 1 || entries[0] != "### perfbot: no change\n\nA" {
		t.Errorf("after A, B, B: history %q, want only A", entries)
	}
	if n := len(writes(srv)); n != 2 {
		t.Errorf("%d writes, want 2", n)
	}
}

func TestUpsertCommentKeepsTenEarlierResults(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t)
	addPR(srv)
	c, _ := newTokenClient(t, srv)
	for i := 1; i <= 13; i++ {
		if _, err := c.UpsertComment(context.Background(), testRepo, 1, report(fmt.Sprintf("result %d", i), "details")); err != nil {
			t.Fatal(err)
		}
	}
	got := perfbotComments(srv)
	cur, entries := splitHistory(got[0].Body)
	if !strings.Contains(cur, "result 13") || len(entries) != 10 {
		t.Fatalf("current %q with %d entries, want result 13 and 10 entries", cur, len(entries))
	}
	for i, e := range entries {
		if want := fmt.Sprintf("### result %d\n", 12-i); !strings.HasPrefix(e, want) {
			t.Errorf("entry %d = %q, want %q first (newest first, 1 and 2 dropped)", i, e, want)
		}
	}
	if !strings.Contains(got[0].Body, "Earlier results (10)") {
		t.Error("the history's summary does not count 10")
	}
}

func TestUpsertCommentStaysWithinGitHubsLimit(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t)
	addPR(srv)
	c, _ := newTokenClient(t, srv)
	ctx := context.Background()

	big := strings.Repeat("x", 20_000)
	for i := 1; i <= 5; i++ {
		if _, err := c.UpsertComment(ctx, testRepo, 1, report(fmt.Sprintf("result %d", i), big)); err != nil {
			t.Fatal(err)
		}
		body := perfbotComments(srv)[0].Body
		if len(body) > maxCommentLen {
			t.Fatalf("after %d results the body is %d bytes, over %d", i, len(body), maxCommentLen)
		}
	}
	_, entries := splitHistory(perfbotComments(srv)[0].Body)
	if len(entries) != 2 || !strings.HasPrefix(entries[0], "### result 4") || !strings.HasPrefix(entries[1], "### result 3") {
		t.Errorf("with 20 kB reports the history keeps %d entries; want the 2 newest (4 and 3) that fit", len(entries))
	}

	// A report over the limit on its own is cut, with a note, and keeps
	// the marker so the comment is found again.
	huge := report("result huge", strings.Repeat("line of a long table\n", 4000))
	res, err := c.UpsertComment(ctx, testRepo, 1, huge)
	if err != nil {
		t.Fatal(err)
	}
	mine := perfbotComments(srv)
	if len(mine) != 1 || mine[0].ID != res.ID {
		t.Fatalf("perfbot comments %d, want the one comment edited", len(mine))
	}
	body := mine[0].Body
	if len(body) > maxCommentLen || !strings.HasPrefix(body, render.SummaryMarker) ||
		!strings.Contains(body, fmt.Sprintf("**Truncated:** this report is %d bytes", len(huge))) {
		t.Errorf("huge report: %d bytes, starts %q, ends %q", len(body), body[:40], body[len(body)-200:])
	}
}

func TestUpsertCommentNeedsTheMarker(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t)
	addPR(srv)
	c, _ := newTokenClient(t, srv)
	_, err := c.UpsertComment(context.Background(), testRepo, 1, "### perfbot: no change\n")
	if err == nil || !strings.Contains(err.Error(), "lacks render.SummaryMarker") {
		t.Errorf("err = %v, want one naming the missing marker", err)
	}
	_, err = c.UpsertComment(context.Background(), testRepo, 1, report("x", historyMarker))
	if err == nil || !strings.Contains(err.Error(), "keeps for the comment's history") {
		t.Errorf("err = %v, want one refusing the history marker", err)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests, want none", n)
	}
}

func TestUpsertCommentCreatesOnceWhenTheAnswerIsLost(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t)
	addPR(srv)
	// The first create is served, but its answer is a 502: the comment
	// exists although the client was told it failed.
	srv.Fail("POST", "/repos/acme/prover/issues/1/comments", 1, githubtest.Fault{Status: http.StatusBadGateway, AfterServing: true})
	// The second attempt's create is not served at all.
	c, rec := newTokenClient(t, srv)
	res, err := c.UpsertComment(context.Background(), testRepo, 1, report("perfbot: no change", "A"))
	if err != nil {
		t.Fatal(err)
	}
	mine := perfbotComments(srv)
	if len(mine) != 1 || res.ID != mine[0].ID {
		t.Fatalf("comments %+v, result %+v; want the one comment the lost answer made, found again", mine, res)
	}
	if n := count(srv, "POST", "/repos/acme/prover/issues/1/comments"); n != 1 {
		t.Errorf("%d creates, want 1", n)
	}
	if w := rec.recorded(); len(w) != 1 {
		t.Errorf("waits %v, want one backoff before looking again", w)
	}

	srv2 := githubtest.New(t)
	addPR(srv2)
	srv2.Fail("POST", "/repos/acme/prover/issues/1/comments", 2, githubtest.Fault{Status: http.StatusServiceUnavailable})
	c2, _ := newTokenClient(t, srv2)
	if _, err := c2.UpsertComment(context.Background(), testRepo, 1, report("perfbot: no change", "A")); err != nil {
		t.Fatal(err)
	}
	if n, m := count(srv2, "POST", "/repos/acme/prover/issues/1/comments"), len(perfbotComments(srv2)); n != 3 || m != 1 {
		t.Errorf("refused twice: %d creates and %d comments, want 3 and 1", n, m)
	}
}

func TestUpsertCommentGivesUpWhenCreatesKeepFailing(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t)
	addPR(srv)
	srv.Fail("POST", "/repos/acme/prover/issues/1/comments", -1, githubtest.Fault{Status: http.StatusBadGateway})
	c, rec := newTokenClient(t, srv)
	_, err := c.UpsertComment(context.Background(), testRepo, 1, report("perfbot: no change", "A"))
	want := "update the perfbot comment on acme/prover#1: GitHub answered 502 Bad Gateway (gave up after 5 attempts, each after making sure the one before had not taken effect)"
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant %s", err, want)
	}
	lists := 0
	for _, r := range srv.Requests() {
		if r.Method == "GET" {
			lists++
		}
	}
	if n := count(srv, "POST", "/repos/acme/prover/issues/1/comments"); n != 5 || lists != 5 || len(rec.recorded()) != 4 {
		t.Errorf("%d creates, %d listings, waits %v; want 5 of each and 4 waits", n, lists, rec.recorded())
	}
}

func TestUpsertCommentDoesNotRetryARefusedCreate(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t)
	addPR(srv)
	srv.Fail("POST", "/repos/acme/prover/issues/1/comments", 1, githubtest.Fault{Status: http.StatusUnprocessableEntity,
		Body: `{"message":"Validation Failed","errors":[{"resource":"IssueComment","code":"custom","message":"try later"}]}`})
	c, rec := newTokenClient(t, srv)
	_, err := c.UpsertComment(context.Background(), testRepo, 1, report("perfbot: no change", "A"))
	if err == nil || !strings.Contains(err.Error(), "Validation Failed") {
		t.Errorf("err = %v; want GitHub's 422 message", err)
	}
	// A 4xx means the comment was not made: no second create, no wait.
	if n := count(srv, "POST", "/repos/acme/prover/issues/1/comments"); n != 1 || len(rec.recorded()) != 0 {
		t.Errorf("%d creates, waits %v; want one create and no retry", n, rec.recorded())
	}
}

func TestCommentAddsAPlainComment(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t)
	addPR(srv)
	c, _ := newTokenClient(t, srv)
	ctx := context.Background()
	for range 2 {
		res, err := c.Comment(ctx, testRepo, 1, "Usage: `/perfbot run`")
		if err != nil || !res.Created || res.ID == 0 {
			t.Fatalf("Comment = %+v, %v", res, err)
		}
	}
	all := srv.Comments(testRepo.Owner, testRepo.Name, 1)
	if len(all) != 2 || all[1].Body != "Usage: `/perfbot run`" || all[1].User != githubtest.TokenUser {
		t.Errorf("comments %+v, want two plain ones by %s", all, githubtest.TokenUser)
	}
	for _, bad := range []string{"", " \n", report("x", "y")} {
		if _, err := c.Comment(ctx, testRepo, 1, bad); err == nil {
			t.Errorf("Comment(%q) succeeded", bad)
		}
	}
	if _, err := c.Comment(ctx, testRepo, 2, "hello"); err == nil || !strings.Contains(err.Error(), "comment on acme/prover#2: GitHub answered 404") {
		t.Errorf("comment on a missing PR: %v", err)
	}
}
