package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/runner/workspace/workspacetest"
	"github.com/perfbot/perfbot/store"
)

// stepBench prints phase a and total from the worktree's file "value",
// varying a little with the process id: an sh benchmark whose speed a
// commit sets.
const stepBench = `v=$(cat value); echo "BenchmarkX/phase=a 1 $((v + $$ % 7)) ns/op"; echo "BenchmarkX/phase=total 1 $((v + 2000 + $$ % 11)) ns/op"`

// stepRepo makes a repository of n commits c0 … c(n−1) whose value is
// 1000 before commit stepAt and 1300 from it on (never when stepAt < 0);
// the commits in broken do not build (their build command fails).
func stepRepo(t *testing.T, n, stepAt int, broken ...int) (dir string, shas []string) {
	t.Helper()
	r := workspacetest.New(t)
	cfg := "build:\n  - [sh, -c, " + quote("test ! -e BROKEN || { echo 'syntax error near line 3' >&2; exit 2; }") + "]\n" +
		"benchmarks:\n  - name: sh\n    command: [sh, -c, " + quote(stepBench) + "]\n" +
		"count: 6\nwarmup: 0\nmax_count: 8\ntimeout: 30s\n"
	isBroken := false
	for i := range n {
		v := 1000
		if stepAt >= 0 && i >= stepAt {
			v = 1300
		}
		files := map[string]string{"value": fmt.Sprintf("%d\n", v)}
		if i == 0 {
			files[".perfbot.yml"] = cfg
		}
		brk := false
		for _, b := range broken {
			brk = brk || b == i
		}
		switch {
		case brk && !isBroken:
			files["BROKEN"] = "yes\n"
		case !brk && isBroken:
			files["BROKEN"] = ""
		}
		isBroken = brk
		msg := fmt.Sprintf("c%d", i)
		if i == stepAt {
			msg += ": slower a"
		}
		shas = append(shas, r.Commit(t, msg, files))
	}
	return r.Dir, shas
}

