package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfbot/perfbot/analysis/render"
	"github.com/perfbot/perfbot/github/githubtest"
	"github.com/perfbot/perfbot/runner"
	"github.com/perfbot/perfbot/runner/workspace/workspacetest"
)

func TestExampleServerConfigParses(t *testing.T) {
	t.Parallel()
	c, err := loadBotConfig(filepath.Join("..", "..", "docs", "perfbot-server.example.yml"))
	if err != nil {
		t.Fatal(err)
	}
	r := c.repos()["perfbot/perfbot"]
	if c.Listen != ":8080" || c.jobTimeout != 2*time.Hour || r.Queue != "gpu" || !r.Baselines || r.Drafts ||
		c.GitHub.TokenEnv != "GITHUB_TOKEN" || c.GitHub.CheckName != "perfbot" {
		t.Errorf("example config = %+v, repo %+v", c, r)
	}
}

func TestServerConfigErrorsSayWhatToFix(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, yaml, want string }{
		{"unknown key", "repos: [{name: a/b}]\nlisten_on: 1\n", "field listen_on not found"},
		{"no repos", "listen: ':1'\n", "repos: none listed"},
		{"bad repo name", "repos: [{name: prover}]\n", `name "prover": write it as owner/name`},
		{"twice", "repos: [{name: a/b}, {name: a/b}]\n", "a/b is listed twice"},
		{"twice in another case", "repos: [{name: acme/prover}, {name: ACME/Prover}]\n", "ACME/Prover is listed twice (names are not case-sensitive)"},
		{"half an app", "github: {app_id: 3}\nrepos: [{name: a/b}]\n", "app_id, installation_id and private_key_file together"},
		{"bad timeout", "job_timeout: soon\nrepos: [{name: a/b}]\n", `job_timeout: "soon"`},
		{"control queue", "repos: [{name: a/b, queue: control}]\n", `queue "control" is perfbot serve's own`},
		{"option URL", "repos: [{name: a/b, clone_url: --upload-pack=x}]\n", "cannot begin with '-'"},
		{"missing config file", "repos: [{name: a/b, config: nope.yml}]\n", "repos[0]: config: invalid perfbot config: config: of a/b in"},
		{"config a list", "repos:\n  - name: a/b\n    config: [x]\n", "repos[0]: config: line 3: a file path or the config itself"},
		{"bad inline config", "repos:\n  - name: a/b\n    config:\n      benchmarks:\n        - name: x\n          command: ./x\n", "inline config: of a/b in"},
	}
	for _, tc := range cases {
		path := filepath.Join(t.TempDir(), "server.yml")
		write(t, path, tc.yaml)
		_, err := loadBotConfig(path)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v; want it to say %q", tc.name, err, tc.want)
		}
	}
	if _, err := loadBotConfig(""); err == nil || !strings.Contains(err.Error(), "--config is required") {
		t.Errorf("no config: %v", err)
	}
}

func TestServeAndWorkerRefuseBadSetupWithExitTwo(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "server.yml")
	write(t, conf, "repos: [{name: a/b}]\ngithub: {token_env: PERFBOT_TEST_NO_SUCH_TOKEN}\n")
	sqlite := filepath.Join(t.TempDir(), "perfbot.db")
	t.Setenv("PERFBOT_DB", "")
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"serve"}, "--config is required"},
		{[]string{"worker", "--config", conf}, "no database"},
		{[]string{"serve", "--config", conf, "--db", sqlite}, "PostgreSQL"},
		{[]string{"worker", "--config", conf, "--db", "postgres://127.0.0.1:1/x"}, "PERFBOT_TEST_NO_SUCH_TOKEN"},
		{[]string{"pr", "--repo", "nope", "--pr", "1"}, "--repo"},
		{[]string{"pr", "--repo", "a/b"}, "--pr is required"},
		{[]string{"pr", "--repo", "a/b", "--pr", "3", "--token-env", "PERFBOT_TEST_NO_SUCH_TOKEN"}, "set PERFBOT_TEST_NO_SUCH_TOKEN"},
	}
	for _, tc := range cases {
		_, errOut, code := perfbot(t, tc.args...)
		if code != exitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 mentioning %q", tc.args, code, errOut, tc.want)
		}
	}
}

