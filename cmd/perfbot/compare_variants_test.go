package main

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/analysis/render"
	"github.com/perfbot/perfbot/runner/workspace/workspacetest"
)

// slowScript prints phases a and b and their total; its first argument
// --slow makes b 20% slower (2400 ns instead of 2000), a not at all.
const slowScript = `b=2000; [ "$1" = --slow ] && b=2400
echo "BenchmarkX/phase=a 1 $((1000 + $$ % 7)) ns/op"
echo "BenchmarkX/phase=b 1 $((b + $$ % 7)) ns/op"
echo "BenchmarkX/phase=total 1 $((1000 + b + $$ % 11)) ns/op"`

// variantRepo makes a repository whose one benchmark runs slowScript
// (sh -c SCRIPT sh ARGS…, so variant arguments are $1…), 6 runs a side,
// and whose build appends a line to the returned log.
func variantRepo(t *testing.T) (dir, sha, buildLog string) {
	t.Helper()
	buildLog = filepath.Join(t.TempDir(), "builds.log")
	config := "build:\n  - [sh, -c, " + quote("echo built >> "+buildLog) + "]\n" +
		"benchmarks:\n  - name: sh\n    command: [sh, -c, " + quote(slowScript) + ", sh]\n" +
		"count: 6\nwarmup: 1\nmax_count: 6\ntimeout: 30s\n"
	r := workspacetest.New(t)
	sha = r.Commit(t, "a benchmark with a slow variant", map[string]string{".perfbot.yml": config})
	return r.Dir, sha, buildLog
}

// exportedB returns phase b's values in an export, in seconds.
func exportedB(t *testing.T, out string) []float64 {
	t.Helper()
	var vals []float64
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) == 4 && f[0] == "BenchmarkX/phase=b" {
			v, err := strconv.ParseFloat(f[2], 64)
			if err != nil {
				t.Fatalf("export line %q: %v", l, err)
			}
			vals = append(vals, v)
		}
	}
	return vals
}

