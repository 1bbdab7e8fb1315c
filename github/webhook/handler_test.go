package webhook

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

const (
	testSecret = "It's a Secret to Everybody"
	repoName   = "zkbench/prover"
	cloneURL   = "https://github.com/zkbench/prover.git"
	baseSHA    = "9f2c4e1a7b3d5f60812c9e4a6b1d3f5e7a9c0b24"
	headSHA    = "e41b7c9d2a6f0835b1c4d7e9f2a3b5c6d8e0f1a7"
	newHeadSHA = "3c8d1e5f7a9b0c2d4e6f8a1b3c5d7e9f0a2b4c6d"
	mergedSHA  = "b7a0c3e5d9f1a2b4c6d8e0f2a4b6c8d0e2f4a6b8"
	zeroSHA    = "0000000000000000000000000000000000000000"
)

// sign returns the X-Hub-Signature-256 value GitHub sends for body.
func sign(secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// edited returns the fixture with edit applied to its decoded JSON.
func edited(t *testing.T, name string, edit func(m map[string]any)) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(fixture(t, name), &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// obj returns the object at a dotted path of m.
func obj(m map[string]any, path string) map[string]any {
	for _, k := range strings.Split(path, ".") {
		m = m[k].(map[string]any)
	}
	return m
}

// newRequest builds a delivery as GitHub sends it, signed with testSecret.
func newRequest(event, delivery string, body []byte) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/webhook", bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("User-Agent", "GitHub-Hookshot/7c1d2e3")
	r.Header.Set("X-GitHub-Event", event)
	r.Header.Set("X-GitHub-Delivery", delivery)
	r.Header.Set("X-GitHub-Hook-ID", "512345678")
	r.Header.Set("X-Hub-Signature-256", sign(testSecret, body))
	return r
}

// A recordingSink records events; it fails the calls listed in fail (by
// call number, from 1).
type recordingSink struct {
	mu     sync.Mutex
	events []Event
	fail   map[int]error
}

func (s *recordingSink) Handle(ctx context.Context, e Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = append(s.events, e)
	return s.fail[len(s.events)]
}

func (s *recordingSink) got() []Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Event(nil), s.events...)
}

// memDeliveries is an in-memory Deliveries that records Forget calls.
type memDeliveries struct {
	mu      sync.Mutex
	seen    map[string]bool
	forgot  []string
	seenErr error
}

func (d *memDeliveries) FirstSeen(ctx context.Context, id string) (bool, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.seenErr != nil {
		return false, d.seenErr
	}
	if d.seen[id] {
		return false, nil
	}
	if d.seen == nil {
		d.seen = make(map[string]bool)
	}
	d.seen[id] = true
	return true, nil
}

func (d *memDeliveries) Forget(ctx context.Context, id string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.seen, id)
	d.forgot = append(d.forgot, id)
	return nil
}

// observer records Observe calls as "event/outcome".
type observer struct {
	mu  sync.Mutex
	got []string
}

func (o *observer) observe(event, outcome string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.got = append(o.got, event+"/"+outcome)
}

func (o *observer) calls() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.got...)
}

type testEnv struct {
	h    *Handler
	sink *recordingSink
	dels *memDeliveries
	obs  *observer
	logs *bytes.Buffer
}

func newEnv() *testEnv {
	e := &testEnv{sink: new(recordingSink), dels: new(memDeliveries), obs: new(observer), logs: new(bytes.Buffer)}
	e.h = &Handler{
		Secret:     []byte(testSecret),
		Sink:       e.sink,
		Deliveries: e.dels,
		Logger:     slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Observe:    e.obs.observe,
	}
	return e
}

func (e *testEnv) serve(r *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	e.h.ServeHTTP(w, r)
	return w
}

// check asserts a response's status and body line.
func check(t *testing.T, w *httptest.ResponseRecorder, status int, body string) {
	t.Helper()
	if w.Code != status || w.Body.String() != body+"\n" {
		t.Errorf("answer = %d %q, want %d %q", w.Code, w.Body.String(), status, body+"\n")
	}
	if ct := w.Header().Get("Content-Type"); ct != "text/plain; charset=utf-8" {
		t.Errorf("Content-Type = %q, want text/plain; charset=utf-8", ct)
	}
}

