package circuit

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/perfbot/perfbot/prover/gadget"
	"github.com/perfbot/perfbot/prover/r1cs"
)

// auxPerBlock is how many aux variables one block allocates: one per
// constraint but its compression's sums.
const auxPerBlock = ConstraintsPerBlock - CompressSums

// SynthesizeParallel is Synthesize on up to threads goroutines, with the
// same result bit for bit: the same inputs, aux values and evaluations of
// A, B and C, and the same first unsatisfied constraint (index and
// annotation). threads ≤ 1, and a System that is not Prove-only (Setup
// mode, built once for the keys, stays on one goroutine), take
// Synthesize itself.
//
// The chain is sequential only through its digests: block i compresses
// block i−1's output. Those digests are values the witness determines, and
// the native compression computes all of them first (well under a
// millisecond at 2^24 constraints, against seconds of synthesis). Every
// block then adds the same number of constraints and aux variables
// (ConstraintsPerBlock, auxPerBlock), so each block's place in the System
// is known before any is synthesized. The seed and the public inputs go
// into cs on the calling goroutine; then every block, the last with the
// final packing, is an r1cs shard (System.Shards) that writes its aux
// values and evaluations into its own window of cs's slices, and the
// workers take blocks in order from a shared counter. A shard reads its
// input digest as 256 imported bits (System.Import) holding the native
// values, where the sequential synthesis reads the previous block's
// output bits: the same values, so the same evaluations. After its
// compression a block checks its output digest against the native one
// that its successor imported, so an imported value that differs from the
// aux value it stands for is an error, never a silently wrong witness.
func (c *SHA256Chain) SynthesizeParallel(cs *r1cs.System, threads int) error {
	if threads <= 1 || cs.Mode() != r1cs.Prove || len(c.Witness) == 0 {
		return c.Synthesize(cs)
	}
	return c.synthesizeParallel(cs, threads, c.inputDigests())
}

// inputDigests returns the input digest of every block, natively: the
// seed, then each block's output but the last's.
func (c *SHA256Chain) inputDigests() [][32]byte {
	d := make([][32]byte, len(c.Witness))
	d[0] = c.Seed
	for i := 1; i < len(d); i++ {
		d[i] = c.next(&d[i-1], i-1)
	}
	return d
}

// synthesizeParallel is SynthesizeParallel with the blocks' input digests
// given; tests give wrong ones.
func (c *SHA256Chain) synthesizeParallel(cs *r1cs.System, threads int, digests [][32]byte) error {
	n := len(c.Witness)
	if len(digests) != n {
		return fmt.Errorf("synthesize: %d input digests for %d blocks", len(digests), n)
	}
	in, _ := c.seed(cs)

	specs := make([]r1cs.ShardSpec, n)
	for i := range specs {
		specs[i] = r1cs.ShardSpec{Constraints: ConstraintsPerBlock, Aux: auxPerBlock, Imports: 256}
	}
	specs[n-1].Constraints += 2 // the final packing
	shards, err := cs.Shards(specs)
	if err != nil {
		return fmt.Errorf("synthesize: %w", err)
	}

	iv := gadget.Sha256IV() // read by every worker, written by none
	errs := make([]error, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(threads, n) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				errs[i] = c.shard(shards[i], i, &iv, digests, in[2], in[3])
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("synthesize: %w", err)
	}
	if err := cs.Join(shards); err != nil {
		return fmt.Errorf("synthesize: %w", err)
	}
	return nil
}

// shard adds block i to its shard cs, importing its input digest
// digests[i]; the last block adds the final packing into inputs hi and lo
// too. Any other block checks its output against digests[i+1].
func (c *SHA256Chain) shard(cs *r1cs.System, i int, iv *[8]gadget.UInt32, digests [][32]byte, hi, lo r1cs.Variable) error {
	var zero, one fr.Element
	one.SetOne()
	var digest [8]gadget.UInt32
	var vars [32]r1cs.Variable
	for j := range digest {
		w := binary.BigEndian.Uint32(digests[i][4*j:])
		for k := range vars {
			bit := &zero
			if w>>k&1 == 1 {
				bit = &one
			}
			vars[k] = cs.Import(bit)
		}
		digest[j] = gadget.UInt32FromVariables(&vars, w)
	}

	out := c.block(cs, i, iv, &digest)
	if i == len(c.Witness)-1 {
		cs.Push("final", -1)
		pack(cs, &out, hi, lo)
		cs.Pop()
		return nil
	}
	for j := range out {
		if want := binary.BigEndian.Uint32(digests[i+1][4*j:]); out[j].Value() != want {
			return fmt.Errorf("block %d: output word %d is %08x, but block %d imported %08x", i, j, out[j].Value(), i+1, want)
		}
	}
	return nil
}
