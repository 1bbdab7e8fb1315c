package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/analysis/render"
	"github.com/perfbot/perfbot/runner/workspace/workspacetest"
	"github.com/perfbot/perfbot/store/storetest"
)

// shellRepo makes a repository whose .perfbot.yml builds and benchmarks
// with sh one-liners, so a whole compare takes a fraction of a second.
func shellRepo(t *testing.T, config string) (dir, sha string) {
	t.Helper()
	r := workspacetest.New(t)
	sha = r.Commit(t, "fixture", map[string]string{".perfbot.yml": config, "README": "fixture\n"})
	return r.Dir, sha
}

// shellConfig builds with build and runs script as its one benchmark.
func shellConfig(build, script string, count, maxCount int, extra string) string {
	return "build:\n  - [sh, -c, " + quote(build) + "]\n" +
		"benchmarks:\n  - name: sh\n    command: [sh, -c, " + quote(script) + "]\n" +
		"count: " + itoa(count) + "\nwarmup: 0\nmax_count: " + itoa(maxCount) + "\ntimeout: 30s\n" + extra
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }
func itoa(n int) string     { b, _ := json.Marshal(n); return string(b) }

// steady prints two phases whose values vary a little with the process id.
const steady = `echo "BenchmarkX/phase=a 1 $((1000 + $$ % 7)) ns/op"; echo "BenchmarkX/phase=total 1 $((3000 + $$ % 11)) ns/op"`

type runEnv struct{ db, data string }

func newRunEnv(t *testing.T) runEnv {
	return runEnv{db: filepath.Join(t.TempDir(), "perfbot.db"), data: t.TempDir()}
}

func (e runEnv) args(args ...string) []string {
	return append(args, "--db", e.db, "--data-dir", e.data, "--quiet")
}

func decodeReport(t *testing.T, out string) *analysis.Report {
	t.Helper()
	var rep analysis.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("compare JSON: %v\n%s", err, out)
	}
	return &rep
}

func TestCompareBadInputExitsTwoAndStoresNothing(t *testing.T) {
	t.Parallel()
	dir, sha := shellRepo(t, shellConfig("true", steady, 6, 6, ""))
	badCfg, badSHA := shellRepo(t, shellConfig("true", steady, 6, 6, "colour: blue\n"))
	// A benchmark that asks for callgrind where the benchmark finds no
	// valgrind (its PATH has none) is refused before anything builds.
	noValgrind, noValgrindSHA := shellRepo(t, "build:\n  - [\"true\"]\nbenchmarks:\n  - name: sh\n    command: [/bin/sh, -c, "+quote(steady)+"]\n"+
		"    env: {PATH: /nonexistent}\n    callgrind: true\n")
	env := newRunEnv(t)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"compare", "--repo", t.TempDir(), "--base", "HEAD"}, "not a git repository"},
		{[]string{"compare", "--repo", dir, "--base", "no-such-branch"}, `"no-such-branch"`},
		{[]string{"compare", "--repo", dir, "--base", sha, "--head", "--upload-pack=x"}, "revision"},
		{[]string{"compare", "--repo", badCfg, "--base", badSHA, "--head", badSHA}, "colour"},
		{[]string{"compare", "--repo", noValgrind, "--base", noValgrindSHA, "--head", noValgrindSHA},
			"benchmark sh has callgrind: true, but valgrind not found in the benchmark's PATH (/nonexistent): install valgrind 3.19 or later (apt-get install valgrind), or remove callgrind from the benchmark"},
		{[]string{"compare", "--repo", dir}, "--base is required"},
		{[]string{"compare", "--repo", dir, "--base", sha, "--format", "xml"}, "allowed values are text, markdown, json"},
		{[]string{"compare", "--repo", dir, "--base", sha, "--count", "8", "--max-count", "4"}, "below --count"},
		{[]string{"export", "--repo", dir, "--rev", "nope"}, `"nope"`},
	}
	for _, tc := range cases {
		_, errOut, code := perfbot(t, env.args(tc.args...)...)
		if code != exitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 mentioning %q", tc.args, code, errOut, tc.want)
		}
	}
	// A malformed --db is bad input too; an unreachable server is not, but
	// says what it tried, without the password.
	_, errOut, code := perfbot(t, "compare", "--repo", dir, "--base", sha, "--db", "mysql://u:pw@h/db")
	if code != exitUsage || !strings.Contains(errOut, "postgres://") || strings.Contains(errOut, "pw@") {
		t.Errorf("mysql DSN: exit %d, stderr %q", code, errOut)
	}
	_, errOut, code = perfbot(t, "compare", "--repo", dir, "--base", sha, "--quiet",
		"--db", "postgres://u:hunter2@127.0.0.1:1/db?sslmode=disable&connect_timeout=2")
	if code != exitCannotRun || !strings.Contains(errOut, "127.0.0.1:1") || strings.Contains(errOut, "hunter2") {
		t.Errorf("unreachable postgres: exit %d, stderr %q", code, errOut)
	}
	// None of the bad inputs stored a run.
	out, _, _ := perfbot(t, env.args("export", "--repo", dir, "--rev", sha)...)
	if strings.Contains(out, "Benchmark") {
		t.Errorf("bad input stored runs:\n%s", out)
	}
}

