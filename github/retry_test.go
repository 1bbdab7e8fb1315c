package github

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perfbot/perfbot/github/githubtest"
)

const pullPath = "/repos/acme/prover/pulls/1"

// rateLimited is the fault GitHub answers when the primary limit is
// used up, resetting after in.
func rateLimited(status int, in time.Duration) githubtest.Fault {
	return githubtest.Fault{
		Status: status,
		Header: http.Header{
			"X-Ratelimit-Limit":     {"5000"},
			"X-Ratelimit-Remaining": {"0"},
			"X-Ratelimit-Used":      {"5000"},
			"X-Ratelimit-Reset":     {strconv.FormatInt(time.Now().Add(in).Unix(), 10)},
		},
		Body: `{"message":"API rate limit exceeded for installation ID 77.","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"}`,
	}
}

func TestServerErrorsAreRetriedWithBackoff(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t)
	addPR(srv)
	srv.Fail("GET", pullPath, 2, githubtest.Fault{Status: http.StatusBadGateway})
	var logs bytes.Buffer
	c, rec := newTokenClient(t, srv, func(o *Options) { o.Logger = slog.New(slog.NewTextHandler(&logs, nil)) })
	pr, err := c.PullRequest(context.Background(), testRepo, 1)
	if err != nil || pr.HeadSHA != shaHead {
		t.Fatalf("PullRequest = %+v, %v", pr, err)
	}
	if n := count(srv, "GET", pullPath); n != 3 {
		t.Errorf("%d requests, want 3", n)
	}
	w := rec.recorded()
	if len(w) != 2 || w[0] < time.Second || w[0] > 1500*time.Millisecond || w[1] < 2*time.Second || w[1] > 3*time.Second {
		t.Errorf("waits %v, want ~1s then ~2s (doubling, up to half again of jitter)", w)
	}
	for _, want := range []string{"retrying request", "method=GET", "path=/api/v3/repos/acme/prover/pulls/1", "status=502", "wait="} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("logs lack %q:\n%s", want, logs.String())
		}
	}
}

func TestGivingUpAfterMaxAttemptsSaysWhatHappened(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t)
	addPR(srv)
	srv.Fail("GET", pullPath, -1, githubtest.Fault{Status: http.StatusServiceUnavailable, Body: `{"message":"Service unavailable"}`})
	c, rec := newTokenClient(t, srv, func(o *Options) { o.Retry.MaxAttempts = 3 })
	_, err := c.PullRequest(context.Background(), testRepo, 1)
	want := `get pull request acme/prover#1: GET /api/v3/repos/acme/prover/pulls/1: 503 Service Unavailable ("Service unavailable"); gave up after 3 attempts`
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant %s", err, want)
	}
	var re *RetryError
	if !errors.As(err, &re) || re.Attempts != 3 || re.Status != 503 || errors.Is(err, ErrRateLimited) {
		t.Errorf("err = %#v, want a *RetryError after 3 attempts, not rate limited", err)
	}
	if n, w := count(srv, "GET", pullPath), rec.recorded(); n != 3 || len(w) != 2 {
		t.Errorf("%d requests and waits %v, want 3 and 2", n, w)
	}
}

func TestRateLimitWaitsForTheReset(t *testing.T) {
	t.Parallel()
	for _, status := range []int{http.StatusForbidden, http.StatusTooManyRequests} {
		srv := githubtest.New(t)
		addPR(srv)
		srv.Fail("GET", pullPath, 1, rateLimited(status, 2*time.Second))
		c, rec := newTokenClient(t, srv)
		if _, err := c.PullRequest(context.Background(), testRepo, 1); err != nil {
			t.Fatalf("%d: %v", status, err)
		}
		// The reset is in whole seconds, 1-2s away; one more second for
		// the clocks.
		w := rec.recorded()
		if len(w) != 1 || w[0] <= 2*time.Second || w[0] > 3*time.Second {
			t.Errorf("%d: waits %v, want one of 2-3s (the reset plus 1s)", status, w)
		}
		if n := count(srv, "GET", pullPath); n != 2 {
			t.Errorf("%d: %d requests, want 2", status, n)
		}
	}
}

func TestRetryAfterIsWaited(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t)
	addPR(srv)
	srv.Fail("GET", pullPath, 1, githubtest.Fault{
		Status: http.StatusForbidden,
		Header: http.Header{"Retry-After": {"3"}},
		Body:   `{"message":"You have exceeded a secondary rate limit.","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"}`,
	})
	c, rec := newTokenClient(t, srv)
	if _, err := c.PullRequest(context.Background(), testRepo, 1); err != nil {
		t.Fatal(err)
	}
	if w := rec.recorded(); len(w) != 1 || w[0] != 3*time.Second {
		t.Errorf("waits %v, want [3s]", w)
	}
}

