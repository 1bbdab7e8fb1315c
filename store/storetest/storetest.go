// Package storetest is the test suite every store backend passes: Run
// from a TestXxx of the backend, Benchmark from a BenchmarkXxx. The suite
// asserts behaviour through store's API, and reads the database directly
// only to prove what the API cannot show (no half-written rows, the
// migration table, the cascade when a run is deleted).
package storetest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/store"
)

// Run runs the suite. fresh returns the address of a new, empty database
// that lives until tb's test ends; every call returns a different one, so
// the subtests run in parallel.
func Run(t *testing.T, fresh func(tb testing.TB) string) {
	tests := []struct {
		name string
		fn   func(t *testing.T, dsn string)
	}{
		{"RunRoundTripKeepsEveryField", testRoundTrip},
		{"FailedRunRoundTrip", testFailedRunRoundTrip},
		{"EveryAnalysisStatusIsAccepted", testStatuses},
		{"InvalidRunIsRefusedBeforeWriting", testInvalidRun},
		{"FailedSampleInsertLeavesNothing", testAtomicRun},
		{"InvalidJSONIsRefused", testInvalidJSON},
		{"CommitInfoIsFilledInAndKept", testCommitUpsert},
		{"ConcurrentWritersStoreEveryRun", testConcurrentWriters},
		{"RunsFilters", testRunsFilters},
		{"RunsLoadsSamplesOfManyRuns", testRunsManyRuns},
		{"HistoryNewestOkBaselineRuns", testHistory},
		{"HistoryMedianPerRun", testHistoryMedian},
		{"TrendFollowsOneKeySince", testTrend},
		{"ComparisonRoundTrip", testComparison},
		{"ComparisonNotFound", testComparisonNotFound},
		{"OpenTwiceIsIdempotent", testOpenTwice},
		{"MigrateReportsWhatItApplied", testMigrate},
		{"ConcurrentOpensOfANewDatabase", testConcurrentOpen},
		{"SchemaTooNewIsRefused", testSchemaTooNew},
		{"DeliveryIsFirstSeenOnceAcrossWriters", testDeliveries},
		{"ProfilesRoundTripByteForByte", testProfilesRoundTrip},
		{"ProfilesOfManyRuns", testProfilesOfManyRuns},
		{"FailedRunLeavesNoProfiles", testAtomicRunWithProfiles},
		{"DeletingARunDeletesItsProfiles", testDeletingARunDeletesItsProfiles},
		{"ProfilesMigrationAppliesOnVersion2", testProfilesMigrationOnVersion2},
		{"ToolRoundTripAndHistoryKeepsTimedRunsOnly", testToolRoundTripAndHistoryKeepsTimedRunsOnly},
		{"ToolMigrationAppliesOnVersion3", testToolMigrationOnVersion3},
		{"RunValuesOfOneSetupEveryKind", testRunValuesOfOneSetupEveryKind},
		{"BisectRunsStayOutOfHistoryAndTrend", testBisectRunsStayOutOfHistoryAndTrend},
		{"BisectKindMigrationAppliesOnVersion4", testBisectKindMigrationOnVersion4},
		{"ChangeIsClaimedOnceAcrossWriters", testChangeIsClaimedOnceAcrossWriters},
		{"SpansRoundTripWithTheRun", testSpansRoundTrip},
		{"RoundRoundTripWithTheRun", testRoundRoundTrip},
		{"RoundMigrationAppliesOnVersion12", testRoundMigrationOnVersion12},
		{"SessionsKeepKilledRunsOutOfReuse", testSessionsKeepKilledRunsOutOfReuse},
		{"EndedSessionComparison", testEndedSessionComparison},
		{"ResolveCommit", testResolveCommit},
		{"RecentComparisons", testRecentComparisons},
		{"PairAndCommitComparisons", testPairAndCommitComparisons},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.fn(t, fresh(t))
		})
	}
}

// Fixtures: names and values shaped like the prover's output.
const (
	repo  = "github.com/perfbot/perfbot"
	bench = "Prove/circuit=sha256/constraints=65536/backend=cpu"
	sha1  = "8f14e45fceea167a5a36dedd4bea2543a0b4c2d1"
	sha2  = "c9f0f895fb98ab9159f51fd0297e236d7b1a3e55"
	sha3  = "45c48cce2e2d7fbdea1afc51c7c6ad26e2a9b0a7"
)

var (
	t0     = time.Date(2026, 11, 2, 9, 30, 0, 0, time.UTC)
	phases = []string{"synthesis", "ntt", "msm_a", "msm_b1", "msm_b2", "msm_l", "msm_h", "msm_h/step=sort", "assemble", "total"}
	units  = []string{"sec/op", "instructions/op", "page-faults/op", "gpu-sec/op", "B/op"}
)

func key(phase, unit string) analysis.Key {
	return analysis.Key{Benchmark: bench, Phase: phase, Unit: unit}
}

func sample(phase, unit string, v float64) analysis.Sample {
	return analysis.Sample{Key: key(phase, unit), Value: v}
}

