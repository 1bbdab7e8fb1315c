package github

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/bradleyfalzon/ghinstallation/v2"
	gh "github.com/google/go-github/v60/github"
)

// ErrNotFound is matched (with errors.Is) by the error of an operation
// that GitHub answered with 404: the repository, pull request, comment or
// check run does not exist, or the credentials cannot see it.
var ErrNotFound = errors.New("not found")

// defaultTimeout bounds one HTTP attempt when Options.HTTPClient is nil.
const defaultTimeout = 30 * time.Second

// Options configure a Client. Exactly one of Token and App must be set.
type Options struct {
	// BaseURL is the root of a GitHub Enterprise server or of a fake, such
	// as "https://ghe.example.com/"; "api/v3/" is appended to it. Empty
	// means api.github.com.
	BaseURL string
	// Token authenticates as a user or with a fine-grained token, sent as
	// "Authorization: Bearer". GitHub refuses tokens on the Checks API, so
	// a token client writes commit statuses instead of check runs.
	Token string
	// App authenticates as an installation of a GitHub App.
	App *AppAuth
	// HTTPClient supplies the transport and the timeout of one attempt
	// (its Transport and Timeout; nothing else of it is used). Nil means
	// http.DefaultTransport with a 30s timeout per attempt.
	HTTPClient *http.Client
	// Logger receives retries and dry-run writes; nil discards them.
	Logger *slog.Logger
	// DryRun logs writes (comments, check runs, statuses) instead of
	// sending them; reads still happen.
	DryRun bool
	// UseStatuses makes SetCheck write commit statuses even with App auth.
	UseStatuses bool
	// Retry says how failed and rate-limited requests are retried.
	Retry RetryPolicy
}

// AppAuth identifies a GitHub App installation and the App's private key.
type AppAuth struct {
	// AppID is the App's numeric ID (the App's settings page, "App ID").
	AppID int64
	// InstallationID is the ID of the App's installation on the account
	// that owns the repositories (the number at the end of the
	// installation's settings URL).
	InstallationID int64
	// PrivateKeyFile is the PEM file generated on the App's settings page.
	PrivateKeyFile string
}

// A Client talks to the GitHub REST API for perfbot: it reads pull
// requests, keeps perfbot's one comment per pull request current, and
// reports check runs or commit statuses. Requests are retried as
// Options.Retry says; with Options.DryRun, writes are only logged.
// A Client is safe for concurrent use.
type Client struct {
	gh          *gh.Client
	log         *slog.Logger
	dryRun      bool
	useStatuses bool
	appID       int64 // 0 with token auth
	retry       *retryTransport
}

// New returns a Client configured by o. It fails when o has no
// credentials or both kinds, when the App's key file cannot be read or is
// not an RSA private key, or when BaseURL is not an http(s) URL.
func New(o Options) (*Client, error) {
	switch {
	case o.Token == "" && o.App == nil:
		return nil, errors.New("github: no credentials: set Options.Token (a personal access token) or Options.App (a GitHub App's ID, installation ID and private key file)")
	case o.Token != "" && o.App != nil:
		return nil, errors.New("github: both Options.Token and Options.App are set: use one of them")
	}
	policy, err := o.Retry.normalize()
	if err != nil {
		return nil, fmt.Errorf("github: %w", err)
	}
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}

	var base http.RoundTripper = http.DefaultTransport
	timeout := defaultTimeout
	if o.HTTPClient != nil {
		timeout = o.HTTPClient.Timeout
		if o.HTTPClient.Transport != nil {
			base = o.HTTPClient.Transport
		}
	}
	base = attemptTimeout{next: base, timeout: timeout}

	// The retrying transport sits above authentication, so each attempt
	// carries a fresh (possibly refreshed) installation token, and above
	// the per-attempt timeout, so waiting for a rate limit is not cut
	// short by it.
	rt := &retryTransport{policy: policy, log: logger}
	client := gh.NewClient(&http.Client{Transport: rt})
	if o.BaseURL != "" {
		u, err := url.Parse(o.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("github: base URL %q is not an http(s) URL such as https://ghe.example.com/", o.BaseURL)
		}
		client, err = client.WithEnterpriseURLs(o.BaseURL, o.BaseURL)
		if err != nil {
			return nil, fmt.Errorf("github: base URL %q: %w", o.BaseURL, err)
		}
	}

	c := &Client{gh: client, log: logger, dryRun: o.DryRun, useStatuses: o.UseStatuses, retry: rt}
	if o.Token != "" {
		rt.next = bearerToken{next: base, token: o.Token}
		c.useStatuses = true
		return c, nil
	}

	a := o.App
	switch {
	case a.AppID <= 0:
		return nil, errors.New("github: Options.App.AppID is not set: use the App ID shown on the GitHub App's settings page")
	case a.InstallationID <= 0:
		return nil, errors.New("github: Options.App.InstallationID is not set: use the number at the end of the installation's settings URL")
	case a.PrivateKeyFile == "":
		return nil, errors.New("github: Options.App.PrivateKeyFile is not set: name the .pem file generated on the GitHub App's settings page")
	}
	key, err := os.ReadFile(a.PrivateKeyFile)
	if err != nil {
		return nil, fmt.Errorf("github: read the GitHub App private key: %w: set Options.App.PrivateKeyFile to the .pem file generated on the App's settings page", err)
	}
	itr, err := ghinstallation.New(base, a.AppID, a.InstallationID, key)
	if err != nil {
		return nil, fmt.Errorf("github: GitHub App private key %s is not a PEM-encoded RSA private key (%v): generate a new key on the App's settings page", a.PrivateKeyFile, err)
	}
	// ghinstallation posts for installation tokens to BaseURL +
	// "/app/installations/...": the same server as the API calls.
	itr.BaseURL = strings.TrimSuffix(client.BaseURL.String(), "/")
	rt.next = itr
	c.appID = a.AppID
	return c, nil
}

// bearerToken adds token authentication to each request.
type bearerToken struct {
	next  http.RoundTripper
	token string
}

func (t bearerToken) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+t.token)
	return t.next.RoundTrip(req)
}

// A Repo names a GitHub repository.
type Repo struct {
	Owner, Name string
}

// ParseRepo parses "owner/name".
func ParseRepo(s string) (Repo, error) {
	owner, name, ok := strings.Cut(s, "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") ||
		strings.ContainsAny(s, " \t\r\n") {
		return Repo{}, fmt.Errorf("repository %q: want owner/name, such as perfbot/perfbot", s)
	}
	return Repo{Owner: owner, Name: name}, nil
}

// String returns "owner/name".
func (r Repo) String() string { return r.Owner + "/" + r.Name }
