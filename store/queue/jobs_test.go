package queue_test

import (
	"context"
	"testing"

	"github.com/perfbot/perfbot/store"
	"github.com/perfbot/perfbot/store/queue"
	"github.com/perfbot/perfbot/store/storetest"
)

// TestListShowsNewestJobsWithTheirStates inserts jobs through the queue
// client on PostgreSQL, starts one by hand, and lists them as the
// dashboard's job page does.
func TestListShowsNewestJobsWithTheirStates(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := store.Open(ctx, storetest.FreshPostgres(t), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	q, err := queue.New(db, queue.Config{})
	if err != nil {
		t.Fatal(err)
	}
	first, err := q.InsertBaseline(ctx, "", queue.BaselineArgs{Repo: "o/r", SHA: "aaaa"})
	if err != nil {
		t.Fatal(err)
	}
	second, err := q.InsertBisect(ctx, "", queue.BisectArgs{Repo: "o/r", PR: 7, Good: "aaaa", Bad: "bbbb"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.SQL().ExecContext(ctx, `UPDATE river_job SET state = 'running', attempt = 1, attempted_at = now() WHERE id = $1`, first.ID); err != nil {
		t.Fatal(err)
	}
	jobs, err := queue.List(ctx, db.SQL(), 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 2 {
		t.Fatalf("%d jobs; want 2", len(jobs))
	}
	got, want := jobs[0], second.ID
	if got.ID != want || got.Kind != queue.KindBisect || got.State != "available" || got.Queue != queue.DefaultQueue || got.AttemptedAt != nil {
		t.Errorf("newest job %+v; want the available bisect %d on %s", got, want, queue.DefaultQueue)
	}
	if j := jobs[1]; j.ID != first.ID || j.State != "running" || j.Attempt != 1 || j.AttemptedAt == nil || j.Kind != queue.KindBaseline {
		t.Errorf("older job %+v; want the running baseline %d", j, first.ID)
	}
	if one, err := queue.List(ctx, db.SQL(), 1); err != nil || len(one) != 1 {
		t.Errorf("limit 1: %d jobs, %v", len(one), err)
	}
}
