package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfbot/perfbot/runner/workspace/workspacetest"
)

// regressionRepo makes a repository of two commits whose benchmark (a
// script in the tree, so head's own version runs) prints a total twice as
// large at head: a regression no test can miss at 6 runs a side.
func regressionRepo(t *testing.T) (dir, base, head string) {
	t.Helper()
	r := workspacetest.New(t)
	cfg := "benchmarks:\n  - name: sh\n    command: [sh, bench.sh]\ncount: 6\nwarmup: 0\nmax_count: 6\ntimeout: 30s\n"
	bench := func(v int) string {
		return "echo \"BenchmarkX/phase=total 1 $((" + itoa(v) + " + $$ % 7)) ns/op\"\n"
	}
	base = r.Commit(t, "base", map[string]string{".perfbot.yml": cfg, "bench.sh": bench(1000)})
	head = r.Commit(t, "twice as slow", map[string]string{"bench.sh": bench(2000)})
	return r.Dir, base, head
}

// Every row of the exit-status table (perfbot --help) happens as it says.
func TestExitCodesAreTheTablesForEachCase(t *testing.T) {
	t.Parallel()
	aa, aaSHA := shellRepo(t, shellConfig("true", steady, 6, 6, ""))
	broken, brokenSHA := shellRepo(t, shellConfig("echo 'undefined: frobnicate' >&2; exit 1", steady, 6, 6, ""))
	slowBuild, slowSHA := shellRepo(t, shellConfig("sleep 5", steady, 3, 3, ""))
	reg, regBase, regHead := regressionRepo(t)
	cases := []struct {
		name string
		args []string
		code int
		want string // on stderr
	}{
		{"done", []string{"compare", "--repo", aa, "--base", aaSHA, "--head", aaSHA}, exitOK, ""},
		{"a regression without --fail-on-regression", []string{"compare", "--repo", reg, "--base", regBase, "--head", regHead}, exitOK, ""},
		{"a regression with --fail-on-regression", []string{"compare", "--repo", reg, "--base", regBase, "--head", regHead, "--fail-on-regression"},
			exitRegression, "regression found (--fail-on-regression)"},
		{"bad input", []string{"compare", "--repo", aa, "--base", aaSHA, "--count", "-1"}, exitUsage, "must be positive"},
		{"a build failed", []string{"compare", "--repo", broken, "--base", brokenSHA, "--head", brokenSHA}, exitRunsFailed, "runs failed"},
		{"the database unreachable", []string{"compare", "--repo", aa, "--base", aaSHA,
			"--db", "postgres://u@127.0.0.1:1/db?sslmode=disable&connect_timeout=2"}, exitCannotRun, "cannot connect to 127.0.0.1:1"},
		{"--timeout ran out", []string{"compare", "--repo", slowBuild, "--base", slowSHA, "--head", slowSHA, "--timeout", "1s"},
			exitCannotRun, "--timeout 1s ran out"},
	}
	for _, tc := range cases {
		env := newRunEnv(t)
		args := tc.args
		if !strings.Contains(strings.Join(args, " "), "--db") {
			args = env.args(args...)
		} else {
			args = append(args, "--data-dir", env.data, "--quiet")
		}
		_, errOut, code := perfbot(t, args...)
		if code != tc.code || !strings.Contains(errOut, tc.want) {
			t.Errorf("%s: exit %d, stderr %q; want %d saying %q", tc.name, code, errOut, tc.code, tc.want)
		}
	}

	// Interrupted (SIGINT or SIGTERM cancel main's context) mid-build.
	env := newRunEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(500*time.Millisecond, cancel)
	var stderr bytes.Buffer
	err := run(ctx, env.args("compare", "--repo", slowBuild, "--base", slowSHA, "--head", slowSHA), &bytes.Buffer{}, &stderr)
	if code := exitCode(err); code != exitCannotRun || !strings.HasPrefix(stderr.String(), "perfbot: interrupted: ") {
		t.Errorf("interrupted: exit %d, stderr %q; want %d saying interrupted", code, stderr.String(), exitCannotRun)
	}
}

