package queue_test

import (
	"context"
	"testing"
	"time"

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

	// A failed attempt's error is the job's last error; the queue's
	// status counts its jobs and says when one last started.
	if _, err := db.SQL().ExecContext(ctx, `UPDATE river_job SET state = 'retryable', attempt = 1, attempted_at = now() - interval '1 hour',
		errors = ARRAY['{"attempt": 1, "error": "first"}'::jsonb, '{"attempt": 2, "error": "build head: exit status 2"}'::jsonb] WHERE id = $1`, second.ID); err != nil {
		t.Fatal(err)
	}
	jobs, err = queue.List(ctx, db.SQL(), 10)
	if err != nil || jobs[0].LastError != "build head: exit status 2" || jobs[1].LastError != "" || jobs[0].ScheduledAt.IsZero() {
		t.Errorf("last errors %q, %q (%v); want the second attempt's, then none", jobs[0].LastError, jobs[1].LastError, err)
	}
	st, err := queue.Statuses(ctx, db.SQL())
	if err != nil || len(st) != 1 {
		t.Fatalf("statuses %+v, %v; want one queue", st, err)
	}
	if s := st[0]; s.Queue != queue.DefaultQueue || s.Available != 0 || s.Running != 1 || s.OldestAvailable != nil || s.LastAttempt == nil ||
		time.Since(*s.LastAttempt) > time.Minute {
		t.Errorf("status %+v; want 1 running, none available, a job started just now", s)
	}
}
