package circuit

import (
	"bytes"
	"crypto/sha256"
	"encoding"
	"errors"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/perfbot/perfbot/prover/r1cs"
)

func newChain(blocks int, seed uint64) *SHA256Chain {
	return NewSHA256Chain(blocks, rand.New(rand.NewPCG(seed, 0)))
}

// compressWithCryptoSha256 compresses one 64-byte block into the IV with
// crypto/sha256 itself: after exactly one block, the marshaled state of a
// sha256 digest holds the hash value H(1) in bytes 4 to 36.
func compressWithCryptoSha256(t *testing.T, block []byte) [32]byte {
	t.Helper()
	h := sha256.New()
	h.Write(block)
	st, err := h.(encoding.BinaryMarshaler).MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(st, []byte("sha\x03")) {
		t.Fatalf("unexpected sha256 state format %q", st[:4])
	}
	var d [32]byte
	copy(d[:], st[4:36])
	return d
}

func TestDigestMatchesCryptoSha256(t *testing.T) {
	t.Parallel()
	c := newChain(5, 1)
	d := c.Seed
	for _, w := range c.Witness {
		d = compressWithCryptoSha256(t, append(d[:], w[:]...))
	}
	if got := c.Digest(); got != d {
		t.Fatalf("Digest() = %x, want %x", got, d)
	}
	if c.Final != d {
		t.Fatalf("Final = %x, want %x", c.Final, d)
	}
}

func synthesize(t *testing.T, c *SHA256Chain, mode r1cs.Mode) *r1cs.System {
	t.Helper()
	cs := r1cs.NewSystem(mode, c.Sizes())
	if err := c.Synthesize(cs); err != nil {
		t.Fatal(err)
	}
	return cs
}

// TestSHA256ChainIsSatisfied synthesizes chains in both modes: every
// constraint holds, so the circuit's final digest, tied to Final's public
// inputs, is the native one; and the sizes are exactly the advertised ones.
func TestSHA256ChainIsSatisfied(t *testing.T) {
	t.Parallel()
	for blocks := 1; blocks <= 3; blocks++ {
		c := newChain(blocks, uint64(blocks))
		cs := synthesize(t, c, r1cs.Prove|r1cs.Setup)
		if err := cs.Err(); err != nil {
			t.Fatalf("%d blocks, prove mode: %v", blocks, err)
		}
		if err := cs.IsSatisfied(); err != nil {
			t.Fatalf("%d blocks, setup mode: %v", blocks, err)
		}
		want := c.Sizes()
		if cs.NumConstraints() != want.Constraints || cs.NumAux() != want.Aux || cs.NumInputs() != want.Inputs {
			t.Fatalf("%d blocks: %d constraints, %d aux, %d inputs; want %+v",
				blocks, cs.NumConstraints(), cs.NumAux(), cs.NumInputs(), want)
		}
		if want.Constraints != 260+blocks*17_817 {
			t.Fatalf("%d blocks: %d constraints, want 260 + %d × 17,817", blocks, want.Constraints, blocks)
		}
		if a, _, _ := cs.Evaluations(); len(a) != want.Constraints {
			t.Fatalf("%d evaluations for %d constraints", len(a), want.Constraints)
		}
	}
}

// TestSHA256ChainPublicInputs checks the packing of the public inputs: the
// big-endian halves of Seed and of the native digest, in the System too.
func TestSHA256ChainPublicInputs(t *testing.T) {
	t.Parallel()
	c := newChain(2, 7)
	pub := c.PublicInputs()
	d := c.Digest()
	halves := [][]byte{c.Seed[:16], c.Seed[16:], d[:16], d[16:]}
	if len(pub) != len(halves) {
		t.Fatalf("%d public inputs, want %d", len(pub), len(halves))
	}
	for i, h := range halves {
		var got big.Int
		pub[i].BigInt(&got)
		if want := new(big.Int).SetBytes(h); got.Cmp(want) != 0 {
			t.Errorf("public input %d = %x, want %x", i, &got, want)
		}
	}
	cs := synthesize(t, c, r1cs.Prove)
	in := cs.Inputs()
	if !in[0].IsOne() {
		t.Fatalf("input 0 is %s, want One", in[0].String())
	}
	for i := range pub {
		if !in[1+i].Equal(&pub[i]) {
			t.Errorf("System input %d = %s, want %s", 1+i, in[1+i].String(), pub[i].String())
		}
	}
}

// TestSHA256ChainRejectsWrongFinal claims a final digest one bit off: Prove
// mode reports the packing constraint of that half, by index and path.
func TestSHA256ChainRejectsWrongFinal(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		byteIndex  int
		fromEnd    int // the failing constraint, counted back from the last
		annotation string
	}{
		{0, 2, "final/half[0]/pack"},
		{31, 1, "final/half[1]/pack"},
	} {
		c := newChain(2, 3)
		c.Final[tc.byteIndex] ^= 0x10
		cs := synthesize(t, c, r1cs.Prove)
		var ue *r1cs.UnsatError
		if !errors.As(cs.Err(), &ue) {
			t.Fatalf("Err() = %v, want an *r1cs.UnsatError", cs.Err())
		}
		if want := c.NumConstraints() - tc.fromEnd; ue.Index != want || ue.Annotation != tc.annotation {
			t.Errorf("byte %d flipped: constraint %d (%s), want %d (%s)",
				tc.byteIndex, ue.Index, ue.Annotation, want, tc.annotation)
		}
	}
}

