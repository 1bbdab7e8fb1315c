package main

import (
	"bytes"
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/analysis/render"
	"github.com/perfbot/perfbot/github/githubtest"
	"github.com/perfbot/perfbot/runner/workspace/workspacetest"
	"github.com/perfbot/perfbot/store"
	"github.com/perfbot/perfbot/store/storetest"
)

// sign returns GitHub's X-Hub-Signature-256 for body.
func sign(secret, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// botEnv is a running perfbot serve and worker against a fake GitHub.
type botEnv struct {
	gh       *githubtest.Server
	url      string // perfbot serve's base URL: the webhook's listener
	dash     string // the dashboard's own listener's base URL (token e2eDashToken)
	secret   []byte
	db       *sql.DB
	dsn      string // db's address, for opening it through store
	repo     *workspacetest.Repo
	envDir   string // benchmark processes write their environment here
	conf     string // the server config file
	pg       *storetest.Cluster
	serve    *exec.Cmd // perfbot serve, with serveProcess
	serveLog *syncBuffer
	logs     map[string]*syncBuffer
	keyPEM   []byte // the App's private key
	delivery int
	mu       sync.Mutex
}

const (
	e2eOwner, e2eName = "acme", "prover"
	e2eAppID          = 4242
	e2eInstallation   = 77
	e2eTokenValue     = "ghp_perfbot_e2e_token_must_not_leak"
	e2eSecretValue    = "webhook-secret-must-not-leak"
)

// benchScript prints phase a from the worktree's file "value", after
// sleeping (the worktree's file "sleep" says how long, else sleep
// seconds) so that a job lasts long enough to be superseded, and writes
// its environment where the test can inspect it.
func benchScript(envDir, sleep string) string {
	return `sleep $(cat sleep 2>/dev/null || echo ` + sleep + `); env > ` + envDir + `/env.$$; v=$(cat value); ` +
		`echo "BenchmarkX/phase=a 1 $((v + $$ % 7)) ns/op"; echo "BenchmarkX/phase=total 1 $((v + 2000 + $$ % 11)) ns/op"`
}

// botOptions vary the bot a test starts.
type botOptions struct {
	jobTimeout string // default 5m
	sleep      string // seconds each benchmark run sleeps; default 0.1
	noWorker   bool   // start no worker: the test starts its own
	// rescueAfter is PERFBOT_RESCUE_AFTER for serve and the workers.
	rescueAfter string
	// repos is more entries of the server config's repos: list, after
	// acme/prover's (YAML lines "  - name: owner/name" and its keys).
	repos string
	// files are written beside the server config before perfbot starts
	// (by path relative to its directory): configs a repository's
	// config: names by a relative path.
	files map[string]string
	// ownPostgres runs the database on a cluster of the test's own
	// (e.pg), which it may stop and start; serveProcess runs perfbot
	// serve as a process of its own (e.serve), which it may kill.
	ownPostgres, serveProcess bool
	// count is the config's runs a side (default 8).
	count int
	// bench, when set, is the benchmark's shell script in place of
	// benchScript's.
	bench string
	// repoFiles, when set, are the repository's first commit in place of
	// the shell benchmark's config and value file.
	repoFiles map[string]string
}

func startBot(t *testing.T, opts botOptions) *botEnv {
	t.Helper()
	e := &botEnv{gh: githubtest.New(t), secret: []byte(e2eSecretValue), envDir: t.TempDir()}
	var dsn string
	if opts.ownPostgres {
		e.pg = storetest.OwnPostgres(t)
		dsn = e.pg.DSN
	} else {
		dsn = storetest.FreshPostgres(t)
	}
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	e.db, e.dsn = db, dsn

	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(t.TempDir(), "app.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	e.keyPEM = pemBytes
	if err := os.WriteFile(keyFile, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	e.gh.SetAppKey(e2eAppID, &key.PublicKey)

	e.repo = workspacetest.New(t)
	script, _ := json.Marshal(cmp.Or(opts.bench, benchScript(e.envDir, cmp.Or(opts.sleep, "0.1"))))
	build, _ := json.Marshal("env > " + e.envDir + "/build-env.$$")
	count := cmp.Or(opts.count, 8)
	cfg := fmt.Sprintf("build:\n  - [sh, -c, %s]\nbenchmarks:\n  - name: sh\n    command: [sh, -c, %s]\ncount: %d\nwarmup: 0\nmax_count: %d\ntimeout: 30s\n", build, script, count, count)
	if opts.repoFiles != nil {
		e.repo.Commit(t, "base", opts.repoFiles)
	} else {
		e.repo.Commit(t, "base", map[string]string{".perfbot.yml": cfg, "value": "1000\n"})
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	e.url = "http://" + addr
	ln, err = net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dashAddr := ln.Addr().String()
	ln.Close()
	e.dash = "http://" + dashAddr

	// Secrets are in perfbot's environment, as in production: the token
	// (unused with App auth, but present), the webhook secret, and the key
	// file's path.
	t.Setenv("PERFBOT_E2E_TOKEN", e2eTokenValue)
	t.Setenv("PERFBOT_E2E_SECRET", e2eSecretValue)
	t.Setenv("PERFBOT_RESCUE_AFTER", opts.rescueAfter)
	t.Setenv("PERFBOT_E2E_DASH_TOKEN", e2eDashToken)
	conf := filepath.Join(t.TempDir(), "server.yml")
	for name, body := range opts.files {
		path := filepath.Join(filepath.Dir(conf), name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		write(t, path, body)
	}
	write(t, conf, fmt.Sprintf(`listen: %q
db: %q
job_timeout: %s
github:
  api_url: %q
  token_env: PERFBOT_E2E_TOKEN
  app_id: %d
  installation_id: %d
  private_key_file: %q
  webhook_secret_env: PERFBOT_E2E_SECRET
dashboard:
  listen: %q
  token_env: PERFBOT_E2E_DASH_TOKEN
repos:
  - name: %s/%s
    clone_url: %q
    queue: e2e
%s`, addr, dsn, cmp.Or(opts.jobTimeout, "5m"), e.gh.URL()+"/", e2eAppID, e2eInstallation, keyFile, dashAddr, e2eOwner, e2eName, e.repo.URL(), opts.repos))

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	logs := map[string]*syncBuffer{"serve": {}, "worker": {}}
	e.logs = logs
	start := func(name string, args ...string) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := run(ctx, args, io.Discard, logs[name]); err != nil && ctx.Err() == nil {
				t.Errorf("perfbot %s: %v", name, err)
			}
		}()
	}
	e.conf = conf
	if opts.serveProcess {
		e.startServe(t)
	} else {
		start("serve", "serve", "--config", conf)
	}
	if !opts.noWorker {
		start("worker", "worker", "--config", conf, "--queue", "e2e", "--data-dir", t.TempDir())
	}
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		if t.Failed() {
			for name, b := range logs {
				t.Logf("perfbot %s log:\n%s", name, b.String())
			}
		}
	})
	e.waitHealthy(t, 30*time.Second)
	return e
}

// waitHealthy waits up to limit for perfbot serve to answer /healthz.
func (e *botEnv) waitHealthy(t *testing.T, limit time.Duration) {
	t.Helper()
	e.waitFor(t, "perfbot serve to answer /healthz", limit, func() bool {
		resp, err := http.Get(e.url + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func write(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (e *botEnv) waitFor(t *testing.T, what string, limit time.Duration, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", limit, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// post sends a signed webhook delivery and returns the status and body.
func (e *botEnv) post(t *testing.T, event, delivery string, payload any) (int, string) {
	t.Helper()
	body, err := json.Marshal(payload)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, e.url+"/webhook", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", event)
	req.Header.Set("X-GitHub-Delivery", delivery)
	req.Header.Set("X-Hub-Signature-256", sign(e.secret, body))
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if d := time.Since(start); d > time.Second {
		t.Errorf("webhook %s answered in %s", event, d)
	}
	return resp.StatusCode, strings.TrimSpace(string(out))
}

func (e *botEnv) nextDelivery() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.delivery++
	return fmt.Sprintf("72d3162e-cc78-11e3-81ab-4c9367dc%04d", e.delivery)
}

// pullRequestPayload is a pull_request delivery as GitHub sends it, cut to
// the fields perfbot reads and a few around them.
func (e *botEnv) pullRequestPayload(action string, number int, baseSHA, headSHA string) map[string]any {
	repo := map[string]any{
		"id": 1296269, "name": e2eName, "full_name": e2eOwner + "/" + e2eName, "private": false, "fork": false,
		"owner":     map[string]any{"login": e2eOwner, "id": 1, "type": "Organization"},
		"clone_url": "https://github.com/" + e2eOwner + "/" + e2eName + ".git", "default_branch": "main",
	}
	return map[string]any{
		"action": action, "number": number,
		"pull_request": map[string]any{
			"id": 1000 + number, "number": number, "state": "open", "draft": false, "title": "Faster phase a?",
			"user": map[string]any{"login": "ada", "id": 2},
			"head": map[string]any{"label": "acme:feature", "ref": "feature", "sha": headSHA, "repo": repo},
			"base": map[string]any{"label": "acme:main", "ref": "main", "sha": baseSHA, "repo": repo},
		},
		"repository": repo,
		"sender":     map[string]any{"login": "ada", "id": 2, "type": "User"},
	}
}

func (e *botEnv) perfbotComments(t *testing.T, number int) []githubtest.IssueComment {
	var out []githubtest.IssueComment
	for _, c := range e.gh.Comments(e2eOwner, e2eName, number) {
		if strings.Contains(c.Body, render.SummaryMarker) {
			out = append(out, c)
		}
	}
	return out
}

func (e *botEnv) check(sha string) (githubtest.CheckRun, int) {
	runs := e.gh.CheckRuns(e2eOwner, e2eName, sha)
	if len(runs) == 0 {
		return githubtest.CheckRun{}, 0
	}
	return runs[len(runs)-1], len(runs)
}

func (e *botEnv) jobStates(t *testing.T) map[string]string {
	t.Helper()
	rows, err := e.db.Query(`SELECT args->>'head_sha', state::text FROM river_job WHERE kind = 'perfbot_compare'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var sha, state string
		if err := rows.Scan(&sha, &state); err != nil {
			t.Fatal(err)
		}
		out[sha] = state
	}
	return out
}

func TestBotEndToEndOneCommentOneCheckAndSupersededJobsCancelled(t *testing.T) {
	e := startBot(t, botOptions{})
	const pr = 12
	base := e.repo.Git(t, "rev-parse", "HEAD")
	// The pull request's commits are reachable only from GitHub's
	// refs/pull/N/head, as a fork's are: the worker's mirror must fetch it.
	e.repo.Git(t, "checkout", "--quiet", "--detach")
	pullRef := fmt.Sprintf("refs/pull/%d/head", pr)
	head1 := e.repo.Commit(t, "slower a", map[string]string{"value": "1300\n"})
	e.repo.Git(t, "update-ref", pullRef, head1)
	e.gh.AddPullRequest(githubtest.PR{Owner: e2eOwner, Repo: e2eName, Number: pr, BaseSHA: base, HeadRef: "feature", HeadSHA: head1})

	// A pull request is opened: one job, run by the worker, ends with one
	// comment and one completed check run that fails on the regression.
	d1 := e.nextDelivery()
	if code, body := e.post(t, "pull_request", d1, e.pullRequestPayload("opened", pr, base, head1)); code != http.StatusAccepted {
		t.Fatalf("opened: %d %q, want 202", code, body)
	}
	// GitHub redelivering it starts nothing.
	if code, body := e.post(t, "pull_request", d1, e.pullRequestPayload("opened", pr, base, head1)); code != http.StatusOK || !strings.Contains(body, "duplicate") {
		t.Errorf("redelivery: %d %q, want 200 duplicate", code, body)
	}
	e.waitFor(t, "the first check run to complete", 90*time.Second, func() bool {
		c, _ := e.check(head1)
		return c.Status == "completed"
	})
	c1, n1 := e.check(head1)
	if n1 != 1 || c1.Conclusion != "failure" || !strings.HasPrefix(c1.Title, "Regression.") || c1.AppID != e2eAppID {
		t.Errorf("head1: %d check runs, last %+v; want one, failure, a regression, by the App", n1, c1)
	}
	comments := e.perfbotComments(t, pr)
	if len(comments) != 1 || !strings.Contains(comments[0].Body, "### perfbot: regression") || comments[0].User != githubtest.AppUser {
		t.Fatalf("after the first job: comments %+v; want one regression report by the App", comments)
	}
	firstID := comments[0].ID

	// Two pushes: the job for head2 (whose runs take 3s each) is
	// cancelled while it runs; the one for head3 runs and edits the same
	// comment.
	head2 := e.repo.Commit(t, "try again, slowly", map[string]string{"value": "1001\n", "sleep": "3\n"})
	e.repo.Git(t, "update-ref", pullRef, head2)
	e.gh.SetHead(e2eOwner, e2eName, pr, head2)
	if code, body := e.post(t, "pull_request", e.nextDelivery(), e.pullRequestPayload("synchronize", pr, base, head2)); code != http.StatusAccepted {
		t.Fatalf("synchronize head2: %d %q", code, body)
	}
	e.waitFor(t, "head2's job to start", 60*time.Second, func() bool { return e.jobStates(t)[head2] == "running" })
	head3 := e.repo.Commit(t, "back to base speed", map[string]string{"value": "1000\n", "sleep": ""})
	e.repo.Git(t, "update-ref", pullRef, head3)
	e.gh.SetHead(e2eOwner, e2eName, pr, head3)
	if code, body := e.post(t, "pull_request", e.nextDelivery(), e.pullRequestPayload("synchronize", pr, base, head3)); code != http.StatusAccepted {
		t.Fatalf("synchronize head3: %d %q", code, body)
	}
	e.waitFor(t, "head3's check run and job to complete", 90*time.Second, func() bool {
		c, _ := e.check(head3)
		return c.Status == "completed" && e.jobStates(t)[head3] == "completed"
	})
	states := e.jobStates(t)
	if states[head1] != "completed" || states[head2] != "cancelled" || states[head3] != "completed" {
		t.Errorf("job states %v; want head1 completed, head2 cancelled, head3 completed", states)
	}
	// head2's check ends neutral, naming head3 (both its worker and the
	// note queued with head3 say so): never "cancelled" (a red cross on a
	// commit status, and a failed required check).
	if c, n := e.check(head2); n != 1 || c.Status != "completed" || c.Conclusion != "neutral" || c.Title != "Superseded by "+head3[:12] {
		t.Errorf("head2: %d check runs, last %+v; want one, completed, neutral, superseded by %s", n, c, head3[:12])
	}
	if c, n := e.check(head3); n != 1 || c.Conclusion == "failure" || c.Conclusion == "action_required" {
		t.Errorf("head3: %d check runs, last %+v; want one, not a failure", n, c)
	}
	comments = e.perfbotComments(t, pr)
	if len(comments) != 1 || comments[0].ID != firstID {
		t.Fatalf("after the pushes: %d perfbot comments (first id %d); want the one comment, edited", len(comments), firstID)
	}
	body := comments[0].Body
	if strings.Contains(strings.SplitN(body, "Earlier results", 2)[0], "### perfbot: regression") ||
		!strings.Contains(body, "Earlier results") || !strings.Contains(body, head3[:7]) {
		t.Errorf("edited comment: want head3's report first and the regression folded into the history:\n%s", body)
	}

	// The builds and benchmarks never saw perfbot's secrets.
	envs, _ := filepath.Glob(filepath.Join(e.envDir, "env.*"))
	builds, _ := filepath.Glob(filepath.Join(e.envDir, "build-env.*"))
	if len(envs) < 10 || len(builds) < 2 {
		t.Fatalf("%d benchmark and %d build environments recorded, want at least 10 and 2", len(envs), len(builds))
	}
	envs = append(envs, builds...)
	for _, f := range envs {
		b, _ := os.ReadFile(f)
		for _, secret := range []string{e2eTokenValue, e2eSecretValue, "PERFBOT_E2E", "app.pem", "PERFBOT_RESCUE_AFTER"} {
			if bytes.Contains(b, []byte(secret)) {
				t.Errorf("benchmark environment %s contains %q", filepath.Base(f), secret)
			}
		}
	}

	// The webhook's listener shows nothing private; the dashboard's own
	// asks for its token.
	for _, path := range []string{"/metrics", "/api/jobs", "/jobs", "/"} {
		if code, _ := httpGet(t, e.url+path, ""); code != http.StatusNotFound {
			t.Errorf("GET %s on the webhook's listener: %d; want 404", path, code)
		}
		if code, _ := httpGet(t, e.dash+path, ""); code != http.StatusUnauthorized {
			t.Errorf("GET %s on the dashboard's listener without its token: %d; want 401", path, code)
		}
	}
	// /metrics counts the deliveries and reads jobs and comparisons from
	// the database.
	code, metrics := httpGet(t, e.dash+"/metrics", e2eDashToken)
	if code != http.StatusOK {
		t.Fatalf("/metrics with the token: %d", code)
	}
	for _, want := range []string{
		`perfbot_webhooks_total{event="pull_request",outcome="accepted"} 3`,
		`perfbot_webhooks_total{event="pull_request",outcome="duplicate"} 1`,
		`perfbot_jobs{kind="perfbot_compare",state="cancelled"} 1`,
		`perfbot_jobs{kind="perfbot_compare",state="completed"} 2`,
		`perfbot_comparisons_total{verdict="regression"} 1`,
		`perfbot_database_up 1`,
	} {
		if !strings.Contains(string(metrics), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}

	// The dashboard shows the same jobs and the stored comparison (its
	// repository named as the runner stores it: the clone URL).
	var jobs struct {
		Available bool
		Finished  []struct{ Kind, State string }
	}
	getJSON(t, e.dash+"/api/jobs", &jobs)
	finished := map[string]int{}
	for _, j := range jobs.Finished {
		finished[j.Kind+" "+j.State]++
	}
	if !jobs.Available || finished["perfbot_compare completed"] != 2 || finished["perfbot_compare cancelled"] != 1 {
		t.Errorf("dashboard jobs: available %v, finished %v; want 2 completed and 1 cancelled comparisons", jobs.Available, finished)
	}
	var stored struct {
		Source string
		Report struct{ Verdict string }
	}
	getJSON(t, e.dash+"/api/compare?"+url.Values{"repo": {e.repo.URL()}, "base": {base}, "head": {head1}}.Encode(), &stored)
	if stored.Source != "stored" || stored.Report.Verdict != "regression" {
		t.Errorf("dashboard comparison of head1: %+v; want the stored regression", stored)
	}
	e.checkNoSecretShows(t, []int{pr}, nil, base, head1, head2)
}

// TestQueuedChecksOfDroppedHeadsEnd: with no worker to run them, a pull
// request's pushes leave each head's check "Queued" until a newer push
// supersedes it or the pull request is closed; then serve ends it,
// neutral, saying which. A reply to a command is one comment however
// often the command's job runs.
func TestQueuedChecksOfDroppedHeadsEnd(t *testing.T) {
	e := startBot(t, botOptions{noWorker: true})
	const pr = 21
	base := e.repo.Git(t, "rev-parse", "HEAD")
	var heads []string
	for i := range 3 {
		heads = append(heads, e.repo.Commit(t, fmt.Sprintf("push %d", i), map[string]string{"value": fmt.Sprintf("%d\n", 1000+i)}))
	}
	e.gh.AddPullRequest(githubtest.PR{Owner: e2eOwner, Repo: e2eName, Number: pr, BaseSHA: base, HeadRef: "feature", HeadSHA: heads[0]})
	for i, h := range heads {
		action := "synchronize"
		if i == 0 {
			action = "opened"
		}
		e.gh.SetHead(e2eOwner, e2eName, pr, h)
		if code, body := e.post(t, "pull_request", e.nextDelivery(), e.pullRequestPayload(action, pr, base, h)); code != http.StatusAccepted {
			t.Fatalf("%s %s: %d %q", action, h[:7], code, body)
		}
		e.waitFor(t, h[:7]+"'s check to be queued", 30*time.Second, func() bool {
			c, _ := e.check(h)
			return c.Status == "queued"
		})
	}
	if code, body := e.post(t, "pull_request", e.nextDelivery(), e.pullRequestPayload("closed", pr, base, heads[2])); code != http.StatusAccepted {
		t.Fatalf("closed: %d %q", code, body)
	}
	want := map[string]string{heads[0]: "Superseded by " + heads[1][:12], heads[1]: "Superseded by " + heads[2][:12], heads[2]: "Pull request closed"}
	e.waitFor(t, "every head's check to end", 30*time.Second, func() bool {
		for h, title := range want {
			if c, _ := e.check(h); c.Status != "completed" || c.Title != title {
				return false
			}
		}
		return true
	})
	for h, title := range want {
		if c, n := e.check(h); n != 1 || c.Conclusion != "neutral" || c.Title != title {
			t.Errorf("%s: %d check runs, last %+v; want one, completed, neutral, %q", h[:7], n, c, title)
		}
	}
	if cmp := e.jobStates(t); cmp[heads[0]] != "cancelled" || cmp[heads[1]] != "cancelled" || cmp[heads[2]] != "cancelled" {
		t.Errorf("comparison jobs %v; want all three cancelled", cmp)
	}
}

// TestAControlJobOfAKilledServeRunsAgainWithinTheBound: a reply job that
// a killed perfbot serve left "running" two minutes ago (past its
// one-minute timeout) is rescued by the serve that runs now and posted,
// once, within seconds of its sweep; River's own rescue would have waited
// job_timeout + 10 minutes.
func TestAControlJobOfAKilledServeRunsAgainWithinTheBound(t *testing.T) {
	t.Setenv("PERFBOT_CONTROL_RESCUE_EVERY", "1s")
	e := startBot(t, botOptions{noWorker: true})
	const pr = 31
	base := e.repo.Git(t, "rev-parse", "HEAD")
	e.gh.AddPullRequest(githubtest.PR{Owner: e2eOwner, Repo: e2eName, Number: pr, BaseSHA: base, HeadRef: "f", HeadSHA: base})
	start := time.Now()
	if _, err := e.db.Exec(`INSERT INTO river_job (kind, args, queue, state, attempt, max_attempts, attempted_at, priority, scheduled_at)
		VALUES ('perfbot_notify', $1, 'control', 'running', 1, 5, now() - interval '2 minutes', 1, now() - interval '2 minutes')`,
		fmt.Sprintf(`{"repo": "%s/%s", "pr": %d, "reply": "hello again", "reply_key": "delivery d-killed"}`, e2eOwner, e2eName, pr)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			var state, errs string
			e.db.QueryRow(`SELECT state::text, coalesce(array_to_string(errors, ' | '), '') FROM river_job WHERE kind = 'perfbot_notify' AND (args->>'pr')::int = $1`, pr).Scan(&state, &errs)
			t.Logf("the reply job: %s, errors %s; comments %+v", state, errs, e.gh.Comments(e2eOwner, e2eName, pr))
		}
	})
	e.waitFor(t, "the abandoned reply to be posted", 30*time.Second, func() bool { return len(e.gh.Comments(e2eOwner, e2eName, pr)) > 0 })
	t.Logf("posted %s after the job was found abandoned", time.Since(start).Round(100*time.Millisecond))
	time.Sleep(2 * time.Second) // a second sweep finds nothing more to do
	cs := e.gh.Comments(e2eOwner, e2eName, pr)
	if len(cs) != 1 || cs[0].Body != replyMarker("delivery d-killed")+"\nhello again" || cs[0].User != githubtest.AppUser {
		t.Errorf("comments %+v; want the one reply", cs)
	}
}

// checkNoSecretShows looks for the token, the webhook secret, the
// dashboard's token and a line of the App's private key in everything
// perfbot said: the processes' logs (and the texts in more), the errors
// its jobs recorded, the pull requests' comments, the check runs and
// statuses on the commits shas (a base and a head first), and the
// dashboard's pages and JSON.
func (e *botEnv) checkNoSecretShows(t *testing.T, prs []int, more map[string]string, shas ...string) {
	t.Helper()
	keyLines := strings.Split(strings.TrimSpace(string(e.keyPEM)), "\n")
	secrets := []string{e2eTokenValue, e2eSecretValue, e2eDashToken, keyLines[len(keyLines)/2]}
	said := map[string]string{}
	for name, b := range e.logs {
		said["perfbot "+name+" log"] = b.String()
	}
	if e.serveLog != nil {
		said["perfbot serve process log"] = e.serveLog.String()
	}
	for name, text := range more {
		said[name] = text
	}
	var jobErrors sql.NullString
	if err := e.db.QueryRow(`SELECT string_agg(errors::text, ' ') FROM river_job WHERE errors IS NOT NULL`).Scan(&jobErrors); err != nil {
		t.Fatal(err)
	}
	said["job errors"] = jobErrors.String
	for _, pr := range prs {
		for i, c := range e.gh.Comments(e2eOwner, e2eName, pr) {
			said[fmt.Sprintf("comment %d on #%d", i, pr)] = c.Body
		}
	}
	for _, sha := range shas {
		for i, c := range e.gh.CheckRuns(e2eOwner, e2eName, sha) {
			said[fmt.Sprintf("check run %d on %.7s", i, sha)] = strings.Join([]string{c.Title, c.Summary, c.Text, c.DetailsURL}, "\n")
		}
		for i, st := range e.gh.Statuses(e2eOwner, e2eName, sha) {
			said[fmt.Sprintf("status %d on %.7s", i, sha)] = fmt.Sprintf("%+v", st)
		}
	}
	for _, path := range []string{"/", "/jobs", "/api/jobs", "/trend", "/compare?" + url.Values{"repo": {e.repo.URL()}, "base": {shas[0]}, "head": {shas[1]}}.Encode()} {
		_, body := httpGet(t, e.dash+path, e2eDashToken)
		said["dashboard "+path] = string(body)
	}
	if len(said) < 8 {
		t.Errorf("only %d things to look through; the search means nothing", len(said))
	}
	for where, text := range said {
		for _, secret := range secrets {
			if strings.Contains(text, secret) {
				t.Errorf("%s contains a secret (%.12s…)", where, secret)
			}
		}
	}
}

// e2eDashToken is the end-to-end tests' dashboard token; getJSON sends it.
const e2eDashToken = "e2e-dashboard-token-5f1d"

// httpGet gets u, with token as a bearer token unless it is "".
func httpGet(t *testing.T, u, token string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func getJSON(t *testing.T, u string, v any) {
	t.Helper()
	code, b := httpGet(t, u, e2eDashToken)
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", u, code, b)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
}

// TestMain lets a test start this test binary as perfbot itself: with
// PERFBOT_TEST_AS_MAIN=1 it runs main with its arguments.
func TestMain(m *testing.M) {
	if os.Getenv("PERFBOT_TEST_AS_MAIN") == "1" {
		main()
	}
	os.Exit(m.Run())
}

// openStore opens e's database through store, as perfbot does.
func openStore(t *testing.T, e *botEnv) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), e.dsn, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// startServe starts perfbot serve as a process of its own (e.serve), so
// that a test can kill it and start it again; it waits for /healthz.
func (e *botEnv) startServe(t *testing.T) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if e.serveLog == nil {
		e.serveLog = &syncBuffer{}
		t.Cleanup(func() {
			if e.serve != nil {
				e.serve.Process.Kill()
				e.serve.Wait()
			}
			if t.Failed() {
				t.Logf("perfbot serve process log:\n%s", e.serveLog.String())
			}
		})
	}
	cmd := exec.Command(self, "serve", "--config", e.conf)
	cmd.Env = append(os.Environ(), "PERFBOT_TEST_AS_MAIN=1")
	cmd.Stdout, cmd.Stderr = e.serveLog, e.serveLog
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	e.serve = cmd
	e.waitHealthy(t, 60*time.Second)
}

// startWorkerProcess starts perfbot worker as a separate process, so a
// test can kill it.
func startWorkerProcess(t *testing.T, e *botEnv, dataDir string, extraEnv ...string) (*exec.Cmd, *syncBuffer) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var log syncBuffer
	cmd := exec.Command(self, "worker", "--config", e.conf, "--queue", "e2e", "--data-dir", dataDir)
	cmd.Env = append(os.Environ(), append([]string{"PERFBOT_TEST_AS_MAIN=1"}, extraEnv...)...)
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("worker process %d log:\n%s", cmd.Process.Pid, log.String())
		}
	})
	return cmd, &log
}

func TestBotWorkerKilledMidJobIsRescuedAndThePRGetsOneComment(t *testing.T) {
	// Jobs time out after 20s and count as abandoned after 22s; each
	// comparison takes about 4s on a quiet machine (16 runs of 0.25s),
	// and the rescued attempt must end within the job timeout however
	// busy the machine is (6s once ran out under load).
	e := startBot(t, botOptions{jobTimeout: "20s", sleep: "0.25", noWorker: true, rescueAfter: "22s"})
	const pr = 21
	base := e.repo.Git(t, "rev-parse", "HEAD")
	e.repo.Git(t, "checkout", "--quiet", "-b", "feature")
	head := e.repo.Commit(t, "slower a", map[string]string{"value": "1300\n"})
	e.gh.AddPullRequest(githubtest.PR{Owner: e2eOwner, Repo: e2eName, Number: pr, BaseSHA: base, HeadRef: "feature", HeadSHA: head})
	data := t.TempDir() // one host's data directory, kept across the restart

	first, _ := startWorkerProcess(t, e, data)
	if code, body := e.post(t, "pull_request", e.nextDelivery(), e.pullRequestPayload("opened", pr, base, head)); code != http.StatusAccepted {
		t.Fatalf("opened: %d %q", code, body)
	}
	e.waitFor(t, "the job to have stored runs", 60*time.Second, func() bool {
		var n int
		e.db.QueryRow(`SELECT count(*) FROM runs WHERE kind = 'compare' AND status = 'ok'`).Scan(&n)
		return n >= 2
	})
	if err := first.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	first.Wait()
	if c, _ := e.check(head); c.Status != "in_progress" {
		t.Fatalf("after the kill: check %+v; want it left in progress", c)
	}

	// A new worker on the same host: River rescues the abandoned job
	// (after 22s, at its rescuer's next pass) and this worker runs it.
	startWorkerProcess(t, e, data)
	e.waitFor(t, "the rescued job to complete", 120*time.Second, func() bool {
		c, _ := e.check(head)
		return c.Status == "completed"
	})
	var attempt int
	var state string
	if err := e.db.QueryRow(`SELECT attempt, state::text FROM river_job WHERE kind = 'perfbot_compare'`).Scan(&attempt, &state); err != nil {
		t.Fatal(err)
	}
	c, n := e.check(head)
	if n != 1 || c.Conclusion != "failure" || !strings.Contains(c.Summary, "### perfbot: regression") {
		t.Errorf("%d check runs, last %+v; want one, failed on the regression", n, c)
	}
	if attempt != 2 {
		t.Errorf("job attempt %d (state %s); want the second attempt to have finished it", attempt, state)
	}
	if comments := e.perfbotComments(t, pr); len(comments) != 1 || !strings.Contains(comments[0].Body, "### perfbot: regression") {
		t.Errorf("%d perfbot comments; want exactly one regression report", len(comments))
	}

	// The killed attempt's runs are kept, tied to its session, which the
	// second worker found abandoned (its process gone) before it began
	// its own; only the second attempt's runs are whole, so a bisection
	// or a history read takes those alone.
	sessions := map[string]string{} // label -> state
	perSession := map[string]int{}  // label -> ok compare runs
	rows, err := e.db.Query(`SELECT s.label, s.state, count(r.id) FROM sessions s
		LEFT JOIN runs r ON r.session_id = s.id AND r.kind = 'compare' AND r.status = 'ok' GROUP BY s.id, s.label, s.state`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var label, st string
		var n int
		if err := rows.Scan(&label, &st, &n); err != nil {
			t.Fatal(err)
		}
		sessions[label], perSession[label] = st, n
	}
	rows.Close()
	var jobID int64
	e.db.QueryRow(`SELECT id FROM river_job WHERE kind = 'perfbot_compare'`).Scan(&jobID)
	killed, rescued := fmt.Sprintf("perfbot_compare job %d attempt 1", jobID), fmt.Sprintf("perfbot_compare job %d attempt 2", jobID)
	if len(sessions) != 2 || sessions[killed] != "abandoned" || sessions[rescued] != "ended" || perSession[killed] < 2 || perSession[rescued] < 16 {
		t.Fatalf("sessions %v with ok compare runs %v; want %q abandoned with the runs stored before the kill, %q ended with a whole comparison's",
			sessions, perSession, killed, rescued)
	}
	db := openStore(t, e)
	whole, err := db.Runs(context.Background(), store.RunQuery{Kind: store.KindCompare, Status: analysis.StatusOK, Whole: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(whole) != perSession[rescued] {
		t.Errorf("Runs{Whole} = %d compare runs, want the rescued attempt's %d alone", len(whole), perSession[rescued])
	}
	for _, r := range whole {
		if r.SessionState != store.SessionEnded {
			t.Errorf("whole run %d is of a session %s", r.ID, r.SessionState)
		}
	}
}

func TestBotPublishesTheStoredResultWhenGitHubRefusedIt(t *testing.T) {
	e := startBot(t, botOptions{})
	const pr = 31
	base := e.repo.Git(t, "rev-parse", "HEAD")
	e.repo.Git(t, "checkout", "--quiet", "-b", "feature")
	head := e.repo.Commit(t, "slower a", map[string]string{"value": "1300\n"})
	e.gh.AddPullRequest(githubtest.PR{Owner: e2eOwner, Repo: e2eName, Number: pr, BaseSHA: base, HeadRef: "feature", HeadSHA: head})
	// GitHub refuses the worker's comment once, with a 422 the client
	// does not retry: the measured result must not be lost.
	e.gh.Fail(http.MethodPost, fmt.Sprintf("/repos/%s/%s/issues/%d/comments", e2eOwner, e2eName, pr), 1,
		githubtest.Fault{Status: http.StatusUnprocessableEntity, Body: `{"message":"Validation Failed","errors":[{"resource":"IssueComment","code":"custom","message":"try later"}]}`})
	if code, body := e.post(t, "pull_request", e.nextDelivery(), e.pullRequestPayload("opened", pr, base, head)); code != http.StatusAccepted {
		t.Fatalf("opened: %d %q", code, body)
	}
	published := func() int {
		var n int
		e.db.QueryRow(`SELECT count(*) FROM river_job WHERE kind = 'perfbot_notify' AND (args->>'comparison')::bigint > 0 AND state = 'completed'`).Scan(&n)
		return n
	}
	e.waitFor(t, "the result to be published by the retry", 90*time.Second, func() bool {
		c, _ := e.check(head)
		return c.Status == "completed" && len(e.perfbotComments(t, pr)) == 1 && published() > 0
	})
	var comparisons int
	e.db.QueryRow(`SELECT count(*) FROM comparisons`).Scan(&comparisons)
	if n := published(); comparisons != 1 || n != 1 {
		t.Errorf("%d comparisons, %d publish retries completed; want one measurement, published by one retry", comparisons, n)
	}
	if c, n := e.check(head); n != 1 || c.Conclusion != "failure" {
		t.Errorf("%d check runs, last %+v; want one, failed on the regression", n, c)
	}
}