func TestCompareReportsFailuresAsFailuresAndExitsThree(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, build, script string
		status              analysis.Status
		detail              string
		config              string // instead of shellConfig(build, script, …)
	}{
		{"build fails", "echo 'undefined: frobnicate' >&2; exit 1", steady, analysis.StatusBuildFailed, "undefined: frobnicate", ""},
		{"garbage output", "true", "echo 'this is not a benchmark'", analysis.StatusNoOutput, "no benchmark", ""},
		{"crash", "true", "echo 'fatal: out of cheese' >&2; exit 3", analysis.StatusCrashed, "out of cheese", ""},
		// A command that does not exist was an error (exit 1, nothing
		// stored, and the bot retried it): it is the commit's failure.
		{"no such command", "", "", analysis.StatusCrashed, "could not start: fork/exec ./no-such-bench: no such file or directory",
			"benchmarks:\n  - name: missing\n    command: [./no-such-bench]\ncount: 6\nwarmup: 0\nmax_count: 6\n"},
	}
	for _, tc := range cases {
		config := tc.config
		if config == "" {
			config = shellConfig(tc.build, tc.script, 6, 6, "")
		}
		dir, sha := shellRepo(t, config)
		env := newRunEnv(t)
		out, errOut, code := perfbot(t, env.args("compare", "--repo", dir, "--base", sha, "--head", sha, "--format", "json")...)
		if code != exitRunsFailed {
			t.Errorf("%s: exit %d, want 3\n%s", tc.name, code, errOut)
			continue
		}
		rep := decodeReport(t, out)
		if rep.Verdict != analysis.VerdictError {
			t.Errorf("%s: verdict %s, want error", tc.name, rep.Verdict)
		}
		found := false
		for _, f := range rep.Failures {
			if f.Status == tc.status && strings.Contains(strings.ToLower(f.Detail), strings.ToLower(tc.detail)) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: failures %+v; want status %s with %q in the detail", tc.name, rep.Failures, tc.status, tc.detail)
		}
		if tc.status == analysis.StatusBuildFailed && (rep.Runs.Base.Total != 1 || rep.Runs.Head.Total != 1) {
			t.Errorf("build failure: %d/%d runs recorded; want only the failed build on each side", rep.Runs.Base.Total, rep.Runs.Head.Total)
		}
	}
}

