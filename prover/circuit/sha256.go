package circuit

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/perfbot/perfbot/prover/gadget"
	"github.com/perfbot/perfbot/prover/r1cs"
)

// The sizes of one SHA256Chain, exact; tests check them against synthesis.
const (
	// CompressConstraints is the cost of one compression of 512 allocated
	// bits into the constant IV (gadget.Sha256Compress).
	CompressConstraints = 17_561
	// CompressSums is how many of those constraints are AddMany's sum
	// equalities, the only ones that allocate no variable.
	CompressSums = 182
	// ConstraintsPerBlock is the cost of one block: its 256 fresh witness
	// bits and its compression.
	ConstraintsPerBlock = 256 + CompressConstraints
	// fixedConstraints is the cost outside the blocks: the seed's 256 bits,
	// and two packing constraints each for the seed and the final digest.
	fixedConstraints = 256 + 2 + 2
	// NumPublic is the number of public inputs, One excluded.
	NumPublic = 4
)

// A SHA256Chain is the "sha256" workload circuit: a chain of SHA-256
// compressions like a labeling chain. Block i is the previous digest
// (digest 0 is Seed) followed by the 32 bytes Witness[i], and the next
// digest is the compression of that 64-byte block into SHA-256's constant
// IV. Final is the digest after the last block.
//
// The statement is (Seed, Final); Witness is private. The public inputs are
// Seed and Final, each packed into two field elements: the big-endian
// integers of bytes 0–15 and of bytes 16–31, each below 2^128. In the
// circuit, the seed's 256 bits are allocated as aux booleans and tied to
// its two inputs by one packing constraint each (Σ 2^k·bit_k · 1 = input);
// the last compression's output bits are tied to Final's inputs the same
// way.
type SHA256Chain struct {
	Seed    [32]byte
	Witness [][32]byte // one entry per block
	Final   [32]byte   // the claimed final digest; NewSHA256Chain sets it to Digest()
}

// NewSHA256Chain returns a chain of the given number of blocks whose seed
// and witness are drawn from rng, with Final set to its digest. A chain of
// no blocks (blocks ≤ 0) is returned too, and Synthesize rejects it.
func NewSHA256Chain(blocks int, rng *rand.Rand) *SHA256Chain {
	c := &SHA256Chain{Witness: make([][32]byte, max(blocks, 0))}
	fill(c.Seed[:], rng)
	for i := range c.Witness {
		fill(c.Witness[i][:], rng)
	}
	c.Final = c.Digest()
	return c
}

// fill fills b, whose length is a multiple of 8, from rng.
func fill(b []byte, rng *rand.Rand) {
	for i := 0; i < len(b); i += 8 {
		binary.LittleEndian.PutUint64(b[i:], rng.Uint64())
	}
}

// BlocksFor returns the number of blocks whose chain has at least the given
// number of constraints: the count rounded up to whole blocks, at least one.
func BlocksFor(constraints int) int {
	n := constraints - fixedConstraints
	if n <= ConstraintsPerBlock {
		return 1
	}
	return (n + ConstraintsPerBlock - 1) / ConstraintsPerBlock
}

// Constraints returns the exact number of constraints of a chain of the
// given number of blocks.
func Constraints(blocks int) int { return fixedConstraints + blocks*ConstraintsPerBlock }

// Blocks returns the number of blocks.
func (c *SHA256Chain) Blocks() int { return len(c.Witness) }

// NumConstraints returns the exact number of constraints Synthesize adds.
func (c *SHA256Chain) NumConstraints() int { return Constraints(c.Blocks()) }

// Sizes returns the exact sizes of the System Synthesize fills, for
// r1cs.NewSystem: with them synthesis never grows a slice.
func (c *SHA256Chain) Sizes() r1cs.Sizes {
	// Every constraint allocates one aux variable except the sums and the
	// four packing constraints.
	n := c.NumConstraints()
	return r1cs.Sizes{
		Constraints: n,
		Inputs:      1 + NumPublic,
		Aux:         n - c.Blocks()*CompressSums - NumPublic,
	}
}

// ErrNoBlocks is returned by Synthesize for a chain without blocks.
var ErrNoBlocks = errors.New("sha256 chain has no blocks")

