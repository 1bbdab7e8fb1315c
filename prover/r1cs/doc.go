// Package r1cs is a rank-1 constraint system in the style of bellperson.
//
// In flows a circuit's gadget code: variables allocated with their witness
// values (Alloc, AllocInput) and constraints A·B = C over sparse linear
// combinations (Enforce). Out flows, depending on the System's Mode, either
// the evaluations of A, B and C at the witness for every constraint (Prove
// mode, what a Groth16 prover needs) or the three constraint matrices (Setup
// mode, what a Groth16 setup needs), or both.
//
// Proving mode never stores a linear combination: Enforce evaluates each one
// at the witness as it goes and keeps three field elements per constraint. It
// also checks A·B = C for every constraint and remembers the first one that
// fails, with its index and namespace path, so an unsatisfied witness is
// reported precisely.
//
// Linear combinations are built in place. A gadget asks the System for its
// three scratch combinations (Begin), adds terms to them and calls Enforce;
// the scratch storage is reused, so a steady-state constraint allocates
// nothing. That is the second seed's lesson: temporary linear combinations,
// not the constraint system, dominated synthesis time. Where the terms live
// is chosen at run time (Sizes.LCStorage): a reused heap slice (LCHeap, the
// default) or a small array inside the System that long combinations spill
// out of (LCInline), the first seed's Vec and SmallVec.
//
// A Prove-mode synthesis whose parts have known sizes can run on several
// goroutines: Shards reserves each part's constraints and aux variables in
// the System's own slices and hands out one System per part that writes
// there in place, Import lets a part read values another part owns, and
// Join checks the parts and reports the first unsatisfied constraint by
// index, as a synthesis in order would. Setup mode stays in order.
package r1cs
