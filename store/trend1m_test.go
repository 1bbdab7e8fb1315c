package store_test

import (
	"testing"

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
