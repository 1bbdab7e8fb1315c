package store_test

import (
	"context"
	"errors"
	"fmt"
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
