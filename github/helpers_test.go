package github

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfbot/perfbot/github/githubtest"
)

const (
	testAppID          = 4242
	testInstallationID = 77
	shaBase            = "1111111111111111111111111111111111111111"
	shaHead            = "2222222222222222222222222222222222222222"
)

var testRepo = Repo{Owner: "acme", Name: "prover"}

// A sleepRecorder stands in for RetryPolicy.Sleep: it records each wait
// and returns at once (with ctx's error if ctx is done).
type sleepRecorder struct {
	mu     sync.Mutex
	waits  []time.Duration
	before func() // run before returning, if set
}

func (s *sleepRecorder) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.waits = append(s.waits, d)
	f := s.before
	s.mu.Unlock()
	if f != nil {
		f()
	}
	return ctx.Err()
}

func (s *sleepRecorder) recorded() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.waits...)
}

// newTokenClient returns a token client of srv with a recording Sleep;
// edit adjusts its options.
func newTokenClient(t *testing.T, srv *githubtest.Server, edit ...func(*Options)) (*Client, *sleepRecorder) {
	t.Helper()
	rec := &sleepRecorder{}
	o := Options{
		BaseURL: srv.URL() + "/",
		Token:   githubtest.DefaultToken,
		Retry:   RetryPolicy{Sleep: rec.sleep},
	}
	for _, e := range edit {
		e(&o)
	}
	c, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return c, rec
}

// testKey is one RSA key for the whole test binary: generating one
// takes a while.
var testKey = sync.OnceValues(func() (*rsa.PrivateKey, error) {
	return rsa.GenerateKey(rand.Reader, 2048)
})

// writeKey writes key as PEM under t.TempDir and returns the file.
func writeKey(t *testing.T, key *rsa.PrivateKey) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "app.pem")
	b := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// newAppClient returns an App client of srv, whose key srv trusts.
func newAppClient(t *testing.T, srv *githubtest.Server, edit ...func(*Options)) (*Client, *sleepRecorder) {
	t.Helper()
	key, err := testKey()
	if err != nil {
		t.Fatal(err)
	}
	srv.SetAppKey(testAppID, &key.PublicKey)
	rec := &sleepRecorder{}
	o := Options{
		BaseURL: srv.URL() + "/",
		App:     &AppAuth{AppID: testAppID, InstallationID: testInstallationID, PrivateKeyFile: writeKey(t, key)},
		Retry:   RetryPolicy{Sleep: rec.sleep},
	}
	for _, e := range edit {
		e(&o)
	}
	c, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return c, rec
}

// addPR adds pull request 1 of testRepo to srv.
func addPR(srv *githubtest.Server) {
	srv.AddPullRequest(githubtest.PR{
		Owner: testRepo.Owner, Repo: testRepo.Name, Number: 1, Title: "Faster MSM",
		BaseRef: "main", BaseSHA: shaBase, HeadRef: "msm", HeadSHA: shaHead, Author: "alice",
	})
}

// writes returns the requests srv received that change something in a
// repository.
func writes(srv *githubtest.Server) []githubtest.Request {
	var out []githubtest.Request
	for _, r := range srv.Requests() {
		if r.Method != "GET" && strings.HasPrefix(r.Path, "/repos/") {
			out = append(out, r)
		}
	}
	return out
}

// count returns how many requests srv received with method and path.
func count(srv *githubtest.Server, method, path string) int {
	n := 0
	for _, r := range srv.Requests() {
		if r.Method == method && r.Path == path {
			n++
		}
	}
	return n
}