func checkObserved(t *testing.T, o *observer, want ...string) {
	t.Helper()
	if got := o.calls(); !reflect.DeepEqual(got, want) {
		t.Errorf("Observe calls = %q, want %q", got, want)
	}
}

// fixtureUpdated is the pull_request.updated_at of the testdata payloads.
var fixtureUpdated = time.Date(2026, 12, 2, 9, 14, 5, 0, time.UTC)

func TestHandlerAcceptsPullRequests(t *testing.T) {
	t.Parallel()
	setAction := func(a string) func(map[string]any) { return func(m map[string]any) { m["action"] = a } }
	tests := []struct {
		name string
		body func(t *testing.T) []byte
		want *PullRequest
	}{
		{
			name: "opened",
			body: func(t *testing.T) []byte { return fixture(t, "pull_request_opened.json") },
			want: &PullRequest{Delivery: "d-1", Repo: repoName, Action: "opened", Number: 42,
				BaseRef: "main", BaseSHA: baseSHA, HeadRef: "msm-xyzz", HeadSHA: headSHA, CloneURL: cloneURL, Sender: "bob-maint", UpdatedAt: fixtureUpdated},
		},
		{
			name: "synchronize from a fork",
			body: func(t *testing.T) []byte { return fixture(t, "pull_request_synchronize_fork.json") },
			want: &PullRequest{Delivery: "d-1", Repo: repoName, Action: "synchronize", Number: 57, Fork: true,
				BaseRef: "main", BaseSHA: baseSHA, HeadRef: "ntt-overlap", HeadSHA: newHeadSHA, CloneURL: cloneURL, Sender: "alice-dev", UpdatedAt: fixtureUpdated},
		},
		{
			name: "draft",
			body: func(t *testing.T) []byte { return fixture(t, "pull_request_draft.json") },
			want: &PullRequest{Delivery: "d-1", Repo: repoName, Action: "opened", Number: 58, Draft: true,
				BaseRef: "main", BaseSHA: baseSHA, HeadRef: "signed-digits", HeadSHA: headSHA, CloneURL: cloneURL, Sender: "bob-maint", UpdatedAt: fixtureUpdated},
		},
		{
			name: "reopened",
			body: func(t *testing.T) []byte { return edited(t, "pull_request_opened.json", setAction("reopened")) },
			want: &PullRequest{Delivery: "d-1", Repo: repoName, Action: "reopened", Number: 42,
				BaseRef: "main", BaseSHA: baseSHA, HeadRef: "msm-xyzz", HeadSHA: headSHA, CloneURL: cloneURL, Sender: "bob-maint", UpdatedAt: fixtureUpdated},
		},
		{
			// Closed: its queued comparisons are dropped and their checks
			// ended (server.Dispatcher).
			name: "closed",
			body: func(t *testing.T) []byte { return edited(t, "pull_request_opened.json", setAction("closed")) },
			want: &PullRequest{Delivery: "d-1", Repo: repoName, Action: "closed", Number: 42,
				BaseRef: "main", BaseSHA: baseSHA, HeadRef: "msm-xyzz", HeadSHA: headSHA, CloneURL: cloneURL, Sender: "bob-maint", UpdatedAt: fixtureUpdated},
		},
		{
			name: "ready_for_review",
			body: func(t *testing.T) []byte { return edited(t, "pull_request_draft.json", setAction("ready_for_review")) },
			want: &PullRequest{Delivery: "d-1", Repo: repoName, Action: "ready_for_review", Number: 58, Draft: true,
				BaseRef: "main", BaseSHA: baseSHA, HeadRef: "signed-digits", HeadSHA: headSHA, CloneURL: cloneURL, Sender: "bob-maint", UpdatedAt: fixtureUpdated},
		},
		{
			// A branch of a repository that is itself a fork has head.repo.fork
			// set, but its pull request is not from a fork.
			name: "same repository that is itself a fork",
			body: func(t *testing.T) []byte {
				return edited(t, "pull_request_opened.json", func(m map[string]any) {
					obj(m, "pull_request.head.repo")["fork"] = true
					obj(m, "pull_request.base.repo")["fork"] = true
					obj(m, "repository")["fork"] = true
				})
			},
			want: &PullRequest{Delivery: "d-1", Repo: repoName, Action: "opened", Number: 42,
				BaseRef: "main", BaseSHA: baseSHA, HeadRef: "msm-xyzz", HeadSHA: headSHA, CloneURL: cloneURL, Sender: "bob-maint", UpdatedAt: fixtureUpdated},
		},
		{
			name: "fork deleted",
			body: func(t *testing.T) []byte {
				return edited(t, "pull_request_synchronize_fork.json", func(m map[string]any) {
					obj(m, "pull_request.head")["repo"] = nil
				})
			},
			want: &PullRequest{Delivery: "d-1", Repo: repoName, Action: "synchronize", Number: 57, Fork: true,
				BaseRef: "main", BaseSHA: baseSHA, HeadRef: "ntt-overlap", HeadSHA: newHeadSHA, CloneURL: cloneURL, Sender: "alice-dev", UpdatedAt: fixtureUpdated},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv()
			w := e.serve(newRequest("pull_request", "d-1", tt.body(t)))
			check(t, w, http.StatusAccepted, "accepted")
			got := e.sink.got()
			if len(got) != 1 {
				t.Fatalf("sink got %d events, want 1", len(got))
			}
			if !reflect.DeepEqual(got[0], tt.want) {
				t.Errorf("sink got\n%+v\nwant\n%+v", got[0], tt.want)
			}
			checkObserved(t, e.obs, "pull_request/accepted")
		})
	}
}

