// Package githubtest is a fake GitHub REST API for tests: an
// httptest.Server that answers the endpoints perfbot uses under /api/v3/
// (so a client configured with the server's URL as a GitHub Enterprise
// root reaches it), with GitHub's JSON shapes, status codes, pagination,
// authentication and validation. Tests set up its state (pull requests,
// tokens, an App's public key), inject failures (rate limits, server
// errors), and read back what was written and every request it received.
//
// It serves:
//
//	GET   /repos/{owner}/{repo}/pulls/{number}
//	GET   /repos/{owner}/{repo}/issues/{number}/comments   (per_page, page, Link)
//	POST  /repos/{owner}/{repo}/issues/{number}/comments
//	PATCH /repos/{owner}/{repo}/issues/comments/{id}
//	POST  /repos/{owner}/{repo}/check-runs                  (App installation tokens only)
//	PATCH /repos/{owner}/{repo}/check-runs/{id}             (App installation tokens only)
//	GET   /repos/{owner}/{repo}/commits/{ref}/check-runs    (check_name, app_id, status)
//	POST  /repos/{owner}/{repo}/statuses/{sha}
//	POST  /app/installations/{id}/access_tokens             (an RS256 JWT from a configured App)
//
// Every /repos request needs a token: the one set with SetToken
// (DefaultToken until then) or an installation token the server minted.
package githubtest