func TestSecondaryRateLimitWithoutHeadersWaitsAMinute(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t)
	addPR(srv)
	srv.Fail("GET", pullPath, 1, githubtest.Fault{
		Status: http.StatusForbidden,
		Body:   `{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again.","documentation_url":"https://docs.github.com/free-pro-team@latest/rest/overview/resources-in-the-rest-api#secondary-rate-limits"}`,
	})
	c, rec := newTokenClient(t, srv)
	if _, err := c.PullRequest(context.Background(), testRepo, 1); err != nil {
		t.Fatal(err)
	}
	if w := rec.recorded(); len(w) != 1 || w[0] != time.Minute {
		t.Errorf("waits %v, want [1m0s]", w)
	}
}

func TestPermissionDenied403IsNotRetried(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t)
	c, rec := newTokenClient(t, srv)
	c.useStatuses = false // as if the token client had tried the Checks API
	err := c.SetCheck(context.Background(), testRepo, shaHead, Check{Name: "perfbot", Status: "queued"})
	if err == nil || !strings.Contains(err.Error(), "403 Forbidden: Resource not accessible by personal access token") {
		t.Errorf("err = %v, want GitHub's 403 message", err)
	}
	if n := len(srv.Requests()); n != 1 || len(rec.recorded()) != 0 {
		t.Errorf("%d requests, waits %v; want 1 and none", n, rec.recorded())
	}
}

func TestRateLimitResetBeyondMaxWaitFails(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t)
	addPR(srv)
	srv.Fail("GET", pullPath, 1, rateLimited(http.StatusForbidden, 10*time.Minute))
	c, rec := newTokenClient(t, srv)
	_, err := c.PullRequest(context.Background(), testRepo, 1)
	if !errors.Is(err, ErrRateLimited) {
		t.Fatalf("err = %v, want ErrRateLimited", err)
	}
	var re *RetryError
	if !errors.As(err, &re) || re.Reset.IsZero() || re.Wait < 9*time.Minute || re.MaxWait != 5*time.Minute || re.Attempts != 1 {
		t.Fatalf("err = %#v, want a RetryError with the reset", err)
	}
	reset := re.Reset.UTC().Format(time.TimeOnly + " MST")
	for _, want := range []string{
		"get pull request acme/prover#1: GET /api/v3/repos/acme/prover/pulls/1: rate limited: 403 Forbidden (X-RateLimit-Remaining: 0",
		"API rate limit exceeded for installation ID 77.",
		"the limit resets at " + reset + ", in 10m",
		"longer than the 5m0s MaxWait; gave up after 1 attempt; try again after " + reset,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q\ndoes not say %q", err, want)
		}
	}
	if n, w := count(srv, "GET", pullPath), rec.recorded(); n != 1 || len(w) != 0 {
		t.Errorf("%d requests and waits %v, want 1 and none", n, w)
	}
}

func TestRetryAfterBeyondMaxWaitFails(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t)
	addPR(srv)
	srv.Fail("GET", pullPath, 1, githubtest.Fault{Status: 429, Header: http.Header{"Retry-After": {"120"}}})
	c, _ := newTokenClient(t, srv, func(o *Options) { o.Retry.MaxWait = time.Minute })
	_, err := c.PullRequest(context.Background(), testRepo, 1)
	want := `get pull request acme/prover#1: GET /api/v3/repos/acme/prover/pulls/1: rate limited: 429 Too Many Requests (Retry-After: 120, "Too Many Requests"): GitHub asked to wait 2m0s, longer than the 1m0s MaxWait; gave up after 1 attempt`
	if !errors.Is(err, ErrRateLimited) || err.Error() != want {
		t.Errorf("err = %v\nwant %s", err, want)
	}
}

func TestValidationFailedIsReturnedWithGitHubsMessage(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t)
	addPR(srv)
	srv.Fail("POST", "/repos/acme/prover/issues/1/comments", 1, githubtest.Fault{
		Status: http.StatusUnprocessableEntity,
		Body:   `{"message":"Validation Failed","errors":[{"resource":"IssueComment","code":"custom","field":"body","message":"body is too long (maximum is 65536 characters)"}],"documentation_url":"https://docs.github.com/rest/issues/comments#create-an-issue-comment"}`,
	})
	c, rec := newTokenClient(t, srv)
	_, err := c.Comment(context.Background(), testRepo, 1, "hello")
	want := "comment on acme/prover#1: GitHub answered 422 Unprocessable Entity: Validation Failed (body is too long (maximum is 65536 characters))"
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant %s", err, want)
	}
	if n := count(srv, "POST", "/repos/acme/prover/issues/1/comments"); n != 1 || len(rec.recorded()) != 0 {
		t.Errorf("%d requests, waits %v; want 1 and none", n, rec.recorded())
	}
}

