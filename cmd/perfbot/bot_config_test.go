package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/analysis/render"
	"github.com/perfbot/perfbot/github/githubtest"
	"github.com/perfbot/perfbot/runner"
	"github.com/perfbot/perfbot/runner/workspace/workspacetest"
)

// configRepo is one of the repositories of
// TestBotMeasuresWithTheServerConfigsPerRepositoryConfig: not perfbot,
// with no .perfbot.yml at its base.
type configRepo struct {
	name   string // the name after acme/
	pr     int
	repo   *workspacetest.Repo
	config string // its config: in the server config, YAML lines; "" for none
	// loops are the printf program's parse, solve and emit loops at base
	// and at head.
	base, head [3]int
	planted    string // the phase head slows down; "" for none
	baseSHA    string
	headSHA    string
}

// headConfig is the .perfbot.yml each pull request's head adds: valid, but
// measuring differently from the server's config (another benchmark name,
// another pattern, 3 runs a side). perfbot must never read it.
var headConfig = strings.NewReplacer(
	"name: work", "name: decoy",
	`(?P<phase>\w+)`, `(?P<phase>parse|emit)`,
	"count: 10", "count: 3",
	"max_count: 10", "max_count: 3",
).Replace(printfConfig)

// A real worker job measures two repositories that are not perfbot and
// have no .perfbot.yml with the config the server config gives each (one
// inline, one a file beside the server config), never with the
// .perfbot.yml their pull requests add; the comment finds the planted
// phase and names the config that measured it. A third repository with
// no config anywhere (its pull request adds a .perfbot.yml, not read
// either) gets one comment and a completed check saying what to write,
// at the first attempt, not retried.
func TestBotMeasuresWithTheServerConfigsPerRepositoryConfig(t *testing.T) {
	if _, err := exec.LookPath("cc"); err != nil {
		t.Skip("no C compiler (cc) here: the measured program is C")
	}
	const n = 10_000_000
	inline := &configRepo{name: "c-inline", pr: 41, repo: workspacetest.New(t), planted: "solve",
		base: [3]int{n, 2 * n, n}, head: [3]int{n, 4 * n, n}}
	file := &configRepo{name: "c-file", pr: 42, repo: workspacetest.New(t), planted: "emit",
		base: [3]int{n, 2 * n, n}, head: [3]int{n, 2 * n, 2 * n}}
	none := &configRepo{name: "c-none", pr: 43, repo: workspacetest.New(t),
		base: [3]int{n / 10, n / 10, n / 10}, head: [3]int{n / 10, n / 5, n / 10}}
	inline.config = "    config:\n" + indent(printfConfig, "      ")
	file.config = "    config: measure/work.yml\n"
	repos := []*configRepo{inline, file, none}

	var reposYAML strings.Builder
	for _, r := range repos {
		fmt.Fprintf(&reposYAML, "  - name: %s/%s\n    clone_url: %q\n    queue: e2e\n%s", e2eOwner, r.name, r.repo.URL(), r.config)
	}
	e := startBot(t, botOptions{repos: reposYAML.String(), files: map[string]string{"measure/work.yml": printfConfig}})

	for _, r := range repos {
		r.baseSHA = r.repo.Commit(t, "work: three phases", map[string]string{
			"work.c": fmt.Sprintf(printfProgram, r.base[0], r.base[1], r.base[2])})
		r.repo.Git(t, "checkout", "--quiet", "-b", "feature")
		r.headSHA = r.repo.Commit(t, "slower, measured my way", map[string]string{
			"work.c":       fmt.Sprintf(printfProgram, r.head[0], r.head[1], r.head[2]),
			".perfbot.yml": headConfig,
		})
		e.gh.AddPullRequest(githubtest.PR{Owner: e2eOwner, Repo: r.name, Number: r.pr, BaseSHA: r.baseSHA, HeadRef: "feature", HeadSHA: r.headSHA})
	}
	start := time.Now()
	for _, r := range repos {
		payload := e.pullRequestPayloadOf(r.name, "opened", r.pr, r.baseSHA, r.headSHA)
		if code, body := e.post(t, "pull_request", e.nextDelivery(), payload); code != http.StatusAccepted {
			t.Fatalf("%s opened: %d %q, want 202", r.name, code, body)
		}
	}
	e.waitFor(t, "the three jobs to finish and their checks to complete", 240*time.Second, func() bool {
		states := e.jobStates(t)
		for _, r := range repos {
			c, _ := e.checkOf(r.name, r.headSHA)
			if st := states[r.headSHA]; c.Status != "completed" || st != "completed" && st != "cancelled" && st != "discarded" {
				return false
			}
		}
		return true
	})
	t.Logf("three pull requests answered in %s", time.Since(start).Round(time.Millisecond))

	confLines := strings.Split(readFile(t, e.conf), "\n")
	wantHash := mustConfig(t, printfConfig).Hash()
	decoyHash := mustConfig(t, headConfig).Hash()
	if wantHash == decoyHash {
		t.Fatal("the head's config hashes as the server's: it would not tell them apart")
	}
	for _, r := range []*configRepo{inline, file} {
		// The check failed on the regression, once, by the App.
		c, nc := e.checkOf(r.name, r.headSHA)
		if nc != 1 || c.Conclusion != "failure" || !strings.HasPrefix(c.Title, "Regression.") || !strings.Contains(c.Title, r.planted) || c.AppID != e2eAppID {
			t.Errorf("%s: %d check runs, last %+v; want one, a failure on a regression in %s, by the App", r.name, nc, c, r.planted)
		}
		if states := e.jobStates(t); states[r.headSHA] != "completed" {
			t.Errorf("%s: job %s, want completed", r.name, states[r.headSHA])
		}

		// One comment, a regression whose verdict line names the planted
		// phase (and the total it is part of) and no other, measured as
		// the server's config says.
		comments := e.perfbotCommentsOf(r.name, r.pr)
		if len(comments) != 1 || comments[0].User != githubtest.AppUser {
			t.Fatalf("%s: perfbot comments %+v; want one, by the App", r.name, comments)
		}
		body := comments[0].Body
		if !strings.Contains(body, "### perfbot: regression") {
			t.Errorf("%s: comment is not a regression report:\n%s", r.name, body)
		}
		verdict := lineWith(body, "**Verdict: regression.**")
		for _, ph := range []string{"parse", "solve", "emit"} {
			if strings.Contains(verdict, ph) != (ph == r.planted) {
				t.Errorf("%s: verdict line %q; want it to name %s, the planted phase, alone", r.name, verdict, r.planted)
			}
		}
		measured := regexp.MustCompile("Measured as `([^`]+)` says\\.").FindStringSubmatch(body)
		if measured == nil {
			t.Fatalf("%s: the comment does not say which config measured it:\n%s", r.name, body)
		}
		source := measured[1]
		switch r {
		case inline:
			// The source names the server config and the line where the
			// repository's config: begins.
			// It never names the server's files: comments are public.
			m := regexp.MustCompile(`^the server config's inline config: of acme/c-inline \(line (\d+)\)$`).FindStringSubmatch(source)
			line := 0
			if m != nil {
				line, _ = strconv.Atoi(m[1])
			}
			if line < 2 || line > len(confLines) || strings.TrimSpace(confLines[line-2]) != "config:" || strings.TrimSpace(confLines[line-1]) != "build:" {
				t.Errorf("%s: measured as %q; want the inline config: of acme/c-inline in %s, at its first line", r.name, source, e.conf)
			}
		case file:
			if want := "measure/work.yml (the server config's config: of acme/c-file)"; source != want {
				t.Errorf("%s: measured as %q, want %q", r.name, source, want)
			}
		}
		if !strings.Contains(c.Summary, "Measured as `"+source+"` says.") {
			t.Errorf("%s: the check's summary does not name the config %q:\n%s", r.name, source, c.Summary)
		}
		if strings.Contains(body, "decoy") || strings.Contains(body, ".perfbot.yml at") {
			t.Errorf("%s: the comment mentions the head's .perfbot.yml:\n%s", r.name, body)
		}

		// The stored comparison: the planted phase regressed by about
		// +100%, the others were not found to move, and every row is of
		// the server config's benchmark.
		rep := e.storedReport(t, r.repo.URL(), r.headSHA)
		if rep.Verdict != analysis.VerdictRegression || rep.Config != source {
			t.Errorf("%s: stored report %s measured as %q; want a regression measured as %q", r.name, rep.Verdict, rep.Config, source)
		}
		phases := map[string]analysis.Row{}
		for _, row := range rep.Phases {
			if row.Benchmark != "work" && row.Benchmark != "process/benchmark=work" {
				t.Errorf("%s: stored row of benchmark %q; want the server config's work (and its process metrics) alone", r.name, row.Benchmark)
			}
			if row.Unit == "sec/op" {
				phases[row.Phase] = row
			}
		}
		if got := slices.Sorted(maps.Keys(phases)); !slices.Equal(got, []string{"emit", "parse", "solve", "total"}) {
			t.Errorf("%s: sec/op phases %v; want the four the server config's pattern reads", r.name, got)
		}
		for ph, row := range phases {
			switch {
			case ph == r.planted:
				if row.Verdict != analysis.VerdictRegression || row.Change() < 60 || row.Change() > 150 {
					t.Errorf("%s: %s %s %+.1f%%; want the planted +100%% regression", r.name, ph, row.Verdict, row.Change())
				}
			case ph != "total":
				if row.Verdict == analysis.VerdictRegression || row.Verdict == analysis.VerdictImprovement {
					t.Errorf("%s: %s %s %+.1f%%; want no change", r.name, ph, row.Verdict, row.Change())
				}
			}
		}

		// Every stored run of both sides ran under the server's config:
		// its hash, its count, its benchmark.
		runs := e.compareRuns(t, r.repo.URL())
		want := map[string]string{r.baseSHA + " " + wantHash: "10 ok", r.headSHA + " " + wantHash: "10 ok"}
		if fmt.Sprint(runs) != fmt.Sprint(want) {
			t.Errorf("%s: stored compare runs (commit config-hash: count status) %v;\nwant %v: 10 ok runs a side under the server config's hash %.12s (the head's file hashes %.12s)",
				r.name, runs, want, wantHash, decoyHash)
		}
		if b := e.sampleBenchmarks(t, r.repo.URL()); !slices.Equal(b, []string{"process/benchmark=work", "work"}) {
			t.Errorf("%s: stored samples' benchmarks %v; want work and its process metrics alone", r.name, b)
		}
	}

	// The repository without a config: one completed check and one
	// comment saying what to write, the job not retried, nothing run.
	c, nc := e.checkOf(none.name, none.headSHA)
	if nc != 1 || c.Conclusion != "action_required" || c.Title != "No perfbot config" || !strings.Contains(c.Summary, "Commit a `.perfbot.yml`") {
		t.Errorf("%s: %d check runs, last %+v; want one, action_required, saying to add a config", none.name, nc, c)
	}
	comments := e.perfbotCommentsOf(none.name, none.pr)
	if len(comments) != 1 {
		t.Fatalf("%s: %d perfbot comments; want one", none.name, len(comments))
	}
	body := comments[0].Body
	for _, want := range []string{"### perfbot: could not compare", "has no `.perfbot.yml`", "`" + none.baseSHA[:12] + "`",
		"Commit a `.perfbot.yml` to the base branch", "a `config:` in the server config", "A pull request's own `.perfbot.yml` is not read"} {
		if !strings.Contains(body, want) {
			t.Errorf("%s: the comment lacks %q:\n%s", none.name, want, body)
		}
	}
	if strings.Contains(strings.ToLower(body), "regression") || strings.Contains(body, "pass --config") || strings.Contains(body, "attempt") ||
		strings.Contains(body, none.repo.Dir) {
		t.Errorf("%s: the comment reads as a regression, a retry or the command line's error (with the worker's clone path):\n%s", none.name, body)
	}
	var attempt int
	var state string
	if err := e.db.QueryRow(`SELECT attempt, state::text FROM river_job WHERE kind = 'perfbot_compare' AND args->>'head_sha' = $1`, none.headSHA).Scan(&attempt, &state); err != nil {
		t.Fatal(err)
	}
	if attempt != 1 || state != "cancelled" {
		t.Errorf("%s: job attempt %d, %s; want one attempt, not retried (cancelled)", none.name, attempt, state)
	}
	if runs := e.compareRuns(t, none.repo.URL()); len(runs) != 0 {
		t.Errorf("%s: stored runs %v; want none", none.name, runs)
	}
}