// baseline returns an ok baseline run of sha on machine gpu-1 that
// started at t0 plus hour hours.
func baseline(sha string, hour int, samples ...analysis.Sample) *store.RunRecord {
	start := t0.Add(time.Duration(hour) * time.Hour)
	return &store.RunRecord{
		Repo:       repo,
		Commit:     store.Commit{SHA: sha},
		Kind:       store.KindBaseline,
		ConfigHash: "cfg-a",
		Machine:    "gpu-1",
		StartedAt:  start,
		EndedAt:    start.Add(42 * time.Second),
		Status:     analysis.StatusOK,
		Samples:    samples,
	}
}

// open opens dsn and closes it when t ends.
func open(t testing.TB, dsn string, opts store.Options) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), dsn, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return db
}

// raw opens dsn without store, to look at rows the API does not show.
func raw(t testing.TB, dsn string) *sql.DB {
	t.Helper()
	d, err := store.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open(d.Driver, d.Source)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func count(t testing.TB, db *sql.DB, table string) int {
	t.Helper()
	var n int
	if err := db.QueryRow("SELECT count(*) FROM " + table).Scan(&n); err != nil {
		t.Fatalf("count %s: %v", table, err)
	}
	return n
}

func save(t testing.TB, db *store.DB, r *store.RunRecord) int64 {
	t.Helper()
	id, err := db.SaveRun(context.Background(), r)
	if err != nil {
		t.Fatalf("SaveRun: %v", err)
	}
	return id
}

func runs(t testing.TB, db *store.DB, q store.RunQuery) []store.RunRecord {
	t.Helper()
	rs, err := db.Runs(context.Background(), q)
	if err != nil {
		t.Fatalf("Runs(%+v): %v", q, err)
	}
	return rs
}

func ids(rs []store.RunRecord) []int64 {
	out := make([]int64, len(rs))
	for i, r := range rs {
		out[i] = r.ID
	}
	return out
}

// stored returns r as the store gives it back: with its id, times in UTC
// at microsecond precision.
func stored(r store.RunRecord, id int64) store.RunRecord {
	r.ID = id
	r.StartedAt = r.StartedAt.UTC().Truncate(time.Microsecond)
	r.EndedAt = r.EndedAt.UTC().Truncate(time.Microsecond)
	r.Commit.AuthorTime = r.Commit.AuthorTime.UTC().Truncate(time.Microsecond)
	if r.Commit.AuthorTime.Equal(time.Time{}.UTC()) {
		r.Commit.AuthorTime = time.Time{}
	}
	return r
}

func testRoundTrip(t *testing.T, dsn string) {
	db := open(t, dsn, store.Options{})
	cet := time.FixedZone("CET", 3600)
	var samples []analysis.Sample
	for i, p := range phases {
		samples = append(samples,
			sample(p, "sec/op", 0.812345678901+float64(i)),
			sample(p, "instructions/op", 1.2e9+float64(i)),
		)
	}
	samples = append(samples,
		sample("synthesis", "sec/op", 0.8111), // a second value for one key (-count 2)
		analysis.Sample{Key: analysis.Key{Benchmark: "MultiExpG1/points=1048576", Unit: "sec/op"}, Value: 0.0210},
		sample("total", "page-faults/op", 0),
		sample("total", "B/op", 1e-300),
		sample("msm_h", "gpu-sec/op", -0.5), // negative values are data too
	)
	want := store.RunRecord{
		Repo: repo,
		Commit: store.Commit{
			SHA:        sha2,
			Parents:    []string{sha1, sha3},
			AuthorTime: time.Date(2026, 10, 30, 18, 4, 5, 123456789, cet),
			Subject:    "msm: signed window digits (−7% msm_h)",
		},
		Kind:       store.KindCompare,
		ConfigHash: "sha256:4f1c",
		Config:     `{"circuit": "sha256", "constraints": 65536, "count": 10, "args": ["-backend=cpu"]}`,
		Machine:    "h200-a",
		Env:        `{"cpu":"Intel Xeon","gpu":"NVIDIA H200","driver":"580.159.04","kernel":"6.8.0"}`,
		StartedAt:  time.Date(2026, 11, 2, 10, 0, 1, 999999999, cet),
		EndedAt:    time.Date(2026, 11, 2, 10, 3, 7, 500, cet),
		Status:     analysis.StatusOK,
		Detail:     "exit status 0\nwarning: GPU clock 1980 MHz → 1755 MHz",
		Samples:    samples,
	}
	in := want
	id := save(t, db, &in)
	if !reflect.DeepEqual(in, want) {
		t.Errorf("SaveRun modified its argument")
	}
	if id <= 0 {
		t.Fatalf("SaveRun id = %d, want > 0", id)
	}
	got := runs(t, db, store.RunQuery{Repo: repo})
	if len(got) != 1 {
		t.Fatalf("Runs: got %d runs, want 1", len(got))
	}
	w := stored(want, id)
	if !reflect.DeepEqual(got[0], w) {
		t.Errorf("round trip:\n got %+v\nwant %+v", got[0], w)
	}
	if got[0].StartedAt.Location() != time.UTC {
		t.Errorf("StartedAt location = %v, want UTC", got[0].StartedAt.Location())
	}
	if r := got[0].Run(); r.Revision != sha2 || r.Status != analysis.StatusOK || len(r.Samples) != len(samples) {
		t.Errorf("Run() = %+v", r)
	}
}

func testFailedRunRoundTrip(t *testing.T, dsn string) {
	db := open(t, dsn, store.Options{})
	want := store.RunRecord{
		Repo:      "/home/ci/prover",
		Commit:    store.Commit{SHA: sha1},
		Kind:      store.KindBaseline,
		StartedAt: t0,
		Status:    analysis.StatusBuildFailed,
		Detail:    "go build: exit status 1\n./prove.go:12:2: undefined: msm",
	}
	id := save(t, db, &want)
	got := runs(t, db, store.RunQuery{})
	if len(got) != 1 || !reflect.DeepEqual(got[0], stored(want, id)) {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, stored(want, id))
	}
}

