package store_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/perfbot/perfbot/store"
	"github.com/perfbot/perfbot/store/storetest"
)

// BenchmarkTrend1M is issue 7's target: with 1,000,000 samples in
// PostgreSQL, a 90-day trend query returns in at most 100 ms. It needs a
// server (make bench runs it under scripts/with-postgres.sh) and is
// skipped without PERFBOT_TEST_DATABASE_URL; generating the data takes
// most of its time.
func BenchmarkTrend1M(b *testing.B) {
	storetest.PostgresAdmin(b)
	storetest.BenchmarkTrend1M(b, storetest.FreshPostgres)
}

// BenchmarkTrend1MSQLite is the same on SQLite, for comparison.
func BenchmarkTrend1MSQLite(b *testing.B) {
	storetest.BenchmarkTrend1M(b, sqliteDB)
}

// trendSeries1M is the history of the dashboard index's figure in
// BENCHMARKS.md: 2,000 commits × 5 runs = 10,000 runs of 3 benchmarks ×
// 9 phases × 4 units = 108 samples each, 1,080,000 samples and 108
// series. The generator stores every phase and unit of a benchmark, 36
// series a benchmark, so 100 series exactly cannot be had: 108 is the
// nearest.
var trendSeries1M = storetest.TrendData{Commits: 2000, RunsPer: 5, Benchmarks: 3}

// BenchmarkTrendSeries1M times TrendSeries, the dashboard index's
// query, over trendSeries1M's 1,080,000 samples, 10,000 runs and 108
// series in PostgreSQL (which reads the newest store.SeriesRuns runs, 500
// × 108 samples). It reports the generation time (gen-s, once) and the
// median query time (median-ms). It needs a server, as BenchmarkTrend1M
// does.
func BenchmarkTrendSeries1M(b *testing.B) {
	storetest.PostgresAdmin(b)
	benchmarkTrendSeries1M(b, storetest.FreshPostgres(b))
}

// BenchmarkTrendSeries1MSQLite is the same on SQLite.
func BenchmarkTrendSeries1MSQLite(b *testing.B) {
	benchmarkTrendSeries1M(b, sqliteDB(b))
}

func benchmarkTrendSeries1M(b *testing.B, dsn string) {
	ctx := context.Background()
	db, err := store.Open(ctx, dsn, store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	d := trendSeries1M
	began := time.Now()
	if err := storetest.GenerateTrendData(ctx, db, d); err != nil {
		b.Fatal(err)
	}
	gen := time.Since(began)
	b.Logf("generated %d samples (%d runs) in %v", d.Samples(), d.Commits*d.RunsPer, gen.Round(time.Millisecond))
	if _, err := db.SQL().ExecContext(ctx, "ANALYZE"); err != nil {
		b.Fatal(err)
	}
	want := d.Benchmarks * 9 * 4
	var times []time.Duration
	for b.Loop() {
		t := time.Now()
		series, err := db.TrendSeries(ctx)
		if err != nil {
			b.Fatal(err)
		}
		times = append(times, time.Since(t))
		if len(series) != want {
			b.Fatalf("TrendSeries returned %d series; want %d", len(series), want)
		}
	}
	slices.Sort(times)
	med := times[len(times)/2]
	b.ReportMetric(gen.Seconds(), "gen-s")
	b.ReportMetric(float64(med.Microseconds())/1000, "median-ms")
	b.Logf("TrendSeries: %d series, median %v, min %v, max %v over %d queries",
		want, med, times[0], times[len(times)-1], len(times))
}
