package storetest

import (
	"context"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/store"
)

// valuesOf returns the values of RunValues' answer for sha.
func valuesOf(vs map[string][]store.RunValue, sha string) []float64 {
	var out []float64
	for _, v := range vs[sha] {
		out = append(out, v.Value)
	}
	return out
}

func testRunValuesOfOneSetupEveryKind(t *testing.T, dsn string) {
	db := open(t, dsn, store.Options{})
	ctx := context.Background()
	k := key("total", "sec/op")
	mk := func(sha string, hour int, kind store.Kind, edit func(*store.RunRecord), samples ...analysis.Sample) int64 {
		r := baseline(sha, hour, samples...)
		r.Kind = kind
		if edit != nil {
			edit(r)
		}
		return save(t, db, r)
	}
	// sha1: runs of every kind count; a run with two values gives their
	// median; other units, phases, setups, failures and callgrind runs
	// do not.
	b := mk(sha1, 0, store.KindBaseline, nil, sample("total", "sec/op", 2.0), sample("synthesis", "sec/op", 0.5))
	c := mk(sha1, 1, store.KindCompare, nil, sample("total", "sec/op", 2.2), sample("total", "sec/op", 2.6), sample("total", "sec/op", 9))
	bi := mk(sha1, 2, store.KindBisect, nil, sample("total", "sec/op", 2.1))
	mk(sha1, 3, store.KindCalibrate, nil, sample("total", "instructions/op", 7e9))
	mk(sha1, 4, store.KindBisect, func(r *store.RunRecord) { r.ConfigHash = "cfg-b" }, sample("total", "sec/op", 50))
	mk(sha1, 5, store.KindBisect, func(r *store.RunRecord) { r.Machine = "gpu-2" }, sample("total", "sec/op", 60))
	mk(sha1, 6, store.KindBisect, func(r *store.RunRecord) { r.Status = analysis.StatusCrashed; r.Detail = "exit status 2" }, sample("total", "sec/op", 70))
	mk(sha1, 7, store.KindBisect, func(r *store.RunRecord) { r.Tool = analysis.ToolCallgrind }, sample("total", "sec/op", 80))
	mk(sha1, 8, store.KindBisect, func(r *store.RunRecord) { r.Repo = "another/repo" }, sample("total", "sec/op", 90))
	// sha2: one run, older than sha1's newest (values come oldest first
	// per commit, whatever the order they were saved in).
	s2b := mk(sha2, 10, store.KindBisect, nil, sample("total", "sec/op", 3.1))
	s2a := mk(sha2, -1, store.KindBaseline, nil, sample("total", "sec/op", 3.0))

	q := store.ValuesQuery{Repo: repo, Commits: []string{sha1, sha2, sha3}, ConfigHash: "cfg-a", Machine: "gpu-1", Key: k}
	vs, err := db.RunValues(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 2 {
		t.Errorf("RunValues has %d commits, want sha1 and sha2 (sha3 has no run)", len(vs))
	}
	if got, want := valuesOf(vs, sha1), []float64{2.0, 2.6, 2.1}; !reflect.DeepEqual(got, want) {
		t.Errorf("sha1 values %v, want %v (baseline, the compare run's median, bisect)", got, want)
	}
	var gotIDs []int64
	var gotKinds []store.Kind
	for _, v := range vs[sha1] {
		gotIDs, gotKinds = append(gotIDs, v.RunID), append(gotKinds, v.Kind)
		if v.Commit != sha1 || v.StartedAt.IsZero() || v.StartedAt.Location() != time.UTC {
			t.Errorf("run value %+v: want commit sha1 and a UTC start", v)
		}
	}
	if want := []int64{b, c, bi}; !reflect.DeepEqual(gotIDs, want) {
		t.Errorf("sha1 run ids %v, want %v", gotIDs, want)
	}
	if want := []store.Kind{store.KindBaseline, store.KindCompare, store.KindBisect}; !reflect.DeepEqual(gotKinds, want) {
		t.Errorf("sha1 kinds %v, want %v", gotKinds, want)
	}
	if got := vs[sha2]; len(got) != 2 || got[0].RunID != s2a || got[1].RunID != s2b || got[0].Value != 3.0 || got[1].Value != 3.1 {
		t.Errorf("sha2 values %+v, want runs %d (3.0) then %d (3.1), oldest first", got, s2a, s2b)
	}

	// Another setup sees only its own runs.
	q.ConfigHash = "cfg-b"
	if vs, err := db.RunValues(ctx, q); err != nil || !reflect.DeepEqual(valuesOf(vs, sha1), []float64{50}) || len(vs[sha2]) != 0 {
		t.Errorf("cfg-b: %v, %v; want sha1's one run (50)", vs, err)
	}
	// A key nobody measured, or no commits, is an empty answer.
	q.ConfigHash, q.Key = "cfg-a", key("ntt", "sec/op")
	if vs, err := db.RunValues(ctx, q); err != nil || len(vs) != 0 {
		t.Errorf("unmeasured key: %v, %v; want nothing", vs, err)
	}
	q.Key, q.Commits = k, nil
	if vs, err := db.RunValues(ctx, q); err != nil || len(vs) != 0 {
		t.Errorf("no commits: %v, %v; want nothing", vs, err)
	}
	// A setup must be named: values of different ones do not compare.
	for _, bad := range []store.ValuesQuery{
		{Repo: repo, Commits: []string{sha1}, Machine: "gpu-1", Key: k},
		{Repo: repo, Commits: []string{sha1}, ConfigHash: "cfg-a", Key: k},
		{Commits: []string{sha1}, ConfigHash: "cfg-a", Machine: "gpu-1", Key: k},
		{Repo: repo, Commits: []string{sha1}, ConfigHash: "cfg-a", Machine: "gpu-1"},
	} {
		if _, err := db.RunValues(ctx, bad); err == nil {
			t.Errorf("RunValues(%+v) succeeded; want an error naming what is missing", bad)
		}
	}
}

func testBisectRunsStayOutOfHistoryAndTrend(t *testing.T, dsn string) {
	db := open(t, dsn, store.Options{})
	ctx := context.Background()
	base := save(t, db, baseline(sha1, 0, sample("total", "sec/op", 2.0)))
	r := baseline(sha2, 1, sample("total", "sec/op", 3.0))
	r.Kind = store.KindBisect
	bi := save(t, db, r)

	h, err := db.History(ctx, store.HistoryQuery{Repo: repo})
	if err != nil {
		t.Fatal(err)
	}
	if want := map[analysis.Key][]float64{key("total", "sec/op"): {2.0}}; !reflect.DeepEqual(h, want) {
		t.Errorf("History = %v, want the baseline run's alone: %v", h, want)
	}
	points, err := db.Trend(ctx, repo, key("total", "sec/op"), t0.Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if len(points) != 1 || points[0].RunID != base {
		t.Errorf("Trend = %+v, want the baseline run %d alone", points, base)
	}
	if got := ids(runs(t, db, store.RunQuery{Repo: repo, Kind: store.KindBisect})); !reflect.DeepEqual(got, []int64{bi}) {
		t.Errorf("Runs(kind bisect) = %v, want [%d]", got, bi)
	}
}

func testBisectKindMigrationOnVersion4(t *testing.T, dsn string) {
	ctx := context.Background()
	p := migrateTo(t, dsn, 4)
	// Runs written by a perfbot at version 4, with samples and a
	// profile; the newest one deleted, so the next id must skip it.
	old := open(t, dsn, store.Options{NoMigrate: true})
	kept := baseline(sha1, 0, sample("total", "sec/op", 2.5), sample("synthesis", "sec/op", 1.5))
	kept.Profiles = []analysis.Profile{cpuProfile("prove", profileData(64, 1))}
	keptID := save(t, old, kept)
	cmpRun := baseline(sha2, 1, sample("total", "sec/op", 2.7))
	cmpRun.Kind = store.KindCompare
	cmpID := save(t, old, cmpRun)
	gone := save(t, old, baseline(sha3, 2, sample("total", "sec/op", 9)))
	if _, err := raw(t, dsn).Exec(`DELETE FROM runs WHERE id = ` + itoa64(gone)); err != nil {
		t.Fatal(err)
	}
	bisect := baseline(sha3, 3, sample("total", "sec/op", 3.3))
	bisect.Kind = store.KindBisect
	if _, err := old.SaveRun(ctx, bisect); err == nil {
		t.Fatal("at version 4 the database took a bisect run; want its CHECK constraint to refuse it")
	}

	applied, err := old.Migrate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(applied) == 0 || applied[0].Version != 5 || applied[0].Name != "00005_run_kind_bisect.sql" {
		t.Fatalf("Migrate from version 4 = %+v, want 00005_run_kind_bisect.sql first", applied)
	}
	db := open(t, dsn, store.Options{})
	rs := runs(t, db, store.RunQuery{Profiles: true})
	if len(rs) != 2 {
		t.Fatalf("after the migration: %d runs, want the 2 kept", len(rs))
	}
	if want := stored(*kept, keptID); !reflect.DeepEqual(rs[0], want) {
		t.Errorf("after the migration run %d = %+v, want it unchanged: %+v", keptID, rs[0], want)
	}
	if rs[1].ID != cmpID || rs[1].Kind != store.KindCompare || len(rs[1].Samples) != 1 {
		t.Errorf("after the migration: %+v, want the compare run %d with its sample", rs[1], cmpID)
	}
	id := save(t, db, bisect)
	if id <= gone {
		t.Errorf("the first run after the migration got id %d; ids up to %d were used: an id must never be reused", id, gone)
	}
	// The rebuilt table keeps its constraints and foreign keys: an
	// unknown kind is refused by the database itself, and deleting a run
	// still deletes its samples and profiles.
	rdb := raw(t, dsn)
	if _, err := rdb.Exec(`INSERT INTO runs (repo_id, commit_sha, kind, started_at, status)
		SELECT repo_id, commit_sha, 'nightly', started_at, status FROM runs WHERE id = ` + itoa64(id)); err == nil {
		t.Error("the migrated runs table took kind 'nightly'; want its CHECK constraint to refuse it")
	}
	if _, err := rdb.Exec(`DELETE FROM runs WHERE id = ` + itoa64(keptID)); err != nil {
		t.Fatal(err)
	}
	var samples, profiles int
	rdb.QueryRow(`SELECT count(*) FROM samples WHERE run_id = ` + itoa64(keptID)).Scan(&samples)
	rdb.QueryRow(`SELECT count(*) FROM profiles WHERE run_id = ` + itoa64(keptID)).Scan(&profiles)
	if samples != 0 || profiles != 0 {
		t.Errorf("deleting run %d left %d samples and %d profiles; want the cascade to delete them", keptID, samples, profiles)
	}

	// Down deletes the bisect runs and restores the old constraint; Up
	// again takes them.
	if _, err := p.DownTo(ctx, 4); err != nil {
		t.Fatalf("migrate down to version 4: %v", err)
	}
	if n := count(t, rdb, "runs"); n != 1 {
		t.Errorf("after down: %d runs, want the compare run alone", n)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("migrate up again: %v", err)
	}
	again := open(t, dsn, store.Options{})
	if id2 := save(t, again, bisect); id2 <= id {
		t.Errorf("after down and up a run got id %d; %d was used", id2, id)
	}
}

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }
