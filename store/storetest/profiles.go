package storetest

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/pressly/goose/v3"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/migrations"
	"github.com/perfbot/perfbot/store"
)

// profileData returns n bytes that start like a gzip stream and hold
// every byte value, NUL included: binary data as a pprof file is.
func profileData(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 6))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	copy(b, []byte{0x1f, 0x8b, 0x08, 0x00, 0x00, 0xff, 0x00, 0x80})
	return b
}

func cpuProfile(benchmark string, data []byte) analysis.Profile {
	return analysis.Profile{Benchmark: benchmark, Kind: analysis.ProfileCPU, Data: data}
}

func profiles(t testing.TB, db *store.DB, ids ...int64) map[int64][]analysis.Profile {
	t.Helper()
	got, err := db.Profiles(context.Background(), ids)
	if err != nil {
		t.Fatalf("Profiles(%v): %v", ids, err)
	}
	return got
}

func testProfilesRoundTrip(t *testing.T, dsn string) {
	db := open(t, dsn, store.Options{})
	want := []analysis.Profile{
		cpuProfile("prove", profileData(3<<20, 1)), // bigger than a proof's, smaller than the limit
		cpuProfile("synthesis", []byte{0}),
		cpuProfile("prove", profileData(257, 2)),                                    // a second of the same benchmark keeps its place
		{Benchmark: "prove", Kind: analysis.ProfileMem, Data: profileData(1000, 3)}, // a heap profile, kind mem
	}
	r := baseline(sha1, 0, sample("total", "sec/op", 2.5))
	r.Profiles = want
	in := *r
	id := save(t, db, r)
	if !reflect.DeepEqual(*r, in) {
		t.Errorf("SaveRun modified its argument")
	}
	plain := save(t, db, baseline(sha2, 1, sample("total", "sec/op", 2.6)))

	got := profiles(t, db, id, plain, 4242)
	if len(got) != 1 || len(got[id]) != len(want) {
		t.Fatalf("Profiles = %d runs, %d profiles of run %d; want only run %d, with %d", len(got), len(got[id]), id, id, len(want))
	}
	for i, p := range got[id] {
		if p.Benchmark != want[i].Benchmark || p.Kind != want[i].Kind || !bytes.Equal(p.Data, want[i].Data) {
			t.Errorf("profile %d = %s %s %d bytes, want %s %s %d bytes, byte for byte",
				i, p.Benchmark, p.Kind, len(p.Data), want[i].Benchmark, want[i].Kind, len(want[i].Data))
		}
	}
	if got := profiles(t, db); len(got) != 0 {
		t.Errorf("Profiles() of no runs = %v, want none", got)
	}

	// Runs loads them only when asked; Run() carries them to analysis.
	for _, r := range runs(t, db, store.RunQuery{Repo: repo}) {
		if r.Profiles != nil {
			t.Errorf("Runs without Profiles: run %d has %d profiles", r.ID, len(r.Profiles))
		}
	}
	rs := runs(t, db, store.RunQuery{Repo: repo, Profiles: true})
	if len(rs) != 2 || rs[0].ID != id || rs[1].ID != plain {
		t.Fatalf("Runs = ids %v, want [%d %d]", ids(rs), id, plain)
	}
	if !reflect.DeepEqual(rs[0].Profiles, want) || rs[1].Profiles != nil {
		t.Errorf("Runs(Profiles) = %d and %d profiles, want %d byte for byte and none", len(rs[0].Profiles), len(rs[1].Profiles), len(want))
	}
	if run := rs[0].Run(); !reflect.DeepEqual(run.Profiles, want) || len(run.Samples) != 1 {
		t.Errorf("Run() has %d profiles and %d samples, want %d and 1", len(run.Profiles), len(run.Samples), len(want))
	}
	if n := count(t, raw(t, dsn), "profiles"); n != len(want) {
		t.Errorf("%d profile rows, want %d", n, len(want))
	}
	var bytesCol, dataLen int64
	if err := raw(t, dsn).QueryRow(`SELECT sum(bytes), sum(length(data)) FROM profiles`).Scan(&bytesCol, &dataLen); err != nil {
		t.Fatal(err)
	}
	var wantLen int64
	for _, p := range want {
		wantLen += int64(len(p.Data))
	}
	if bytesCol != wantLen || dataLen != wantLen {
		t.Errorf("bytes column sums to %d, data to %d bytes; want %d", bytesCol, dataLen, wantLen)
	}
}