// The table is in perfbot --help and in the README, the same rows.
func TestExitCodeTableIsInTheHelpAndTheReadme(t *testing.T) {
	t.Parallel()
	out, _, code := perfbot(t, "--help")
	if code != 0 || !strings.Contains(out, exitCodes) {
		t.Errorf("perfbot --help (exit %d) lacks the exit-status table:\n%s", code, out)
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range []string{"| 0 | done", "| 1 | a regression, with `--fail-on-regression`", "| 2 | bad input", "| 3 | a build or a run failed", "| 4 | could not run", "| 5 | bisect: the good and the bad end do not differ"} {
		if !strings.Contains(string(readme), row) {
			t.Errorf("README.md has no exit-status row %q", row)
		}
	}
}

// A refusal (exit 2) creates no database, and in one that exists it stores
// nothing: no session, run or comparison. Read-only commands never create
// a database.
func TestRefusalsCreateNoDatabaseAndStoreNothing(t *testing.T) {
	t.Parallel()
	dir, sha := shellRepo(t, shellConfig("true", steady, 6, 6, ""))
	refusals := [][]string{
		{"compare", "--repo", dir, "--base", "no-such-rev"},
		{"compare", "--repo", dir, "--base", sha, "--head", sha, "--base-args", "-x", "--head-args", "-x"},
		{"run", "--repo", dir, "--rev", "no-such-rev"},
		{"calibrate", "--repo", dir, "--rev", "no-such-rev"},
		{"bisect", "--repo", dir, "--good", "no-such-rev", "--bad", sha},
		{"backfill", "--repo", dir, "--since", "all", "--branch", "no-such-branch"},
		{"export", "--repo", dir, "--rev", sha},
		{"trend", "--benchmark", "X", "--phase", "total"},
		{"dashboard", "--listen", "127.0.0.1:0"},
		{"pr", "--repo", "o/r", "--pr", "1", "--token-env", "PERFBOT_TEST_NO_SUCH_TOKEN"},
	}
	for _, args := range refusals {
		data := t.TempDir()
		db := filepath.Join(t.TempDir(), "perfbot.db")
		_, errOut, code := perfbot(t, append(args, "--db", db, "--data-dir", data, "--quiet")...)
		if code != exitUsage {
			t.Errorf("%v: exit %d, want %d\n%s", args, code, exitUsage, errOut)
		}
		if files, _ := filepath.Glob(db + "*"); len(files) != 0 {
			t.Errorf("%v: the refusal left %v", args, files)
		}
	}
	// The same refusals in a database that exists store nothing in it.
	db := filepath.Join(t.TempDir(), "perfbot.db")
	if _, errOut, code := perfbot(t, "migrate", "--db", db); code != 0 {
		t.Fatalf("migrate: exit %d\n%s", code, errOut)
	}
	for _, args := range refusals {
		if args[0] == "export" || args[0] == "trend" || args[0] == "dashboard" {
			continue // they refuse an empty database for having nothing stored, and read only
		}
		if _, errOut, code := perfbot(t, append(args, "--db", db, "--data-dir", t.TempDir(), "--quiet")...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d\n%s", args, code, exitUsage, errOut)
		}
	}
	for _, table := range []string{"sessions", "runs", "comparisons"} {
		if n := countRows(t, db, table); n != 0 {
			t.Errorf("the refusals stored %d rows in %s, want none", n, table)
		}
	}
	// A read-only command on a database with nothing stored says so.
	_, errOut, code := perfbot(t, "export", "--repo", dir, "--rev", sha, "--db", db, "--quiet")
	if code != exitUsage || !strings.Contains(errOut, "no ok runs stored for "+sha[:12]) {
		t.Errorf("export of an empty database: exit %d, stderr %q", code, errOut)
	}
	_, errOut, code = perfbot(t, "export", "--repo", dir, "--rev", sha, "--db", filepath.Join(t.TempDir(), "missing.db"))
	if code != exitUsage || !strings.Contains(errOut, "no database at ") || !strings.Contains(errOut, "nothing is stored there yet") {
		t.Errorf("export of a missing database: exit %d, stderr %q", code, errOut)
	}
}