// Synthesize writes the chain's constraints and witness into cs: the public
// inputs (see SHA256Chain), the seed's bits, then for each block its
// witness bits and compression under the namespace "block"[i]. The seed is
// under "seed" and the final packing under "final". It fails only on a
// malformed chain; whether the witness satisfies the constraints is the
// System's to say (cs.Err in Prove mode).
func (c *SHA256Chain) Synthesize(cs *r1cs.System) error {
	if len(c.Witness) == 0 {
		return fmt.Errorf("synthesize: %w", ErrNoBlocks)
	}
	in, digest := c.seed(cs)
	iv := gadget.Sha256IV()
	for i := range c.Witness {
		digest = c.block(cs, i, &iv, &digest)
	}

	cs.Push("final", -1)
	pack(cs, &digest, in[2], in[3])
	cs.Pop()
	return nil
}

// seed adds the public inputs and the seed's bits, tied to the seed's two
// inputs, under the namespace "seed"; it returns the inputs and the seed's
// words.
func (c *SHA256Chain) seed(cs *r1cs.System) (in [NumPublic]r1cs.Variable, digest [8]gadget.UInt32) {
	pub := c.PublicInputs()
	for i := range pub {
		in[i] = cs.AllocInput(&pub[i])
	}
	cs.Push("seed", -1)
	for i := range digest {
		cs.Push("word", i)
		digest[i] = gadget.AllocUInt32(cs, binary.BigEndian.Uint32(c.Seed[4*i:]))
		cs.Pop()
	}
	pack(cs, &digest, in[0], in[1])
	cs.Pop()
	return in, digest
}

// block adds block i, whose input digest is digest: its witness bits and
// its compression, under the namespace "block"[i]. It returns the output
// digest.
func (c *SHA256Chain) block(cs *r1cs.System, i int, iv, digest *[8]gadget.UInt32) [8]gadget.UInt32 {
	var block [16]gadget.UInt32
	cs.Push("block", i)
	copy(block[:8], digest[:])
	for j := range 8 {
		cs.Push("witness", j)
		block[8+j] = gadget.AllocUInt32(cs, binary.BigEndian.Uint32(c.Witness[i][4*j:]))
		cs.Pop()
	}
	out := gadget.Sha256Compress(cs, iv, &block)
	cs.Pop()
	return out
}

// pack enforces that the digest's first four words, as a big-endian
// 128-bit number, equal input hi, and its last four equal lo; the
// constraints are named "pack" under "half"[0] and "half"[1].
func pack(cs *r1cs.System, digest *[8]gadget.UInt32, hi, lo r1cs.Variable) {
	for h, in := range [2]r1cs.Variable{hi, lo} {
		cs.Push("half", h)
		a, b, c := cs.Begin()
		for k := range 4 {
			// Word 0 of a half is its most significant.
			digest[4*h+k].AddTo(a, 32*(3-k))
		}
		b.AddVar(r1cs.One)
		c.AddVar(in)
		cs.Enforce("pack", a, b, c)
		cs.Pop()
	}
}

// PublicInputs returns the values of the public inputs, One excluded:
// Seed's two halves then Final's, each the big-endian integer of 16 bytes.
func (c *SHA256Chain) PublicInputs() []fr.Element {
	pub := make([]fr.Element, NumPublic)
	pub[0].SetBytes(c.Seed[:16])
	pub[1].SetBytes(c.Seed[16:])
	pub[2].SetBytes(c.Final[:16])
	pub[3].SetBytes(c.Final[16:])
	return pub
}

// Digest computes the chain's final digest natively, with the compression
// function of crypto/sha256 (gadget.Sha256Block, checked against it).
func (c *SHA256Chain) Digest() [32]byte {
	d := c.Seed
	for i := range c.Witness {
		d = c.next(&d, i)
	}
	return d
}

// next returns the digest after block i, whose input digest is d, computed
// natively.
func (c *SHA256Chain) next(d *[32]byte, i int) [32]byte {
	var words [16]uint32
	for j := range 8 {
		words[j] = binary.BigEndian.Uint32(d[4*j:])
		words[8+j] = binary.BigEndian.Uint32(c.Witness[i][4*j:])
	}
	state := gadget.Sha256IVWords()
	gadget.Sha256Block(&state, &words)
	var out [32]byte
	for j, w := range state {
		binary.BigEndian.PutUint32(out[4*j:], w)
	}
	return out
}
