// Package store keeps perfbot's runs, samples and comparisons in a
// database: PostgreSQL in production (lib/pq), or an SQLite file by
// default (modernc.org/sqlite, no cgo).
//
// Open takes an address (see ParseDSN), connects, and brings the schema
// up to date with the migrations embedded in package migrations. Runs
// flow in through SaveRun, one transaction each, so a run, its samples
// and its profiles appear together or not at all. Runs, History and Trend
// read them back as RunRecords and analysis values, Profiles the runs'
// profiles; SaveComparison and Comparison keep rendered reports.
//
// Both dialects share one implementation: the SQL is written once with ?
// placeholders (sqlx rebinds them for PostgreSQL), times travel as UTC
// text with microsecond precision, and the per-dialect differences live
// in the migrations, apart from how samples go in (COPY on PostgreSQL,
// multi-row INSERTs on SQLite).
//
// The suite in package storetest runs against both backends; see
// store_test.go for how to give it a PostgreSQL server.
package store
