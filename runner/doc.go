// Package runner turns revisions into stored samples and comparisons.
//
// Compare takes a repository and two revisions: it reads .perfbot.yml from
// the base revision (Config; the default measures this repository's
// prover), builds each revision in its own git worktree (workspace,
// Builder, cached by commit and build config), runs every benchmark's
// warm-ups and then base and head alternately (A B A B …) through
// runner/execute, stores each run in one transaction, compares with
// analysis and, while the result is inconclusive for lack of runs or for
// noise, adds batches of rounds up to max_count. Baseline stores runs of
// one revision as history, from which analysis learns each phase's noise.
// A benchmark with callgrind: true gets one more run per revision after
// its timed runs, under valgrind's callgrind (execute.RunCallgrind),
// stored as a run with Tool callgrind whose simulated instruction counts
// analysis compares exactly. Bisect finds the first commit of a range
// that changed one series: binary search over the range's first-parent
// chain (or all its commits), reusing every stored run of a commit with
// the same config hash on this machine and measuring only the runs it
// lacks, stored as kind bisect; each probe is judged against both ends
// by analysis.Classify.
//
// It never imports the prover: it measures other revisions of this code
// through their built binaries and the Go benchmark format they print, so
// it can guard any program that prints that format.
package runner
