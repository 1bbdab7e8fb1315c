package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/perfbot/perfbot/runner"
	"github.com/perfbot/perfbot/runner/workspace/workspacetest"
	"github.com/perfbot/perfbot/store"
	"github.com/perfbot/perfbot/store/queue"
)

// A push to a repository that has no config, or an invalid one, is not
// measured and not retried: no retry can make the commit say how to
// measure it. Nothing is stored.
func TestBaselineJobWithoutAConfigIsCancelledNotRetried(t *testing.T) {
	t.Parallel()
	r := workspacetest.New(t)
	none := r.Commit(t, "a library, no config", map[string]string{"go.mod": "module example.com/lib\n", "lib.go": "package lib\n"})
	bad := r.Commit(t, "an invalid config", map[string]string{".perfbot.yml": "benchmarks:\n  - name: x\n    format: nope\n    command: [./x]\n"})
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "perfbot.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	w := &baselineWorker{jobDeps: &jobDeps{
		runner: &runner.Runner{DataDir: t.TempDir(), Store: db},
		store:  db,
		log:    slog.New(slog.NewTextHandler(io.Discard, nil)),
	}}
	for _, tc := range []struct {
		sha, want string
		is        error
	}{
		{none, "has no .perfbot.yml", runner.ErrNoConfig},
		{bad, "nope", runner.ErrInvalidConfig},
	} {
		err := w.Work(context.Background(), &river.Job[queue.BaselineArgs]{
			JobRow: &rivertype.JobRow{ID: 1, Kind: queue.KindBaseline, Attempt: 1, MaxAttempts: 3},
			Args:   queue.BaselineArgs{Repo: "acme/lib", SHA: tc.sha, CloneURL: r.Dir},
		})
		var cancel *rivertype.JobCancelError
		if !errors.As(err, &cancel) || !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%.7s: Work = %v; want River's cancel (no retry) of an error wrapping %v that says %q", tc.sha, err, tc.is, tc.want)
		}
	}
	runs, err := db.Runs(context.Background(), store.RunQuery{Commits: []string{none, bad}})
	if err != nil || len(runs) != 0 {
		t.Errorf("%d runs stored (%v); want none", len(runs), err)
	}
}