import (
	"bytes"
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// DefaultToken is the token a new Server accepts until SetToken changes it.
const DefaultToken = "ghp_githubtest"

// Logins of the users the fake acts for.
const (
	// TokenUser is the login of the user behind the plain token.
	TokenUser = "perfbot-user"
	// AppUser is the login of an App installation's bot user.
	AppUser = "perfbot[bot]"
)

// apiPrefix is where GitHub Enterprise serves the REST API, and this fake.
const apiPrefix = "/api/v3"

// A PR is a pull request the server knows.
type PR struct {
	Owner, Repo string
	Number      int
	Title       string
	State       string // "open" (the default) or "closed"
	Draft       bool
	Merged      bool
	BaseRef     string // default "main"
	BaseSHA     string
	HeadRef     string
	HeadSHA     string
	// Fork puts the head branch in the author's fork of the repository.
	Fork bool
	// HeadRepoDeleted answers "head": {"repo": null}, as GitHub does
	// once the fork is deleted.
	HeadRepoDeleted bool
	Author          string // default "octocat"
	// CloneURL is the base repository's clone URL; default the server's
	// URL + "/owner/repo.git".
	CloneURL string
}

// An IssueComment is a comment on a pull request.
type IssueComment struct {
	ID                   int64
	Body                 string
	User                 string // the author's login
	HTMLURL              string
	CreatedAt, UpdatedAt time.Time
}

// A CheckRun is a check run on a commit.
type CheckRun struct {
	ID                     int64
	Name, HeadSHA          string
	Status, Conclusion     string
	Title, Summary, Text   string
	DetailsURL             string
	AppID                  int64 // the App whose installation made it
	StartedAt, CompletedAt time.Time
	Updates                int // how many times it was updated
}

// A Status is a commit status.
type Status struct {
	ID             int64
	SHA            string
	State, Context string
	Description    string
	TargetURL      string
	Creator        string
	CreatedAt      time.Time
}

// A Request is a request the server received, faulted or not.
type Request struct {
	Method string
	// Path is the API path without the /api/v3 prefix, such as
	// "/repos/o/r/pulls/1".
	Path   string
	Query  url.Values
	Header http.Header
	Body   []byte
}

// A Fault is an answer the server gives instead of serving a request.
type Fault struct {
	Status int // default 500
	Header http.Header
	// Body is sent as it is; empty means {"message": the status text}.
	Body string
	// AfterServing serves the request first, keeping its effects, and
	// then answers with the fault: an answer lost on the way back.
	AfterServing bool
}

type fault struct {
	method, prefix string
	left           int // < 0: without end
	Fault
}

type repoKey struct{ owner, repo string }

type issueKey struct {
	repoKey
	number int
}

// A Server is a fake GitHub API. Its methods are safe for concurrent use.
type Server struct {
	srv *httptest.Server
	mux *http.ServeMux

	mu         sync.Mutex
	token      string
	appKeys    map[int64]*rsa.PublicKey
	installs   map[string]int64 // installation token → App ID
	pulls      map[issueKey]*PR
	comments   map[issueKey][]*IssueComment
	checkRuns  map[repoKey][]*CheckRun
	statuses   map[repoKey][]*Status
	requests   []Request
	faults     []*fault
	lastID     int64
	tokenCount int

	// commitComments is made by the first comment on a commit.
	commitComments map[commitKey][]*CommitComment
}

// New starts a Server that t's cleanup closes.
func New(t testing.TB) *Server {
	s := &Server{
		token:     DefaultToken,
		appKeys:   map[int64]*rsa.PublicKey{},
		installs:  map[string]int64{},
		pulls:     map[issueKey]*PR{},
		comments:  map[issueKey][]*IssueComment{},
		checkRuns: map[repoKey][]*CheckRun{},
		statuses:  map[repoKey][]*Status{},
		mux:       http.NewServeMux(),
	}
	s.routes()
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

// URL returns the server's root, such as "http://127.0.0.1:4242"; the API
// is under URL() + "/api/v3/".
func (s *Server) URL() string { return s.srv.URL }

// SetToken sets the token /repos requests must carry, as "Bearer" or
// "token" authorization. Installation tokens the server minted are
// accepted as well.
func (s *Server) SetToken(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.token = token
}

// SetAppKey makes the server accept JWTs for App appID signed by the
// private key of pub, for any installation.
func (s *Server) SetAppKey(appID int64, pub *rsa.PublicKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.appKeys[appID] = pub
}

// AddPullRequest adds pr, or replaces the pull request with its number.
func (s *Server) AddPullRequest(pr PR) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if pr.State == "" {
		pr.State = "open"
	}
	if pr.BaseRef == "" {
		pr.BaseRef = "main"
	}
	if pr.Author == "" {
		pr.Author = "octocat"
	}
	if pr.CloneURL == "" {
		pr.CloneURL = fmt.Sprintf("%s/%s/%s.git", s.srv.URL, pr.Owner, pr.Repo)
	}
	s.pulls[issueKey{repoKey{pr.Owner, pr.Repo}, pr.Number}] = &pr
}

// SetHead moves a pull request's head to sha, as a push does. It panics
// if the pull request does not exist: that is a mistake in the test.
func (s *Server) SetHead(owner, repo string, number int, sha string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	pr := s.pulls[issueKey{repoKey{owner, repo}, number}]
	if pr == nil {
		panic(fmt.Sprintf("githubtest: SetHead: no pull request %s/%s#%d", owner, repo, number))
	}
	pr.HeadSHA = sha
}

// RemovePullRequest forgets a pull request and its comments: requests
// for it are answered 404 afterwards.
func (s *Server) RemovePullRequest(owner, repo string, number int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := issueKey{repoKey{owner, repo}, number}
	delete(s.pulls, k)
	delete(s.comments, k)
}

// AddComment adds a comment by user to a pull request directly, without a
// request, and returns it. The pull request need not exist.
func (s *Server) AddComment(owner, repo string, number int, user, body string) IssueComment {
	s.mu.Lock()
	defer s.mu.Unlock()
	return *s.addComment(issueKey{repoKey{owner, repo}, number}, user, body)
}

func (s *Server) addComment(k issueKey, user, body string) *IssueComment {
	s.lastID++
	now := time.Now().UTC().Truncate(time.Second)
	c := &IssueComment{
		ID:        s.lastID,
		Body:      body,
		User:      user,
		HTMLURL:   fmt.Sprintf("%s/%s/%s/pull/%d#issuecomment-%d", s.srv.URL, k.owner, k.repo, k.number, s.lastID),
		CreatedAt: now,
		UpdatedAt: now,
	}
	s.comments[k] = append(s.comments[k], c)
	return c
}

// Comments returns the comments on a pull request, oldest first.
func (s *Server) Comments(owner, repo string, number int) []IssueComment {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []IssueComment
	for _, c := range s.comments[issueKey{repoKey{owner, repo}, number}] {
		out = append(out, *c)
	}
	return out
}

// CheckRuns returns the check runs on commit sha, oldest first.
func (s *Server) CheckRuns(owner, repo, sha string) []CheckRun {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []CheckRun
	for _, c := range s.checkRuns[repoKey{owner, repo}] {
		if c.HeadSHA == sha {
			out = append(out, *c)
		}
	}
	return out
}

// Statuses returns the commit statuses on commit sha, oldest first.
func (s *Server) Statuses(owner, repo, sha string) []Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Status
	for _, st := range s.statuses[repoKey{owner, repo}] {
		if st.SHA == sha {
			out = append(out, *st)
		}
	}
	return out
}