// TestSHA256ChainRejectsTamperedWitness changes values after synthesis in
// Setup mode: a public input, a witness bit, an intermediate result.
func TestSHA256ChainRejectsTamperedWitness(t *testing.T) {
	t.Parallel()
	c := newChain(3, 5)
	cs := synthesize(t, c, r1cs.Setup)
	if err := cs.IsSatisfied(); err != nil {
		t.Fatal(err)
	}
	first := func() int {
		var ue *r1cs.UnsatError
		if err := cs.IsSatisfied(); !errors.As(err, &ue) {
			t.Fatalf("IsSatisfied() = %v, want an *r1cs.UnsatError", err)
		}
		return ue.Index
	}
	flip := func(x *fr.Element) {
		if x.IsZero() {
			x.SetOne()
		} else {
			x.SetZero()
		}
	}

	// The seed's low half: its packing constraint is the 258th, after the
	// 256 seed bits and the high half's.
	in := cs.Inputs()
	saved := in[2]
	in[2].SetUint64(12345)
	if got := first(); got != 257 {
		t.Errorf("wrong seed input: constraint %d fails, want 257", got)
	}
	in[2] = saved

	// Block 1's first witness bit (aux: 256 seed bits, block 0, then
	// block 1's witness): its own boolean constraint still holds, the
	// first use in block 1's compression fails.
	aux := cs.Aux()
	auxPerBlock := ConstraintsPerBlock - CompressSums
	v := 256 + auxPerBlock
	flip(&aux[v])
	block1 := 258 + ConstraintsPerBlock
	if got := first(); got <= block1+256 || got >= block1+ConstraintsPerBlock {
		t.Errorf("flipped witness bit: constraint %d fails, want one in block 1's compression (%d, %d)",
			got, block1+256, block1+ConstraintsPerBlock)
	}
	flip(&aux[v])

	// The last aux variable is the carry bit of the last sum (H_7's);
	// the last four constraints are its boolean constraint, that sum's
	// equality and the two packings of Final.
	aux[len(aux)-1].SetUint64(2)
	if got := first(); got != c.NumConstraints()-4 {
		t.Errorf("last sum bit set to 2: constraint %d fails, want its boolean constraint %d", got, c.NumConstraints()-4)
	}
}

func TestBlocksFor(t *testing.T) {
	t.Parallel()
	for blocks := 1; blocks < 20; blocks++ {
		n := Constraints(blocks)
		if got := BlocksFor(n); got != blocks {
			t.Errorf("BlocksFor(%d) = %d, want %d", n, got, blocks)
		}
		if got := BlocksFor(n + 1); got != blocks+1 {
			t.Errorf("BlocksFor(%d) = %d, want %d", n+1, got, blocks+1)
		}
		if got := BlocksFor(n - 1); got != blocks {
			t.Errorf("BlocksFor(%d) = %d, want %d", n-1, got, blocks)
		}
	}
	for _, n := range []int{-1, 0, 1, 1 << 12} {
		if got := BlocksFor(n); got != 1 {
			t.Errorf("BlocksFor(%d) = %d, want 1", n, got)
		}
	}
	for e := 12; e <= 26; e++ {
		n := 1 << e
		b := BlocksFor(n)
		if Constraints(b) < n || Constraints(b-1) >= n && b > 1 {
			t.Errorf("BlocksFor(%d) = %d blocks of %d constraints: not the smallest enough", n, b, Constraints(b))
		}
	}
}

// TestNewSHA256ChainIsDeterministic: the same rng state gives the same
// chain, a different one another.
func TestNewSHA256ChainIsDeterministic(t *testing.T) {
	t.Parallel()
	a, b, c := newChain(2, 9), newChain(2, 9), newChain(2, 10)
	if a.Seed != b.Seed || a.Witness[1] != b.Witness[1] || a.Final != b.Final {
		t.Error("two chains from the same seed differ")
	}
	if a.Seed == c.Seed || a.Witness[1] == c.Witness[1] || a.Final == c.Final {
		t.Error("chains from different seeds share values")
	}
}

func TestSynthesizeRejectsNoBlocks(t *testing.T) {
	t.Parallel()
	for _, blocks := range []int{0, -1} {
		c := newChain(blocks, 1)
		if c.Blocks() != 0 {
			t.Fatalf("NewSHA256Chain(%d) has %d blocks", blocks, c.Blocks())
		}
		if err := c.Synthesize(r1cs.NewSystem(r1cs.Prove, r1cs.Sizes{})); !errors.Is(err, ErrNoBlocks) {
			t.Errorf("%d blocks: %v, want ErrNoBlocks", blocks, err)
		}
	}
}
