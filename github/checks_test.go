package github

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/github/githubtest"
)

func TestSetCheckWithAppAuthCreatesThenUpdatesOneCheckRun(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t)
	c, _ := newAppClient(t, srv)
	ctx := context.Background()

	steps := []Check{
		{Name: "perfbot", Status: "queued", Title: "Waiting for a GPU runner"},
		{Name: "perfbot", Status: "in_progress", Title: "Benchmarking", DetailsURL: "https://perf.example/jobs/1"},
		{Name: "perfbot", Status: "completed", Conclusion: "failure", Title: "MSM 12% slower",
			Summary: "prove: +12.0% (p=0.002)", Text: "| phase | Δ |", DetailsURL: "https://perf.example/jobs/1"},
	}
	for i, ch := range steps {
		if err := c.SetCheck(ctx, testRepo, shaHead, ch); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		runs := srv.CheckRuns(testRepo.Owner, testRepo.Name, shaHead)
		if len(runs) != 1 || runs[0].Status != ch.Status || runs[0].Title != ch.Title || runs[0].Updates != i {
			t.Fatalf("step %d: check runs %+v, want one %s run updated %d times", i, runs, ch.Status, i)
		}
	}
	run := srv.CheckRuns(testRepo.Owner, testRepo.Name, shaHead)[0]
	want := githubtest.CheckRun{
		ID: run.ID, Name: "perfbot", HeadSHA: shaHead, Status: "completed", Conclusion: "failure",
		Title: "MSM 12% slower", Summary: "prove: +12.0% (p=0.002)", Text: "| phase | Δ |",
		DetailsURL: "https://perf.example/jobs/1", AppID: testAppID,
		StartedAt: run.StartedAt, CompletedAt: run.CompletedAt, Updates: 2,
	}
	if run != want || run.CompletedAt.IsZero() {
		t.Errorf("check run\n got %+v\nwant %+v", run, want)
	}

	// One installation token served all the calls; each lookup asked for
	// this App's runs by name.
	if n := count(srv, "POST", "/app/installations/77/access_tokens"); n != 1 {
		t.Errorf("%d installation tokens minted, want 1", n)
	}
	lookups := 0
	for _, r := range srv.Requests() {
		if r.Method == "GET" && r.Path == "/repos/acme/prover/commits/"+shaHead+"/check-runs" {
			lookups++
			if r.Query.Get("check_name") != "perfbot" || r.Query.Get("app_id") != "4242" {
				t.Errorf("lookup query %v, want check_name=perfbot and app_id=4242", r.Query)
			}
			if !strings.HasPrefix(r.Header.Get("Authorization"), "token ghs_") {
				t.Errorf("lookup authorized with %q, want the installation token", r.Header.Get("Authorization"))
			}
		}
	}
	if lookups != 3 || len(srv.Statuses(testRepo.Owner, testRepo.Name, shaHead)) != 0 {
		t.Errorf("%d lookups and some statuses; want 3 lookups and check runs only", lookups)
	}

	// The same check on another commit is a new run.
	if err := c.SetCheck(ctx, testRepo, shaBase, steps[0]); err != nil {
		t.Fatal(err)
	}
	if n := len(srv.CheckRuns(testRepo.Owner, testRepo.Name, shaBase)); n != 1 {
		t.Errorf("%d runs on the other commit, want 1", n)
	}
}

func TestSetCheckWithTokenAuthWritesStatuses(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t)
	c, _ := newTokenClient(t, srv)
	long := strings.Repeat("a", 150)
	tests := []struct {
		check     Check
		wantState string
		wantDesc  string
	}{
		{Check{Status: "queued", Title: "Waiting"}, "pending", "Waiting"},
		{Check{Status: "in_progress", Summary: "Benchmarking\nsecond line"}, "pending", "Benchmarking"},
		{Check{Status: "completed", Conclusion: "success", Title: "No change"}, "success", "No change"},
		{Check{Status: "completed", Conclusion: "neutral", Title: long}, "success", strings.Repeat("a", 139) + "…"},
		{Check{Status: "completed", Conclusion: "failure", Title: "Slower"}, "failure", "Slower"},
		{Check{Status: "completed", Conclusion: "action_required", Title: "Approve the fork"}, "error", "Approve the fork"},
		{Check{Status: "completed", Conclusion: "cancelled"}, "error", ""},
		{Check{Status: "completed", Conclusion: "timed_out", Title: "Timed out"}, "error", "Timed out"},
	}
	for _, tt := range tests {
		ch := tt.check
		ch.Name, ch.DetailsURL = "perfbot/"+ch.Status+"/"+ch.Conclusion, "https://perf.example/x"
		if err := c.SetCheck(context.Background(), testRepo, shaHead, ch); err != nil {
			t.Fatal(err)
		}
	}
	got := srv.Statuses(testRepo.Owner, testRepo.Name, shaHead)
	if len(got) != len(tests) {
		t.Fatalf("%d statuses, want %d", len(got), len(tests))
	}
	for i, tt := range tests {
		st := got[i]
		wantCtx := "perfbot/" + tt.check.Status + "/" + tt.check.Conclusion
		if st.State != tt.wantState || st.Description != tt.wantDesc || st.Context != wantCtx ||
			st.TargetURL != "https://perf.example/x" || st.Creator != githubtest.TokenUser {
			t.Errorf("status %d = %+v, want state %s, description %q, context %s", i, st, tt.wantState, tt.wantDesc, wantCtx)
		}
	}
	for _, r := range srv.Requests() {
		if strings.Contains(r.Path, "check-runs") {
			t.Errorf("token client called the Checks API: %s %s", r.Method, r.Path)
		}
	}
}

