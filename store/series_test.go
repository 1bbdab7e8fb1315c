package store_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/store"
)

// TestDashboardQueries runs the dashboard's queries (TrendSeries,
// LatestComparison) on SQLite and on PostgreSQL.
func TestDashboardQueries(t *testing.T) {
	t.Parallel()
	t.Run("SQLite", func(t *testing.T) { t.Parallel(); testDashboardQueries(t, sqliteDB(t)) })
	t.Run("Postgres", func(t *testing.T) { t.Parallel(); testDashboardQueries(t, postgresDB(t)(t)) })
}

func testDashboardQueries(t *testing.T, dsn string) {
	ctx := context.Background()
	db, err := store.Open(ctx, dsn, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	key := func(phase, unit string) analysis.Key {
		return analysis.Key{Benchmark: "Prove/x=1", Phase: phase, Unit: unit}
	}
	save := func(repo string, i int, kind store.Kind, status analysis.Status, tool string, keys ...analysis.Key) {
		t.Helper()
		r := &store.RunRecord{Repo: repo, Commit: store.Commit{SHA: fmt.Sprintf("%040x", i)}, Kind: kind, Machine: "m",
			Status: status, Tool: tool, StartedAt: t0.Add(time.Duration(i) * time.Hour)}
		for _, k := range keys {
			r.Samples = append(r.Samples, analysis.Sample{Key: k, Value: 1})
		}
		if _, err := db.SaveRun(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	// An old series that the newest store.SeriesRuns runs no longer
	// measure is left out; so are compare runs, failed runs and runs
	// under callgrind.
	save("o/a", 0, store.KindBaseline, analysis.StatusOK, "", key("old", "sec/op"))
	for i := 1; i <= store.SeriesRuns; i++ {
		save("o/a", i, store.KindBaseline, analysis.StatusOK, "", key("total", "sec/op"), key("ntt", "sec/op"))
	}
	save("o/a", 1000, store.KindCompare, analysis.StatusOK, "", key("compare-only", "sec/op"))
	save("o/a", 1001, store.KindBaseline, analysis.StatusCrashed, "", key("failed-only", "sec/op"))
	save("o/a", 1002, store.KindBaseline, analysis.StatusOK, analysis.ToolCallgrind, key("total", "instructions/op"))
	save("/src/b", 0, store.KindBaseline, analysis.StatusOK, "", key("total", "page-faults/op"))
	got, err := db.TrendSeries(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []store.Series{{Repo: "/src/b", Key: key("total", "page-faults/op")}, {Repo: "o/a", Key: key("ntt", "sec/op")}, {Repo: "o/a", Key: key("total", "sec/op")}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("TrendSeries:\n got %v\nwant %v", got, want)
	}

	base, head := fmt.Sprintf("%040x", 1), fmt.Sprintf("%040x", 2)
	if _, err := db.LatestComparison(ctx, "o/a", base, head); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("no comparison: %v; want ErrNotFound", err)
	}
	for i, v := range []string{"regression", "no-change"} {
		if _, err := db.SaveComparison(ctx, &store.Comparison{Repo: "o/a", BaseSHA: base, HeadSHA: head, Verdict: v,
			CreatedAt: t0.Add(time.Duration(i) * time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	c, err := db.LatestComparison(ctx, "o/a", base, head)
	if err != nil || c.Verdict != "no-change" || c.BaseSHA != base || c.HeadSHA != head {
		t.Errorf("LatestComparison: %+v, %v; want the newer, no-change", c, err)
	}
	if _, err := db.LatestComparison(ctx, "o/a", head, base); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("sides swapped: %v; want ErrNotFound", err)
	}
}

// TestRecentHeadlinesAndCommits runs the front page's queries on SQLite
// and on PostgreSQL: each benchmark's headline series (total, or the
// benchmark's only series) over the newest baseline runs, and what the
// store knows of commits.
func TestRecentHeadlinesAndCommits(t *testing.T) {
	t.Parallel()
	t.Run("SQLite", func(t *testing.T) { t.Parallel(); testRecentHeadlinesAndCommits(t, sqliteDB(t)) })
	t.Run("Postgres", func(t *testing.T) { t.Parallel(); testRecentHeadlinesAndCommits(t, postgresDB(t)(t)) })
}

func testRecentHeadlinesAndCommits(t *testing.T, dsn string) {
	ctx := context.Background()
	db, err := store.Open(ctx, dsn, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	sha := func(i int) string { return fmt.Sprintf("%040x", i+1) }
	key := func(bench, phase, unit string) analysis.Key {
		return analysis.Key{Benchmark: bench, Phase: phase, Unit: unit}
	}
	save := func(i, run int, kind store.Kind, status analysis.Status, samples ...analysis.Sample) {
		t.Helper()
		r := &store.RunRecord{Repo: "o/h", Kind: kind, Machine: "m", Status: status, StartedAt: t0.Add(time.Duration(2*i+run) * time.Hour),
			Commit:  store.Commit{SHA: sha(i), Subject: fmt.Sprintf("commit %d", i), AuthorTime: t0.Add(time.Duration(i) * time.Minute), Parents: []string{sha(i - 1)}},
			Samples: samples}
		if _, err := db.SaveRun(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 5 {
		for run := range 2 {
			v := float64(10*i + run)
			save(i, run, store.KindBaseline, analysis.StatusOK,
				analysis.Sample{Key: key("Prove", "total", "sec/op"), Value: v},
				analysis.Sample{Key: key("Prove", "total", "sec/op"), Value: v + 2}, // measured twice: the run's median, v+1
				analysis.Sample{Key: key("Prove", "total", "instructions/op"), Value: 1e9},
				analysis.Sample{Key: key("Prove", "ntt", "sec/op"), Value: 1},
				analysis.Sample{Key: key("Plain", "", "sec/op"), Value: -v})
		}
	}
	save(9, 0, store.KindCompare, analysis.StatusOK, analysis.Sample{Key: key("Prove", "total", "sec/op"), Value: 999})
	save(10, 0, store.KindBaseline, analysis.StatusCrashed, analysis.Sample{Key: key("Prove", "total", "sec/op"), Value: 999})

	got, err := db.RecentHeadlines(ctx, 6, "sec/op")
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, p := range got {
		if p.Repo != "o/h" || p.Machine != "m" || p.Key.Unit != "sec/op" || p.StartedAt.IsZero() {
			t.Errorf("point %+v", p)
		}
		lines = append(lines, fmt.Sprintf("%s/%s %s %g", p.Key.Benchmark, p.Key.Phase, p.Commit[38:], p.Value))
	}
	// The newest 6 ok baseline runs are commits 2, 3 and 4's; Plain sorts
	// before Prove; each run's value is its median.
	want := "Plain/ 03 -20,Plain/ 03 -21,Plain/ 04 -30,Plain/ 04 -31,Plain/ 05 -40,Plain/ 05 -41," +
		"Prove/total 03 21,Prove/total 03 22,Prove/total 04 31,Prove/total 04 32,Prove/total 05 41,Prove/total 05 42"
	if g := strings.Join(lines, ","); g != want {
		t.Errorf("RecentHeadlines:\n got %s\nwant %s", g, want)
	}

	v, err := db.RunsVersion(ctx)
	if err != nil || v.Count != 12 || v.MaxID == 0 {
		t.Errorf("RunsVersion = %+v, %v; want 12 runs", v, err)
	}
	save(11, 0, store.KindBaseline, analysis.StatusOK, analysis.Sample{Key: key("Prove", "total", "sec/op"), Value: 1})
	if v2, err := db.RunsVersion(ctx); err != nil || v2.Count != 13 || v2.MaxID <= v.MaxID {
		t.Errorf("RunsVersion after a run = %+v, %v; want 13 runs and a newer id than %+v", v2, err, v)
	}

	commits, err := db.Commits(ctx, "o/h", []string{sha(2), sha(77)})
	if err != nil {
		t.Fatal(err)
	}
	c, ok := commits[sha(2)]
	if len(commits) != 1 || !ok || c.Subject != "commit 2" || !c.AuthorTime.Equal(t0.Add(2*time.Minute)) || len(c.Parents) != 1 || c.Parents[0] != sha(1) {
		t.Errorf("Commits = %+v; want commit 2 with its subject, author time and parent", commits)
	}
	if none, err := db.Commits(ctx, "o/h", nil); err != nil || len(none) != 0 {
		t.Errorf("Commits(nil) = %v, %v", none, err)
	}
}
