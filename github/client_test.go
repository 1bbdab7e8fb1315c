package github

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/github/githubtest"
)

func TestNewRejectsBadOptions(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.pem")
	if err := os.WriteFile(garbage, []byte("not a key"), 0o600); err != nil {
		t.Fatal(err)
	}
	app := func(edit func(*AppAuth)) *AppAuth {
		a := &AppAuth{AppID: 1, InstallationID: 2, PrivateKeyFile: garbage}
		edit(a)
		return a
	}
	tests := []struct {
		name string
		o    Options
		want []string // substrings of the error
	}{
		{"no credentials", Options{}, []string{"no credentials", "Options.Token", "Options.App"}},
		{"both credentials", Options{Token: "t", App: &AppAuth{}}, []string{"both", "use one"}},
		{"no app id", Options{App: app(func(a *AppAuth) { a.AppID = 0 })}, []string{"AppID is not set"}},
		{"no installation id", Options{App: app(func(a *AppAuth) { a.InstallationID = 0 })}, []string{"InstallationID is not set"}},
		{"no key file", Options{App: app(func(a *AppAuth) { a.PrivateKeyFile = "" })}, []string{"PrivateKeyFile is not set"}},
		{"unreadable key", Options{App: app(func(a *AppAuth) { a.PrivateKeyFile = filepath.Join(dir, "missing.pem") })},
			[]string{"read the GitHub App private key", "missing.pem", "no such file", "settings page"}},
		{"invalid key", Options{App: app(func(a *AppAuth) {})},
			[]string{"garbage.pem is not a PEM-encoded RSA private key", "generate a new key"}},
		{"bad base URL", Options{Token: "t", BaseURL: "ghe.example.com"}, []string{`base URL "ghe.example.com" is not an http(s) URL`}},
		{"negative retry", Options{Token: "t", Retry: RetryPolicy{MaxAttempts: -1}}, []string{"negative"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := New(tt.o)
			if err == nil {
				t.Fatalf("New succeeded (%v), want an error", c)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

func TestNewAcceptsAValidAppKey(t *testing.T) {
	t.Parallel()
	key, err := testKey()
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(Options{App: &AppAuth{AppID: 1, InstallationID: 2, PrivateKeyFile: writeKey(t, key)}})
	if err != nil {
		t.Fatal(err)
	}
	if c.useStatuses || c.appID != 1 {
		t.Errorf("App client: useStatuses %v, appID %d; want check runs for App 1", c.useStatuses, c.appID)
	}
}

func TestParseRepo(t *testing.T) {
	t.Parallel()
	r, err := ParseRepo("perfbot/perfbot")
	if err != nil || r != (Repo{Owner: "perfbot", Name: "perfbot"}) || r.String() != "perfbot/perfbot" {
		t.Errorf("ParseRepo(perfbot/perfbot) = %+v, %v", r, err)
	}
	for _, bad := range []string{"", "perfbot", "/x", "x/", "a/b/c", "a /b", "https://github.com/a/b"} {
		if r, err := ParseRepo(bad); err == nil || !strings.Contains(err.Error(), "want owner/name") {
			t.Errorf("ParseRepo(%q) = %+v, %v; want an error saying owner/name", bad, r, err)
		}
	}
}

func TestWrongTokenIsRefusedWithoutRetry(t *testing.T) {
	t.Parallel()
	srv := githubtest.New(t)
	addPR(srv)
	c, rec := newTokenClient(t, srv, func(o *Options) { o.Token = "wrong" })
	_, err := c.PullRequest(context.Background(), testRepo, 1)
	if err == nil || !strings.Contains(err.Error(), "401") || !strings.Contains(err.Error(), "Bad credentials") {
		t.Fatalf("err = %v, want 401 Bad credentials", err)
	}
	if errors.Is(err, ErrNotFound) {
		t.Error("a 401 matches ErrNotFound")
	}
	if n := len(srv.Requests()); n != 1 || len(rec.recorded()) != 0 {
		t.Errorf("%d requests, waits %v; want 1 request and no retry", n, rec.recorded())
	}
}
