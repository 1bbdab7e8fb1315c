-- Trend reads one key's value in each of a window's runs. Through the
-- primary key (run_id, seq) it read every sample of every run in the
-- window: 756,000 rows for 1,500 runs of 504 samples with 1,000,000
-- samples in PostgreSQL (BenchmarkTrend1M, the 2-core development
-- machine): a median 52 ms on a quiet machine, 95 ms (max 123) while
-- another test suite ran, against issue 7's 100 ms. This index finds a
-- run's sample of one key directly: 7 ms quiet, 22 ms loaded. run_id
-- leads, so a saved run's entries go to the index's right edge, as its
-- primary-key entries do, instead of one page per key all over the index
-- (what 00001 warns about an index that leads with benchmark, phase and
-- unit); saving a run of 100 samples takes 1.9 ms instead of 1.6
-- (BenchmarkPostgres/SaveRun).
-- SQLite gets the same index (the same query: 12 ms with it).

-- +goose Up
CREATE INDEX samples_run_key ON samples (run_id, benchmark, phase, unit);

-- +goose Down
DROP INDEX samples_run_key;