func TestHandlerAcceptsCommandOnPullRequest(t *testing.T) {
	t.Parallel()
	e := newEnv()
	w := e.serve(newRequest("issue_comment", "d-2", fixture(t, "issue_comment_pull_request.json")))
	check(t, w, http.StatusAccepted, "accepted")
	want := &Command{Delivery: "d-2", Repo: repoName, Number: 42, CommentID: 2531876409, Author: "bob-maint",
		Association: "COLLABORATOR", Bisect: &BisectCommand{Good: "v1.4.0", Bad: "9f2c4e1a", Phase: "msm_h"}}
	got := e.sink.got()
	if len(got) != 1 || !reflect.DeepEqual(got[0], want) {
		t.Fatalf("sink got %+v, want [%+v]", got, want)
	}
	checkObserved(t, e.obs, "issue_comment/accepted")
}

func TestHandlerPassesBadCommandToSinkWithErr(t *testing.T) {
	t.Parallel()
	e := newEnv()
	body := edited(t, "issue_comment_pull_request.json", func(m map[string]any) {
		obj(m, "comment")["body"] = "/perfbot run count=1"
	})
	check(t, e.serve(newRequest("issue_comment", "d-3", body)), http.StatusAccepted, "accepted")
	got := e.sink.got()
	if len(got) != 1 {
		t.Fatalf("sink got %d events, want 1", len(got))
	}
	cmd, ok := got[0].(*Command)
	if !ok {
		t.Fatalf("sink got %T, want *Command", got[0])
	}
	if cmd.Err == nil || cmd.Err.Error() != `count must be a whole number from 2 to 1000, not "1"` || cmd.Run != nil {
		t.Errorf("command = %+v, want Err about count and no Run", cmd)
	}
	if cmd.Number != 42 || cmd.CommentID != 2531876409 || cmd.Author != "bob-maint" {
		t.Errorf("command = %+v, want PR 42, comment 2531876409 by bob-maint", cmd)
	}
}