func testProfilesOfManyRuns(t *testing.T, dsn string) {
	db := open(t, dsn, store.Options{})
	const n = 1003 // more than one query's worth of run ids
	var all []int64
	for i := range n {
		r := baseline(sha1, i)
		if i%2 == 0 {
			r.Profiles = []analysis.Profile{cpuProfile("prove", []byte(fmt.Sprintf("profile of run %d", i)))}
		}
		all = append(all, save(t, db, r))
	}
	got := profiles(t, db, all...)
	if len(got) != (n+1)/2 {
		t.Fatalf("Profiles: %d runs with profiles, want %d", len(got), (n+1)/2)
	}
	for i, id := range all {
		ps, ok := got[id]
		if want := fmt.Sprintf("profile of run %d", i); ok != (i%2 == 0) || ok && (len(ps) != 1 || string(ps[0].Data) != want) {
			t.Fatalf("run %d: profiles %q, want %v", i, ps, ok)
		}
	}
}

func testAtomicRunWithProfiles(t *testing.T, dsn string) {
	db := open(t, dsn, store.Options{})
	rdb := raw(t, dsn)
	// The profiles go in before the samples; a bad sample after them
	// fails the run, and none of its rows stay.
	r := baseline(sha1, 0)
	r.Profiles = []analysis.Profile{cpuProfile("prove", profileData(100_000, 3)), cpuProfile("synthesis", profileData(10, 4))}
	for i := range 600 {
		r.Samples = append(r.Samples, sample(phases[i%len(phases)], "sec/op", float64(i)))
	}
	r.Samples = append(r.Samples, sample("msm_h", "sec/op", math.NaN()))
	if _, err := db.SaveRun(context.Background(), r); err == nil || !strings.HasPrefix(err.Error(), "save run: samples: ") {
		t.Errorf("SaveRun error = %v, want save run: samples: …", err)
	}
	for _, table := range []string{"profiles", "runs", "samples", "commits", "repos"} {
		if n := count(t, rdb, table); n != 0 {
			t.Errorf("after a failed run: %d rows in %s, want 0", n, table)
		}
	}

	// Profiles that cannot be stored are refused before anything is
	// written.
	for _, tc := range []struct {
		name string
		p    analysis.Profile
		want string
	}{
		{"no benchmark", cpuProfile("", []byte{1}), "profile 1: no benchmark"},
		{"no kind", analysis.Profile{Benchmark: "prove", Data: []byte{1}}, "profile 1 (prove): no kind"},
		{"no data", cpuProfile("prove", nil), "profile 1 (prove cpu): no data"},
		{"too large", cpuProfile("prove", make([]byte, store.MaxProfileBytes+1)), "more than the 64 MiB"},
	} {
		r := baseline(sha1, 0, sample("total", "sec/op", 1))
		r.Profiles = []analysis.Profile{cpuProfile("prove", []byte{1}), tc.p}
		_, err := db.SaveRun(context.Background(), r)
		if err == nil || !strings.HasPrefix(err.Error(), "save run: ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: SaveRun error = %v, want save run: …%s…", tc.name, err, tc.want)
		}
	}
	for _, table := range []string{"profiles", "runs"} {
		if n := count(t, rdb, table); n != 0 {
			t.Errorf("after refused runs: %d rows in %s, want 0", n, table)
		}
	}
}