func TestCompareAddsRunsWhileTooFewUpToTheCap(t *testing.T) {
	t.Parallel()
	dir, sha := shellRepo(t, shellConfig("true", steady, 3, 20, ""))
	env := newRunEnv(t)
	out, errOut, code := perfbot(t, env.args("compare", "--repo", dir, "--base", sha, "--head", sha, "--format", "json", "--max-count", "7")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	rep := decodeReport(t, out)
	// 3 runs a side are too few (6 needed); batches of 2 take it to 5, then
	// 7, the cap given on the command line.
	if rep.Runs.Base.Total != 7 || rep.Runs.Head.Total != 7 {
		t.Errorf("runs %d/%d, want 7/7", rep.Runs.Base.Total, rep.Runs.Head.Total)
	}
	if rep.Verdict != analysis.VerdictNoChange {
		t.Errorf("A/A verdict %s, want no-change; warnings %v", rep.Verdict, rep.Warnings)
	}
}

func TestBaselineRunsBecomeTheNoiseFloor(t *testing.T) {
	t.Parallel()
	dir, sha := shellRepo(t, shellConfig("true", steady, 6, 6, "thresholds:\n  min_history: 3\n  min_change_pct: 0.5\n"))
	env := newRunEnv(t)
	out, errOut, code := perfbot(t, env.args("run", "--repo", dir, "--rev", sha, "--count", "5")...)
	if code != 0 || !strings.Contains(out, "stored 5 baseline runs") {
		t.Fatalf("run: exit %d, out %q: %s", code, out, errOut)
	}
	out, errOut, code = perfbot(t, env.args("compare", "--repo", dir, "--base", sha, "--head", sha, "--format", "json")...)
	if code != 0 {
		t.Fatalf("compare: exit %d: %s", code, errOut)
	}
	rep := decodeReport(t, out)
	for _, row := range rep.Phases {
		if row.Unit == "sec/op" && row.Source != analysis.FloorFromHistory {
			t.Errorf("%s: floor from %q with %d pairs; want it learned from the 5 baselines", row.Key, row.Source, row.Pairs)
		}
	}
	// export --kind baseline prints exactly the 5 baseline runs.
	out, _, code = perfbot(t, env.args("export", "--repo", dir, "--rev", sha, "--kind", "baseline")...)
	if code != 0 || strings.Count(out, "BenchmarkX/phase=a ") != 5 {
		t.Errorf("export baseline: exit %d, %d lines of phase a, want 5:\n%s", code, strings.Count(out, "BenchmarkX/phase=a "), out)
	}
}

func TestCompareOnPostgres(t *testing.T) {
	t.Parallel()
	url := storetest.FreshPostgres(t)
	dir, sha := shellRepo(t, shellConfig("true", steady, 6, 6, ""))
	out, errOut, code := perfbot(t, "compare", "--repo", dir, "--base", sha, "--head", sha, "--format", "markdown",
		"--db", url, "--data-dir", t.TempDir(), "--quiet")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.HasPrefix(out, render.SummaryMarker) || !strings.Contains(out, "no change") {
		t.Errorf("markdown report:\n%s", out)
	}
}

func TestCalibrateReportsEachSeriesNoise(t *testing.T) {
	t.Parallel()
	// Phase a varies with the process id (0..6 ns around 1000), total not
	// at all.
	script := `echo "BenchmarkX/phase=a 1 $((1000 + $$ % 7)) ns/op"; echo "BenchmarkX/phase=total 1 3000 ns/op"`
	dir, sha := shellRepo(t, shellConfig("true", script, 6, 6, ""))
	env := newRunEnv(t)
	out, errOut, code := perfbot(t, env.args("calibrate", "--repo", dir, "--rev", sha, "--count", "8")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "8 runs per side, A/A verdict no-change") {
		t.Errorf("summary line missing:\n%s", out)
	}
	var a, total []string
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) == 9 && f[0] == "X" && f[2] == "sec/op" {
			switch f[1] {
			case "a":
				a = f
			case "total":
				total = f
			}
		}
	}
	if a == nil || total == nil {
		t.Fatalf("no rows for phases a and total:\n%s", out)
	}
	// 16 runs; total never varies, a does (a little).
	if a[3] != "16" || total[3] != "16" || total[5] != "0.00%" || total[7] != "0.00%" || a[5] == "0.00%" {
		t.Errorf("rows a=%v total=%v; want 16 runs each, total with 0%% CV and detectable change, a with some", a, total)
	}
	// The runs a side to see the 1% floor: none for total, which never
	// varies; for a, 2·((z(1−α/2)+z(0.8))·CV·√(π/3)/1%)², from its CV at
	// the default α 0.01 (z(0.995) = 2.5758).
	cv, err := strconv.ParseFloat(strings.TrimSuffix(a[5], "%"), 64)
	if err != nil {
		t.Fatal(err)
	}
	// The table rounds CV to 0.01%, so the runs it implies are known only
	// between those of CV ± 0.005% (at CV 0.20% that straddles 1 and 2).
	runsFor := func(cv float64) int {
		d := (2.5758293035489 + 0.8416212335729143) * cv * math.Sqrt(math.Pi/3) / 1
		return int(math.Ceil(2 * d * d))
	}
	lo, hi := runsFor(cv-0.005), runsFor(cv+0.005)
	got, err := strconv.Atoi(a[8])
	if err != nil || total[8] != "0" || got < lo || got > hi {
		t.Fatalf("runs for the floor: a %s (want %d..%d from its CV %v%%), total %s (want 0)", a[8], lo, hi, cv, total[8])
	}
	if !strings.Contains(out, fmt.Sprintf("needs about %d runs a side (the noisiest: a)", got)) {
		t.Errorf("no suggestion of %d runs a side:\n%s", got, out)
	}
}

