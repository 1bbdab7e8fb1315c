package github

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bradleyfalzon/ghinstallation/v2"
	gh "github.com/google/go-github/v60/github"
)

// A RetryPolicy says how the client retries requests GitHub could not
// serve. Zero fields take their defaults.
type RetryPolicy struct {
	// MaxAttempts is how many times one request is sent at most,
	// the first time included; default 5.
	MaxAttempts int
	// BaseDelay is the wait before the first retry after a server error
	// (500, 502, 503, 504) or a network error; it doubles after each
	// attempt, plus up to half again of random jitter. Default 1s.
	BaseDelay time.Duration
	// MaxWait is the longest single wait: for a rate limit to reset, for
	// a Retry-After, or for a backoff. A rate limit that asks for longer
	// fails at once with an error matching ErrRateLimited. Default 5m.
	MaxWait time.Duration
	// Sleep waits d or until ctx is done, returning ctx's error then.
	// Nil means a real timer; tests inject a recording fake.
	Sleep func(ctx context.Context, d time.Duration) error
}

// normalize fills in the defaults and rejects negative values.
func (p RetryPolicy) normalize() (RetryPolicy, error) {
	if p.MaxAttempts < 0 || p.BaseDelay < 0 || p.MaxWait < 0 {
		return p, fmt.Errorf("retry policy %+v has a negative value: use 0 for the default", p)
	}
	if p.MaxAttempts == 0 {
		p.MaxAttempts = 5
	}
	if p.BaseDelay == 0 {
		p.BaseDelay = time.Second
	}
	if p.MaxWait == 0 {
		p.MaxWait = 5 * time.Minute
	}
	if p.Sleep == nil {
		p.Sleep = sleep
	}
	return p, nil
}

// sleep waits d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// A RetryError reports a request the client gave up on: GitHub asked for
// a wait longer than RetryPolicy.MaxWait, or every attempt failed.
type RetryError struct {
	// Method and Path name the request, such as GET /repos/o/r/pulls/1.
	Method, Path string
	// Attempts is how many times the request was sent (0 when a limit
	// exhausted by an earlier request stopped it before sending).
	Attempts int
	// Status is the last HTTP status; 0 after a network error.
	Status int
	// Message is GitHub's message in the last answer, if it had one.
	Message string
	// RateLimited is set when a rate limit stopped the request.
	RateLimited bool
	// Wait is the wait GitHub asked for when it exceeded MaxWait; 0 when
	// the attempts ran out instead.
	Wait time.Duration
	// MaxWait is the policy's longest wait, which Wait exceeded.
	MaxWait time.Duration
	// Reset is when the exhausted rate limit resets, if GitHub said.
	Reset time.Time
	// Err is the last network error, if the last attempt had one.
	Err error

	reason string // what GitHub said to make us wait, such as "Retry-After: 600"
}

func (e *RetryError) Error() string {
	at := func(t time.Time) string { return t.UTC().Format(time.TimeOnly + " MST") }
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: ", e.Method, e.Path)
	if e.RateLimited {
		b.WriteString("rate limited: ")
	}
	switch {
	case e.Status != 0:
		fmt.Fprintf(&b, "%d %s", e.Status, http.StatusText(e.Status))
		var says []string
		if e.reason != "" {
			says = append(says, e.reason)
		}
		if e.Message != "" {
			says = append(says, strconv.Quote(e.Message))
		}
		if len(says) > 0 {
			fmt.Fprintf(&b, " (%s)", strings.Join(says, ", "))
		}
	case e.Attempts == 0:
		b.WriteString("an earlier request used the last of the rate limit")
	}
	switch {
	case e.Wait > 0 && !e.Reset.IsZero():
		fmt.Fprintf(&b, ": the limit resets at %s, in %s, longer than the %s MaxWait",
			at(e.Reset), e.Wait.Round(time.Second), e.MaxWait)
	case e.Wait > 0:
		fmt.Fprintf(&b, ": GitHub asked to wait %s, longer than the %s MaxWait", e.Wait.Round(time.Second), e.MaxWait)
	}
	if !strings.HasSuffix(b.String(), ": ") {
		b.WriteString("; ")
	}
	if e.Attempts == 0 {
		b.WriteString("not sent")
	} else {
		fmt.Fprintf(&b, "gave up after %d %s", e.Attempts, plural(e.Attempts, "attempt"))
	}
	if e.Err != nil {
		fmt.Fprintf(&b, ", the last failed: %v", e.Err)
	}
	if e.RateLimited && !e.Reset.IsZero() {
		fmt.Fprintf(&b, "; try again after %s", at(e.Reset))
	}
	return b.String()
}

