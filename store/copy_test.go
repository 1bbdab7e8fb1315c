package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/store"
)

// The copy tests fill a source through store's API, copy it, and read
// both sides back through the API: every field of every run, session,
// comparison, trend point and reported change point must come out equal,
// with ids translated.

const (
	copyRepo  = "github.com/o/prover"
	copyLocal = "/src/prover"
	copyBench = "Prove/circuit=sha256/constraints=65536/backend=cpu"
)

var copyT0 = time.Date(2026, 12, 1, 8, 0, 0, 123456000, time.UTC)

// copySource is what fillCopySource stored.
type copySource struct {
	runs, samples, profiles, comparisons, commits int
}

func openCopyDB(t *testing.T, dsn string) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), dsn, store.Options{})
	if err != nil {
		t.Fatalf("open %s: %v", dsn, err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// fillCopySource stores runs of every kind, tool and status in two
// repositories (with spans, profiles, failed runs without samples, two
// runs that share every key field, rounds of their sessions and runs of
// no round), sessions in each state, comparisons
// whose inputs name runs, reported change points and a webhook delivery.
// samplesPerRun sets the size of the ok runs.
func fillCopySource(t *testing.T, db *store.DB, runs, samplesPerRun int) copySource {
	t.Helper()
	ctx := context.Background()
	var src copySource
	sessions := map[string]int64{}
	for _, s := range []store.Session{
		{Repo: copyRepo, Kind: store.KindCompare, Owner: "m1/boot/100/5", Label: "compare job 7 attempt 1"},
		{Repo: copyRepo, Kind: store.KindBaseline, Owner: "dead-host/boot/200/9", Label: "baseline job 8 attempt 1"},
		{Repo: copyRepo, Kind: store.KindBisect, Owner: "", Label: "perfbot bisect"},
	} {
		id, err := db.BeginSession(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		sessions[s.Label] = id
	}
	if err := db.EndSession(ctx, sessions["compare job 7 attempt 1"]); err != nil {
		t.Fatal(err)
	}
	if _, err := db.AbandonSessions(ctx, func(owner string) bool { return strings.HasPrefix(owner, "dead-host/") }); err != nil {
		t.Fatal(err)
	}
	sessionOf := []int64{0, sessions["compare job 7 attempt 1"], sessions["baseline job 8 attempt 1"], sessions["perfbot bisect"]}

	var ids []int64
	commits := map[string]bool{}
	for i := range runs {
		start := copyT0.Add(time.Duration(i) * time.Minute)
		sha := fmt.Sprintf("%040x", 0xabc000+i/3)
		r := &store.RunRecord{
			Repo: copyRepo,
			Commit: store.Commit{SHA: sha, Parents: []string{fmt.Sprintf("%040x", 0xabc000+i/3-1)},
				AuthorTime: start.Add(-time.Hour), Subject: fmt.Sprintf("commit %d: faster msm", i/3)},
			Kind:       store.Kinds[i%len(store.Kinds)],
			ConfigHash: fmt.Sprintf("cfg-%d", i%2),
			Config:     `{"benchmarks": [{"name": "prove", "count": 10}]}`,
			Machine:    []string{"gpu-1", "gpu-2"}[i%2],
			Env:        `{"cpu": "EPYC 9454", "gpu": "H200", "driver": "560.35"}`,
			StartedAt:  start,
			EndedAt:    start.Add(41*time.Second + 7*time.Microsecond),
			Status:     analysis.StatusOK,
			SessionID:  sessionOf[i%len(sessionOf)],
		}
		if r.SessionID != 0 {
			// Rounds 1, 2, … of each session; a run without a session
			// has none (0).
			r.Round = 1 + i/len(sessionOf)
		}
		if i%5 == 1 {
			r.Repo = copyLocal
		}
		if i%7 == 3 {
			r.Tool = analysis.ToolCallgrind
		}
		switch i % 6 {
		case 4:
			r.Status, r.Detail, r.EndedAt = analysis.StatusCrashed, "exit status 2\npanic: out of memory", time.Time{}
		default:
			for j := range samplesPerRun {
				phase := []string{"synthesis", "ntt", "msm_h", "total"}[j%4]
				unit := []string{"sec/op", "instructions/op", "B/op"}[j/4%3]
				v := 1.25 + float64(i)*0.01 + float64(j)*1e-7
				if j%11 == 0 {
					v = math.Nextafter(v, 2) // every bit of a float64 counts
				}
				if j%13 == 0 {
					v = 3.5e18
				}
				r.Samples = append(r.Samples, analysis.Sample{Key: analysis.Key{Benchmark: copyBench, Phase: phase, Unit: unit}, Value: v})
			}
		}
		if i%4 == 0 {
			r.Spans = []analysis.Span{{Benchmark: copyBench, Phase: "msm_b2", Proof: 0, Start: 0.512, End: 0.912, Lane: "host"},
				{Benchmark: copyBench, Phase: "msm_b2_wait", Proof: 0, Start: 0.88, End: 0.912, Waits: "msm_b2"}}
		}
		if i%3 == 2 && r.Status == analysis.StatusOK {
			r.Profiles = []analysis.Profile{
				{Benchmark: "prove", Kind: analysis.ProfileCPU, Data: []byte(fmt.Sprintf("\x1f\x8b cpu profile of run %d \x00\xff", i))},
				{Benchmark: "prove", Kind: analysis.ProfileMem, Data: []byte(strings.Repeat("m", 1000+i))},
			}
		}
		id, err := db.SaveRun(ctx, r)
		if err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		ids = append(ids, id)
		commits[r.Repo+" "+sha] = true
		src.runs++
		src.samples += len(r.Samples)
		src.profiles += len(r.Profiles)
		if i == 1 {
			// A second run with every key field of the first: both are
			// copied, each once.
			twin := *r
			twin.Samples = r.Samples[:len(r.Samples)/2]
			if _, err := db.SaveRun(ctx, &twin); err != nil {
				t.Fatal(err)
			}
			src.runs++
			src.samples += len(twin.Samples)
			src.profiles += len(twin.Profiles)
		}
	}

	for i := 0; i+1 < len(ids); i += 2 {
		inputs := fmt.Sprintf(`{"alpha":0.05,"base_runs":[%d],"config_hash":"cfg-0","head_runs":[%d],"seed":"18446744073709551615"}`, ids[i], ids[i+1])
		if _, err := db.SaveComparison(ctx, &store.Comparison{
			Repo: copyRepo, BaseSHA: fmt.Sprintf("%040x", 0xabc000+i/3), HeadSHA: fmt.Sprintf("%040x", 0xabc000+(i+1)/3),
			CreatedAt: copyT0.Add(time.Duration(i)*time.Hour + 3*time.Microsecond), Verdict: []string{"regression", "inconclusive", "no change"}[i%3],
			Inputs: inputs, Report: fmt.Sprintf(`{"verdict": "regression", "rows": [{"phase": "msm_h", "delta": %d.5}]}`, i),
			Markdown: fmt.Sprintf("## perfbot\n\nmsm_h +%d.5%% (p=0.001)\n", i), SessionID: sessionOf[i%len(sessionOf)], PR: i / 2,
		}); err != nil {
			t.Fatal(err)
		}
		src.comparisons++
	}
	src.commits = len(commits)
	for _, sha := range []string{fmt.Sprintf("%040x", 0xabc001), fmt.Sprintf("%040x", 0xabc002)} {
		if _, err := db.ClaimChange(ctx, store.ReportedChange{Repo: copyRepo, Machine: "gpu-1",
			Key: analysis.Key{Benchmark: copyBench, Phase: "msm_h", Unit: "sec/op"}, Commit: sha}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.FirstSeen(ctx, "delivery-72a1"); err != nil {
		t.Fatal(err)
	}
	return src
}

// A storeView is a store as its read API shows it, with no id in it:
// each run with its session, each comparison with its inputs' runs
// named by their content.
type storeView struct {
	Runs        []viewRun
	Comparisons []store.Comparison
	Trend       map[string][]store.TrendPoint
	Changes     map[string][]store.ReportedChange
}

type viewRun struct {
	Run     store.RunRecord
	Session store.Session
}

func viewOf(t *testing.T, db *store.DB) storeView {
	t.Helper()
	ctx := context.Background()
	v := storeView{Trend: map[string][]store.TrendPoint{}, Changes: map[string][]store.ReportedChange{}}
	name := map[int64]string{} // run id → which run it is, by content
	for _, repo := range []string{copyRepo, copyLocal} {
		runs, err := db.Runs(ctx, store.RunQuery{Repo: repo, Profiles: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range runs {
			var s store.Session
			if r.SessionID != 0 {
				got, err := db.Session(ctx, r.SessionID)
				if err != nil {
					t.Fatal(err)
				}
				s = *got
				s.ID = 0
			}
			name[r.ID] = fmt.Sprintf("%s %s %s %s %s %d samples", r.Repo, r.Commit.SHA[:8], r.Kind, r.Machine, r.StartedAt.Format(time.RFC3339Nano), len(r.Samples))
			r.ID, r.SessionID = 0, 0
			v.Runs = append(v.Runs, viewRun{r, s})
		}
		for _, unit := range []string{"sec/op", "B/op"} {
			k := analysis.Key{Benchmark: copyBench, Phase: "total", Unit: unit}
			points, err := db.Trend(ctx, repo, k, time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			for i := range points {
				points[i].RunID = 0
			}
			v.Trend[repo+" "+unit] = points
		}
		for _, m := range []string{"gpu-1", "gpu-2"} {
			changes, err := db.ReportedChanges(ctx, repo, m)
			if err != nil {
				t.Fatal(err)
			}
			v.Changes[repo+" "+m] = changes
		}
	}
	recent, err := db.RecentComparisons(ctx, 1000)
	if err != nil {
		t.Fatal(err)
	}
	for i := len(recent) - 1; i >= 0; i-- {
		c, err := db.Comparison(ctx, recent[i].ID)
		if err != nil {
			t.Fatal(err)
		}
		c.ID = 0
		// The inputs' run ids are each side's own: name the runs.
		var in map[string]any
		if err := json.Unmarshal([]byte(c.Inputs), &in); err != nil {
			t.Fatalf("comparison inputs %s: %v", c.Inputs, err)
		}
		for _, k := range []string{"base_runs", "head_runs"} {
			var names []string
			for _, id := range in[k].([]any) {
				n, ok := name[int64(id.(float64))]
				if !ok {
					t.Errorf("comparison %s..%s: %s names run %v, which is not in the store", c.BaseSHA[:8], c.HeadSHA[:8], k, id)
				}
				names = append(names, n)
			}
			in[k] = names
		}
		b, _ := json.Marshal(in)
		c.Inputs = string(b)
		v.Comparisons = append(v.Comparisons, *c)
	}
	return v
}

// sameView fails t where the two views differ, saying where.
func sameView(t *testing.T, got, want storeView) {
	t.Helper()
	if len(got.Runs) != len(want.Runs) {
		t.Fatalf("%d runs, want %d", len(got.Runs), len(want.Runs))
	}
	for i := range want.Runs {
		if !reflect.DeepEqual(got.Runs[i], want.Runs[i]) {
			g, w := got.Runs[i], want.Runs[i]
			g.Run.Samples, w.Run.Samples, g.Run.Profiles, w.Run.Profiles = nil, nil, nil, nil
			t.Errorf("run %d differs:\n got %+v\nwant %+v\n(samples equal: %v, profiles equal: %v)", i, g, w,
				reflect.DeepEqual(got.Runs[i].Run.Samples, want.Runs[i].Run.Samples),
				reflect.DeepEqual(got.Runs[i].Run.Profiles, want.Runs[i].Run.Profiles))
		}
	}
	if !reflect.DeepEqual(got.Comparisons, want.Comparisons) {
		t.Errorf("comparisons differ:\n got %+v\nwant %+v", got.Comparisons, want.Comparisons)
	}
	if !reflect.DeepEqual(got.Trend, want.Trend) {
		t.Errorf("trends differ:\n got %+v\nwant %+v", got.Trend, want.Trend)
	}
	if !reflect.DeepEqual(got.Changes, want.Changes) {
		t.Errorf("reported changes differ:\n got %+v\nwant %+v", got.Changes, want.Changes)
	}
}

func wantCount(t *testing.T, c store.TableCount, copied, present int64) {
	t.Helper()
	if c.Copied != copied || c.Present != present {
		t.Errorf("%s: %d copied, %d already there; want %d and %d", c.Table, c.Copied, c.Present, copied, present)
	}
}

// testCopyKeepsEverything copies a filled store into an empty one, checks
// every value on both sides and the counts, then copies again: nothing.
func testCopyKeepsEverything(t *testing.T, srcDSN, dstDSN string) {
	ctx := context.Background()
	src, dst := openCopyDB(t, srcDSN), openCopyDB(t, dstDSN)
	filled := fillCopySource(t, src, 24, 60)

	stats, err := store.Copy(ctx, src, dst, store.CopyOptions{})
	if err != nil {
		t.Fatalf("Copy: %v", err)
	}
	wantCount(t, stats.Repos, 2, 0)
	wantCount(t, stats.Runs, int64(filled.runs), 0)
	wantCount(t, stats.Samples, int64(filled.samples), 0)
	wantCount(t, stats.Profiles, int64(filled.profiles), 0)
	wantCount(t, stats.Comparisons, int64(filled.comparisons), 0)
	wantCount(t, stats.Sessions, 3, 0)
	wantCount(t, stats.ReportedChanges, 2, 0)
	wantCount(t, stats.Commits, int64(filled.commits), 0)
	if stats.Commits.Source != int64(filled.commits) {
		t.Errorf("commits: %+v; want %d in the source", stats.Commits, filled.commits)
	}
	if stats.Runs.Source != int64(filled.runs) || stats.Samples.Source != int64(filled.samples) {
		t.Errorf("source counts: runs %+v, samples %+v; want %d and %d", stats.Runs, stats.Samples, filled.runs, filled.samples)
	}
	want, got := viewOf(t, src), viewOf(t, dst)
	sameView(t, got, want)
	if len(want.Runs) != filled.runs || len(want.Comparisons) != filled.comparisons {
		t.Fatalf("the source reads back %d runs and %d comparisons; want %d and %d", len(want.Runs), len(want.Comparisons), filled.runs, filled.comparisons)
	}
	// The runs compared above had rounds: each run's survived the copy
	// with it, beside its session.
	rounds := map[int]int{}
	for _, r := range got.Runs {
		rounds[r.Run.Round]++
		if (r.Run.Round == 0) != (r.Session.Label == "") {
			t.Errorf("copied run %s in round %d of session %q; want a round exactly where there is a session", runName(r.Run), r.Run.Round, r.Session.Label)
		}
	}
	if len(rounds) != 7 || rounds[6] == 0 {
		t.Errorf("the copied runs by round: %v; want rounds 0 to 6", rounds)
	}

	// The server's inbox is not copied: the delivery is new to dst.
	if first, err := dst.FirstSeen(ctx, "delivery-72a1"); err != nil || !first {
		t.Errorf("FirstSeen on the destination = %v, %v; want true: webhook deliveries are not copied", first, err)
	}

	again, err := store.Copy(ctx, src, dst, store.CopyOptions{})
	if err != nil {
		t.Fatalf("second Copy: %v", err)
	}
	if again.Copied() != 0 {
		t.Errorf("second Copy wrote %d rows: %+v", again.Copied(), again.Tables())
	}
	wantCount(t, again.Runs, 0, int64(filled.runs))
	wantCount(t, again.Samples, 0, int64(filled.samples))
	wantCount(t, again.Profiles, 0, int64(filled.profiles))
	wantCount(t, again.Comparisons, 0, int64(filled.comparisons))
	wantCount(t, again.Sessions, 0, 3)
	wantCount(t, again.Commits, 0, int64(filled.commits))
	sameView(t, viewOf(t, dst), want)
}

func TestCopySQLiteToPostgresKeepsEverythingAndSecondCopyWritesNothing(t *testing.T) {
	t.Parallel()
	testCopyKeepsEverything(t, sqliteDB(t), postgresDB(t)(t))
}

func TestCopySQLiteToSQLiteKeepsEverythingAndSecondCopyWritesNothing(t *testing.T) {
	t.Parallel()
	testCopyKeepsEverything(t, sqliteDB(t), sqliteDB(t))
}

func TestCopyPostgresToSQLiteKeepsEverythingAndSecondCopyWritesNothing(t *testing.T) {
	t.Parallel()
	testCopyKeepsEverything(t, postgresDB(t)(t), sqliteDB(t))
}

// runsByName returns the runs of a view by runName.
func runsByName(v storeView) map[string]viewRun {
	out := map[string]viewRun{}
	for _, r := range v.Runs {
		out[runName(r.Run)] = r
	}
	return out
}

// wholeRuns fails t unless every run in dst is one of want (the source's
// runs by runsByName) with all its samples and profiles, and returns how
// many runs dst has.
func wholeRuns(t *testing.T, want map[string]viewRun, dst *store.DB) int {
	t.Helper()
	got := viewOf(t, dst).Runs
	for _, r := range got {
		w, ok := want[runName(r.Run)]
		if !ok {
			t.Errorf("the destination has run %s, which the source has not", runName(r.Run))
			continue
		}
		if len(r.Run.Samples) != len(w.Run.Samples) || !reflect.DeepEqual(r, w) {
			t.Errorf("run %s in the destination has %d samples and %d profiles; the source's has %d and %d",
				runName(r.Run), len(r.Run.Samples), len(r.Run.Profiles), len(w.Run.Samples), len(w.Run.Profiles))
		}
	}
	return len(got)
}

// runName names a run by its content (the twin runs differ in samples).
func runName(r store.RunRecord) string {
	return fmt.Sprintf("%s %s %s %s %s %d", r.Repo, r.Commit.SHA, r.Kind, r.Machine, r.StartedAt.Format(time.RFC3339Nano), len(r.Samples))
}

// testCopyCancelled cancels a copy once n runs are in, checks that the
// destination holds exactly those runs, whole, and that the next copy
// finishes the job; then cancels copies of big runs at growing deadlines,
// which land inside runs' transactions, and checks the same after each.
func testCopyCancelled(t *testing.T, fresh func() string) {
	src, dst := openCopyDB(t, sqliteDB(t)), openCopyDB(t, fresh())
	filled := fillCopySource(t, src, 12, 40)

	const n = 5
	ctx, cancel := context.WithCancel(context.Background())
	stats, err := store.Copy(ctx, src, dst, store.CopyOptions{Progress: func(s store.CopyStats) {
		if s.Runs.Copied == n {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Copy cancelled after %d runs: err %v, want context.Canceled", n, err)
	}
	if stats.Runs.Copied != n {
		t.Errorf("the cancelled copy says it copied %d runs, want %d", stats.Runs.Copied, n)
	}
	if got := wholeRuns(t, runsByName(viewOf(t, src)), dst); got != n {
		t.Errorf("the destination has %d runs after a copy cancelled at %d", got, n)
	}
	stats, err = store.Copy(context.Background(), src, dst, store.CopyOptions{})
	if err != nil {
		t.Fatalf("Copy after the cancelled one: %v", err)
	}
	wantCount(t, stats.Runs, int64(filled.runs-n), n)
	if stats.Samples.Copied+stats.Samples.Present != int64(filled.samples) {
		t.Errorf("samples: %+v; want %d in all", stats.Samples, filled.samples)
	}
	sameView(t, viewOf(t, dst), viewOf(t, src))

	// Runs of 5,000 samples take milliseconds each to write: deadlines
	// from 1 ms up strike inside their transactions.
	big := openCopyDB(t, sqliteDB(t))
	fillCopySource(t, big, 8, 5000)
	bigView := viewOf(t, big)
	bigRuns := runsByName(bigView)
	dst2 := openCopyDB(t, fresh())
	for d := time.Millisecond; ; d = d * 3 / 2 {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		stats, err := store.Copy(ctx, big, dst2, store.CopyOptions{})
		cancel()
		got := wholeRuns(t, bigRuns, dst2)
		if err == nil {
			if int64(got) != stats.Runs.Copied+stats.Runs.Present || got != 9 {
				t.Errorf("the destination has %d runs, the copy says %+v", got, stats.Runs)
			}
			break
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Copy with a %v deadline: %v", d, err)
		}
		if t.Failed() || d > time.Minute {
			t.Fatalf("gave up at a deadline of %v", d)
		}
	}
	sameView(t, viewOf(t, dst2), bigView)
}

func TestCopyCancelledMidwayLeavesWholeRunsAndARerunFinishesSQLiteToPostgres(t *testing.T) {
	t.Parallel()
	fresh := postgresDB(t)
	testCopyCancelled(t, func() string { return fresh(t) })
}

func TestCopyCancelledMidwayLeavesWholeRunsAndARerunFinishesSQLiteToSQLite(t *testing.T) {
	t.Parallel()
	testCopyCancelled(t, func() string { return sqliteDB(t) })
}

// TestCopyMergesIntoAStoreWithRunsOfItsOwn: the destination's own runs,
// sessions and comparisons stay as they are beside the copied ones, and
// the count check looks only at what was copied or found.
func TestCopyMergesIntoAStoreWithRunsOfItsOwn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src, dst := openCopyDB(t, sqliteDB(t)), openCopyDB(t, sqliteDB(t))
	filled := fillCopySource(t, src, 9, 10)
	own := &store.RunRecord{
		Repo: copyRepo, Commit: store.Commit{SHA: fmt.Sprintf("%040x", 0xabc000), Subject: "the destination's subject"},
		Kind: store.KindBaseline, Machine: "gpu-9", StartedAt: copyT0.Add(-time.Hour), Status: analysis.StatusOK,
		Samples: []analysis.Sample{{Key: analysis.Key{Benchmark: copyBench, Phase: "total", Unit: "sec/op"}, Value: 9}},
	}
	ownID, err := dst.SaveRun(ctx, own)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dst.BeginSession(ctx, store.Session{Repo: "elsewhere", Kind: store.KindCompare, Label: "own"}); err != nil {
		t.Fatal(err)
	}
	stats, err := store.Copy(ctx, src, dst, store.CopyOptions{})
	if err != nil {
		t.Fatalf("Copy: %v", err)
	}
	wantCount(t, stats.Repos, 1, 1)
	wantCount(t, stats.Runs, int64(filled.runs), 0)
	wantCount(t, stats.Commits, int64(filled.commits-1), 1) // the destination had the first commit
	runs, err := dst.Runs(ctx, store.RunQuery{Repo: copyRepo, Machine: "gpu-9"})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].ID != ownID || runs[0].Samples[0].Value != 9 {
		t.Errorf("the destination's own run: %+v", runs)
	}
	all, err := dst.Runs(ctx, store.RunQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != filled.runs+1 {
		t.Errorf("the destination has %d runs, want the %d copied and its own", len(all), filled.runs)
	}
	for _, r := range all {
		if r.Repo == own.Repo && r.Commit.SHA == own.Commit.SHA && r.Commit.Subject != "the destination's subject" {
			t.Errorf("a commit the destination had was changed: %+v", r.Commit)
		}
	}
}

// TestCopyCountCheckNamesTheTableAndBothNumbers: a run the destination
// has by its key but with other samples is left as it is, and the count
// check says the samples differ.
func TestCopyCountCheckNamesTheTableAndBothNumbers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src, dst := openCopyDB(t, sqliteDB(t)), openCopyDB(t, sqliteDB(t))
	r := &store.RunRecord{
		Repo: copyRepo, Commit: store.Commit{SHA: fmt.Sprintf("%040x", 1)}, Kind: store.KindBaseline, Machine: "gpu-1",
		StartedAt: copyT0, Status: analysis.StatusOK,
		Samples: []analysis.Sample{
			{Key: analysis.Key{Benchmark: copyBench, Phase: "total", Unit: "sec/op"}, Value: 1},
			{Key: analysis.Key{Benchmark: copyBench, Phase: "total", Unit: "sec/op"}, Value: 2},
		},
	}
	if _, err := src.SaveRun(ctx, r); err != nil {
		t.Fatal(err)
	}
	r.Samples = r.Samples[:1]
	if _, err := dst.SaveRun(ctx, r); err != nil {
		t.Fatal(err)
	}
	stats, err := store.Copy(ctx, src, dst, store.CopyOptions{})
	if !errors.Is(err, store.ErrCountMismatch) {
		t.Fatalf("Copy: %v; want ErrCountMismatch", err)
	}
	if want := "samples: the source has 2, the destination 1 of them"; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q; want it to say %q", err, want)
	}
	wantCount(t, stats.Runs, 0, 1)
}

// TestCopyRefusesOneStoreOnBothSidesAndAnOldSchema: the same file (by
// path or by a link), the same PostgreSQL database spelled two ways, and a
// source whose schema is older than this perfbot's.
func TestCopyRefusesOneStoreOnBothSidesAndAnOldSchema(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "perfbot.db")
	db := openCopyDB(t, path)
	if err := os.Symlink(path, filepath.Join(dir, "link.db")); err != nil {
		t.Fatal(err)
	}
	same := func(a, b string) bool {
		t.Helper()
		da, err := store.ParseDSN(a)
		if err != nil {
			t.Fatal(err)
		}
		dbb, err := store.ParseDSN(b)
		if err != nil {
			t.Fatal(err)
		}
		return store.SameDatabase(da, dbb)
	}
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{path, "sqlite://" + path, true},
		{path, filepath.Join(dir, "link.db"), true},
		{path, filepath.Join(dir, "other.db"), false},
		{"postgres://u:p@db.internal/perfbot", "postgresql://other@DB.internal:5432/perfbot?sslmode=disable", true},
		{"postgres:///perfbot?host=/run/postgresql", "postgres://localhost/perfbot?host=/run/postgresql&port=5432", true},
		{"postgres://db.internal/perfbot", "postgres://db.internal/perfbot2", false},
		{"postgres://db.internal:5433/perfbot", "postgres://db.internal/perfbot", false},
		{"postgres://perfbot@db.internal", "postgres://db.internal/perfbot", true},
		{path, "postgres://db.internal/perfbot", false},
	} {
		if got := same(tc.a, tc.b); got != tc.want {
			t.Errorf("SameDatabase(%s, %s) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
	link := openCopyDB(t, filepath.Join(dir, "link.db"))
	if _, err := store.Copy(ctx, db, link, store.CopyOptions{}); !errors.Is(err, store.ErrSameStore) {
		t.Errorf("Copy of a file to itself: %v, want ErrSameStore", err)
	}

	old := filepath.Join(dir, "old.db")
	odb := openCopyDB(t, old)
	_, latest, err := odb.SchemaVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := odb.SQL().Exec(`DELETE FROM goose_db_version WHERE version_id = ?`, latest); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Copy(ctx, odb, openCopyDB(t, filepath.Join(dir, "new.db")), store.CopyOptions{}); !errors.Is(err, store.ErrSchemaTooOld) {
		t.Errorf("Copy from a store at an older schema: %v, want ErrSchemaTooOld", err)
	}
}

// copiedColumns are the columns Copy carries, table by table (ids are
// the destination's own; runs.session_id and comparisons.session_id are
// translated). notCopied are the tables it leaves, with why in Copy's
// comment.
var (
	copiedColumns = map[string]string{
		"repos":            "id name",
		"commits":          "repo_id sha parents author_time subject",
		"sessions":         "id repo_id kind owner label started_at ended_at state",
		"runs":             "id repo_id commit_sha kind config_hash config machine env started_at ended_at status detail tool spans session_id round",
		"samples":          "run_id seq benchmark phase unit value",
		"profiles":         "id run_id benchmark kind data bytes created_at",
		"comparisons":      "id repo_id base_sha head_sha created_at verdict inputs report markdown session_id pr",
		"reported_changes": "repo_id machine benchmark phase unit commit_sha reported_at",
	}
	notCopied = []string{"goose_db_version", "sqlite_sequence", "webhook_deliveries", "pull_heads"}
)

// TestCopyKnowsEveryTableAndColumn fails when a migration adds a table
// or a column: Copy must carry it, or its comment must say why not, and
// then this list changes with it.
func TestCopyKnowsEveryTableAndColumn(t *testing.T) {
	t.Parallel()
	db := openCopyDB(t, sqliteDB(t))
	rows, err := db.SQL().Query(`SELECT m.name, p.name FROM sqlite_master m, pragma_table_info(m.name) p
		WHERE m.type = 'table' ORDER BY m.name, p.cid`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	got := map[string]string{}
	for rows.Next() {
		var table, column string
		if err := rows.Scan(&table, &column); err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(notCopied, table) {
			got[table] = strings.TrimSpace(got[table] + " " + column)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, copiedColumns) {
		t.Errorf("the schema's tables and columns:\n%v\nwhat Copy carries:\n%v\nteach store/copy.go the difference (or say in Copy's comment why it is left), then update copiedColumns", got, copiedColumns)
	}
}
