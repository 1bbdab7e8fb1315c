package circuit

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/perfbot/perfbot/prover/r1cs"
)

// sameWitness returns an error naming the first difference between the
// Prove-mode systems x and y: counts, inputs, aux values, evaluations of
// A, B and C, or the first unsatisfied constraint.
func sameWitness(x, y *r1cs.System) error {
	if x.NumConstraints() != y.NumConstraints() || x.NumInputs() != y.NumInputs() || x.NumAux() != y.NumAux() {
		return fmt.Errorf("%d constraints, %d inputs, %d aux vs %d, %d, %d",
			x.NumConstraints(), x.NumInputs(), x.NumAux(), y.NumConstraints(), y.NumInputs(), y.NumAux())
	}
	xa, xb, xc := x.Evaluations()
	ya, yb, yc := y.Evaluations()
	for _, v := range []struct {
		name string
		x, y []fr.Element
	}{
		{"inputs", x.Inputs(), y.Inputs()}, {"aux", x.Aux(), y.Aux()},
		{"A evaluations", xa, ya}, {"B evaluations", xb, yb}, {"C evaluations", xc, yc},
	} {
		if len(v.x) != len(v.y) {
			return fmt.Errorf("%s: %d vs %d", v.name, len(v.x), len(v.y))
		}
		for i := range v.x {
			if v.x[i] != v.y[i] {
				return fmt.Errorf("%s differ at %d", v.name, i)
			}
		}
	}
	var ux, uy *r1cs.UnsatError
	errors.As(x.Err(), &ux)
	errors.As(y.Err(), &uy)
	if (ux == nil) != (uy == nil) || ux != nil && *ux != *uy {
		return fmt.Errorf("satisfaction differs: %v vs %v", x.Err(), y.Err())
	}
	return nil
}

func synthesizeParallel(t *testing.T, c *SHA256Chain, threads int) *r1cs.System {
	t.Helper()
	sizes := c.Sizes()
	sizes.Threads = threads
	cs := r1cs.NewSystem(r1cs.Prove, sizes)
	if err := c.SynthesizeParallel(cs, threads); err != nil {
		t.Fatalf("%d threads: %v", threads, err)
	}
	return cs
}

// TestSynthesizeParallelIsBitForBitSequential synthesizes fresh random
// chains of several lengths on several thread counts (more threads than
// blocks too): inputs, aux values and evaluations of A, B and C are the
// sequential synthesis's, and they are written in place (the exact Sizes
// leave no slice to grow).
func TestSynthesizeParallelIsBitForBitSequential(t *testing.T) {
	t.Parallel()
	sizes := []int{1, 2, 3, 17, 64}
	if testing.Short() {
		sizes = []int{1, 2, 3, 17}
	}
	for _, blocks := range sizes {
		seed := rand.Uint64()
		c := newChain(blocks, seed)
		seq := synthesize(t, c, r1cs.Prove)
		if err := seq.Err(); err != nil {
			t.Fatalf("%d blocks, seed %d: sequential: %v", blocks, seed, err)
		}
		for _, threads := range []int{1, 2, 3, 8, blocks + 1} {
			par := synthesizeParallel(t, c, threads)
			if err := sameWitness(seq, par); err != nil {
				t.Fatalf("%d blocks, seed %d, %d threads: %v", blocks, seed, threads, err)
			}
			if a, _, _ := par.Evaluations(); cap(a) != c.Sizes().Constraints || cap(par.Aux()) != c.Sizes().Aux {
				t.Errorf("%d blocks, %d threads: capacities %d and %d, want the exact sizes %+v: a slice grew",
					blocks, threads, cap(a), cap(par.Aux()), c.Sizes())
			}
		}
	}
}

// TestSynthesizeParallelReportsTheSequentialUnsatError claims a final
// digest one bit off, in either half: the parallel synthesis reports the
// same constraint, by index and annotation, as the sequential one.
func TestSynthesizeParallelReportsTheSequentialUnsatError(t *testing.T) {
	t.Parallel()
	for _, blocks := range []int{1, 3} {
		for _, byteIndex := range []int{0, 31} {
			c := newChain(blocks, rand.Uint64())
			c.Final[byteIndex] ^= 1 << rand.IntN(8)
			seq := synthesize(t, c, r1cs.Prove)
			var want *r1cs.UnsatError
			if !errors.As(seq.Err(), &want) {
				t.Fatalf("sequential: Err() = %v, want an *r1cs.UnsatError", seq.Err())
			}
			for _, threads := range []int{2, 3, 8} {
				par := synthesizeParallel(t, c, threads)
				var got *r1cs.UnsatError
				if !errors.As(par.Err(), &got) || *got != *want {
					t.Errorf("%d blocks, byte %d, %d threads: Err() = %v, want %v", blocks, byteIndex, threads, par.Err(), want)
				}
				if err := sameWitness(seq, par); err != nil {
					t.Errorf("%d blocks, %d threads: %v", blocks, threads, err)
				}
			}
		}
	}
}

// TestSynthesizeParallelRejectsAWrongImportedDigest: a block whose
// imported input digest is not its predecessor's output is an error, not
// a witness whose evaluations disagree with its aux values.
func TestSynthesizeParallelRejectsAWrongImportedDigest(t *testing.T) {
	t.Parallel()
	c := newChain(3, rand.Uint64())
	digests := c.inputDigests()
	if digests[0] != c.Seed || c.next(&digests[2], 2) != c.Digest() {
		t.Fatal("inputDigests is not the native chain")
	}
	digests[2][5] ^= 4
	err := c.synthesizeParallel(r1cs.NewSystem(r1cs.Prove, c.Sizes()), 2, digests)
	if err == nil || !strings.Contains(err.Error(), "block 1: output word 1") {
		t.Fatalf("synthesizeParallel = %v, want block 1's output word 1 named", err)
	}
}

// TestSynthesizeParallelRunsSetupModeSequentially: a System that records
// the matrices gets the sequential synthesis, whatever the thread count.
func TestSynthesizeParallelRunsSetupModeSequentially(t *testing.T) {
	t.Parallel()
	c := newChain(2, rand.Uint64())
	cs := r1cs.NewSystem(r1cs.Prove|r1cs.Setup, c.Sizes())
	if err := c.SynthesizeParallel(cs, 4); err != nil {
		t.Fatal(err)
	}
	if err := cs.IsSatisfied(); err != nil {
		t.Fatal(err)
	}
	if err := sameWitness(synthesize(t, c, r1cs.Prove|r1cs.Setup), cs); err != nil {
		t.Fatal(err)
	}
	if err := newChain(0, 1).SynthesizeParallel(r1cs.NewSystem(r1cs.Prove, r1cs.Sizes{}), 4); !errors.Is(err, ErrNoBlocks) {
		t.Fatalf("no blocks, 4 threads: %v, want ErrNoBlocks", err)
	}
}
