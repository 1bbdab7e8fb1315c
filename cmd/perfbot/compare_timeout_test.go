package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/runner/workspace/workspacetest"
	"github.com/perfbot/perfbot/store"
)

// A count or a cap whose runs cannot end within --timeout, by this
// machine's stored runs of the config, is refused with exit 2 before
// anything is built or run, saying what would fit; without stored runs
// perfbot cannot tell and does not refuse.
func TestCompareRefusesCountsTheTimeoutCannotHold(t *testing.T) {
	if _, err := exec.LookPath("cc"); err != nil {
		t.Skip("no C compiler (cc) here: the printf program is C")
	}
	t.Parallel()
	r := workspacetest.New(t)
	const n = 20_000_000
	sha := r.Commit(t, "work", map[string]string{"work.c": fmt.Sprintf(printfProgram, n, 2*n, n)})
	data := t.TempDir()
	db := filepath.Join(data, "perfbot.db")
	cfg := filepath.Join(t.TempDir(), "printf.yml")
	if err := os.WriteFile(cfg, []byte(printfConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	args := func(more ...string) []string {
		return append([]string{"compare", "--repo", r.Dir, "--base", sha, "--head", sha, "--db", db, "--data-dir", data, "--config", cfg, "--quiet"}, more...)
	}
	// Nothing stored yet: nothing to judge by, so no refusal.
	if _, errOut, code := perfbot(t, args("--count", "3", "--max-count", "3", "--timeout", "10m")...); code != 0 {
		t.Fatalf("first compare: exit %d\n%s", code, errOut)
	}
	stored := func() (runs, sessions int) {
		s, err := store.Open(context.Background(), db, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		rs, err := s.Runs(context.Background(), store.RunQuery{})
		if err != nil {
			t.Fatal(err)
		}
		return len(rs), countRows(t, db, "sessions")
	}
	before, beforeSessions := stored()
	for _, tc := range []struct {
		args []string
		want []string
	}{
		// 11 runs a side of at least 50 ms each: more than half a second.
		{[]string{"--timeout", "500ms"}, []string{"10 runs a side take about", "that --timeout 500ms leaves after", "1 warm-up round (", "--count"}},
		// 3 runs a side fit 5 s; a cap of 100 does not.
		{[]string{"--count", "3", "--max-count", "100", "--timeout", "5s"}, []string{"the cap of 100 runs a side", "would be cut off", "give at most --max-count"}},
	} {
		_, errOut, code := perfbot(t, args(tc.args...)...)
		if code != exitUsage {
			t.Errorf("%v: exit %d, want %d\n%s", tc.args, code, exitUsage, errOut)
		}
		for _, w := range tc.want {
			if !strings.Contains(errOut, w) {
				t.Errorf("%v: stderr does not say %q:\n%s", tc.args, w, errOut)
			}
		}
	}
	if after, sessions := stored(); after != before || sessions != beforeSessions {
		t.Errorf("%d runs and %d sessions stored by the refused comparisons, want none", after-before, sessions-beforeSessions)
	}
	if _, errOut, code := perfbot(t, args("--timeout", "-1s")...); code != exitUsage || !strings.Contains(errOut, "give a positive duration") {
		t.Errorf("--timeout -1s: exit %d\n%s", code, errOut)
	}
}

// Without stored runs to judge by, a --timeout that cannot hold the runs
// is refused once the builds and the warm-up rounds are done, by the time
// those took, before any run is stored: exit 2 with a count that fits,
// and the database the command created for nothing is removed.
func TestCompareRefusesATimeoutTooShortWithoutHistoryByItsWarmUps(t *testing.T) {
	t.Parallel()
	// Each run sleeps 0.3 s: a warm-up round of both sides takes 0.6 s or
	// more, so 20 rounds need 12 s or more, far beyond 4 s.
	dir, sha := shellRepo(t, strings.Replace(shellConfig("true", "sleep 0.3; "+steady, 20, 20, ""), "warmup: 0", "warmup: 1", 1))
	env := newRunEnv(t)
	_, errOut, code := perfbot(t, env.args("compare", "--repo", dir, "--base", sha, "--head", sha, "--timeout", "4s")...)
	if code != exitUsage {
		t.Fatalf("exit %d, want %d\n%s", code, exitUsage, errOut)
	}
	for _, w := range []string{"20 runs a side take about", "that --timeout 4s leaves after the builds and 1 warm-up round (", "a warm-up round of both sides just took"} {
		if !strings.Contains(errOut, w) {
			t.Errorf("stderr does not say %q:\n%s", w, errOut)
		}
	}
	// The advice is a count that fits in what the 4 s leave (one or more
	// rounds), or, when none does, the timeout 20 runs need; never 0.
	if m := regexp.MustCompile(`give at most --count (\d+),|--count 20 needs a --timeout of at least (\d+)s`).FindStringSubmatch(errOut); m == nil || m[1] == "0" {
		t.Errorf("no usable advice:\n%s", errOut)
	} else if m[2] != "" {
		if n, _ := strconv.Atoi(m[2]); n < 12 {
			t.Errorf("advises --timeout %ss for 20 runs of 0.6 s a round:\n%s", m[2], errOut)
		}
	}
	if _, err := os.Stat(env.db); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the refused comparison left a database at %s (%v)", env.db, err)
	}
}

// A --timeout that runs out says so: exit 4 (could not run), naming
// --timeout and what it cut short, not a bare "context deadline exceeded".
func TestCompareTimeoutThatRunsOutNamesItselfAndExitsFour(t *testing.T) {
	t.Parallel()
	dir, sha := shellRepo(t, shellConfig("sleep 5", steady, 3, 3, ""))
	env := newRunEnv(t)
	_, errOut, code := perfbot(t, env.args("compare", "--repo", dir, "--base", sha, "--head", sha, "--timeout", "1s")...)
	if code != exitCannotRun || !strings.Contains(errOut, "--timeout 1s ran out: build") || !strings.Contains(errOut, "Give more time (--timeout)") {
		t.Errorf("exit %d, stderr %q; want %d naming --timeout 1s and the build it cut short", code, errOut, exitCannotRun)
	}
}

// countRows counts the rows of table in the SQLite database at path.
func countRows(t *testing.T, path, table string) int {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow("SELECT count(*) FROM " + table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// Earlier builds of the same build commands say how long an uncached
// build takes: a --timeout shorter than the builds is refused before
// anything is built, with or without stored runs to judge the runs by.
func TestCompareRefusesATimeoutShorterThanTheBuildsBeforeBuilding(t *testing.T) {
	t.Parallel()
	r := workspacetest.New(t)
	cfg := shellConfig("sleep 1.5", steady, 3, 3, "")
	first := r.Commit(t, "first", map[string]string{".perfbot.yml": cfg})
	second := r.Commit(t, "second", map[string]string{"README": "second\n"})
	// The same build commands, another benchmark: no stored runs of it.
	third := r.Commit(t, "third", map[string]string{".perfbot.yml": strings.Replace(cfg, "name: sh", "name: other", 1)})
	env := newRunEnv(t)
	// An A/A of one commit builds it once, which records how long the
	// build took, and stores runs of the config.
	if _, errOut, code := perfbot(t, env.args("compare", "--repo", r.Dir, "--base", first, "--head", first)...); code != 0 {
		t.Fatalf("first compare: exit %d\n%s", code, errOut)
	}
	if built, _ := filepath.Glob(filepath.Join(env.data, "builds", first+"-*.done")); len(built) != 1 {
		t.Fatalf("the first build left %v under %s/builds, want its marker", built, env.data)
	}
	for _, tc := range []struct {
		sha  string
		want []string
	}{
		{second, []string{"after the builds (about 1.", "s, the median of earlier builds of this config)", "not even one run a side fits: --count 3 needs a --timeout of at least "}},
		{third, []string{"the builds alone take about 1.", "give a --timeout of more than "}},
	} {
		_, errOut, code := perfbot(t, env.args("compare", "--repo", r.Dir, "--base", tc.sha, "--head", tc.sha, "--timeout", "1s")...)
		if code != exitUsage {
			t.Errorf("%s: exit %d, want %d\n%s", tc.sha[:7], code, exitUsage, errOut)
		}
		for _, w := range tc.want {
			if !strings.Contains(errOut, w) {
				t.Errorf("%s: stderr does not say %q:\n%s", tc.sha[:7], w, errOut)
			}
		}
		if built, _ := filepath.Glob(filepath.Join(env.data, "builds", tc.sha+"-*")); len(built) != 0 {
			t.Errorf("%s: the refused comparison built first: %v", tc.sha[:7], built)
		}
	}
}
