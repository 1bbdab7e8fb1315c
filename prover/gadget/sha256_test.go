package gadget

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/perfbot/perfbot/prover/r1cs"
)

// compressConstraints is the exact cost of Sha256Compress over a block of
// 512 allocated bits with the constant IV, the 512 allocations excluded.
// bellman's sha256_compression_function costs 25,840 on the same input;
// this is 8,279 (32%) fewer, because a 3-way xor and Maj cost one
// constraint per bit here and two in bellman. The message schedule costs
// 4,752 (48 × (32 σ0 + 32 σ1 + 34 sum bits + 1 equality)) and a full
// round 200 (32 each for Σ0, Σ1, Ch and Maj, 35 + 1 each for the new a and
// e). bellman packs its sum equalities with MultiEq, 7 to a constraint;
// AddMany enforces one per sum (182 here), so a wrong sum is reported on
// its own.
const compressConstraints = 17_561

// paddedBlock returns the single padded SHA-256 block of a message of at
// most 55 bytes, as 16 big-endian words.
func paddedBlock(msg []byte) [16]uint32 {
	var buf [64]byte
	copy(buf[:], msg)
	buf[len(msg)] = 0x80
	binary.BigEndian.PutUint64(buf[56:], uint64(len(msg))*8)
	var w [16]uint32
	for i := range w {
		w[i] = binary.BigEndian.Uint32(buf[4*i:])
	}
	return w
}

func digestBytes(state *[8]uint32) [32]byte {
	var d [32]byte
	for i, w := range state {
		binary.BigEndian.PutUint32(d[4*i:], w)
	}
	return d
}

// TestSha256BlockMatchesCryptoSha256: the SHA-256 of a message of up to 55
// bytes is one compression of its padded block into the IV.
func TestSha256BlockMatchesCryptoSha256(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 8))
	for n := range 56 {
		msg := make([]byte, n)
		for i := range msg {
			msg[i] = byte(rng.Uint32())
		}
		state, block := Sha256IVWords(), paddedBlock(msg)
		Sha256Block(&state, &block)
		if got, want := digestBytes(&state), sha256.Sum256(msg); got != want {
			t.Fatalf("%d-byte message: %x, want %x", n, got, want)
		}
	}
}

// TestSha256CompressMatchesNative compresses fresh random blocks into the
// constant IV and into random allocated states, and checks the words, their
// bits' witness and satisfiability in both modes.
func TestSha256CompressMatchesNative(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(9, 10))
	for trial := range 4 {
		cs := newSystem()
		var state [8]UInt32
		want := Sha256IVWords()
		if trial%2 == 0 {
			state = Sha256IV()
		} else {
			for i := range want {
				want[i] = rng.Uint32()
				state[i] = AllocUInt32(cs, want[i])
			}
		}
		var block [16]UInt32
		var words [16]uint32
		for i := range block {
			words[i] = rng.Uint32()
			block[i] = AllocUInt32(cs, words[i])
		}
		out := Sha256Compress(cs, &state, &block)
		Sha256Block(&want, &words)
		for i := range out {
			checkWord(t, cs, &out[i], want[i])
		}
		checkSatisfied(t, cs)
	}
}

// TestSha256CompressHashesAMessage runs the gadget on a real message's
// padded block: the words must be sha256.Sum256's.
func TestSha256CompressHashesAMessage(t *testing.T) {
	t.Parallel()
	msg := []byte("perfbot guards the prover: synthesis, NTT and MSM")
	words := paddedBlock(msg)
	cs := newSystem()
	var block [16]UInt32
	for i := range block {
		block[i] = AllocUInt32(cs, words[i])
	}
	iv := Sha256IV()
	out := Sha256Compress(cs, &iv, &block)
	var got [8]uint32
	for i := range out {
		got[i] = out[i].Value()
	}
	if d, want := digestBytes(&got), sha256.Sum256(msg); d != want {
		t.Fatalf("digest %x, want %x", d, want)
	}
	checkSatisfied(t, cs)
}

