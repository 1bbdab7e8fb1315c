// Package bench_test checks the measurement scripts' own bookkeeping: what
// they count and what they refuse, with real processes and a real git
// repository, but no measurement (that is make bench's and BENCHMARKS.md's).
package bench_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@localhost"}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// prepared returns a repository shaped as compare-fpr.sh's REPO= wants it
// (HEAD~1 the base, HEAD the planted commit).
func prepared(t *testing.T) string {
	dir := t.TempDir()
	git(t, dir, "init", "-q")
	for i, msg := range []string{"base", "planted"} {
		if err := os.WriteFile(filepath.Join(dir, "f"), []byte{byte('0' + i)}, 0o644); err != nil {
			t.Fatal(err)
		}
		git(t, dir, "add", "f")
		git(t, dir, "commit", "-qm", msg)
	}
	return dir
}

func fpr(t *testing.T, env []string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command("bash", append([]string{"compare-fpr.sh"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), code
}

// A comparison whose perfbot fails measured nothing: it must be listed as
// failed and counted neither as a quiet A/A nor as a missed detection (a
// GPU host that lost its binary once read "A/A false alarms: 0 of 20").
func TestCompareFPRLeavesFailedComparisonsOutOfTheCounts(t *testing.T) {
	repo := prepared(t)
	bin := filepath.Join(t.TempDir(), "perfbot")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\necho 'perfbot: cannot run here' >&2\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	outdir := t.TempDir()
	out, code := fpr(t, []string{"REPO=" + repo, "PERFBOT=" + bin}, outdir, "2")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	summary, err := os.ReadFile(filepath.Join(outdir, "summary.txt"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(summary)
	if !strings.Contains(s, "failed, not counted (see OUTDIR's JSON and perfbot's stderr): aa 1 planted 1 aa 2 planted 2") {
		t.Errorf("summary does not list the four failed comparisons:\n%s", s)
	}
	for _, counted := range []string{"A/A false alarms", "found and attributed", "miss:"} {
		if strings.Contains(s, counted) {
			t.Errorf("summary counts failed comparisons (%q):\n%s", counted, s)
		}
	}
}

func TestCompareFPRRefusesBadInput(t *testing.T) {
	repo := prepared(t)
	notRepo := t.TempDir()
	for _, c := range []struct {
		name string
		env  []string
		want string
	}{
		{"missing binary", []string{"REPO=" + repo, "PERFBOT=/nonexistent/perfbot"}, "PERFBOT=/nonexistent/perfbot is not an executable file"},
		{"no repository", []string{"REPO=/nonexistent/repo", "PERFBOT=/bin/true"}, "REPO=/nonexistent/repo is not a directory"},
		{"repository without a base", []string{"REPO=" + notRepo, "PERFBOT=/bin/true"}, "is not a git repository with a base (HEAD~1) and a planted HEAD"},
		{"bad UNTIL", []string{"UNTIL=not a time", "REPO=" + repo, "PERFBOT=/bin/true"}, "UNTIL is a time date -d reads, not 'not a time'"},
		{"bad PLANT_PCT", []string{"PLANT_PCT=5%"}, "PLANT_PCT is a whole percentage, not '5%'"},
		{"bad ORDER", []string{"ORDER=backwards"}, "ORDER is random, abba or alternate, not 'backwards'"},
	} {
		t.Run(c.name, func(t *testing.T) {
			outdir := filepath.Join(t.TempDir(), "out")
			out, code := fpr(t, c.env, outdir, "1")
			if code != 2 || !strings.Contains(out, c.want) {
				t.Errorf("exit %d, output %q; want exit 2 and %q", code, out, c.want)
			}
			if _, err := os.Stat(filepath.Join(outdir, "summary.txt")); err == nil {
				t.Errorf("a refused run wrote a summary")
			}
		})
	}
}