func TestCompareFromACloneURLUsesAMirror(t *testing.T) {
	t.Parallel()
	dir, sha := shellRepo(t, shellConfig("true", steady, 6, 6, ""))
	env := newRunEnv(t)
	url := "file://" + dir
	out, errOut, code := perfbot(t, env.args("compare", "--repo", url, "--base", sha, "--head", sha, "--format", "json")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if rep := decodeReport(t, out); rep.Verdict != analysis.VerdictNoChange || rep.Base != sha {
		t.Errorf("verdict %s base %s; want no-change at %s", rep.Verdict, rep.Base, sha)
	}
	mirrors, _ := filepath.Glob(filepath.Join(env.data, "mirrors", "*", "HEAD"))
	if len(mirrors) != 1 {
		t.Errorf("mirror repositories under the data directory: %v; want exactly one", mirrors)
	}
	// Runs are stored under the URL: export finds them by the same --repo.
	out, _, code = perfbot(t, env.args("export", "--repo", url, "--rev", sha)...)
	if code != 0 || strings.Count(out, "BenchmarkX/phase=a ") != 12 {
		t.Errorf("export by URL: exit %d, %d runs of phase a, want 12", code, strings.Count(out, "BenchmarkX/phase=a "))
	}
}

func TestMigrateAppliesOnceAndReportsTheVersion(t *testing.T) {
	t.Parallel()
	sub := filepath.Join(t.TempDir(), "sub")
	db := "sqlite://" + filepath.Join(sub, "perfbot.db")
	// An explicit path's directory is not made (issue 17): exit 2, nothing created.
	if _, errOut, code := perfbot(t, "migrate", "--db", db); code != exitUsage || !strings.Contains(errOut, "directory "+sub+" does not exist") {
		t.Fatalf("migrate into a missing directory: exit %d, err %q; want 2 naming it", code, errOut)
	}
	if _, err := os.Stat(sub); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("migrate made %s: %v", sub, err)
	}
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := perfbot(t, "migrate", "--db", db)
	if code != 0 || !strings.Contains(out, "applied 00001_init.sql") || !strings.Contains(out, "applied 00002_deliveries.sql") ||
		!strings.Contains(out, "applied 00003_profiles.sql") || !strings.Contains(out, "applied 00004_run_tool.sql") ||
		!strings.Contains(out, "applied 00005_run_kind_bisect.sql") || !strings.Contains(out, "applied 00006_reported_changes.sql") ||
		!strings.Contains(out, "applied 00007_samples_run_key.sql") || !strings.Contains(out, "applied 00008_run_spans.sql") || !strings.Contains(out, "applied 00009_sessions.sql") ||
		!strings.Contains(out, "applied 00010_pull_heads.sql") || !strings.Contains(out, "applied 00011_comparison_session.sql") ||
		!strings.Contains(out, "applied 00012_comparison_pr.sql") || !strings.Contains(out, "applied 00013_run_round.sql") ||
		!strings.Contains(out, "schema version 13 (this perfbot knows up to 13)") {
		t.Fatalf("first migrate: exit %d, out %q, err %q", code, out, errOut)
	}
	out, _, code = perfbot(t, "migrate", "--db", db)
	if code != 0 || strings.Contains(out, "applied") || !strings.Contains(out, "schema version 13") {
		t.Errorf("second migrate: exit %d, out %q; want nothing applied", code, out)
	}
	_, errOut, code = perfbot(t, "migrate", "--db", "mysql://x/y")
	if code != exitUsage || !strings.Contains(errOut, "--db") {
		t.Errorf("bad --db: exit %d, err %q", code, errOut)
	}
}
