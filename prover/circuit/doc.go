// Package circuit holds the workload circuits the prover is benchmarked
// on.
//
// The only one so far is SHA256Chain, the "sha256" workload: a chain of
// SHA-256 compressions shaped like a labeling chain. In flows a size (in
// blocks, or a constraint count rounded up to whole blocks) and a source of
// randomness for the witness; out flow the constraints and witness written
// into an r1cs.System, the public inputs a verifier needs, and the native
// digest the circuit must agree with. SynthesizeParallel writes the same
// constraints and witness on several goroutines, a block each at a time.
package circuit