func TestCompareVariantsOfOneRevision(t *testing.T) {
	t.Parallel()
	dir, sha, buildLog := variantRepo(t)
	env := newRunEnv(t)

	// --head-args alone: head is base, run with --slow; b regressed.
	out, errOut, code := perfbot(t, env.args("compare", "--repo", dir, "--base", sha, "--head-args=--slow",
		"--format", "json", "--fail-on-regression")...)
	if code != exitRegression {
		t.Fatalf("exit %d, want 1 (regression): %s\n%s", code, errOut, out)
	}
	rep := decodeReport(t, out)
	if rep.Base != sha || rep.Head != sha || rep.BaseArgs != nil || !slices.Equal(rep.HeadArgs, []string{"--slow"}) {
		t.Errorf("report compares %s %q with %s %q; want %s without and with --slow", rep.Base, rep.BaseArgs, rep.Head, rep.HeadArgs, sha)
	}
	checkVariantRows(t, rep, analysis.VerdictRegression, 20)
	if b, err := os.ReadFile(buildLog); err != nil || strings.Count(string(b), "built") != 1 {
		t.Errorf("build log %q (%v); want one build of the one revision", b, err)
	}

	// Each variant's runs are stored apart: export prints the config as
	// written by default, the --slow variant with --args.
	out, errOut, code = perfbot(t, env.args("export", "--repo", dir, "--rev", sha)...)
	if b := exportedB(t, out); code != 0 || len(b) != 6 || slices.Max(b) > 2.1e-6 {
		t.Errorf("export: exit %d, b = %v; want 6 runs near 2000 ns: %s", code, b, errOut)
	}
	out, errOut, code = perfbot(t, env.args("export", "--repo", dir, "--rev", sha, "--args", "--slow")...)
	if b := exportedB(t, out); code != 0 || len(b) != 6 || slices.Min(b) < 2.35e-6 {
		t.Errorf("export --args --slow: exit %d, b = %v; want 6 runs near 2400 ns: %s", code, b, errOut)
	}
	_, errOut, code = perfbot(t, env.args("export", "--repo", dir, "--rev", sha, "--args", "--fast")...)
	if code != exitUsage || !strings.Contains(errOut, "no ok runs with args --fast") {
		t.Errorf("export of a variant never run: exit %d, stderr %q", code, errOut)
	}

	// Swapped, the same change is an improvement, and the text report
	// names each side's arguments.
	out, errOut, code = perfbot(t, env.args("compare", "--repo", dir, "--base", sha, "--base-args", "--slow", "--head-args", "",
		"--fail-on-regression")...)
	if code != 0 {
		t.Fatalf("swapped: exit %d, want 0: %s\n%s", code, errOut, out)
	}
	short := sha[:7]
	for _, want := range []string{"perfbot: improvement", short + " with --slow", short + " with no extra args"} {
		if !strings.Contains(out, want) {
			t.Errorf("swapped text report lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "A/A") {
		t.Errorf("text report warns of an A/A comparison:\n%s", out)
	}
	out, _, _ = perfbot(t, env.args("compare", "--repo", dir, "--base", sha, "--base-args", "--slow", "--format", "json")...)
	checkVariantRows(t, decodeReport(t, out), analysis.VerdictImprovement, -100.0/6)
	if b, _ := os.ReadFile(buildLog); strings.Count(string(b), "built") != 1 {
		t.Errorf("build log %q; want the first build reused", b)
	}
}

// checkVariantRows checks that b changed by about wantPct with the verdict
// want, and a not at all.
func checkVariantRows(t *testing.T, rep *analysis.Report, want analysis.Verdict, wantPct float64) {
	t.Helper()
	if rep.Verdict != want {
		t.Errorf("verdict %s, want %s; warnings %v", rep.Verdict, want, rep.Warnings)
	}
	for _, w := range rep.Warnings {
		if strings.Contains(w, "A/A") {
			t.Errorf("A/A warning for two variants: %s", w)
		}
	}
	seen := 0
	for _, row := range rep.Phases {
		if row.Benchmark != "X" || row.Unit != "sec/op" {
			continue
		}
		switch row.Phase {
		case "b":
			seen++
			if row.Verdict != want || row.Change() < wantPct-1.5 || row.Change() > wantPct+1.5 {
				t.Errorf("b: %s %+.1f%%, want %s near %+.1f%%", row.Verdict, row.Change(), want, wantPct)
			}
		case "a":
			seen++
			if row.Verdict != analysis.VerdictNoChange {
				t.Errorf("a: %s %+.1f%%, want no change", row.Verdict, row.Change())
			}
		}
	}
	if seen != 2 {
		t.Errorf("rows of phases a and b: %d, want 2: %+v", seen, rep.Phases)
	}
}

func TestCompareVariantArgsBadInputExitsTwoAndStoresNothing(t *testing.T) {
	t.Parallel()
	dir, sha, _ := variantRepo(t)
	env := newRunEnv(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--base-args", "--slow", "--head-args", " --slow "}, "--base-args and --head-args are the same (--slow) on one revision: nothing to compare"},
		{[]string{"--base-args", "", "--head-args", ""}, "the same (no arguments) on one revision"},
		{[]string{"--head-args", "'--slow"}, "--head-args: unterminated single quote"},
		{[]string{"--base-args", `"--slow`}, "--base-args: unterminated double quote"},
		{[]string{"--head", sha, "--base-args", "x", "--head-args", "x"}, "nothing to compare: base and head are both " + sha[:12]},
		{[]string{"--head", "HEAD", "--base-args", "x y", "--head-args", "x  y"}, "nothing to compare"},
	} {
		args := append([]string{"compare", "--repo", dir, "--base", sha}, tc.args...)
		_, errOut, code := perfbot(t, env.args(args...)...)
		if code != exitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 saying %q", tc.args, code, errOut, tc.want)
		}
	}
	_, errOut, code := perfbot(t, env.args("export", "--repo", dir, "--rev", sha, "--args", "'x")...)
	if code != exitUsage || !strings.Contains(errOut, "--args: unterminated single quote") {
		t.Errorf("export --args with a bad quote: exit %d, stderr %q", code, errOut)
	}
	for _, args := range [][]string{nil, {"--args", "--slow"}, {"--args", "x"}} {
		out, _, _ := perfbot(t, env.args(append([]string{"export", "--repo", dir, "--rev", sha}, args...)...)...)
		if strings.Contains(out, "Benchmark") {
			t.Errorf("bad input stored runs (export %q):\n%s", args, out)
		}
	}
}

func TestSplitArgsSplitsAsAShellWould(t *testing.T) {
	t.Parallel()
	for in, want := range map[string][]string{
		"":                           nil,
		"   ":                        nil,
		"--lc-storage inline":        {"--lc-storage", "inline"},
		" \t--a\n  --b  ":            {"--a", "--b"},
		`--name 'two words' ""`:      {"--name", "two words", ""},
		`"a \"b\" \\c \x" d'e'f`:     {`a "b" \c \x`, "def"},
		`it\'s a\ b`:                 {"it's", "a b"},
		`--x=''`:                     {"--x="},
		`'$HOME' "$HOME"`:            {"$HOME", "$HOME"},
		`--re='^a|b$' --glob="*.go"`: {"--re=^a|b$", "--glob=*.go"},
	} {
		got, err := splitArgs(in)
		if err != nil || !slices.Equal(got, want) || (want == nil) != (got == nil) {
			t.Errorf("splitArgs(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for in, want := range map[string]string{
		`'open`:    "unterminated single quote",
		`"open`:    "unterminated double quote",
		`"a\"`:     "unterminated double quote",
		`trail\`:   "lone backslash",
		`a 'b' 'c`: "unterminated single quote",
	} {
		if _, err := splitArgs(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("splitArgs(%q) = %v; want an error saying %q", in, err, want)
		}
	}
	// What a report prints splits back into the same arguments.
	for _, args := range [][]string{
		{"--lc-storage", "inline"}, {"", "a b", "it's", `back\slash`, `"dq"`, "$x", "tab\there"},
	} {
		got, err := splitArgs(render.FormatArgs(args))
		if err != nil || !slices.Equal(got, args) {
			t.Errorf("splitArgs(FormatArgs(%q)) = %q, %v", args, got, err)
		}
	}
}
