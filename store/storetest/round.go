package storetest

import (
	"context"
	"testing"

	"github.com/perfbot/perfbot/store"
)

// A run's round comes back with it, through Runs, Run() and RunValues,
// beside its session; a run saved without a round comes back with 0,
// which is what the database holds for it.
func testRoundRoundTrip(t *testing.T, dsn string) {
	db := open(t, dsn, store.Options{})
	ctx := context.Background()
	session, err := db.BeginSession(ctx, store.Session{Repo: repo, Kind: store.KindCompare, Label: "compare job 3 attempt 1"})
	if err != nil {
		t.Fatal(err)
	}
	r := baseline(sha1, 0, sample("total", "sec/op", 0.5))
	r.Kind, r.SessionID, r.Round = store.KindCompare, session, 3
	inRound := save(t, db, r)
	unknown := save(t, db, baseline(sha2, 1, sample("total", "sec/op", 0.6)))

	rs := runs(t, db, store.RunQuery{Repo: repo})
	if len(rs) != 2 || rs[0].ID != inRound || rs[1].ID != unknown {
		t.Fatalf("Runs = ids %v, want [%d %d]", ids(rs), inRound, unknown)
	}
	if rs[0].Round != 3 || rs[0].SessionID != session || rs[0].Run().Round != 3 {
		t.Errorf("run %d came back in round %d of session %d (Run: round %d), want round 3 of session %d",
			inRound, rs[0].Round, rs[0].SessionID, rs[0].Run().Round, session)
	}
	if rs[1].Round != 0 || rs[1].Run().Round != 0 {
		t.Errorf("a run saved without a round came back in round %d (Run: %d), want 0", rs[1].Round, rs[1].Run().Round)
	}
	rdb := raw(t, dsn)
	var round int
	if err := rdb.QueryRowContext(ctx, "SELECT round FROM runs WHERE id = "+itoa64(unknown)).Scan(&round); err != nil || round != 0 {
		t.Errorf("the database holds round %d (%v) for the run without one, want 0", round, err)
	}
	// The database refuses a negative round even when store's own
	// validation is bypassed.
	if _, err := rdb.ExecContext(ctx, "UPDATE runs SET round = -1 WHERE id = "+itoa64(unknown)); err == nil {
		t.Error("the database took round -1; want its CHECK constraint to refuse it")
	}

	// RunValues gives each run's session and round with its value: the
	// session's (ended, so its runs are whole), and none for the other.
	if err := db.EndSession(ctx, session); err != nil {
		t.Fatal(err)
	}
	vs, err := db.RunValues(ctx, store.ValuesQuery{Repo: repo, Commits: []string{sha1, sha2}, ConfigHash: "cfg-a", Machine: "gpu-1", Key: key("total", "sec/op")})
	if err != nil {
		t.Fatal(err)
	}
	if got := vs[sha1]; len(got) != 1 || got[0].RunID != inRound || got[0].SessionID != session || got[0].Round != 3 || got[0].Value != 0.5 {
		t.Errorf("RunValues of %s = %+v, want run %d of session %d in round 3, value 0.5", sha1[:8], got, inRound, session)
	}
	if got := vs[sha2]; len(got) != 1 || got[0].RunID != unknown || got[0].SessionID != 0 || got[0].Round != 0 || got[0].Value != 0.6 {
		t.Errorf("RunValues of %s = %+v, want run %d without a session or round, value 0.6", sha2[:8], got, unknown)
	}
}

// Runs stored before migration 00013 (at schema version 12) read back in
// round 0 after it, keeping their session; a run saved after it keeps its
// round. Down drops the column and keeps every run.
func testRoundMigrationOnVersion12(t *testing.T, dsn string) {
	ctx := context.Background()
	p := migrateTo(t, dsn, 12)
	db := open(t, dsn, store.Options{NoMigrate: true})
	if cur, _, err := db.SchemaVersion(ctx); err != nil || cur != 12 {
		t.Fatalf("SchemaVersion = %d, %v; want 12", cur, err)
	}
	// Runs written at version 12 (SaveRun names no round for a run
	// without one, as perfbot before 00013 did).
	session, err := db.BeginSession(ctx, store.Session{Repo: repo, Kind: store.KindCompare, Label: "compare job 1 attempt 1"})
	if err != nil {
		t.Fatal(err)
	}
	old := baseline(sha1, 0, sample("total", "sec/op", 2.5))
	old.Kind, old.SessionID = store.KindCompare, session
	oldSession := save(t, db, old)
	oldPlain := save(t, db, baseline(sha2, 1, sample("total", "sec/op", 2.6)))

	applied, err := db.Migrate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(applied) == 0 || applied[0].Version != 13 || applied[0].Name != "00013_run_round.sql" {
		t.Fatalf("Migrate from version 12 = %+v, want 00013_run_round.sql first", applied)
	}
	r := baseline(sha3, 2, sample("total", "sec/op", 2.7))
	r.Round = 2
	fresh := save(t, db, r)
	rs := runs(t, db, store.RunQuery{Repo: repo})
	if got := ids(rs); len(got) != 3 || got[0] != oldSession || got[1] != oldPlain || got[2] != fresh {
		t.Fatalf("after the migration: runs %v, want [%d %d %d]", got, oldSession, oldPlain, fresh)
	}
	if rs[0].Round != 0 || rs[0].SessionID != session || len(rs[0].Samples) != 1 || rs[1].Round != 0 {
		t.Errorf("runs stored at version 12 came back in rounds %d (session %d, %d samples) and %d; want 0 (session %d, 1 sample) and 0",
			rs[0].Round, rs[0].SessionID, len(rs[0].Samples), rs[1].Round, session)
	}
	if rs[2].Round != 2 {
		t.Errorf("a run saved after the migration came back in round %d, want 2", rs[2].Round)
	}

	if _, err := p.DownTo(ctx, 12); err != nil {
		t.Fatalf("migrate down to version 12: %v", err)
	}
	rdb := raw(t, dsn)
	if n := count(t, rdb, "runs"); n != 3 {
		t.Errorf("after down: %d runs, want all 3", n)
	}
	if _, err := rdb.ExecContext(ctx, "SELECT round FROM runs"); err == nil {
		t.Error("after down the runs table still has a round column")
	}
}