func TestPRModeCommentsOnceAndSetsAStatus(t *testing.T) {
	gh := githubtest.New(t)
	t.Setenv("PERFBOT_TEST_PR_TOKEN", githubtest.DefaultToken)
	repo := workspacetest.New(t)
	script, _ := json.Marshal(`v=$(cat value); echo "BenchmarkX/phase=a 1 $((v + $$ % 7)) ns/op"; echo "BenchmarkX/phase=total 1 $((v + 2000 + $$ % 11)) ns/op"`)
	base := repo.Commit(t, "base", map[string]string{
		".perfbot.yml": fmt.Sprintf("build:\n  - [\"true\"]\nbenchmarks:\n  - name: sh\n    command: [sh, -c, %s]\ncount: 8\nwarmup: 0\nmax_count: 8\n", script),
		"value":        "1000\n",
	})
	head := repo.Commit(t, "slower", map[string]string{"value": "1250\n"})
	gh.AddPullRequest(githubtest.PR{Owner: "acme", Repo: "prover", Number: 3, BaseSHA: base, HeadSHA: head})
	env := newRunEnv(t)
	args := env.args("pr", "--repo", "acme/prover", "--pr", "3", "--source", repo.Dir, "--api-url", gh.URL()+"/",
		"--token-env", "PERFBOT_TEST_PR_TOKEN", "--format", "markdown", "--fail-on-regression")

	for round := 1; round <= 2; round++ {
		out, errOut, code := perfbot(t, args...)
		if code != exitRegression || !strings.Contains(out, "### perfbot: regression") {
			t.Fatalf("round %d: exit %d, stdout %q, stderr %s; want exit 1 and the regression report", round, code, out, errOut)
		}
		var ours []githubtest.IssueComment
		for _, c := range gh.Comments("acme", "prover", 3) {
			if strings.Contains(c.Body, render.SummaryMarker) {
				ours = append(ours, c)
			}
		}
		if len(ours) != 1 || ours[0].User != githubtest.TokenUser {
			t.Fatalf("round %d: %d perfbot comments %+v; want one, by the token's user", round, len(ours), ours)
		}
		statuses := gh.Statuses("acme", "prover", head)
		last := statuses[len(statuses)-1]
		if statuses[0].State != "pending" || last.State != "failure" || last.Context != "perfbot" || !strings.HasPrefix(last.Description, "Regression.") {
			t.Errorf("round %d: statuses %+v; want pending first, then failure with the headline", round, statuses)
		}
	}

	// A head that no longer exists: the pull request is told, exit 2.
	gone := strings.Repeat("e", 40)
	gh.SetHead("acme", "prover", 3, gone)
	_, errOut, code := perfbot(t, args...)
	if code != exitUsage || !strings.Contains(errOut, "unknown revision") {
		t.Errorf("gone head: exit %d, stderr %q; want exit 2", code, errOut)
	}
	statuses := gh.Statuses("acme", "prover", gone)
	if len(statuses) == 0 || statuses[len(statuses)-1].State != "error" {
		t.Errorf("gone head: statuses %+v; want an error status", statuses)
	}
	for _, c := range gh.Comments("acme", "prover", 3) {
		if strings.Contains(c.Body, render.SummaryMarker) && !strings.Contains(c.Body, "no longer exists") {
			t.Errorf("gone head: the comment does not say the revision is gone:\n%s", c.Body)
		}
	}
}

// A repository's config: in the server config, inline or as a file next
// to it, is what its jobs measure with; a repository without one keeps
// its own .perfbot.yml.
func TestServerConfigGivesARepositoryItsMeasurementConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, filepath.Join(dir, "prover.yml"), workConfig)
	path := filepath.Join(dir, "server.yml")
	write(t, path, `repos:
  - name: acme/prover
    config: prover.yml
  - name: acme/inline
    config:
      build: [[make]]
      benchmarks:
        - name: bench
          command: [./bench]
      count: 7
  - name: acme/own
`)
	c, err := loadBotConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	deps := &jobDeps{runner: &runner.Runner{DataDir: dir}, configs: c.externalConfigs()}
	file, inline, own := deps.runnerFor("acme/prover"), deps.runnerFor("ACME/Inline"), deps.runnerFor("acme/own")
	// Sources are shown in public comments: no server paths in them.
	if want := "prover.yml (the server config's config: of acme/prover)"; file.Config == nil || file.Config.Source != want {
		t.Errorf("acme/prover's config %+v, want prover.yml's", file.Config)
	}
	if inline.Config == nil || !strings.HasPrefix(inline.Config.Source, "the server config's inline config: of acme/inline (line ") {
		t.Errorf("acme/inline's config %+v, want the inline one (names are not case-sensitive)", inline.Config)
	}
	if own.Config != nil || own != deps.runner || file.DataDir != dir {
		t.Errorf("acme/own got %+v; want the shared runner, no config", own.Config)
	}
	if deps.runner.Config != nil {
		t.Error("the shared runner was changed")
	}
}