func testStatuses(t *testing.T, dsn string) {
	db := open(t, dsn, store.Options{})
	for i, s := range analysis.Statuses {
		r := baseline(sha1, i)
		r.Status = s
		save(t, db, r)
	}
	for _, s := range analysis.Statuses {
		got := runs(t, db, store.RunQuery{Status: s})
		if len(got) != 1 || got[0].Status != s {
			t.Errorf("Runs(Status: %s) = %d runs, want 1 with that status", s, len(got))
		}
	}
	// The database's CHECK matches analysis.Statuses: it refuses others
	// even when store's own validation is bypassed.
	r := raw(t, dsn)
	_, err := r.Exec(`INSERT INTO runs (repo_id, commit_sha, kind, started_at, status)
		SELECT repo_id, sha, 'baseline', '2026-11-02T09:30:00.000000Z', 'flaky' FROM commits`)
	if err == nil {
		t.Errorf("inserting status 'flaky' directly: no error, want a CHECK violation")
	}
}

func testInvalidRun(t *testing.T, dsn string) {
	db := open(t, dsn, store.Options{})
	for _, tc := range []struct {
		name   string
		modify func(r *store.RunRecord)
		want   string
	}{
		{"no repo", func(r *store.RunRecord) { r.Repo = "" }, "no repository"},
		{"no commit", func(r *store.RunRecord) { r.Commit.SHA = "" }, "no commit"},
		{"unknown kind", func(r *store.RunRecord) { r.Kind = "nightly" }, `unknown kind "nightly"`},
		{"unknown status", func(r *store.RunRecord) { r.Status = "flaky" }, `unknown status "flaky"`},
		{"no start", func(r *store.RunRecord) { r.StartedAt = time.Time{} }, "no start time"},
		{"negative round", func(r *store.RunRecord) { r.Round = -1 }, "round -1"},
	} {
		r := baseline(sha1, 0, sample("total", "sec/op", 1))
		tc.modify(r)
		_, err := db.SaveRun(context.Background(), r)
		if err == nil || !strings.HasPrefix(err.Error(), "save run: ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: SaveRun error = %v, want save run: …%s…", tc.name, err, tc.want)
		}
	}
	if got := runs(t, db, store.RunQuery{}); len(got) != 0 {
		t.Errorf("after refused runs: %d runs stored, want 0", len(got))
	}
}

func testAtomicRun(t *testing.T, dsn string) {
	db := open(t, dsn, store.Options{})
	rdb := raw(t, dsn)
	// The bad sample comes after 600 good ones (more than one INSERT's
	// worth), so the run row and samples are written before it fails.
	bad := []struct {
		name string
		s    analysis.Sample
	}{
		{"NaN", sample("msm_h", "sec/op", math.NaN())},
		{"+Inf", sample("msm_h", "sec/op", math.Inf(1))},
		{"-Inf", sample("msm_h", "sec/op", math.Inf(-1))},
		{"empty unit", sample("msm_h", "", 1)},
		{"empty benchmark", analysis.Sample{Key: analysis.Key{Phase: "ntt", Unit: "sec/op"}, Value: 1}},
	}
	for _, b := range bad {
		r := baseline(sha1, 0)
		for i := range 600 {
			r.Samples = append(r.Samples, sample(phases[i%len(phases)], "sec/op", float64(i)))
		}
		r.Samples = append(r.Samples, b.s)
		_, err := db.SaveRun(context.Background(), r)
		if err == nil || !strings.HasPrefix(err.Error(), "save run: samples: ") {
			t.Errorf("%s: SaveRun error = %v, want save run: samples: …", b.name, err)
		}
		t.Logf("%s: %v", b.name, err)
	}
	for _, table := range []string{"runs", "samples", "commits", "repos"} {
		if n := count(t, rdb, table); n != 0 {
			t.Errorf("after failed runs: %d rows in %s, want 0", n, table)
		}
	}
	// The store still works afterwards.
	save(t, db, baseline(sha1, 0, sample("total", "sec/op", 2.5)))
	if n := count(t, rdb, "samples"); n != 1 {
		t.Errorf("after a good run: %d samples, want 1", n)
	}
}

