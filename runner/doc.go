// Package runner turns a pair of revisions into stored samples: it keeps a
// git workspace with one worktree per revision, builds each, runs the
// benchmark binaries interleaved (A B A B …) after discarded warm-ups, and
// collects per-run counters, GPU telemetry and an environment fingerprint.
//
// It never imports the prover: it measures other revisions of this code
// through a built binary and the Go benchmark format that binary prints
// (see prover.WriteProof), so it can guard any program that prints that
// format. The compare issue fills this package in.
package runner