// pullRequestPayloadOf is pullRequestPayload for the repository
// acme/name.
func (e *botEnv) pullRequestPayloadOf(name, action string, number int, baseSHA, headSHA string) map[string]any {
	p := e.pullRequestPayload(action, number, baseSHA, headSHA)
	// One map, shared by repository, base.repo and head.repo.
	repo := p["repository"].(map[string]any)
	repo["id"] = 1296269 + number
	repo["name"], repo["full_name"] = name, e2eOwner+"/"+name
	repo["clone_url"] = "https://github.com/" + e2eOwner + "/" + name + ".git"
	return p
}

func (e *botEnv) perfbotCommentsOf(name string, number int) []githubtest.IssueComment {
	var out []githubtest.IssueComment
	for _, c := range e.gh.Comments(e2eOwner, name, number) {
		if strings.Contains(c.Body, render.SummaryMarker) {
			out = append(out, c)
		}
	}
	return out
}

// checkOf returns the last check run on sha of acme/name and how many
// there are.
func (e *botEnv) checkOf(name, sha string) (githubtest.CheckRun, int) {
	runs := e.gh.CheckRuns(e2eOwner, name, sha)
	if len(runs) == 0 {
		return githubtest.CheckRun{}, 0
	}
	return runs[len(runs)-1], len(runs)
}