// Unwrap returns the last network error, if any.
func (e *RetryError) Unwrap() error { return e.Err }

// Is reports whether target is ErrRateLimited and a rate limit stopped
// the request.
func (e *RetryError) Is(target error) bool { return target == ErrRateLimited && e.RateLimited }

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// retryTransport retries what GitHub could not serve, waits out rate
// limits, and is the only place that decides about them: go-github's own
// check refuses without waiting while it remembers an exhausted limit, so
// the transport keeps that knowledge to itself (see noteExhausted).
type retryTransport struct {
	next   http.RoundTripper
	policy RetryPolicy
	log    *slog.Logger

	mu    sync.Mutex
	reset time.Time // when the limit that a passed-through answer exhausted resets
}

// A verdict is what to do about one attempt's outcome.
type verdict struct {
	retry bool
	// unsent is set when the request surely had no effect (GitHub refused
	// it for a rate limit, or it was never sent), so even a request that
	// must not be sent twice can be retried.
	unsent      bool
	wait        time.Duration
	rateLimited bool
	reset       time.Time
	reason      string
	status      int
	message     string
}

func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	getBody, err := replayable(req)
	if err != nil {
		return nil, err
	}
	if err := t.waitForReset(ctx, req); err != nil {
		return nil, err
	}
	p := t.policy
	once := ctx.Value(sendOnceKey{}) != nil
	for attempt := 1; ; attempt++ {
		r := req.Clone(ctx)
		if getBody != nil {
			if r.Body, err = getBody(); err != nil {
				return nil, fmt.Errorf("%s %s: replay the request body: %w", req.Method, req.URL.Path, err)
			}
		}
		resp, err := t.next.RoundTrip(r)
		var v verdict
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if v, err = t.judgeError(err, attempt); !v.retry {
				return nil, err
			}
		} else if v = t.judge(resp, attempt); !v.retry {
			t.noteExhausted(resp)
			return resp, nil
		}
		if once && !v.unsent {
			// It may have taken effect: the caller checks before it
			// tries again.
			if err != nil {
				return nil, err
			}
			t.noteExhausted(resp)
			return resp, nil
		}

		if resp != nil {
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
			resp.Body.Close()
		}
		if v.wait > p.MaxWait || attempt >= p.MaxAttempts {
			re := &RetryError{
				Method: req.Method, Path: req.URL.Path, Attempts: attempt,
				Status: v.status, Message: v.message, RateLimited: v.rateLimited,
				MaxWait: p.MaxWait, Reset: v.reset, Err: err, reason: v.reason,
			}
			if v.wait > p.MaxWait {
				re.Wait = v.wait
			}
			return nil, re
		}
		t.log.LogAttrs(ctx, slog.LevelWarn, "github: retrying request",
			slog.String("method", req.Method), slog.String("path", req.URL.Path),
			slog.Int("status", v.status), slog.Duration("wait", v.wait),
			slog.Int("attempt", attempt), slog.String("reason", v.reason))
		if err := p.Sleep(ctx, v.wait); err != nil {
			return nil, err
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
}

// sendOnceKey marks a context whose requests must not take effect twice
// (creating perfbot's comment or a check run): the transport retries them
// only when they surely had no effect and otherwise hands the failure
// back, for the caller to look whether the first try took effect.
type sendOnceKey struct{}

