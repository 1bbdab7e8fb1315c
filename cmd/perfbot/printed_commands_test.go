package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/runner/workspace/workspacetest"
	"github.com/perfbot/perfbot/server/dashboard"
	"github.com/perfbot/perfbot/store"
)

// shellWords splits a command line as a POSIX shell does for the words
// perfbot prints: blanks separate, single quotes group.
func shellWords(t *testing.T, line string) []string {
	t.Helper()
	var words []string
	var cur strings.Builder
	inQuote, inWord := false, false
	for _, r := range line {
		switch {
		case r == '\'':
			inQuote, inWord = !inQuote, true
		case (r == ' ' || r == '\t') && !inQuote:
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
			}
			inWord = false
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if inQuote {
		t.Fatalf("unbalanced quote in %q", line)
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

// runPrinted runs one command line perfbot printed, as printed, with the
// test's database and data directory (where a user's would be the
// defaults), and fails the test on a non-zero exit.
func runPrinted(t *testing.T, env runEnv, line string) string {
	t.Helper()
	line, _, _ = strings.Cut(line, " > ") // the redirection is the shell's
	words := shellWords(t, strings.TrimSpace(line))
	if len(words) < 2 || words[0] != "perfbot" {
		t.Fatalf("not a perfbot command: %q", line)
	}
	out, errOut, code := perfbot(t, env.args(words[1:]...)...)
	if code != 0 {
		t.Errorf("printed command %q: exit %d\n%s", line, code, errOut)
	}
	return out
}

// Every command a report prints runs as printed on a repository that has
// no .perfbot.yml of its own, measured with --config: the bisect
// report's Reproduce commands and the comparison's benchstat steps.
func TestCommandsThatReportsPrintRunAsPrinted(t *testing.T) {
	t.Parallel()
	r := workspacetest.New(t)
	good := r.Commit(t, "c0", map[string]string{"value": "1000\n"})
	bad := r.Commit(t, "c1: slower a", map[string]string{"value": "1300\n"})
	dir := r.Dir
	cfg := filepath.Join(t.TempDir(), "ci.yml")
	if err := os.WriteFile(cfg, []byte("build:\n  - [\"true\"]\nbenchmarks:\n  - name: sh\n    command: [sh, -c, "+quote(stepBench)+"]\n"+
		"count: 6\nwarmup: 0\nmax_count: 8\ntimeout: 30s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := newRunEnv(t)

	out, errOut, code := perfbot(t, env.args("bisect", "--repo", dir, "--good", good, "--bad", bad, "--phase", "a", "--config", cfg, "--format", "json")...)
	if code != 0 {
		t.Fatalf("bisect: exit %d\n%s", code, errOut)
	}
	var rep analysis.BisectReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Reproduce) != 2 {
		t.Fatalf("reproduce: %q", rep.Reproduce)
	}
	for _, line := range rep.Reproduce {
		if !strings.Contains(line, "--config "+cfg) {
			t.Errorf("%q does not pass the config it was measured with", line)
		}
		runPrinted(t, env, line)
	}

	md, errOut, code := perfbot(t, env.args("compare", "--repo", dir, "--base", good, "--head", bad, "--config", cfg, "--format", "markdown")...)
	if code != 0 {
		t.Fatalf("compare: exit %d\n%s", code, errOut)
	}
	var exports int
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "perfbot ") {
			if got := runPrinted(t, env, line); !strings.Contains(got, "BenchmarkX/phase=a") {
				t.Errorf("%q printed no runs:\n%s", line, got)
			}
			exports++
		}
	}
	if exports != 2 {
		t.Errorf("%d perfbot commands in the comment's benchstat steps, want 2:\n%s", exports, md)
	}

	// The dashboard's compare page of the stored comparison: its bisect
	// hint runs as printed, config and all.
	db, err := store.Open(context.Background(), env.db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	srv := httptest.NewServer(dashboard.New(dashboard.Config{Store: db}))
	defer srv.Close()
	var page struct {
		Bisect []struct{ Phase, Command string }
	}
	resp, err := http.Get(srv.URL + "/api/compare?" + url.Values{"repo": {dir}, "base": {good}, "head": {bad}}.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("/api/compare: %d, %v", resp.StatusCode, err)
	}
	if len(page.Bisect) == 0 {
		t.Fatalf("the dashboard printed no bisect command for the regression")
	}
	for _, h := range page.Bisect {
		if !strings.Contains(h.Command, "--config "+cfg) || !strings.Contains(h.Command, "--benchmark ") {
			t.Errorf("dashboard hint %q lacks --config or --benchmark", h.Command)
		}
		runPrinted(t, env, h.Command)
	}
}

// init's closing hint names the repository's own default branch.
func TestInitHintNamesTheRealDefaultBranch(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, args := range [][]string{{"init", "-q", "-b", "master"}, {"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "first"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	_, errOut, code := perfbot(t, "init", "--repo", dir)
	if code != 0 {
		t.Fatalf("init: exit %d\n%s", code, errOut)
	}
	if !strings.Contains(errOut, "perfbot compare --repo "+dir+" --base master --head HEAD") {
		t.Errorf("hint %q: want --base master", errOut)
	}
	if out, err := exec.Command("git", "-C", dir, "rev-parse", "--verify", "master").CombinedOutput(); err != nil {
		t.Errorf("the hinted base does not resolve: %v\n%s", err, out)
	}
}
