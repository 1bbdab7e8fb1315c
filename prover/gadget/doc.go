// Package gadget builds bit-level circuits on an r1cs.System: booleans,
// 32-bit words and the SHA-256 compression function, in the style of
// bellman's gadgets.
//
// In flow witness values (bool, uint32) and the System to write into; out
// flow Booleans and UInt32s that carry both their circuit form (a variable,
// its negation or a constant) and their known value, so synthesis computes
// the witness as it goes. Constants fold: an operation whose inputs are
// constant, or whose result a constant input decides, adds no constraint.
//
// Gadgets add terms to linear combinations in place (Boolean.AddTo and
// friends) and never build a temporary combination: the second seed
// document found that temporary combinations, not the constraint system,
// dominated synthesis. Steady-state synthesis allocates nothing on the heap.
//
// Every constraint is named by a constant string within the System's
// namespaces (UInt32 operations push "bit", i), so a failing constraint
// reads like "block[3]/round[17]/bit[5]/maj".
package gadget