func sendOnce(ctx context.Context) context.Context {
	return context.WithValue(ctx, sendOnceKey{}, true)
}

// mayHaveLanded reports whether a failed request sent with sendOnce may
// nevertheless have taken effect: after a server error or a network error,
// but not after a refusal (4xx, rate limit) or a cancelled context.
func mayHaveLanded(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	var re *RetryError
	if errors.As(err, &re) {
		return false
	}
	var ae *apiError
	if errors.As(err, &ae) {
		return ae.resp.Response.StatusCode >= 500
	}
	// GitHub answered: only a server error leaves it unknown whether the
	// write took effect; a 4xx (422 Validation Failed, 403) did not.
	var er *gh.ErrorResponse
	if errors.As(err, &er) && er.Response != nil {
		return er.Response.StatusCode >= 500
	}
	return !errors.Is(err, errAppAuth)
}

// errAppAuth is wrapped by the error of a request that was not sent
// because GitHub refused the App's credentials.
var errAppAuth = errors.New("GitHub App authentication failed")

// replayable returns a function that gives the request's body afresh for
// each attempt (nil when it has none), buffering a body that has no
// GetBody. It closes req.Body, as a RoundTripper must.
func replayable(req *http.Request) (func() (io.ReadCloser, error), error) {
	if req.Body == nil || req.Body == http.NoBody {
		return nil, nil
	}
	defer req.Body.Close()
	if req.GetBody != nil {
		return req.GetBody, nil
	}
	b, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: read the request body: %w", req.Method, req.URL.Path, err)
	}
	return func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }, nil
}

// backoff is the wait after a failed attempt: BaseDelay doubled per
// attempt, plus up to half again of jitter, capped at MaxWait.
func (t *retryTransport) backoff(attempt int) time.Duration {
	d := t.policy.BaseDelay << min(attempt-1, 30)
	if d <= 0 || d > t.policy.MaxWait {
		d = t.policy.MaxWait
	}
	d += rand.N(d/2 + 1)
	return min(d, t.policy.MaxWait)
}

// judge decides whether an answer is retried, and after how long.
func (t *retryTransport) judge(resp *http.Response, attempt int) verdict {
	v := verdict{status: resp.StatusCode}
	switch resp.StatusCode {
	case http.StatusInternalServerError, http.StatusBadGateway,
		http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		v.message, _ = peekMessage(resp)
		v.retry, v.wait = true, t.backoff(attempt)
		return v
	case http.StatusForbidden, http.StatusTooManyRequests:
	default:
		return v
	}

	h := resp.Header
	var docURL string
	v.message, docURL = peekMessage(resp)
	if s := h.Get("Retry-After"); s != "" {
		if secs, err := strconv.Atoi(s); err == nil && secs >= 0 {
			v.wait = time.Duration(secs) * time.Second
		} else if when, err := http.ParseTime(s); err == nil {
			v.wait = max(time.Until(when), 0)
		}
		v.retry, v.unsent, v.rateLimited, v.reason = true, true, true, "Retry-After: "+s
		return v
	}
	if h.Get("X-RateLimit-Remaining") == "0" {
		if secs, err := strconv.ParseInt(h.Get("X-RateLimit-Reset"), 10, 64); err == nil {
			v.reset = time.Unix(secs, 0)
			v.wait = max(time.Until(v.reset), 0) + time.Second
			v.retry, v.unsent, v.rateLimited, v.reason = true, true, true, "X-RateLimit-Remaining: 0"
			return v
		}
	}
	// A secondary rate limit without either header: GitHub asks for at
	// least a minute, then exponentially longer.
	secondary := strings.Contains(docURL, "secondary-rate-limits") ||
		strings.Contains(docURL, "abuse-rate-limits") ||
		strings.Contains(strings.ToLower(v.message), "secondary rate limit")
	if secondary || resp.StatusCode == http.StatusTooManyRequests {
		v.retry, v.unsent, v.rateLimited, v.reason = true, true, true, "secondary rate limit"
		v.wait = max(t.backoff(attempt), time.Minute)
		return v
	}
	return v // a 403 for permissions: not retried
}

