// Package analysis compares samples of a base and a head revision and
// explains the difference, phase by phase: Mann-Whitney U and median
// intervals from golang.org/x/perf/benchmath, Holm correction, a noise floor
// learned from history, attribution of the change in total time to phases,
// and the rendered report.
//
// In flow samples and history; out flows a Report. The package does no I/O:
// it never opens a file, a socket or a database. The compare issue fills it
// in.
package analysis