func testDeletingARunDeletesItsProfiles(t *testing.T, dsn string) {
	db := open(t, dsn, store.Options{})
	mk := func(hour int, data string) int64 {
		r := baseline(sha1, hour)
		r.Profiles = []analysis.Profile{cpuProfile("prove", []byte(data))}
		return save(t, db, r)
	}
	gone, kept := mk(0, "gone"), mk(1, "kept")
	// store has no API that deletes runs; the schema's cascade is what a
	// cleanup by SQL relies on.
	rdb := raw(t, dsn)
	if _, err := rdb.Exec(fmt.Sprintf("DELETE FROM runs WHERE id = %d", gone)); err != nil {
		t.Fatal(err)
	}
	got := profiles(t, db, gone, kept)
	if len(got) != 1 || len(got[kept]) != 1 || string(got[kept][0].Data) != "kept" {
		t.Errorf("after deleting run %d: Profiles = %v, want only run %d's", gone, got, kept)
	}
	if n := count(t, rdb, "profiles"); n != 1 {
		t.Errorf("after deleting a run: %d profile rows, want 1", n)
	}
	// So does deleting the repository, which takes its runs.
	if _, err := rdb.Exec("DELETE FROM repos"); err != nil {
		t.Fatal(err)
	}
	if n := count(t, rdb, "profiles"); n != 0 {
		t.Errorf("after deleting the repository: %d profile rows, want 0", n)
	}
}

func testProfilesMigrationOnVersion2(t *testing.T, dsn string) {
	ctx := context.Background()
	// Bring a new database to version 2, the schema before profiles, the
	// way an older perfbot left it.
	migrateTo(t, dsn, 2)

	db := open(t, dsn, store.Options{NoMigrate: true})
	if cur, _, err := db.SchemaVersion(ctx); err != nil || cur != 2 {
		t.Fatalf("SchemaVersion = %d, %v; want 2", cur, err)
	}
	// The old perfbot's run, written as it wrote it (this perfbot's
	// SaveRun writes columns that later versions added).
	rdb := raw(t, dsn)
	for _, q := range []string{
		`INSERT INTO repos (name) VALUES ('` + repo + `')`,
		`INSERT INTO commits (repo_id, sha) VALUES (1, '` + sha1 + `')`,
		`INSERT INTO runs (repo_id, commit_sha, kind, started_at, status) VALUES (1, '` + sha1 + `', 'baseline', '2026-11-02T09:30:00.000000Z', 'ok')`,
		`INSERT INTO samples (run_id, seq, benchmark, phase, unit, value) VALUES (1, 0, '` + bench + `', 'total', 'sec/op', 2.5)`,
	} {
		if _, err := rdb.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	const old = 1

	applied, err := db.Migrate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(applied) == 0 || applied[0].Version != 3 || applied[0].Name != "00003_profiles.sql" {
		t.Fatalf("Migrate from version 2 = %+v, want 00003_profiles.sql first", applied)
	}
	r := baseline(sha2, 1, sample("total", "sec/op", 2.6))
	r.Profiles = []analysis.Profile{cpuProfile("prove", profileData(4096, 5))}
	id := save(t, db, r)
	rs := runs(t, db, store.RunQuery{Profiles: true})
	if len(rs) != 2 || rs[0].ID != old || len(rs[0].Samples) != 1 || rs[0].Profiles != nil {
		t.Fatalf("after the migration: runs %+v, want run %d as it was, without profiles", rs, old)
	}
	if rs[1].ID != id || !reflect.DeepEqual(rs[1].Profiles, r.Profiles) {
		t.Errorf("a run saved after the migration has %d profiles, want its 1 byte for byte", len(rs[1].Profiles))
	}
}

// migrateTo brings the new database at dsn to schema version v the way an
// older perfbot left it: the migrations up to v and no further. The
// provider it returns can move the schema on or back.
func migrateTo(t *testing.T, dsn string, v int64) *goose.Provider {
	t.Helper()
	d, err := store.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	dialect, dir := goose.DialectSQLite3, migrations.SQLite
	if d.Driver == store.DriverPostgres {
		dialect, dir = goose.DialectPostgres, migrations.Postgres
	}
	sub, err := fs.Sub(migrations.FS, dir)
	if err != nil {
		t.Fatal(err)
	}
	p, err := goose.NewProvider(dialect, raw(t, dsn), sub, goose.WithDisableGlobalRegistry(true))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(context.Background(), v); err != nil {
		t.Fatalf("migrate to version %d: %v", v, err)
	}
	return p
}