// Requests returns every request received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// Fail answers the next times requests whose method is method (any when
// "") and whose API path (without /api/v3) starts with pathPrefix with f
// instead of serving them; times < 0 fails all of them. Faults apply in
// the order they were added.
func (s *Server) Fail(method, pathPrefix string, times int, f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, &fault{method: method, prefix: pathPrefix, left: times, Fault: f})
}

// takeFault returns the fault that answers a request, if any.
func (s *Server) takeFault(method, path string) *Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range s.faults {
		if f.left == 0 || (f.method != "" && f.method != method) || !strings.HasPrefix(path, f.prefix) {
			continue
		}
		if f.left > 0 {
			f.left--
		}
		return &f.Fault
	}
	return nil
}

// serve records the request, answers a fault, or authenticates it and
// hands it to the API's routes.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	path := strings.TrimPrefix(r.URL.Path, apiPrefix)
	s.mu.Lock()
	s.requests = append(s.requests, Request{
		Method: r.Method, Path: path, Query: r.URL.Query(), Header: r.Header.Clone(), Body: body,
	})
	s.mu.Unlock()

	if !strings.HasPrefix(r.URL.Path, apiPrefix+"/") {
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	f := s.takeFault(r.Method, path)
	if f != nil && !f.AfterServing {
		writeFault(w, f)
		return
	}
	if f != nil {
		s.route(httptest.NewRecorder(), r)
		writeFault(w, f)
		return
	}
	s.route(w, r)
}

// route authenticates a request and serves it.
func (s *Server) route(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-GitHub-Media-Type", "github.v3; format=json")
	h := w.Header()
	h.Set("X-RateLimit-Limit", "5000")
	h.Set("X-RateLimit-Remaining", "4999")
	h.Set("X-RateLimit-Reset", strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10))
	h.Set("X-RateLimit-Used", "1")
	h.Set("X-RateLimit-Resource", "core")
	if strings.HasPrefix(r.URL.Path, apiPrefix+"/repos/") {
		who, ok := s.authenticate(r)
		if !ok {
			writeError(w, http.StatusUnauthorized, "Bad credentials")
			return
		}
		r = r.WithContext(withCaller(r.Context(), who))
	}
	s.mux.ServeHTTP(w, r)
}

// A caller is who a request authenticated as.
type caller struct {
	login string
	appID int64 // 0 for the plain token
}

// authenticate checks a /repos request's token.
func (s *Server) authenticate(r *http.Request) (caller, bool) {
	auth := r.Header.Get("Authorization")
	tok, ok := strings.CutPrefix(auth, "Bearer ")
	if !ok {
		tok, ok = strings.CutPrefix(auth, "token ")
	}
	if !ok || tok == "" {
		return caller{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if appID, ok := s.installs[tok]; ok {
		return caller{login: AppUser, appID: appID}, true
	}
	if tok == s.token {
		return caller{login: TokenUser}, true
	}
	return caller{}, false
}

func writeFault(w http.ResponseWriter, f *Fault) {
	status := f.Status
	if status == 0 {
		status = http.StatusInternalServerError
	}
	for k, vs := range f.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	if f.Body == "" {
		writeError(w, status, http.StatusText(status))
		return
	}
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
	}
	w.WriteHeader(status)
	io.WriteString(w, f.Body)
}

// A fieldError is one entry of a 422 answer's "errors".
type fieldError struct {
	Resource string `json:"resource"`
	Field    string `json:"field"`
	Code     string `json:"code"`
	Message  string `json:"message,omitempty"`
}

// writeError answers with GitHub's error shape.
func writeError(w http.ResponseWriter, status int, message string, errs ...fieldError) {
	body := map[string]any{
		"message":           message,
		"documentation_url": "https://docs.github.com/rest",
	}
	if len(errs) > 0 {
		body["errors"] = errs
	}
	writeJSON(w, status, body)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	w.Write(b)
}
