package runner

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/perfbot/perfbot/runner/workspace/workspacetest"
	"github.com/perfbot/perfbot/store"
)

func TestBaselineReportsWhereItStoredAndTheHistoryWhenAsked(t *testing.T) {
	t.Parallel()
	repo := workspacetest.New(t)
	var shas []string
	for i := range 3 {
		files := map[string]string{"value": "1000\n"}
		if i == 0 {
			files[".perfbot.yml"] = valueConfig(1)
		}
		shas = append(shas, repo.Commit(t, fmt.Sprintf("c%d", i), files))
	}
	r, db := newBisectRunner(t)
	res, err := r.Baseline(context.Background(), BaselineRequest{Source: repo.Dir, Rev: shas[1], History: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.History) != 2 || res.History[0].SHA != shas[0] || res.History[1].SHA != shas[1] {
		t.Errorf("history %v; want c0 c1", res.History)
	}
	runs := storedRuns(t, db, store.RunQuery{Commits: []string{shas[1]}})
	if len(runs) != 1 || runs[0].Repo != res.Repo || runs[0].Machine != res.Machine || res.BuildFailed {
		t.Errorf("stored %d runs (%+v); result says repo %q machine %q", len(runs), runs, res.Repo, res.Machine)
	}
	res, err = r.Baseline(context.Background(), BaselineRequest{Source: repo.Dir, Rev: shas[2]})
	if err != nil || res.History != nil {
		t.Errorf("without History: %v, %v; want no history", res.History, err)
	}
}

func TestBackfillMeasuresMissingCommitsOldestFirst(t *testing.T) {
	t.Parallel()
	repo := workspacetest.New(t)
	var shas []string
	for i := range 4 {
		files := map[string]string{"value": fmt.Sprintf("%d\n", 1000+i)}
		if i == 0 {
			files[".perfbot.yml"] = valueConfig(1)
		}
		shas = append(shas, repo.Commit(t, fmt.Sprintf("c%d", i), files))
	}
	r, db := newBisectRunner(t)
	if _, err := r.Baseline(context.Background(), BaselineRequest{Source: repo.Dir, Rev: shas[2]}); err != nil {
		t.Fatal(err)
	}
	var order []string
	res, err := r.Backfill(context.Background(), BackfillRequest{
		Source: repo.Dir, Since: workspacetest.Epoch.Add(30 * time.Minute), // after c0
		OnCommit: func(s BackfillStep) {
			if !s.Done {
				order = append(order, s.Commit.SHA)
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Commits) != 3 || res.Measured != 2 || len(order) != 2 || order[0] != shas[1] || order[1] != shas[3] {
		t.Errorf("commits %d, measured %d, order %v; want c1 then c3 of c1..c3", len(res.Commits), res.Measured, order)
	}
	if n := len(storedRuns(t, db, store.RunQuery{Commits: []string{shas[0]}})); n != 0 {
		t.Errorf("c0, before the date, has %d runs", n)
	}
}