// TestSha256CompressConstraintCount pins the exact cost of one compression
// over 512 allocated bits with the constant IV (see compressConstraints).
func TestSha256CompressConstraintCount(t *testing.T) {
	t.Parallel()
	cs := newSystem()
	var block [16]UInt32
	for i := range block {
		block[i] = AllocUInt32(cs, uint32(i)*0x9e3779b9)
	}
	if n := cs.NumConstraints(); n != 512 {
		t.Fatalf("512 input bits cost %d constraints", n)
	}
	iv := Sha256IV()
	Sha256Compress(cs, &iv, &block)
	got := cs.NumConstraints() - 512
	if got != compressConstraints {
		t.Fatalf("one compression costs %d constraints, want %d", got, compressConstraints)
	}
	const bellman = 25_840
	if got > bellman*105/100 {
		t.Fatalf("one compression costs %d constraints, more than bellman's %d + 5%%", got, bellman)
	}
}

// TestSha256CompressConstantIsFree: constant inputs fold completely, as in
// bellman's blank-hash test (the padded empty message).
func TestSha256CompressConstantIsFree(t *testing.T) {
	t.Parallel()
	words := paddedBlock(nil)
	var block [16]UInt32
	for i := range block {
		block[i] = ConstantUInt32(words[i])
	}
	cs := newSystem()
	iv := Sha256IV()
	out := Sha256Compress(cs, &iv, &block)
	var got [8]uint32
	for i := range out {
		if !out[i].IsConstant() {
			t.Fatalf("word %d is not constant", i)
		}
		got[i] = out[i].Value()
	}
	if cs.NumConstraints() != 0 {
		t.Fatalf("constant compression costs %d constraints", cs.NumConstraints())
	}
	if d, want := digestBytes(&got), sha256.Sum256(nil); d != want {
		t.Fatalf("digest %x, want %x", d, want)
	}
}

// TestSha256CompressReportsTamperedWitness flips one allocated input bit
// right after its allocation. Prove mode must stop at the first constraint
// that reads it, with its namespace path, and Setup mode's IsSatisfied
// must find the same index.
func TestSha256CompressReportsTamperedWitness(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		state      bool // tamper state (allocated) instead of the block
		word, bit  int
		annotation string
	}{
		// w[1] is first read by schedule[16]'s σ0; its bit 0 is bit 14 of
		// the rotation by 18.
		{"block word", false, 1, 0, "sha/schedule[16]/sigma0/bit[14]/xor3"},
		// b = H_1 is first read by round 0's Maj.
		{"state b", true, 1, 5, "sha/round[0]/bit[5]/maj"},
		// e = H_4 is first read by round 0's Σ1: bit 6 is bit 0 of e >>> 6.
		{"state e", true, 4, 6, "sha/round[0]/Sigma1/bit[0]/xor3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(11, 12))
			cs := newSystem()
			var state [8]UInt32
			var block [16]UInt32
			tamper := func(u *UInt32) {
				v, _, _ := u.Bit(tc.bit).Variable()
				x := cs.Value(v)
				if x.IsZero() {
					x.SetOne()
				} else {
					x.SetZero()
				}
				setAux(cs, v, &x)
			}
			for i := range state {
				state[i] = AllocUInt32(cs, rng.Uint32())
				if tc.state && i == tc.word {
					tamper(&state[i])
				}
			}
			for i := range block {
				block[i] = AllocUInt32(cs, rng.Uint32())
				if !tc.state && i == tc.word {
					tamper(&block[i])
				}
			}
			cs.Push("sha", -1)
			Sha256Compress(cs, &state, &block)
			cs.Pop()
			var ue *r1cs.UnsatError
			if !errors.As(cs.Err(), &ue) {
				t.Fatalf("Err() = %v, want an *r1cs.UnsatError", cs.Err())
			}
			if ue.Annotation != tc.annotation {
				t.Errorf("annotation %q, want %q", ue.Annotation, tc.annotation)
			}
			if got := unsatIndex(t, cs); got != ue.Index {
				t.Errorf("prove mode stops at constraint %d, setup mode at %d", ue.Index, got)
			}
			if ue.Index < 768 {
				t.Errorf("constraint %d is among the input allocations", ue.Index)
			}
		})
	}
}
