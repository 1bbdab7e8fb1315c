// Package readers turns what benchmark programs other than Go's print
// into analysis samples.
//
// In flows an Output: the standard output and standard error of one run
// of a benchmark program and the directory it ran in, for formats that
// write files. A Config picks the format (Formats lists them: Google
// Benchmark JSON, Rust criterion's result files, Rust libtest's bench
// lines, hyperfine's JSON export, and lines matched by a regular
// expression) and New returns its Reader. Out flows a list of
// analysis.Sample, one per value the program reported: each repetition is
// a value of its own, so the caller can take their median per run as it
// does for Go benchmark format (runner/execute).
//
// Every reader maps its format onto analysis.Key the same way:
//
//   - Benchmark is a name of "/"-separated parts, the first the base name
//     and the rest key=value parts where the format has them, as in Go's
//     sub-benchmarks ("BM_Sort/arg0=1024"). It never holds spaces (they
//     become '_'), a part without '=' that is a plain number becomes
//     argN=value (N counting such parts from 0), and it never holds a
//     phase= part: a reader does not invent phases.
//   - Phase is "" unless the format names one (only "lines" can).
//   - Unit is "sec/op" for times, converted to seconds; a rate the tool
//     names as one is "B/s" or "NAME/s"; every other unit is the tool's
//     name with "/op" appended unless it already holds a "/".
//
// A run whose output a reader cannot read, or that yields no sample at
// all, gives an error that says what was expected; the runner reports it
// as a run without output. Values that are not finite are dropped. The
// package never runs a program: it only reads what a run left.
package readers
