package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfbot/perfbot/github/githubtest"
)

// TestBotFlowOnTheGPUHost times the bot's whole flow on a GPU host with
// the shipped GPU config (deploy/perfbot-gpu.example.yml): perfbot serve,
// a worker, PostgreSQL and the fake GitHub on that host; a push to the
// default branch measures its baseline (both build steps from nothing),
// then a pull request that changes cuda/ and one that changes only Go
// code are each timed from the webhook to the final comment, with the
// base's builds cached by the baseline job. It is a benchmark, not a
// check: it runs only when PERFBOT_GPU_FLOW names the tree to measure
// (this repository's Makefile and cuda/; bench/gpu-bot-flow.sh runs it)
// and appends one line a step to PERFBOT_GPU_FLOW_OUT.
//
// The host has no Go, so the config's Go step copies this test binary in
// place of a perfbot built from the revision (declaring the same inputs:
// the step is still reused or re-run as a real one would be), and the
// benchmark runs it as perfbot (PERFBOT_TEST_AS_MAIN).
func TestBotFlowOnTheGPUHost(t *testing.T) {
	src := os.Getenv("PERFBOT_GPU_FLOW")
	if src == "" {
		t.Skip("a benchmark for the GPU host: set PERFBOT_GPU_FLOW to the tree to measure (bench/gpu-bot-flow.sh)")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	shipped, err := os.ReadFile(filepath.Join(src, "deploy", "perfbot-gpu.example.yml"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := string(shipped)
	goStep := `  - run: [go, build, -o, "${PERFBOT_OUT}/perfbot", ./cmd/perfbot]`
	resident := "    resident: true\n"
	if !strings.Contains(cfg, goStep) || !strings.Contains(cfg, resident) {
		t.Fatalf("deploy/perfbot-gpu.example.yml has no line %q or %q: update this test with the config", goStep, resident)
	}
	cfg = strings.Replace(cfg, goStep, fmt.Sprintf(`  - run: [cp, %q, "${PERFBOT_OUT}/perfbot"]`, self), 1)
	cfg = strings.Replace(cfg, resident, resident+"    env: {PERFBOT_TEST_AS_MAIN: \"1\"}\n", 1)

	files := map[string]string{".perfbot.yml": cfg, "go.mod": "module example.com/prover\n",
		"cmd/perfbot/version.go": "package main // the Go step's inputs: a Go-only change edits this\n"}
	for _, dir := range []string{"cuda"} {
		entries, err := os.ReadDir(filepath.Join(src, dir))
		if err != nil {
			t.Fatal(err)
		}
		for _, en := range entries {
			if en.Type().IsRegular() {
				b, err := os.ReadFile(filepath.Join(src, dir, en.Name()))
				if err != nil {
					t.Fatal(err)
				}
				files[dir+"/"+en.Name()] = string(b)
			}
		}
	}
	mk, err := os.ReadFile(filepath.Join(src, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	files["Makefile"] = string(mk)

	out := os.Getenv("PERFBOT_GPU_FLOW_OUT")
	record := func(format string, args ...any) {
		line := fmt.Sprintf(format, args...)
		t.Log(line)
		if out == "" {
			return
		}
		f, err := os.OpenFile(out, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintln(f, line)
		f.Close()
	}

	e := startBot(t, botOptions{repoFiles: files, jobTimeout: "15m"})
	t.Cleanup(func() {
		if os.Getenv("PERFBOT_GPU_FLOW_LOGS") != "" {
			t.Logf("worker log:\n%s", e.logs["worker"].String())
		}
	})
	base := e.repo.Git(t, "rev-parse", "HEAD")

	// The push to the default branch: its baseline, both steps built.
	start := time.Now()
	repo := map[string]any{"id": 1296269, "full_name": e2eOwner + "/" + e2eName, "default_branch": "main",
		"clone_url": "https://github.com/" + e2eOwner + "/" + e2eName + ".git", "owner": map[string]any{"login": e2eOwner}}
	push := map[string]any{"ref": "refs/heads/main", "before": strings.Repeat("0", 40), "after": base,
		"repository": repo, "sender": map[string]any{"login": "ada"}}
	if code, body := e.post(t, "push", e.nextDelivery(), push); code != http.StatusAccepted {
		t.Fatalf("push: %d %q, want 202", code, body)
	}
	var state string
	e.waitFor(t, "the baseline job to end", 14*time.Minute, func() bool {
		err := e.db.QueryRow(`SELECT state::text FROM river_job WHERE kind = 'perfbot_baseline' AND args->>'sha' = $1`, base).Scan(&state)
		return err == nil && (state == "completed" || state == "discarded" || state == "cancelled")
	})
	if state != "completed" {
		t.Fatalf("the baseline job ended %q; want completed", state)
	}
	record("baseline on push (both steps built): %.1f s from the webhook to the job's end", time.Since(start).Seconds())

	// Pull requests on that base, one at a time: each timed from the
	// webhook to its final comment.
	e.repo.Git(t, "checkout", "--quiet", "--detach")
	for i, pr := range []struct{ name, file string }{
		{"a CUDA change", "cuda/msm.cuh"},
		{"a Go-only change", "cmd/perfbot/version.go"},
	} {
		number := 100 + i
		b, err := os.ReadFile(filepath.Join(e.repo.Dir, pr.file))
		if err != nil {
			t.Fatal(err)
		}
		e.repo.Git(t, "checkout", "--quiet", base)
		head := e.repo.Commit(t, pr.name, map[string]string{pr.file: string(b) + "// " + pr.name + "\n"})
		e.repo.Git(t, "update-ref", fmt.Sprintf("refs/pull/%d/head", number), head)
		e.gh.AddPullRequest(githubtest.PR{Owner: e2eOwner, Repo: e2eName, Number: number, BaseSHA: base, HeadRef: "feature", HeadSHA: head})
		reusedBefore := strings.Count(e.logs["worker"].String(), "build step reused")
		start := time.Now()
		if code, body := e.post(t, "pull_request", e.nextDelivery(), e.pullRequestPayload("opened", number, base, head)); code != http.StatusAccepted {
			t.Fatalf("%s: %d %q, want 202", pr.name, code, body)
		}
		e.waitFor(t, pr.name+"'s comment", 14*time.Minute, func() bool {
			c, _ := e.check(head)
			return c.Status == "completed" && len(e.perfbotComments(t, number)) == 1
		})
		c, _ := e.check(head)
		wall := time.Since(start).Seconds()
		heading := ""
		for _, line := range strings.Split(e.perfbotComments(t, number)[0].Body, "\n") {
			if strings.HasPrefix(line, "### ") {
				heading = line
				break
			}
		}
		reused := strings.Count(e.logs["worker"].String(), "build step reused") - reusedBefore
		record("pull request, %s, base cached: %.1f s from the webhook to the final comment, %d build steps reused (check %s: %s; %s)",
			pr.name, wall, reused, c.Conclusion, c.Title, heading)
	}
}