// storedReport returns the one stored comparison of head in the
// repository the runner stores as repo (its clone URL).
func (e *botEnv) storedReport(t *testing.T, repo, head string) analysis.Report {
	t.Helper()
	var reports []string
	rows, err := e.db.Query(`SELECT c.report::text FROM comparisons c JOIN repos r ON r.id = c.repo_id WHERE r.name = $1 AND c.head_sha = $2`, repo, head)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		reports = append(reports, s)
	}
	if len(reports) != 1 {
		t.Fatalf("%d stored comparisons of %s in %s; want one", len(reports), head, repo)
	}
	var rep analysis.Report
	if err := json.Unmarshal([]byte(reports[0]), &rep); err != nil {
		t.Fatal(err)
	}
	return rep
}

// compareRuns counts repo's stored compare runs by "commit config-hash"
// and status: "10 ok".
func (e *botEnv) compareRuns(t *testing.T, repo string) map[string]string {
	t.Helper()
	rows, err := e.db.Query(`SELECT r.commit_sha, r.config_hash, r.status, count(*) FROM runs r JOIN repos p ON p.id = r.repo_id
		WHERE p.name = $1 AND r.kind = 'compare' GROUP BY r.commit_sha, r.config_hash, r.status`, repo)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var sha, hash, status string
		var n int
		if err := rows.Scan(&sha, &hash, &status, &n); err != nil {
			t.Fatal(err)
		}
		k := sha + " " + hash
		out[k] = strings.TrimSpace(out[k] + fmt.Sprintf(" %d %s", n, status))
	}
	return out
}

// sampleBenchmarks returns the distinct benchmark names of repo's stored
// samples, sorted.
func (e *botEnv) sampleBenchmarks(t *testing.T, repo string) []string {
	t.Helper()
	rows, err := e.db.Query(`SELECT DISTINCT s.benchmark FROM samples s JOIN runs r ON r.id = s.run_id JOIN repos p ON p.id = r.repo_id
		WHERE p.name = $1 ORDER BY 1`, repo)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var b string
		if err := rows.Scan(&b); err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

func mustConfig(t *testing.T, yml string) *runner.Config {
	t.Helper()
	c, err := runner.ParseConfig([]byte(yml))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// indent prefixes each non-empty line of s.
func indent(s, prefix string) string {
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) != "" {
			lines[i] = prefix + l
		}
	}
	return strings.Join(lines, "")
}

// lineWith returns the first line of s that contains sub, or "".
func lineWith(s, sub string) string {
	for l := range strings.SplitSeq(s, "\n") {
		if strings.Contains(l, sub) {
			return l
		}
	}
	return ""
}