func TestHandlerPassesEveryPush(t *testing.T) {
	t.Parallel()
	tests := []struct {
		fixture string
		want    *Push
		toMain  bool
	}{
		{"push_main.json", &Push{Delivery: "d-4", Repo: repoName, Ref: "refs/heads/main", Before: baseSHA, After: mergedSHA,
			DefaultBranch: "main", CloneURL: cloneURL, Sender: "bob-maint"}, true},
		{"push_branch.json", &Push{Delivery: "d-4", Repo: repoName, Ref: "refs/heads/ntt-overlap", Before: headSHA, After: newHeadSHA,
			DefaultBranch: "main", CloneURL: cloneURL, Sender: "bob-maint"}, false},
		{"push_delete.json", &Push{Delivery: "d-4", Repo: repoName, Ref: "refs/heads/msm-xyzz", Before: headSHA, After: zeroSHA,
			DefaultBranch: "main", CloneURL: cloneURL, Sender: "bob-maint"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			t.Parallel()
			e := newEnv()
			check(t, e.serve(newRequest("push", "d-4", fixture(t, tt.fixture))), http.StatusAccepted, "accepted")
			got := e.sink.got()
			if len(got) != 1 || !reflect.DeepEqual(got[0], tt.want) {
				t.Fatalf("sink got %+v, want [%+v]", got, tt.want)
			}
			if to := got[0].(*Push).ToDefaultBranch(); to != tt.toMain {
				t.Errorf("ToDefaultBranch() = %v, want %v", to, tt.toMain)
			}
			checkObserved(t, e.obs, "push/accepted")
		})
	}
}

func TestHandlerIgnoresWhatPerfbotDoesNotActOn(t *testing.T) {
	t.Parallel()
	comment := func(edit func(m map[string]any)) func(t *testing.T) []byte {
		return func(t *testing.T) []byte { return edited(t, "issue_comment_pull_request.json", edit) }
	}
	tests := []struct {
		name, event string
		body        func(t *testing.T) []byte
		status      int
		answer      string
		observed    string
	}{
		{"ping", "ping", func(t *testing.T) []byte { return fixture(t, "ping.json") },
			http.StatusOK, "pong", "ping/ignored"},
		{"labeled pull request", "pull_request", func(t *testing.T) []byte {
			return edited(t, "pull_request_closed.json", func(m map[string]any) { m["action"] = "labeled" })
		}, http.StatusAccepted, `ignored: pull_request action "labeled"`, "pull_request/ignored"},
		{"comment on a plain issue", "issue_comment", func(t *testing.T) []byte { return fixture(t, "issue_comment_issue.json") },
			http.StatusAccepted, "ignored: comment on an issue, not a pull request", "issue_comment/ignored"},
		{"comment without a command", "issue_comment", comment(func(m map[string]any) { obj(m, "comment")["body"] = "LGTM" }),
			http.StatusAccepted, "ignored: comment has no /perfbot command", "issue_comment/ignored"},
		{"edited comment", "issue_comment", comment(func(m map[string]any) { m["action"] = "edited" }),
			http.StatusAccepted, `ignored: issue_comment action "edited"`, "issue_comment/ignored"},
		{"comment by a bot", "issue_comment", comment(func(m map[string]any) {
			obj(m, "comment.user")["login"] = "perfbot[bot]"
			obj(m, "comment.user")["type"] = "Bot"
		}), http.StatusAccepted, "ignored: comment by a bot", "issue_comment/ignored"},
		{"unknown event", "star", func(t *testing.T) []byte { return []byte(`{"action":"created","starred_at":"2026-12-02T10:00:00Z"}`) },
			http.StatusAccepted, "ignored: event star", "other/ignored"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv()
			check(t, e.serve(newRequest(tt.event, "d-5", tt.body(t))), tt.status, tt.answer)
			if got := e.sink.got(); len(got) != 0 {
				t.Errorf("sink got %+v, want nothing", got)
			}
			checkObserved(t, e.obs, tt.observed)
			if len(e.dels.seen) != 0 {
				t.Errorf("Deliveries recorded %v for an ignored event, want nothing", e.dels.seen)
			}
		})
	}
}

