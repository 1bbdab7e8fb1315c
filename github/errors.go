package github

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	gh "github.com/google/go-github/v60/github"
)

// ErrRateLimited is matched (with errors.Is) by the error of an operation
// that GitHub's rate limits stopped: the wait it asked for was longer than
// RetryPolicy.MaxWait, or the attempts ran out while it kept refusing.
// Errors that match it are *RetryError values (errors.As) holding the
// reset time, so a caller can requeue the job for then.
var ErrRateLimited = errors.New("rate limited by GitHub")

// wrap names the operation op in err and turns go-github's errors into
// ones that say what GitHub answered, without the request URL go-github
// and net/http repeat.
func wrap(op string, err error) error {
	var re *RetryError
	if errors.As(err, &re) {
		return fmt.Errorf("%s: %w", op, re)
	}
	var rl *gh.RateLimitError
	if errors.As(err, &rl) {
		// go-github refuses on its own, without a request, while it
		// remembers an exhausted limit; the transport hides exhausted
		// limits from it, so this is a fallback.
		reset := rl.Rate.Reset.Time
		return fmt.Errorf("%s: %w: the limit resets at %s (in %s); try again after that",
			op, ErrRateLimited, reset.UTC().Format(time.TimeOnly+" MST"), time.Until(reset).Round(time.Second))
	}
	var abuse *gh.AbuseRateLimitError
	if errors.As(err, &abuse) {
		return fmt.Errorf("%s: %w (secondary limit): %s", op, ErrRateLimited, abuse.Message)
	}
	var er *gh.ErrorResponse
	if errors.As(err, &er) && er.Response != nil {
		return fmt.Errorf("%s: %w", op, &apiError{resp: er})
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		// net/http's form quotes the whole URL; the path is enough.
		path := ue.URL
		if u, perr := url.Parse(ue.URL); perr == nil {
			path = u.Path
		}
		return fmt.Errorf("%s: %s %s: %w", op, strings.ToUpper(ue.Op), path, ue.Err)
	}
	return fmt.Errorf("%s: %w", op, err)
}

// An apiError is an error answer from GitHub, shown with its status and
// GitHub's message. It unwraps to the *gh.ErrorResponse and matches
// ErrNotFound when the status is 404.
type apiError struct {
	resp *gh.ErrorResponse
}

func (e *apiError) Error() string {
	code := e.resp.Response.StatusCode
	msg := fmt.Sprintf("GitHub answered %d %s", code, http.StatusText(code))
	if e.resp.Message != "" && e.resp.Message != http.StatusText(code) {
		msg += ": " + e.resp.Message
	}
	var details []string
	for _, d := range e.resp.Errors {
		switch {
		case d.Message != "":
			details = append(details, d.Message)
		case d.Field != "":
			details = append(details, fmt.Sprintf("%s.%s %s", d.Resource, d.Field, d.Code))
		case d.Code != "":
			details = append(details, d.Code)
		}
	}
	if len(details) > 0 {
		msg += " (" + strings.Join(details, "; ") + ")"
	}
	return msg
}

func (e *apiError) Unwrap() error { return e.resp }

func (e *apiError) Is(target error) bool {
	return target == ErrNotFound && e.resp.Response.StatusCode == http.StatusNotFound
}