// judgeError decides whether a failed round trip is retried. Network
// errors are; an installation token that GitHub refused is not, and
// comes back as an error saying what to check.
func (t *retryTransport) judgeError(err error, attempt int) (verdict, error) {
	var he *ghinstallation.HTTPError
	if errors.As(err, &he) && he.Response != nil {
		status := he.Response.StatusCode
		msg, _ := peekMessage(he.Response)
		he.Response.Body.Close()
		if status < 500 {
			if msg != "" {
				msg = ": " + msg
			}
			return verdict{}, fmt.Errorf("%w: get an installation token for installation %d: GitHub answered %d %s%s: check Options.App (App ID, installation ID, private key)",
				errAppAuth, he.InstallationID, status, http.StatusText(status), msg)
		}
		// The API request itself was not sent.
		return verdict{retry: true, unsent: true, wait: t.backoff(attempt), status: status, message: msg, reason: "installation token"}, err
	}
	return verdict{retry: true, wait: t.backoff(attempt)}, err
}

// peekMessage reads GitHub's JSON error message and documentation URL
// from resp, leaving the body readable again.
func peekMessage(resp *http.Response) (message, docURL string) {
	if resp.Body == nil {
		return "", ""
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(b))
	var e struct {
		Message          string `json:"message"`
		DocumentationURL string `json:"documentation_url"`
	}
	if json.Unmarshal(b, &e) != nil {
		return "", ""
	}
	return e.Message, e.DocumentationURL
}

// noteExhausted remembers when the limit resets if resp used the last
// request of it, and hides that from go-github: go-github would refuse
// the next request itself, at once, where the transport waits for the
// reset when it is within MaxWait.
func (t *retryTransport) noteExhausted(resp *http.Response) {
	h := resp.Header
	if h.Get("X-RateLimit-Remaining") != "0" {
		return
	}
	secs, err := strconv.ParseInt(h.Get("X-RateLimit-Reset"), 10, 64)
	if err != nil {
		return
	}
	reset := time.Unix(secs, 0)
	if !reset.After(time.Now()) {
		return
	}
	t.mu.Lock()
	t.reset = reset
	t.mu.Unlock()
	h.Del("X-RateLimit-Remaining")
	h.Del("X-RateLimit-Reset")
}

// waitForReset waits before a request while a limit that an earlier
// answer exhausted has not reset, or fails when that is beyond MaxWait.
func (t *retryTransport) waitForReset(ctx context.Context, req *http.Request) error {
	t.mu.Lock()
	reset := t.reset
	t.mu.Unlock()
	if reset.IsZero() || !reset.After(time.Now()) {
		return nil
	}
	wait := time.Until(reset) + time.Second
	if wait > t.policy.MaxWait {
		return &RetryError{Method: req.Method, Path: req.URL.Path, RateLimited: true,
			Wait: wait, MaxWait: t.policy.MaxWait, Reset: reset}
	}
	t.log.LogAttrs(ctx, slog.LevelWarn, "github: waiting for the rate limit to reset",
		slog.String("method", req.Method), slog.String("path", req.URL.Path),
		slog.Duration("wait", wait))
	if err := t.policy.Sleep(ctx, wait); err != nil {
		return err
	}
	t.mu.Lock()
	if t.reset.Equal(reset) {
		t.reset = time.Time{}
	}
	t.mu.Unlock()
	return ctx.Err()
}

// attemptTimeout bounds each attempt, up to the end of reading its
// answer, without bounding the retries and waits above it.
type attemptTimeout struct {
	next    http.RoundTripper
	timeout time.Duration
}

func (t attemptTimeout) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.timeout <= 0 {
		return t.next.RoundTrip(req)
	}
	ctx, cancel := context.WithTimeout(req.Context(), t.timeout)
	resp, err := t.next.RoundTrip(req.WithContext(ctx))
	if err != nil {
		cancel()
		return nil, err
	}
	resp.Body = cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b cancelOnClose) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}
