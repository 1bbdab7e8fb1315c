package queue_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/perfbot/perfbot/store"
	"github.com/perfbot/perfbot/store/queue"
	"github.com/perfbot/perfbot/store/storetest"
)

func openQueue(t *testing.T) (*queue.Client, *store.DB) {
	t.Helper()
	db, err := store.Open(context.Background(), storetest.FreshPostgres(t), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	q, err := queue.New(db, queue.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return q, db
}

// liveHeads returns the heads of repo#pr's live comparisons and of its
// live queued-check notes (not the notes that end a dropped head's check).
func liveHeads(t *testing.T, db *store.DB, repo string, pr int) (compares, notes []string) {
	t.Helper()
	rows, err := db.SQL().Query(`SELECT kind, coalesce(args->>'head_sha', args->>'check_sha') FROM river_job
		WHERE args->>'repo' = $1 AND (args->>'pr')::bigint = $2 AND state IN ('available', 'running', 'scheduled', 'pending', 'retryable')
		AND coalesce(args->>'superseded_by', '') = '' AND coalesce(args->>'closed', 'false') = 'false'
		ORDER BY id`, repo, pr)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var kind, head string
		if err := rows.Scan(&kind, &head); err != nil {
			t.Fatal(err)
		}
		if kind == queue.KindCompare {
			compares = append(compares, head)
		} else {
			notes = append(notes, head)
		}
	}
	return compares, notes
}

// TestTheNewestHeadWinsByGitHubsTimeNotByArrival: a head whose pull
// request was updated earlier than one already queued queues nothing,
// even though it arrives later; a tie in time goes to the larger SHA,
// in either order; the same head again is a duplicate, not a new job.
func TestTheNewestHeadWinsByGitHubsTimeNotByArrival(t *testing.T) {
	t.Parallel()
	q, db := openQueue(t)
	ctx := context.Background()
	t0 := time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)
	insert := func(pr int, head string, at time.Time) queue.Inserted {
		t.Helper()
		var ins queue.Inserted
		err := q.InTx(ctx, func(tx *queue.Tx) (err error) {
			ins, err = tx.InsertCompare(ctx, "", queue.CompareArgs{Repo: "o/r", PR: pr, HeadSHA: head, BaseSHA: "base", UpdatedAt: at})
			if err == nil && !ins.Superseded && !ins.Duplicate {
				err = tx.InsertNotify(ctx, queue.NotifyArgs{Repo: "o/r", PR: pr, CheckSHA: head, CheckTitle: "Queued"})
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return ins
	}
	a, b, c := strings.Repeat("a", 40), strings.Repeat("b", 40), strings.Repeat("c", 40)

	insert(1, b, t0.Add(2*time.Second))
	if ins := insert(1, a, t0.Add(time.Second)); !ins.Superseded || ins.Newer != b || ins.ID != 0 {
		t.Errorf("an older head arriving later: %+v; want superseded by %s, nothing inserted", ins, b[:7])
	}
	if ins := insert(1, b, t0.Add(3*time.Second)); !ins.Duplicate || ins.Superseded {
		t.Errorf("the same head again (reopened): %+v; want a duplicate of the live job", ins)
	}
	ins := insert(1, c, t0.Add(3*time.Second))
	if ins.Superseded || ins.Duplicate || len(ins.Cancelled) != 2 {
		t.Errorf("a newer head: %+v; want it queued, the old comparison and its note cancelled", ins)
	}
	if cmp, notes := liveHeads(t, db, "o/r", 1); fmt.Sprint(cmp, notes) != fmt.Sprint([]string{c}, []string{c}) {
		t.Errorf("live comparisons %v and notes %v; want only %s's", cmp, notes, c[:7])
	}

	// A tie in GitHub's time: the larger SHA wins, whichever comes first.
	for pr, order := range map[int][]string{2: {a, b}, 3: {b, a}} {
		for _, h := range order {
			insert(pr, h, t0)
		}
		if cmp, notes := liveHeads(t, db, "o/r", pr); fmt.Sprint(cmp, notes) != fmt.Sprint([]string{b}, []string{b}) {
			t.Errorf("#%d, heads in the order %.7s, %.7s at the same time: live comparisons %v, notes %v; want %.7s alone",
				pr, order[0], order[1], cmp, notes, b)
		}
	}
	// Another pull request's jobs are left alone.
	if cmp, _ := liveHeads(t, db, "o/r", 1); len(cmp) != 1 {
		t.Errorf("#1 has %d live comparisons after #2 and #3; want 1", len(cmp))
	}
}

// TestWaitingAndSupersedeUseTheIndexes: with 30,000 jobs of one
// repository's 5,000 pull requests in river_job (and its statistics up to
// date), PostgreSQL's planner answers the queries that find one pull
// request's jobs from perfbot's indexes, not a scan of the table. The
// plans are logged (-v): docs/server.md shows them.
func TestWaitingAndSupersedeUseTheIndexes(t *testing.T) {
	t.Parallel()
	_, db := openQueue(t)
	if _, err := db.SQL().Exec(`
		INSERT INTO river_job (kind, queue, state, args, max_attempts, attempt, scheduled_at, attempted_at, finalized_at)
		SELECT CASE WHEN i % 6 = 5 THEN 'perfbot_notify' ELSE 'perfbot_compare' END, 'gpu',
		       (CASE WHEN i % 6 = 4 THEN 'cancelled' ELSE 'completed' END)::river_job_state,
		       jsonb_build_object('repo', 'o/r', 'pr', i % 5000, 'head_sha', lpad(to_hex(i), 40, '0'), 'check_sha', lpad(to_hex(i), 40, '0')),
		       3, 1, now(), now(), now()
		FROM generate_series(1, 30000) AS i`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.SQL().Exec(`ANALYZE river_job`); err != nil {
		t.Fatal(err)
	}
	for query, ix := range queue.IndexedQueries() {
		plan := explain(t, db, query)
		t.Logf("EXPLAIN ANALYZE\n%s\n%s", query, plan)
		if !strings.Contains(plan, ix) || strings.Contains(plan, "Seq Scan on river_job") {
			t.Errorf("plan of\n%s\ndoes not use %s:\n%s", query, ix, plan)
		}
	}
}

func explain(t *testing.T, db *store.DB, query string) string {
	t.Helper()
	rows, err := db.SQL().Query("EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY ON) "+query, "o/r", 7, strings.Repeat("a", 40))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, line)
	}
	return strings.Join(plan, "\n")
}

// endNotes returns, per head of repo#pr, what its live check-ending note
// says: "superseded by <head>" or "closed".
func endNotes(t *testing.T, db *store.DB, repo string, pr int) map[string]string {
	t.Helper()
	rows, err := db.SQL().Query(`SELECT args->>'check_sha', coalesce(args->>'superseded_by', ''), coalesce(args->>'closed', 'false') FROM river_job
		WHERE kind = 'perfbot_notify' AND args->>'repo' = $1 AND (args->>'pr')::bigint = $2
		AND state IN ('available', 'scheduled', 'pending', 'retryable')
		AND (coalesce(args->>'superseded_by', '') <> '' OR args->>'closed' = 'true')`, repo, pr)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var head, by, closed string
		if err := rows.Scan(&head, &by, &closed); err != nil {
			t.Fatal(err)
		}
		if _, dup := out[head]; dup {
			t.Errorf("two notes end %.7s's check", head)
		}
		out[head] = "superseded by " + by
		if closed == "true" {
			out[head] = "closed"
		}
	}
	return out
}

// TestDroppedHeadsGetANoteThatEndsTheirCheck: every head whose queued
// comparison a newer push cancels gets a note that ends its check,
// naming the newer head, in the same transaction; a later push never
// cancels those notes; closing the pull request drops its live
// comparison and ends that head's check too.
func TestDroppedHeadsGetANoteThatEndsTheirCheck(t *testing.T) {
	t.Parallel()
	q, db := openQueue(t)
	ctx := context.Background()
	t0 := time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
	a, b, c := strings.Repeat("a", 40), strings.Repeat("b", 40), strings.Repeat("c", 40)
	for i, h := range []string{a, b, c} {
		err := q.InTx(ctx, func(tx *queue.Tx) error {
			ins, err := tx.InsertCompare(ctx, "", queue.CompareArgs{Repo: "o/r", PR: 4, HeadSHA: h, BaseSHA: "base", UpdatedAt: t0.Add(time.Duration(i) * time.Second)})
			if err != nil || ins.Superseded {
				return err
			}
			return tx.InsertNotify(ctx, queue.NotifyArgs{Repo: "o/r", PR: 4, CheckSHA: h, CheckTitle: "Queued"})
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]string{a: "superseded by " + b, b: "superseded by " + c}
	if got := endNotes(t, db, "o/r", 4); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("notes ending checks after three pushes: %v; want %v", got, want)
	}
	heads, err := q.ClosePullRequest(ctx, "o/r", 4)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(heads) != fmt.Sprint([]string{c}) {
		t.Errorf("closing dropped the comparisons of %v; want %.7s's", heads, c)
	}
	want[c] = "closed"
	if got := endNotes(t, db, "o/r", 4); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("notes ending checks after the close: %v; want %v", got, want)
	}
	if cmp, notes := liveHeads(t, db, "o/r", 4); len(cmp)+len(notes) != 0 {
		t.Errorf("after the close: live comparisons %v and queued-check notes %v; want none", cmp, notes)
	}
	if newest, err := q.NewestHead(ctx, "o/r", 4); err != nil || newest != c {
		t.Errorf("NewestHead = %.7s, %v; want %.7s", newest, err, c)
	}
	if done, err := q.Finished(ctx, "o/r", 4, c); err != nil || done {
		t.Errorf("Finished(%.7s) = %v, %v; want false: it was dropped", c, done, err)
	}
}

// TestRescueControlRetriesOnlyAbandonedControlJobs: a notify job left
// "running" five minutes ago (its perfbot serve was killed) becomes
// retryable with a note of why, one at its last attempt is discarded; a
// control job running for seconds and a comparison running for an hour
// are left alone.
func TestRescueControlRetriesOnlyAbandonedControlJobs(t *testing.T) {
	t.Parallel()
	q, db := openQueue(t)
	ctx := context.Background()
	running := func(args queue.NotifyArgs, ago time.Duration, attempt int) int64 {
		t.Helper()
		var id int64
		err := db.SQL().QueryRow(`INSERT INTO river_job (kind, args, queue, state, attempt, max_attempts, attempted_at, priority, scheduled_at)
			VALUES ($1, $2, 'control', 'running', $3, 3, now() - make_interval(secs => $4), 1, now()) RETURNING id`,
			args.Kind(), fmt.Sprintf(`{"repo": %q, "pr": %d, "reply": %q}`, args.Repo, args.PR, args.Reply), attempt, ago.Seconds()).Scan(&id)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	stale := running(queue.NotifyArgs{Repo: "o/r", PR: 1, Reply: "hello"}, 5*time.Minute, 1)
	last := running(queue.NotifyArgs{Repo: "o/r", PR: 2, Reply: "hello"}, 5*time.Minute, 3)
	fresh := running(queue.NotifyArgs{Repo: "o/r", PR: 3, Reply: "hello"}, 10*time.Second, 1)
	var compare int64
	if err := db.SQL().QueryRow(`INSERT INTO river_job (kind, args, queue, state, attempt, max_attempts, attempted_at, priority, scheduled_at)
		VALUES ('perfbot_compare', '{"repo": "o/r", "pr": 4, "head_sha": "h"}', 'default', 'running', 1, 3, now() - interval '1 hour', 1, now())
		RETURNING id`).Scan(&compare); err != nil {
		t.Fatal(err)
	}
	n, err := q.RescueControl(ctx, 75*time.Second)
	if err != nil || n != 2 {
		t.Fatalf("RescueControl = %d, %v; want 2", n, err)
	}
	for id, want := range map[int64]string{stale: "retryable", last: "discarded", fresh: "running", compare: "running"} {
		var state string
		var errs int
		if err := db.SQL().QueryRow(`SELECT state::text, coalesce(array_length(errors, 1), 0) FROM river_job WHERE id = $1`, id).Scan(&state, &errs); err != nil {
			t.Fatal(err)
		}
		if state != want || (want != "running") != (errs == 1) {
			t.Errorf("job %d: %s with %d errors; want %s, with a note when rescued", id, state, errs, want)
		}
	}
}
