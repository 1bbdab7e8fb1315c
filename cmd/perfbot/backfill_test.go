package main

import (
	"context"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/store"
)

// baselineRuns returns the baseline runs stored in the SQLite file db,
// per commit.
func baselineRuns(t *testing.T, db string) map[string][]store.RunRecord {
	t.Helper()
	s, err := store.Open(context.Background(), db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rs, err := s.Runs(context.Background(), store.RunQuery{Kind: store.KindBaseline})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]store.RunRecord{}
	for _, r := range rs {
		out[r.Commit.SHA] = append(out[r.Commit.SHA], r)
	}
	return out
}

func TestBackfillMeasuresOnlyMissingCommitsAndGoesOnPastABrokenOne(t *testing.T) {
	t.Parallel()
	dir, shas := stepRepo(t, 5, -1, 3)
	env := newRunEnv(t)
	// c1 is measured already, by perfbot run.
	if _, errOut, code := perfbot(t, env.args("run", "--repo", dir, "--rev", shas[1], "--count", "1")...); code != 0 {
		t.Fatalf("run: exit %d: %s", code, errOut)
	}

	out, errOut, code := perfbot(t, env.args("backfill", "--repo", dir, "--since", "2025-03-01", "--dry-run")...)
	if code != 0 {
		t.Fatalf("dry run: exit %d: %s", code, errOut)
	}
	for i, sha := range shas {
		if want := "would measure " + sha[:12]; strings.Contains(out, want) == (i == 1) {
			t.Errorf("dry run lists c%d: %v; want it listed only if it has no runs:\n%s", i, i != 1, out)
		}
	}
	if !strings.Contains(out, "dry run: 4 of 5 commits since 2025-03-01 lack baseline runs") {
		t.Errorf("dry run summary:\n%s", out)
	}
	if got := baselineRuns(t, env.db); len(got) != 1 {
		t.Fatalf("the dry run stored runs of %d commits; want only c1's", len(got))
	}

	// c3 does not build: recorded, exit 3, and c4 is measured after it.
	out, errOut, code = perfbot(t, env.args("backfill", "--repo", dir, "--since", "2025-03-01", "--count", "2")...)
	if code != exitRunsFailed {
		t.Fatalf("backfill: exit %d, want %d (a build failed): %s\n%s", code, exitRunsFailed, errOut, out)
	}
	for _, want := range []string{
		"[1/4] " + shas[0][:12] + " c0: measuring",
		"[3/4] " + shas[3][:12] + ": build failed (recorded)",
		"[4/4] " + shas[4][:12] + ": stored 2 runs, 2 ok",
		"backfill: 5 commits since 2025-03-01, 1 already had baseline runs, 4 measured (1 did not build), 0 skipped",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	runs := baselineRuns(t, env.db)
	for i, sha := range shas {
		want, status := 2, analysis.StatusOK
		switch i {
		case 1:
			want = 1 // perfbot run's, untouched
		case 3:
			want, status = 1, analysis.StatusBuildFailed
		}
		if len(runs[sha]) != want {
			t.Errorf("c%d: %d baseline runs; want %d", i, len(runs[sha]), want)
			continue
		}
		if runs[sha][0].Status != status {
			t.Errorf("c%d: run status %s; want %s", i, runs[sha][0].Status, status)
		}
	}

	// Everything has runs now, the broken commit included.
	out, errOut, code = perfbot(t, env.args("backfill", "--repo", dir, "--since", "all", "--count", "2")...)
	if code != 0 {
		t.Fatalf("second backfill: exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "5 already had baseline runs, 0 measured") || strings.Contains(out, "measuring") {
		t.Errorf("second backfill measured something:\n%s", out)
	}
	if n := storedRunCount(t, env.db); n != 1+2*3+1 {
		t.Errorf("%d runs stored after the second backfill; want 8", n)
	}
}

func TestBackfillKeepsCommitsSinceTheDate(t *testing.T) {
	t.Parallel()
	dir, shas := stepRepo(t, 3, -1)
	env := newRunEnv(t)
	// workspacetest commits are an hour apart from 2025-03-14 15:09 UTC.
	out, errOut, code := perfbot(t, env.args("backfill", "--repo", dir, "--since", "2025-03-14T16:30:00Z", "--dry-run")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if strings.Contains(out, shas[0][:12]) || strings.Contains(out, shas[1][:12]) || !strings.Contains(out, "would measure "+shas[2][:12]) {
		t.Errorf("want only c2 (17:09) listed:\n%s", out)
	}
	out, _, code = perfbot(t, env.args("backfill", "--repo", dir, "--since", "2030-01-01", "--dry-run")...)
	if code != 0 || !strings.Contains(out, "0 of 0 commits") {
		t.Errorf("a date after the last commit: exit %d\n%s", code, out)
	}
}

func TestBackfillBadInputExitsTwoWithAClearMessage(t *testing.T) {
	t.Parallel()
	dir, _ := stepRepo(t, 2, -1)
	env := newRunEnv(t)
	notRepo := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no since", []string{"--repo", dir}, "--since is required"},
		{"bad date", []string{"--repo", dir, "--since", "2025-13-45"}, `--since "2025-13-45": want a duration back from now`},
		{"not a repository", []string{"--repo", notRepo, "--since", "all"}, "not a git repository"},
		{"unknown branch", []string{"--repo", dir, "--since", "all", "--branch", "nope"}, "nope"},
		{"negative count", []string{"--repo", dir, "--since", "all", "--count", "-1"}, "--count must be positive"},
	} {
		_, errOut, code := perfbot(t, env.args(append([]string{"backfill"}, tc.args...)...)...)
		if code != exitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 saying %q", tc.name, code, errOut, tc.want)
		}
	}
}