// storedRunCount counts the runs in the SQLite file db.
func storedRunCount(t *testing.T, db string) int {
	t.Helper()
	s, err := store.Open(context.Background(), db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rs, err := s.Runs(context.Background(), store.RunQuery{})
	if err != nil {
		t.Fatal(err)
	}
	return len(rs)
}

func TestBisectCommandFindsTheFirstBadCommitThenReusesItsRuns(t *testing.T) {
	t.Parallel()
	dir, shas := stepRepo(t, 10, 6)
	env := newRunEnv(t)
	out, errOut, code := perfbot(t, env.args("bisect", "--repo", dir, "--good", shas[0], "--bad", shas[9], "--phase", "a", "--format", "json")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep analysis.BisectReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("bisect JSON: %v\n%s", err, out)
	}
	if rep.FirstBad.SHA != shas[6] || rep.LastGood.SHA != shas[5] || !rep.Exact() {
		t.Fatalf("first bad %s after %s; want c6 after c5", rep.FirstBad.SHA, rep.LastGood.SHA)
	}
	if rep.Key.Benchmark != "X" || rep.Key.Phase != "a" || rep.Key.Unit != "sec/op" || rep.Change.Verdict != analysis.VerdictRegression {
		t.Errorf("key %v, change %s; want X/phase=a sec/op, a regression", rep.Key, rep.Change.Verdict)
	}
	if n := rep.MeasuredProbes(); n > 4 {
		t.Errorf("%d measured probes for 9 commits; want at most ceil(log2 9) = 4", n)
	}
	runs := storedRunCount(t, env.db)

	// Text, from the stored runs alone.
	out, errOut, code = perfbot(t, env.args("bisect", "--repo", dir, "--good", shas[0], "--bad", shas[9], "--phase", "a")...)
	if code != 0 {
		t.Fatalf("text: exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"perfbot bisect: first bad commit " + shas[6][:7] + " c6: slower a",
		"against the last good commit " + shas[5][:7],
		"0 runs measured",
		"Reproduce:\n  perfbot compare --repo " + dir + " --base " + shas[5] + " --head " + shas[6] + " --count 6",
		"--phase a --unit sec/op",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q:\n%s", want, out)
		}
	}
	if n := storedRunCount(t, env.db); n != runs {
		t.Errorf("the second bisection stored %d more runs; want none", n-runs)
	}
	// The runs are there for export, as kind bisect.
	exp, _, code := perfbot(t, env.args("export", "--repo", dir, "--rev", shas[6], "--kind", "bisect")...)
	if code != 0 || !strings.Contains(exp, "BenchmarkX/phase=a 1 1.30") {
		t.Errorf("export --kind bisect of c6: exit %d\n%s", code, exp)
	}
}

func TestBisectCommandMarkdownNamesTheRangeThatSkipsLeave(t *testing.T) {
	t.Parallel()
	// c4, the middle of c1 … c8, and c5, the first bad, do not build:
	// c3 is good and c6 bad, and either skipped commit may be the first
	// bad one.
	dir, shas := stepRepo(t, 9, 5, 4, 5)
	env := newRunEnv(t)
	out, errOut, code := perfbot(t, env.args("bisect", "--repo", dir, "--good", shas[0], "--bad", shas[8], "--format", "markdown")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"### perfbot bisect: the first bad commit is one of 3",
		"`" + shas[4][:7] + "` (skipped), `" + shas[5][:7] + "` (skipped), `" + shas[6][:7] + "` (bad)",
		"skipped: build failed: exit status 2",
		"perfbot compare --repo " + dir + " --base " + shas[3] + " --head " + shas[6],
	} {
		if !strings.Contains(out, want) {
			t.Errorf("markdown lacks %q:\n%s", want, out)
		}
	}
}

func TestBisectCommandBadInputExitsTwoAndStoresNothing(t *testing.T) {
	t.Parallel()
	dir, shas := stepRepo(t, 3, 1)
	env := newRunEnv(t)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"bisect", "--repo", dir, "--bad", shas[2]}, "--good is required"},
		{[]string{"bisect", "--repo", dir, "--good", shas[0], "--format", "xml"}, "allowed values are text, markdown, json"},
		{[]string{"bisect", "--repo", dir, "--good", shas[0], "--count", "-1"}, "must be positive"},
		{[]string{"bisect", "--repo", dir, "--good", shas[0], "--count", "8", "--max-count", "4"}, "below --count"},
		{[]string{"bisect", "--repo", dir, "--good", shas[0], "--unit", ""}, "--unit is empty"},
		{[]string{"bisect", "--repo", dir, "--good", shas[0], "extra"}, "takes no arguments"},
		{[]string{"bisect", "--repo", t.TempDir(), "--good", "HEAD~1"}, "not a git repository"},
		{[]string{"bisect", "--repo", dir, "--good", "v0.0.1"}, `good revision: resolve "v0.0.1"`},
		{[]string{"bisect", "--repo", dir, "--good", shas[0], "--bad", "nope"}, `bad revision: resolve "nope"`},
		{[]string{"bisect", "--repo", dir, "--good", shas[2], "--bad", shas[0]}, "is not an ancestor of"},
		{[]string{"bisect", "--repo", dir, "--good", shas[2], "--bad", "HEAD"}, "give a good revision older than the bad one"},
	}
	for _, tc := range cases {
		out, errOut, code := perfbot(t, env.args(tc.args...)...)
		if code != exitUsage || !strings.Contains(errOut, tc.want) || !strings.Contains(errOut, "perfbot bisect --help' for usage") || out != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 saying %q and pointing at --help", tc.args, code, out, errOut, tc.want)
		}
	}
	if n := storedRunCount(t, env.db); n != 0 {
		t.Errorf("bad input stored %d runs", n)
	}
	// A phase the runs do not measure is bad input too, said after the
	// ends' first run, with what they measure.
	out, errOut, code := perfbot(t, env.args("bisect", "--repo", dir, "--good", shas[0], "--bad", shas[2], "--phase", "msm_h")...)
	if code != exitUsage || out != "" || !strings.Contains(errOut, `no phase "msm_h" in sec/op; they measure X/phase=a sec/op, X/phase=total sec/op`) {
		t.Errorf("unknown phase: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if n := storedRunCount(t, env.db); n != 2 {
		t.Errorf("unknown phase: %d runs stored; want the ends' first run each", n)
	}
}

func TestBisectCommandSaysWhenThereIsNothingToBisectOrAnEndDoesNotBuild(t *testing.T) {
	t.Parallel()
	dir, shas := stepRepo(t, 4, -1, 3)
	env := newRunEnv(t)
	out, errOut, code := perfbot(t, env.args("bisect", "--repo", dir, "--good", shas[0], "--bad", shas[2])...)
	if code != exitNoChange || out != "" || !strings.Contains(errOut, "nothing to bisect: good "+shas[0][:12]+" and bad "+shas[2][:12]+" do not differ in X/phase=total sec/op") ||
		!strings.Contains(errOut, "p=") {
		t.Errorf("no change: exit %d, stdout %q, stderr %q; want exit 5 and the comparison's numbers", code, out, errOut)
	}
	out, errOut, code = perfbot(t, env.args("bisect", "--repo", dir, "--good", shas[0], "--bad", shas[3])...)
	if code != exitRunsFailed || out != "" || !strings.Contains(errOut, "the bad end "+shas[3][:12]) || !strings.Contains(errOut, "syntax error near line 3") {
		t.Errorf("broken bad end: exit %d, stdout %q, stderr %q; want exit 3 with the build's output", code, out, errOut)
	}
}

func TestBisectHelpMatchesGolden(t *testing.T) {
	t.Parallel()
	out, errOut, code := perfbot(t, "bisect", "--help")
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	golden(t, "help-bisect", out)
}