func testInvalidJSON(t *testing.T, dsn string) {
	db := open(t, dsn, store.Options{})
	r := baseline(sha1, 0)
	r.Config = `{"count": 10`
	if _, err := db.SaveRun(context.Background(), r); err == nil {
		t.Errorf("SaveRun with Config %q: no error", r.Config)
	}
	r = baseline(sha1, 0)
	r.Env = "gpu=H200"
	if _, err := db.SaveRun(context.Background(), r); err == nil {
		t.Errorf("SaveRun with Env %q: no error", r.Env)
	}
	c := &store.Comparison{Repo: repo, BaseSHA: sha1, HeadSHA: sha2, Report: "<html>"}
	if _, err := db.SaveComparison(context.Background(), c); err == nil {
		t.Errorf("SaveComparison with Report %q: no error", c.Report)
	}
}

func testCommitUpsert(t *testing.T, dsn string) {
	db := open(t, dsn, store.Options{})
	author := time.Date(2026, 10, 30, 18, 4, 5, 0, time.UTC)
	full := store.Commit{SHA: sha2, Parents: []string{sha1}, AuthorTime: author, Subject: "ntt: coset twiddles on device"}

	save(t, db, baseline(sha2, 0)) // SHA only
	r := baseline(sha2, 1)
	r.Commit = full
	save(t, db, r)
	save(t, db, baseline(sha2, 2)) // SHA only again: keeps what is known
	r = baseline(sha2, 3)
	r.Commit = store.Commit{SHA: sha2, Subject: "ntt: coset twiddles on device (amended)"}
	save(t, db, r) // only a subject: the rest stays

	got := runs(t, db, store.RunQuery{})
	if len(got) != 4 {
		t.Fatalf("Runs: %d runs, want 4", len(got))
	}
	want := full
	want.Subject = "ntt: coset twiddles on device (amended)"
	for i, r := range got {
		if !reflect.DeepEqual(r.Commit, want) {
			t.Errorf("run %d commit = %+v, want %+v", i, r.Commit, want)
		}
	}
	if n := count(t, raw(t, dsn), "commits"); n != 1 {
		t.Errorf("%d commit rows, want 1", n)
	}
}