func TestHandlerRefusesBadRequests(t *testing.T) {
	t.Parallel()
	pr := func(t *testing.T) *http.Request {
		return newRequest("pull_request", "d-6", fixture(t, "pull_request_opened.json"))
	}
	tests := []struct {
		name     string
		req      func(t *testing.T) *http.Request
		status   int
		answer   string
		observed string
	}{
		{"wrong signature", func(t *testing.T) *http.Request {
			r := pr(t)
			r.Header.Set("X-Hub-Signature-256", sign(testSecret, []byte(`{"action":"opened"}`)))
			return r
		}, http.StatusUnauthorized, "X-Hub-Signature-256 does not match the payload: check the webhook secret", "pull_request/bad_signature"},
		{"body changed after signing", func(t *testing.T) *http.Request {
			body := fixture(t, "pull_request_opened.json")
			r := newRequest("pull_request", "d-6", bytes.Replace(body, []byte(headSHA), []byte(newHeadSHA), 1))
			r.Header.Set("X-Hub-Signature-256", sign(testSecret, body))
			return r
		}, http.StatusUnauthorized, "X-Hub-Signature-256 does not match the payload: check the webhook secret", "pull_request/bad_signature"},
		{"signature with another secret", func(t *testing.T) *http.Request {
			r := pr(t)
			r.Header.Set("X-Hub-Signature-256", sign("not the secret", fixture(t, "pull_request_opened.json")))
			return r
		}, http.StatusUnauthorized, "X-Hub-Signature-256 does not match the payload: check the webhook secret", "pull_request/bad_signature"},
		{"missing signature", func(t *testing.T) *http.Request {
			r := pr(t)
			r.Header.Del("X-Hub-Signature-256")
			return r
		}, http.StatusUnauthorized, "missing X-Hub-Signature-256 header", "pull_request/bad_signature"},
		{"SHA-1 signature only", func(t *testing.T) *http.Request {
			r := pr(t)
			mac := hmac.New(sha1.New, []byte(testSecret))
			mac.Write(fixture(t, "pull_request_opened.json"))
			r.Header.Set("X-Hub-Signature", "sha1="+hex.EncodeToString(mac.Sum(nil)))
			r.Header.Del("X-Hub-Signature-256")
			return r
		}, http.StatusUnauthorized, "missing X-Hub-Signature-256 header", "pull_request/bad_signature"},
		{"signature without sha256= prefix", func(t *testing.T) *http.Request {
			r := pr(t)
			r.Header.Set("X-Hub-Signature-256", strings.TrimPrefix(r.Header.Get("X-Hub-Signature-256"), "sha256="))
			return r
		}, http.StatusUnauthorized, "X-Hub-Signature-256 does not match the payload: check the webhook secret", "pull_request/bad_signature"},
		{"signature not hex", func(t *testing.T) *http.Request {
			r := pr(t)
			r.Header.Set("X-Hub-Signature-256", "sha256=zz")
			return r
		}, http.StatusUnauthorized, "X-Hub-Signature-256 does not match the payload: check the webhook secret", "pull_request/bad_signature"},
		{"missing event header", func(t *testing.T) *http.Request {
			r := pr(t)
			r.Header.Del("X-GitHub-Event")
			return r
		}, http.StatusBadRequest, "missing X-GitHub-Event header", "/bad_request"},
		{"missing delivery header", func(t *testing.T) *http.Request {
			r := pr(t)
			r.Header.Del("X-GitHub-Delivery")
			return r
		}, http.StatusBadRequest, "missing X-GitHub-Delivery header", "pull_request/bad_request"},
		{"malformed JSON", func(t *testing.T) *http.Request {
			return newRequest("pull_request", "d-6", []byte(`{"action":"opened","number":`))
		}, http.StatusBadRequest, "malformed pull_request payload: unexpected end of JSON input", "pull_request/bad_request"},
		{"JSON of the wrong shape", func(t *testing.T) *http.Request {
			return newRequest("push", "d-6", []byte(`{"ref":["refs/heads/main"]}`))
		}, http.StatusBadRequest, "malformed push payload: json: cannot unmarshal array into Go struct field PushEvent.ref of type string", "push/bad_request"},
		{"pull request without a head SHA", func(t *testing.T) *http.Request {
			return newRequest("pull_request", "d-6", edited(t, "pull_request_opened.json", func(m map[string]any) {
				delete(obj(m, "pull_request.head"), "sha")
			}))
		}, http.StatusBadRequest, "malformed pull_request payload: no pull_request.head.sha", "pull_request/bad_request"},
		{"GET", func(t *testing.T) *http.Request {
			r := pr(t)
			r.Method = http.MethodGet
			return r
		}, http.StatusMethodNotAllowed, "method not allowed: GitHub webhooks are POST", "pull_request/bad_request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv()
			w := e.serve(tt.req(t))
			check(t, w, tt.status, tt.answer)
			if got := e.sink.got(); len(got) != 0 {
				t.Errorf("sink got %+v, want nothing", got)
			}
			checkObserved(t, e.obs, tt.observed)
			if tt.status == http.StatusMethodNotAllowed && w.Header().Get("Allow") != "POST" {
				t.Errorf("Allow = %q, want POST", w.Header().Get("Allow"))
			}
		})
	}
}