func TestSetCheckUseStatusesOverridesAppAuth(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t)
	c, _ := newAppClient(t, srv, func(o *Options) { o.UseStatuses = true })
	if err := c.SetCheck(context.Background(), testRepo, shaHead, Check{Name: "perfbot", Status: "completed", Conclusion: "success"}); err != nil {
		t.Fatal(err)
	}
	st := srv.Statuses(testRepo.Owner, testRepo.Name, shaHead)
	if len(st) != 1 || st[0].State != "success" || st[0].Creator != githubtest.AppUser {
		t.Errorf("statuses %+v, want one success status by the App", st)
	}
	if n := len(srv.CheckRuns(testRepo.Owner, testRepo.Name, shaHead)); n != 0 {
		t.Errorf("%d check runs, want none", n)
	}
}

func TestSetCheckRejectsInvalidChecks(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t)
	c, _ := newAppClient(t, srv)
	tests := []struct {
		sha   string
		check Check
		want  string
	}{
		{shaHead, Check{Status: "queued"}, "check has no name"},
		{shaHead, Check{Name: "p", Status: "done"}, `status "done" is not one of queued, in_progress, completed`},
		{shaHead, Check{Name: "p"}, `status "" is not one of`},
		{shaHead, Check{Name: "p", Status: "completed"}, "status completed needs a conclusion: one of success, neutral"},
		{shaHead, Check{Name: "p", Status: "in_progress", Conclusion: "success"}, "only a completed check has a conclusion"},
		{shaHead, Check{Name: "p", Status: "completed", Conclusion: "skipped"}, `conclusion "skipped" is not one of`},
		{"abc123", Check{Name: "p", Status: "queued"}, "not a full commit SHA"},
	}
	for _, tt := range tests {
		err := c.SetCheck(context.Background(), testRepo, tt.sha, tt.check)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("SetCheck(%+v) = %v, want an error saying %q", tt.check, err, tt.want)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests, want none", n)
	}
}

func TestSetCheckCreatesOnceWhenTheAnswerIsLost(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t)
	srv.Fail("POST", "/repos/acme/prover/check-runs", 1, githubtest.Fault{Status: 504, AfterServing: true})
	c, _ := newAppClient(t, srv)
	ch := Check{Name: "perfbot", Status: "completed", Conclusion: "success", Title: "No change"}
	if err := c.SetCheck(context.Background(), testRepo, shaHead, ch); err != nil {
		t.Fatal(err)
	}
	runs := srv.CheckRuns(testRepo.Owner, testRepo.Name, shaHead)
	if len(runs) != 1 || runs[0].Conclusion != "success" {
		t.Errorf("check runs %+v, want exactly one", runs)
	}
}

func TestAppAuthRefusedSaysWhatToCheck(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t)
	c, rec := newAppClient(t, srv)
	other, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	srv.SetAppKey(testAppID, &other.PublicKey) // the server now trusts another key
	err = c.SetCheck(context.Background(), testRepo, shaHead, Check{Name: "perfbot", Status: "queued"})
	if err == nil {
		t.Fatal("SetCheck succeeded with a key GitHub does not know")
	}
	for _, want := range []string{"GitHub App authentication failed", "installation 77", "401", "signature does not match", "check Options.App"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if n := len(srv.Requests()); n != 1 || len(rec.recorded()) != 0 {
		t.Errorf("%d requests and waits %v; want one refused token request, not retried", n, rec.recorded())
	}
	if errors.Is(err, ErrRateLimited) || errors.Is(err, ErrNotFound) {
		t.Error("an auth failure matches ErrRateLimited or ErrNotFound")
	}
}

func TestCheckRunPayload(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t)
	c, _ := newAppClient(t, srv)
	ch := Check{Name: "perfbot", Status: "completed", Conclusion: "success", Text: strings.Repeat("t", 70_000)}
	if err := c.SetCheck(context.Background(), testRepo, shaHead, ch); err != nil {
		t.Fatal(err)
	}
	var body struct {
		Output struct{ Title, Summary, Text string }
	}
	for _, r := range srv.Requests() {
		if r.Method == "POST" && r.Path == "/repos/acme/prover/check-runs" {
			if err := json.Unmarshal(r.Body, &body); err != nil {
				t.Fatal(err)
			}
		}
	}
	o := body.Output
	if o.Title != "perfbot" || o.Summary != "perfbot" || len(o.Text) > maxOutputLen || !strings.Contains(o.Text, "**Truncated:** 70000 bytes") {
		t.Errorf("output title %q, summary %q, text of %d bytes; want defaults and a cut text", o.Title, o.Summary, len(o.Text))
	}
}
