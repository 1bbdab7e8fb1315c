package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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
	stored := func() int {
		s, err := store.Open(context.Background(), db, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		runs, err := s.Runs(context.Background(), store.RunQuery{})
		if err != nil {
			t.Fatal(err)
		}
		return len(runs)
	}
	before := stored()
	for _, tc := range []struct {
		args []string
		want []string
	}{
		// 11 runs a side of at least 50 ms each: more than half a second.
		{[]string{"--timeout", "500ms"}, []string{"10 runs a side (after 1 warm-up) take about", "more than the 500ms given", "give at most --count"}},
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
	if after := stored(); after != before {
		t.Errorf("%d runs stored by the refused comparisons, want none", after-before)
	}
	if _, errOut, code := perfbot(t, args("--timeout", "-1s")...); code != exitUsage || !strings.Contains(errOut, "give a positive duration") {
		t.Errorf("--timeout -1s: exit %d\n%s", code, errOut)
	}
}