func TestHandlerRefusesOversizedBody(t *testing.T) {
	t.Parallel()
	e := newEnv()
	e.h.MaxBody = 4096 // the fixture is about 18 KB
	w := e.serve(newRequest("pull_request", "d-7", fixture(t, "pull_request_opened.json")))
	check(t, w, http.StatusRequestEntityTooLarge, "payload too large: over 4096 bytes")
	if got := e.sink.got(); len(got) != 0 {
		t.Errorf("sink got %+v, want nothing", got)
	}
	checkObserved(t, e.obs, "pull_request/too_large")
}

func TestHandlerDropsReplayedDelivery(t *testing.T) {
	t.Parallel()
	e := newEnv()
	body := fixture(t, "pull_request_opened.json")
	check(t, e.serve(newRequest("pull_request", "72d3162e-cc78-11e3-81ab-4c9367dc0958", body)), http.StatusAccepted, "accepted")
	check(t, e.serve(newRequest("pull_request", "72d3162e-cc78-11e3-81ab-4c9367dc0958", body)), http.StatusOK, "duplicate delivery")
	if got := e.sink.got(); len(got) != 1 {
		t.Fatalf("sink called %d times, want 1", len(got))
	}
	// Another delivery of the same payload is another event.
	check(t, e.serve(newRequest("pull_request", "8a1f2b3c-cc78-11e3-81ab-4c9367dc0958", body)), http.StatusAccepted, "accepted")
	if got := e.sink.got(); len(got) != 2 {
		t.Fatalf("sink called %d times, want 2", len(got))
	}
	checkObserved(t, e.obs, "pull_request/accepted", "pull_request/duplicate", "pull_request/accepted")
}

func TestHandlerWithoutDeliveriesPassesRepeats(t *testing.T) {
	t.Parallel()
	e := newEnv()
	e.h.Deliveries = nil
	body := fixture(t, "push_main.json")
	for range 2 {
		check(t, e.serve(newRequest("push", "d-8", body)), http.StatusAccepted, "accepted")
	}
	if got := e.sink.got(); len(got) != 2 {
		t.Fatalf("sink called %d times, want 2", len(got))
	}
}

func TestHandlerSinkErrorAllowsRedelivery(t *testing.T) {
	t.Parallel()
	e := newEnv()
	e.sink.fail = map[int]error{1: errors.New("insert job: connection refused")}
	body := fixture(t, "issue_comment_pull_request.json")
	check(t, e.serve(newRequest("issue_comment", "d-9", body)), http.StatusInternalServerError, "internal error: event not queued; redeliver it")
	if !reflect.DeepEqual(e.dels.forgot, []string{"d-9"}) {
		t.Errorf("Forget calls = %q, want [d-9]", e.dels.forgot)
	}
	if !strings.Contains(e.logs.String(), "insert job: connection refused") {
		t.Errorf("log lacks the sink error:\n%s", e.logs)
	}
	check(t, e.serve(newRequest("issue_comment", "d-9", body)), http.StatusAccepted, "accepted")
	got := e.sink.got()
	if len(got) != 2 || got[0].DeliveryID() != "d-9" || got[1].DeliveryID() != "d-9" {
		t.Fatalf("sink got %+v, want d-9 twice", got)
	}
	checkObserved(t, e.obs, "issue_comment/error", "issue_comment/accepted")
}

func TestHandlerDeliveriesErrorIsServerError(t *testing.T) {
	t.Parallel()
	e := newEnv()
	e.dels.seenErr = errors.New("database is locked")
	check(t, e.serve(newRequest("push", "d-10", fixture(t, "push_main.json"))), http.StatusInternalServerError, "internal error: event not queued")
	if got := e.sink.got(); len(got) != 0 {
		t.Errorf("sink got %+v, want nothing", got)
	}
	checkObserved(t, e.obs, "push/error")
}

