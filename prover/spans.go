package prover

// This file marks the spans the prover reports, for a run under
// valgrind's callgrind (the runner's callgrind option). The runner starts
// such a run with
//
//	valgrind --tool=callgrind --collect-atstart=yes \
//	    --dump-before='*perfbotSpanBegin' --dump-before='*perfbotSpanEnd' …
//
// so callgrind writes its counts so far to a new file, and starts
// counting afresh, every time one of the two functions below is entered.
// The instructions between a perfbotSpanBegin and the next marker are
// then in one file, whose header names the marker that ended it. The
// runner pairs each begin with its end, as brackets nest, and gives every
// span the instructions of the files inside it: a phase its own, total
// every phase's and what runs between them.
//
// The contract, which any program can follow, in any package: call
// perfbotSpanBegin and perfbotSpanEnd (never inlined) at the start and
// the end of every span that the program prints a benchmark line for,
// and print those lines in the order the spans end. The prover marks the
// phases and the total of its measured proofs only, not of its warm-ups,
// and prints each proof's lines, total last, when the proof is done.

// perfbotSpanBegin marks the start of a measured span. It does nothing;
// callgrind sees it being entered.
//
//go:noinline
func perfbotSpanBegin() {}

// perfbotSpanEnd marks the end of the innermost open span.
//
//go:noinline
func perfbotSpanEnd() {}