func testConcurrentWriters(t *testing.T, dsn string) {
	db := open(t, dsn, store.Options{})
	const writers, perWriter, samplesPerRun = 8, 10, 20
	shas := []string{sha1, sha2, sha3}
	var wg sync.WaitGroup
	errs := make(chan error, writers*perWriter)
	for w := range writers {
		wg.Go(func() {
			for i := range perWriter {
				r := baseline(shas[(w+i)%len(shas)], w*perWriter+i)
				r.Detail = fmt.Sprintf("writer=%d run=%d", w, i)
				for j := range samplesPerRun {
					r.Samples = append(r.Samples, sample(phases[j%len(phases)], units[j%len(units)], float64(w*10000+i*100+j)))
				}
				if _, err := db.SaveRun(context.Background(), r); err != nil {
					errs <- fmt.Errorf("writer %d run %d: %w", w, i, err)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	got := runs(t, db, store.RunQuery{Repo: repo})
	if len(got) != writers*perWriter {
		t.Fatalf("Runs: %d runs, want %d", len(got), writers*perWriter)
	}
	seenID := map[int64]bool{}
	seenDetail := map[string]bool{}
	for _, r := range got {
		if seenID[r.ID] || seenDetail[r.Detail] {
			t.Errorf("duplicate run id %d / %q", r.ID, r.Detail)
		}
		seenID[r.ID], seenDetail[r.Detail] = true, true
		var w, i int
		if _, err := fmt.Sscanf(r.Detail, "writer=%d run=%d", &w, &i); err != nil {
			t.Fatalf("detail %q: %v", r.Detail, err)
		}
		if len(r.Samples) != samplesPerRun {
			t.Errorf("%s: %d samples, want %d", r.Detail, len(r.Samples), samplesPerRun)
			continue
		}
		for j, s := range r.Samples {
			if want := float64(w*10000 + i*100 + j); s.Value != want || s.Key != key(phases[j%len(phases)], units[j%len(units)]) {
				t.Errorf("%s sample %d = %v, want %v", r.Detail, j, s, want)
			}
		}
	}
	if n := count(t, raw(t, dsn), "repos"); n != 1 {
		t.Errorf("%d repos, want 1", n)
	}
}

func testRunsFilters(t *testing.T, dsn string) {
	db := open(t, dsn, store.Options{})
	mk := func(sha string, hour int, modify func(r *store.RunRecord)) int64 {
		r := baseline(sha, hour, sample("total", "sec/op", float64(hour)))
		if modify != nil {
			modify(r)
		}
		return save(t, db, r)
	}
	// Saved out of time order: Runs orders by start time.
	b3 := mk(sha3, 3, nil)
	b1 := mk(sha1, 1, nil)
	b2 := mk(sha2, 2, nil)
	c1 := mk(sha1, 4, func(r *store.RunRecord) { r.Kind = store.KindCompare })
	c2 := mk(sha2, 5, func(r *store.RunRecord) { r.Kind = store.KindCompare })
	cal := mk(sha1, 6, func(r *store.RunRecord) { r.Kind = store.KindCalibrate })
	crash := mk(sha2, 7, func(r *store.RunRecord) {
		r.Status, r.Detail, r.Samples = analysis.StatusCrashed, "signal: killed", nil
	})
	cfgB := mk(sha1, 8, func(r *store.RunRecord) { r.ConfigHash = "cfg-b" })
	gpu2 := mk(sha1, 9, func(r *store.RunRecord) { r.Machine = "gpu-2" })
	other := mk(sha1, 10, func(r *store.RunRecord) { r.Repo = "github.com/other/prover" })

	for _, tc := range []struct {
		name string
		q    store.RunQuery
		want []int64
	}{
		{"all", store.RunQuery{}, []int64{b1, b2, b3, c1, c2, cal, crash, cfgB, gpu2, other}},
		{"repo", store.RunQuery{Repo: repo}, []int64{b1, b2, b3, c1, c2, cal, crash, cfgB, gpu2}},
		{"other repo", store.RunQuery{Repo: "github.com/other/prover"}, []int64{other}},
		{"unknown repo", store.RunQuery{Repo: "nope"}, []int64{}},
		{"commits", store.RunQuery{Repo: repo, Commits: []string{sha1, sha2}, Kind: store.KindCompare}, []int64{c1, c2}},
		{"one commit", store.RunQuery{Commits: []string{sha2}}, []int64{b2, c2, crash}},
		{"kind", store.RunQuery{Kind: store.KindCalibrate}, []int64{cal}},
		{"config", store.RunQuery{ConfigHash: "cfg-b"}, []int64{cfgB}},
		{"machine", store.RunQuery{Machine: "gpu-2"}, []int64{gpu2}},
		{"ok only", store.RunQuery{Repo: repo, Commits: []string{sha2}, Status: analysis.StatusOK}, []int64{b2, c2}},
		{"crashed", store.RunQuery{Status: analysis.StatusCrashed}, []int64{crash}},
		// The baselines of repo by time are b1 b2 b3 crash cfgB gpu2.
		{"limit keeps newest", store.RunQuery{Repo: repo, Kind: store.KindBaseline, Limit: 2}, []int64{cfgB, gpu2}},
	} {
		got := ids(runs(t, db, tc.q))
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: Runs(%+v) = ids %v, want %v", tc.name, tc.q, got, tc.want)
		}
	}
	got := runs(t, db, store.RunQuery{Commits: []string{sha3}})
	if len(got) != 1 || len(got[0].Samples) != 1 || got[0].Samples[0].Value != 3 {
		t.Errorf("Runs(sha3) = %+v, want run b3 with its sample", got)
	}
}

func testRunsManyRuns(t *testing.T, dsn string) {
	db := open(t, dsn, store.Options{})
	const n = 1203 // more than one query's worth of run ids
	for i := range n {
		save(t, db, baseline(sha1, i, sample("total", "sec/op", float64(i)), sample("ntt", "sec/op", float64(-i))))
	}
	got := runs(t, db, store.RunQuery{Repo: repo})
	if len(got) != n {
		t.Fatalf("Runs: %d runs, want %d", len(got), n)
	}
	for i, r := range got {
		want := []analysis.Sample{sample("total", "sec/op", float64(i)), sample("ntt", "sec/op", float64(-i))}
		if !reflect.DeepEqual(r.Samples, want) {
			t.Fatalf("run %d samples = %v, want %v", i, r.Samples, want)
		}
	}
}

func testHistory(t *testing.T, dsn string) {
	db := open(t, dsn, store.Options{})
	ctx := context.Background()
	synth, ntt, faults := key("synthesis", "sec/op"), key("ntt", "sec/op"), key("synthesis", "page-faults/op")
	// Ok baseline runs at hours 1..6, saved out of order; only the first
	// three measured ntt.
	for _, h := range []int{4, 1, 6, 2, 5, 3} {
		s := []analysis.Sample{
			{Key: synth, Value: float64(800+h) / 1000},
			{Key: faults, Value: float64(40 + h)},
		}
		if h <= 3 {
			s = append(s, analysis.Sample{Key: ntt, Value: float64(100+h) / 1000})
		}
		save(t, db, baseline(sha1, h, s...))
	}
	// Runs History must ignore.
	ignored := []func(r *store.RunRecord){
		func(r *store.RunRecord) { r.Status = analysis.StatusCrashed },
		func(r *store.RunRecord) { r.Status = analysis.StatusTimedOut },
		func(r *store.RunRecord) { r.Kind = store.KindCompare },
		func(r *store.RunRecord) { r.Kind = store.KindCalibrate },
		func(r *store.RunRecord) { r.Repo = "github.com/other/prover" },
		func(r *store.RunRecord) { r.Machine = "gpu-2" },
		func(r *store.RunRecord) { r.ConfigHash = "cfg-b" },
	}
	for i, modify := range ignored {
		r := baseline(sha2, 7+i, analysis.Sample{Key: synth, Value: 9}, analysis.Sample{Key: ntt, Value: 9})
		modify(r)
		save(t, db, r)
	}

	check := func(name string, q store.HistoryQuery, want map[analysis.Key][]float64) {
		t.Helper()
		got, err := db.History(ctx, q)
		if err != nil {
			t.Fatalf("%s: History: %v", name, err)
		}
		if !maps.EqualFunc(got, want, slices.Equal) {
			t.Errorf("%s: History(%+v)\n got %v\nwant %v", name, q, got, want)
		}
	}
	q := store.HistoryQuery{Repo: repo, Machine: "gpu-1", ConfigHash: "cfg-a", Limit: 4}
	check("newest 4 runs", q, map[analysis.Key][]float64{
		synth:  {0.803, 0.804, 0.805, 0.806},
		faults: {43, 44, 45, 46},
		ntt:    {0.103}, // of the newest 4 runs, only one has it
	})
	q.Keys = []analysis.Key{synth, key("msm_h", "sec/op")}
	check("keys", q, map[analysis.Key][]float64{
		synth: {0.803, 0.804, 0.805, 0.806},
	})
	q.Keys, q.Limit = []analysis.Key{ntt}, 5
	check("key missing from newer runs", q, map[analysis.Key][]float64{
		ntt: {0.102, 0.103},
	})
	q.Keys, q.Limit = []analysis.Key{faults}, 0
	check("no limit", q, map[analysis.Key][]float64{faults: {41, 42, 43, 44, 45, 46}})
	check("unknown repo", store.HistoryQuery{Repo: "nope", Limit: 3}, map[analysis.Key][]float64{})
	// Without machine and config filters, the other machine's and
	// configuration's runs (hours 12, 13) count.
	check("any machine", store.HistoryQuery{Repo: repo, Keys: []analysis.Key{synth}, Limit: 3},
		map[analysis.Key][]float64{synth: {0.806, 9, 9}})
}

func testHistoryMedian(t *testing.T, dsn string) {
	db := open(t, dsn, store.Options{})
	k := key("msm_h", "sec/op")
	s := func(vs ...float64) []analysis.Sample {
		var out []analysis.Sample
		for _, v := range vs {
			out = append(out, analysis.Sample{Key: k, Value: v})
		}
		return out
	}
	save(t, db, baseline(sha1, 1, s(0.40, 0.46, 0.41)...))       // median 0.41
	save(t, db, baseline(sha1, 2, s(0.42, 0.40)...))             // median 0.41
	save(t, db, baseline(sha1, 3, s(0.43)...))                   // 0.43
	save(t, db, baseline(sha2, 3, s(0.50, 0.44, 0.39, 0.45)...)) // same start as the run before: id breaks the tie; median 0.445
	got, err := db.History(context.Background(), store.HistoryQuery{Repo: repo, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{0.41, 0.41, 0.43, 0.445}
	if len(got[k]) != len(want) {
		t.Fatalf("History = %v, want %v", got[k], want)
	}
	for i := range want {
		if math.Abs(got[k][i]-want[i]) > 1e-12 {
			t.Errorf("History = %v, want %v", got[k], want)
			break
		}
	}
	got, err = db.History(context.Background(), store.HistoryQuery{Repo: repo, Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(got[k]) != 2 || got[k][0] != 0.43 || math.Abs(got[k][1]-0.445) > 1e-12 {
		t.Errorf("History limit 2 = %v, want [0.43 0.445] (runs, not samples, are counted)", got[k])
	}
}

func testTrend(t *testing.T, dsn string) {
	db := open(t, dsn, store.Options{})
	ctx := context.Background()
	k := key("total", "sec/op")
	id1 := save(t, db, baseline(sha1, 1, sample("total", "sec/op", 2.31)))
	id2 := save(t, db, baseline(sha2, 2, sample("total", "sec/op", 2.40), sample("total", "sec/op", 2.30), sample("total", "sec/op", 2.35)))
	r := baseline(sha3, 3, sample("total", "sec/op", 2.20))
	r.Machine = "gpu-2"
	id3 := save(t, db, r)
	r = baseline(sha3, 4, sample("total", "sec/op", 9))
	r.Status = analysis.StatusCrashed
	save(t, db, r)
	r = baseline(sha3, 5, sample("total", "sec/op", 9))
	r.Kind = store.KindCompare
	save(t, db, r)
	save(t, db, baseline(sha3, 6, sample("ntt", "sec/op", 9))) // other key

	got, err := db.Trend(ctx, repo, k, t0.Add(90*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	want := []store.TrendPoint{
		{RunID: id2, Commit: sha2, Machine: "gpu-1", StartedAt: t0.Add(2 * time.Hour), Value: 2.35},
		{RunID: id3, Commit: sha3, Machine: "gpu-2", StartedAt: t0.Add(3 * time.Hour), Value: 2.20},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Trend since 1h30:\n got %+v\nwant %+v", got, want)
	}
	// since is inclusive.
	got, err = db.Trend(ctx, repo, k, t0.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].RunID != id1 {
		t.Errorf("Trend since 1h = %+v, want 3 points from run %d", got, id1)
	}
	got, err = db.Trend(ctx, repo, key("msm_a", "sec/op"), time.Time{})
	if err != nil || len(got) != 0 {
		t.Errorf("Trend of a key no run has = %v, %v; want none", got, err)
	}
	// A zero since is no lower bound.
	got, err = db.Trend(ctx, repo, k, time.Time{})
	if err != nil || len(got) != 3 || got[0].RunID != id1 {
		t.Errorf("Trend since the zero time = %+v, %v; want all 3 points from run %d", got, err, id1)
	}
}

func testComparison(t *testing.T, dsn string) {
	db := open(t, dsn, store.Options{})
	ctx := context.Background()
	want := store.Comparison{
		Repo:      repo,
		BaseSHA:   sha1,
		HeadSHA:   sha2,
		CreatedAt: time.Date(2026, 11, 2, 11, 15, 0, 250_000_999, time.FixedZone("PST", -8*3600)),
		Verdict:   "regression",
		Inputs:    `{"base_runs": [1, 3, 5], "head_runs": [2, 4, 6], "alpha": 0.05}`,
		Report:    `{"rows":[{"phase":"msm_h","delta":0.071,"p":0.002}]}`,
		Markdown:  "<!-- perfbot:summary -->\n| phase | Δ |\n|---|---|\n| msm_h | +7.1% |\n",
	}
	in := want
	id, err := db.SaveComparison(ctx, &in)
	if err != nil {
		t.Fatal(err)
	}
	got, err := db.Comparison(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	want.ID = id
	want.CreatedAt = want.CreatedAt.UTC().Truncate(time.Microsecond)
	if !reflect.DeepEqual(*got, want) {
		t.Errorf("round trip:\n got %+v\nwant %+v", *got, want)
	}

	// Zero CreatedAt means now; empty JSON stays empty.
	before := time.Now().Add(-time.Second)
	id2, err := db.SaveComparison(ctx, &store.Comparison{Repo: "github.com/other/prover", BaseSHA: sha2, HeadSHA: sha3, Verdict: "inconclusive"})
	if err != nil {
		t.Fatal(err)
	}
	got, err = db.Comparison(ctx, id2)
	if err != nil {
		t.Fatal(err)
	}
	if got.CreatedAt.Before(before) || got.CreatedAt.After(time.Now().Add(time.Second)) || got.Inputs != "" || got.Report != "" || id2 == id {
		t.Errorf("second comparison = %+v (id %d), want created now, no JSON, a new id", got, id2)
	}
	if _, err := db.SaveComparison(ctx, &store.Comparison{Repo: repo, BaseSHA: sha1}); err == nil {
		t.Errorf("SaveComparison without head: no error")
	}
	if _, err := db.SaveComparison(ctx, &store.Comparison{Repo: repo, BaseSHA: sha1, HeadSHA: sha3, Verdict: "regression"}); err != nil {
		t.Fatal(err)
	}
	counts, err := db.ComparisonCounts(ctx)
	if want := map[string]int64{"regression": 2, "inconclusive": 1}; err != nil || !maps.Equal(counts, want) {
		t.Errorf("ComparisonCounts = %v, %v; want %v", counts, err, want)
	}
}

func testComparisonNotFound(t *testing.T, dsn string) {
	db := open(t, dsn, store.Options{})
	_, err := db.Comparison(context.Background(), 4242)
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Comparison(4242) error = %v, want ErrNotFound", err)
	}
	if want := "comparison 4242: not found"; err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}
}

func testOpenTwice(t *testing.T, dsn string) {
	db := open(t, dsn, store.Options{})
	id := save(t, db, baseline(sha1, 0, sample("total", "sec/op", 2.3)))
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db2 := open(t, dsn, store.Options{})
	applied, err := db2.Migrate(context.Background())
	if err != nil || len(applied) != 0 {
		t.Errorf("Migrate on a migrated database = %v, %v; want nothing applied", applied, err)
	}
	cur, latest, err := db2.SchemaVersion(context.Background())
	if err != nil || cur != latest || cur < 1 {
		t.Errorf("SchemaVersion = %d, %d, %v; want equal, at least 1", cur, latest, err)
	}
	got := runs(t, db2, store.RunQuery{})
	if len(got) != 1 || got[0].ID != id || len(got[0].Samples) != 1 {
		t.Errorf("after reopening: %+v, want run %d with its sample", got, id)
	}
}

func testMigrate(t *testing.T, dsn string) {
	db := open(t, dsn, store.Options{NoMigrate: true})
	ctx := context.Background()
	applied, err := db.Migrate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(applied) == 0 || applied[0].Version != 1 || applied[0].Name != "00001_init.sql" {
		t.Fatalf("Migrate on a new database = %+v, want 00001_init.sql first", applied)
	}
	// Versions increase within each line: perfbot's own, then (on
	// PostgreSQL) River's job queue, whose names start with "river/".
	river := 0
	// perfbot's indexes on River's tables ("queue/NAME") come last.
	for len(applied) > 0 && strings.HasPrefix(applied[len(applied)-1].Name, "queue/") {
		applied = applied[:len(applied)-1]
	}
	for i, m := range applied[1:] {
		prev := applied[i]
		if strings.HasPrefix(m.Name, "river/") {
			river++
			if strings.HasPrefix(prev.Name, "river/") && m.Version <= prev.Version {
				t.Errorf("Migrate: River versions not increasing: %+v", applied)
			}
			continue
		}
		if strings.HasPrefix(prev.Name, "river/") || m.Version <= prev.Version {
			t.Errorf("Migrate: perfbot versions not increasing, or after River's: %+v", applied)
		}
	}
	if postgres := strings.HasPrefix(dsn, "postgres"); postgres != (river > 0) {
		t.Errorf("Migrate applied %d River migrations on %s; want some on PostgreSQL only", river, dsn)
	}
	applied, err = db.Migrate(ctx)
	if err != nil || len(applied) != 0 {
		t.Errorf("second Migrate = %v, %v; want nothing applied", applied, err)
	}
	save(t, db, baseline(sha1, 0))
}

func testConcurrentOpen(t *testing.T, dsn string) {
	// Several processes starting at once on a new database: one migrates,
	// the others wait or find the work done.
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	dbs := make([]*store.DB, n)
	for i := range n {
		wg.Go(func() { dbs[i], errs[i] = store.Open(context.Background(), dsn, store.Options{}) })
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Errorf("Open %d: %v", i, errs[i])
			continue
		}
		save(t, dbs[i], baseline(sha1, i))
		dbs[i].Close()
	}
	if n := count(t, raw(t, dsn), "runs"); n != len(dbs) {
		t.Errorf("%d runs, want %d", n, len(dbs))
	}
}

func testSchemaTooNew(t *testing.T, dsn string) {
	db := open(t, dsn, store.Options{})
	_, latest, err := db.SchemaVersion(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	future := latest + 1
	if _, err := raw(t, dsn).Exec(fmt.Sprintf(
		"INSERT INTO goose_db_version (version_id, is_applied) VALUES (%d, TRUE)", future)); err != nil {
		t.Fatal(err)
	}
	for _, opts := range []store.Options{{}, {NoMigrate: true}} {
		db, err := store.Open(context.Background(), dsn, opts)
		if opts.NoMigrate {
			if err != nil {
				t.Fatalf("Open(NoMigrate): %v", err)
			}
			_, err = db.Migrate(context.Background())
			db.Close()
		} else if err == nil {
			db.Close()
		}
		if !errors.Is(err, store.ErrSchemaTooNew) {
			t.Fatalf("Open/Migrate of a newer schema: error = %v, want ErrSchemaTooNew", err)
		}
		msg := err.Error()
		t.Logf("refused: %v", err)
		for _, want := range []string{fmt.Sprintf("version %d", future), fmt.Sprintf("up to %d", latest), "upgrade perfbot"} {
			if !strings.Contains(msg, want) {
				t.Errorf("error %q does not say %q", msg, want)
			}
		}
	}
}

func testDeliveries(t *testing.T, dsn string) {
	db := open(t, dsn, store.Options{})
	ctx := context.Background()
	// Eight writers race to record the same two ids: each id is first
	// seen exactly once.
	const writers = 8
	var wg sync.WaitGroup
	firsts := make(chan string, 2*writers)
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, id := range []string{"d-1", "d-2"} {
				first, err := db.FirstSeen(ctx, id)
				if err != nil {
					t.Errorf("FirstSeen(%s): %v", id, err)
					return
				}
				if first {
					firsts <- id
				}
			}
		}()
	}
	wg.Wait()
	close(firsts)
	var got []string
	for id := range firsts {
		got = append(got, id)
	}
	slices.Sort(got)
	if !slices.Equal(got, []string{"d-1", "d-2"}) {
		t.Errorf("first sightings = %v, want [d-1 d-2]", got)
	}
	// A forgotten id (its handling failed) is first seen again.
	if err := db.Forget(ctx, "d-1"); err != nil {
		t.Fatal(err)
	}
	if first, err := db.FirstSeen(ctx, "d-1"); err != nil || !first {
		t.Errorf("FirstSeen after Forget = %v, %v; want true", first, err)
	}
	if _, err := db.FirstSeen(ctx, ""); err == nil {
		t.Error("FirstSeen(\"\") succeeded; want an error")
	}
	// Pruning by age: everything recorded so far is older than a cutoff in
	// the future, nothing is older than one in the past.
	if n, err := db.PruneDeliveries(ctx, time.Now().Add(-time.Hour)); err != nil || n != 0 {
		t.Errorf("PruneDeliveries(an hour ago) = %d, %v; want 0", n, err)
	}
	if n, err := db.PruneDeliveries(ctx, time.Now().Add(time.Minute)); err != nil || n != 2 {
		t.Errorf("PruneDeliveries(in a minute) = %d, %v; want 2", n, err)
	}
	if first, err := db.FirstSeen(ctx, "d-2"); err != nil || !first {
		t.Errorf("FirstSeen after pruning = %v, %v; want true", first, err)
	}
}