func TestHandlerWithoutSecretRefusesEverything(t *testing.T) {
	t.Parallel()
	e := newEnv()
	e.h.Secret = nil
	body := fixture(t, "pull_request_opened.json")
	r := newRequest("pull_request", "d-11", body)
	r.Header.Set("X-Hub-Signature-256", sign("", body)) // an empty key signs too: it must not pass
	check(t, e.serve(r), http.StatusInternalServerError, "webhook secret not configured")
	if got := e.sink.got(); len(got) != 0 {
		t.Errorf("sink got %+v, want nothing", got)
	}
	if !strings.Contains(e.logs.String(), "webhook secret is empty: refusing every delivery") {
		t.Errorf("log does not say the secret is empty:\n%s", e.logs)
	}
	checkObserved(t, e.obs, "pull_request/error")
}

func TestHandlerReadsFormEncodedPayload(t *testing.T) {
	t.Parallel()
	e := newEnv()
	body := []byte("payload=" + url.QueryEscape(string(fixture(t, "push_branch.json"))))
	r := newRequest("push", "d-12", body)
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	check(t, e.serve(r), http.StatusAccepted, "accepted")
	got := e.sink.got()
	if len(got) != 1 || got[0].(*Push).After != newHeadSHA {
		t.Fatalf("sink got %+v, want the push to %s", got, newHeadSHA)
	}
}

func TestHandlerLogsStableKeys(t *testing.T) {
	t.Parallel()
	e := newEnv()
	var logs bytes.Buffer
	e.h.Logger = slog.New(slog.NewJSONHandler(&logs, nil))
	e.serve(newRequest("pull_request", "d-13", fixture(t, "pull_request_opened.json")))
	var rec map[string]any
	if err := json.Unmarshal(logs.Bytes(), &rec); err != nil {
		t.Fatalf("log is not one JSON record: %v\n%s", err, logs.String())
	}
	want := map[string]any{"delivery": "d-13", "event": "pull_request", "repo": repoName, "pr": 42.0, "outcome": "accepted", "status": 202.0}
	for k, v := range want {
		if rec[k] != v {
			t.Errorf("log %s = %v, want %v (record %v)", k, rec[k], v, rec)
		}
	}
}

// TestHandlerOverHTTP sends real requests through an httptest.Server.
func TestHandlerOverHTTP(t *testing.T) {
	t.Parallel()
	e := newEnv()
	srv := httptest.NewServer(e.h)
	defer srv.Close()

	post := func(body []byte) *http.Response {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, srv.URL+"/webhook", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-GitHub-Event", "pull_request")
		req.Header.Set("X-GitHub-Delivery", "d-14")
		req.Header.Set("X-Hub-Signature-256", sign(testSecret, body))
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	answer := func(resp *http.Response) string {
		t.Helper()
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.Status + " " + string(b)
	}

	// Over the default 5 MiB limit: refused before the signature is checked.
	big := append(fixture(t, "pull_request_opened.json"), bytes.Repeat([]byte(" "), DefaultMaxBody)...)
	if got, want := answer(post(big)), "413 Request Entity Too Large payload too large: over 5242880 bytes\n"; got != want {
		t.Errorf("oversized: got %q, want %q", got, want)
	}

	if got, want := answer(post(fixture(t, "pull_request_opened.json"))), "202 Accepted accepted\n"; got != want {
		t.Errorf("pull_request: got %q, want %q", got, want)
	}

	resp, err := srv.Client().Get(srv.URL + "/webhook")
	if err != nil {
		t.Fatal(err)
	}
	allow := resp.Header.Get("Allow")
	if got, want := answer(resp), "405 Method Not Allowed method not allowed: GitHub webhooks are POST\n"; got != want || allow != "POST" {
		t.Errorf("GET: got %q, Allow %q; want %q, Allow POST", got, allow, want)
	}

	if got := e.sink.got(); len(got) != 1 || got[0].(*PullRequest).HeadSHA != headSHA {
		t.Errorf("sink got %+v, want one pull request at %s", got, headSHA)
	}
	checkObserved(t, e.obs, "pull_request/too_large", "pull_request/accepted", "/bad_request")
}