func TestPostBodyIsReplayedOnRetry(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t)
	srv.Fail("POST", "/repos/acme/prover/statuses/", 2, githubtest.Fault{Status: http.StatusBadGateway})
	c, _ := newTokenClient(t, srv)
	ch := Check{Name: "perfbot", Status: "completed", Conclusion: "failure", Title: "MSM 12% slower", DetailsURL: "https://perf.example/1"}
	if err := c.SetCheck(context.Background(), testRepo, shaHead, ch); err != nil {
		t.Fatal(err)
	}
	var bodies []string
	for _, r := range srv.Requests() {
		if r.Method == "POST" {
			bodies = append(bodies, string(r.Body))
		}
	}
	if len(bodies) != 3 || bodies[0] == "" || bodies[1] != bodies[0] || bodies[2] != bodies[0] {
		t.Fatalf("bodies %q, want 3 identical ones", bodies)
	}
	if !strings.Contains(bodies[0], `"state":"failure"`) {
		t.Errorf("body %s lacks the state", bodies[0])
	}
	if st := srv.Statuses(testRepo.Owner, testRepo.Name, shaHead); len(st) != 1 || st[0].Description != "MSM 12% slower" {
		t.Errorf("statuses %+v, want one", st)
	}
}

// flakyTransport fails the first n round trips with a network error.
type flakyTransport struct {
	left atomic.Int32
}

func (f *flakyTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if f.left.Add(-1) >= 0 {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, errors.New("connection reset by peer")
	}
	return http.DefaultTransport.RoundTrip(req)
}

func TestNetworkErrorsAreRetried(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t)
	addPR(srv)
	flaky := &flakyTransport{}
	flaky.left.Store(2)
	c, rec := newTokenClient(t, srv, func(o *Options) { o.HTTPClient = &http.Client{Transport: flaky} })
	if _, err := c.PullRequest(context.Background(), testRepo, 1); err != nil {
		t.Fatal(err)
	}
	if w := rec.recorded(); len(w) != 2 {
		t.Errorf("waits %v, want 2", w)
	}

	flaky.left.Store(100)
	_, err := c.PullRequest(context.Background(), testRepo, 1)
	want := "get pull request acme/prover#1: GET /api/v3/repos/acme/prover/pulls/1: gave up after 5 attempts, the last failed: connection reset by peer"
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant %s", err, want)
	}
}

func TestCancelDuringAWaitReturnsPromptly(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t)
	addPR(srv)
	srv.Fail("GET", pullPath, 1, githubtest.Fault{Status: 403, Header: http.Header{"Retry-After": {"60"}}})
	c, err := New(Options{BaseURL: srv.URL() + "/", Token: githubtest.DefaultToken}) // a real timer
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	_, err = c.PullRequest(ctx, testRepo, 1)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("returned after %v, want promptly after the cancel", d)
	}
	if n := count(srv, "GET", pullPath); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

func TestExhaustingTheLimitWaitsBeforeTheNextRequest(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t)
	addPR(srv)
	// The listing is served, but uses the last request of the limit.
	used := rateLimited(http.StatusOK, 2*time.Second)
	used.Body = "[]"
	srv.Fail("GET", "/repos/acme/prover/issues/1/comments", 1, used)
	c, rec := newTokenClient(t, srv)
	res, err := c.UpsertComment(context.Background(), testRepo, 1, report("perfbot: no change", "A"))
	if err != nil || !res.Created {
		t.Fatalf("UpsertComment = %+v, %v; want it to wait for the reset, not to fail", res, err)
	}
	if w := rec.recorded(); len(w) != 1 || w[0] <= 2*time.Second || w[0] > 3*time.Second {
		t.Errorf("waits %v, want one of 2-3s before the create", w)
	}

	// Beyond MaxWait, the next request fails without being sent.
	later := rateLimited(http.StatusOK, time.Hour)
	later.Body = "[]"
	srv.Fail("GET", "/repos/acme/prover/issues/1/comments", 1, later)
	srv2Before := len(srv.Requests())
	_, err = c.UpsertComment(context.Background(), testRepo, 1, report("perfbot: no change", "B"))
	if !errors.Is(err, ErrRateLimited) || !strings.Contains(err.Error(), "an earlier request used the last of the rate limit") ||
		!strings.Contains(err.Error(), "not sent") {
		t.Errorf("err = %v, want a rate limit error saying the request was not sent", err)
	}
	if n := len(srv.Requests()) - srv2Before; n != 1 {
		t.Errorf("%d requests, want only the listing", n)
	}
}
