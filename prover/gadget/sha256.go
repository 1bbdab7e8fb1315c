package gadget

import (
	"math/bits"

	"github.com/perfbot/perfbot/prover/r1cs"
)

// sha256K are SHA-256's round constants (FIPS 180-4, 4.2.2).
var sha256K = [64]uint32{
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
}

// sha256IV is SHA-256's initial hash value H(0) (FIPS 180-4, 5.3.3).
var sha256IV = [8]uint32{
	0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
}

// Sha256IVWords returns SHA-256's initial hash value H(0), for Sha256Block.
func Sha256IVWords() [8]uint32 { return sha256IV }

// Sha256IV returns SHA-256's initial hash value as constant words, for
// Sha256Compress.
func Sha256IV() [8]UInt32 {
	var iv [8]UInt32
	for i, w := range sha256IV {
		iv[i] = ConstantUInt32(w)
	}
	return iv
}

// Sha256Compress returns SHA-256's compression of one 512-bit block into
// state: the next hash value H(i) from H(i−1) = state and the message block
// (FIPS 180-4, 6.2.2). Words are as SHA-256 defines them: block[t] is the
// big-endian word made of bytes 4t to 4t+3 of the 64-byte block, and
// state[i] is H_i; within a UInt32 the bits are least significant first.
//
// The construction is bellman's: a message schedule whose σ0 and σ1 are
// 3-way xors of rotations and shifts, 64 rounds of Σ0, Σ1, Ch, Maj and
// additions, with each new a and e computed by one AddMany over all its
// addends (temp1 + d and temp1 + temp2) and the last round's a and e
// deferred into the final additions. Unlike bellman, a 3-way xor and Maj
// cost one constraint per bit (bellman: two each). Constant state words,
// such as the IV, fold: with the IV, the first round costs nothing.
//
// Namespaces: "schedule"[t] for t in 16…63, "round"[t] for t in 0…63 and
// "final"[i] for the additions into H_i, with "sigma0", "sigma1",
// "Sigma0", "Sigma1", "e" and "a" below them; Ch and Maj name their
// constraints "ch" and "maj".
func Sha256Compress(cs *r1cs.System, state *[8]UInt32, block *[16]UInt32) [8]UInt32 {
	var w [64]UInt32
	copy(w[:16], block[:])
	for t := 16; t < 64; t++ {
		cs.Push("schedule", t)
		x := &w[t-15]
		r7, r18, s3 := x.RotR(7), x.RotR(18), x.ShR(3)
		cs.Push("sigma0", -1)
		s0 := r7.Xor3(cs, &r18, &s3)
		cs.Pop()
		y := &w[t-2]
		r17, r19, s10 := y.RotR(17), y.RotR(19), y.ShR(10)
		cs.Push("sigma1", -1)
		s1 := r17.Xor3(cs, &r19, &s10)
		cs.Pop()
		ops := [4]UInt32{w[t-16], s0, w[t-7], s1}
		w[t] = AddMany(cs, ops[:])
		cs.Pop()
	}

	// a and e are held as the addends of their next value: AddMany runs
	// when the next round needs the word, or in the final additions, which
	// then take one more addend instead of a second AddMany.
	var aOps [8]UInt32 // temp1 (5 words) + Σ0 + Maj, then + H_0
	var eOps [7]UInt32 // temp1 (5 words) + d, then + H_4
	aOps[0], eOps[0] = state[0], state[4]
	nA, nE := 1, 1
	b, c, d := state[1], state[2], state[3]
	f, g, h := state[5], state[6], state[7]
	for t := 0; t < 64; t++ {
		cs.Push("round", t)
		e := deferred(cs, "e", eOps[:nE])
		s1 := bigSigma(cs, "Sigma1", &e, 6, 11, 25)
		ch := e.Ch(cs, &f, &g)
		a := deferred(cs, "a", aOps[:nA])
		s0 := bigSigma(cs, "Sigma0", &a, 2, 13, 22)
		maj := a.Maj(cs, &b, &c)

		// temp1 = h + Σ1 + Ch + K_t + W_t
		eOps[0], eOps[1], eOps[2], eOps[3], eOps[4] = h, s1, ch, ConstantUInt32(sha256K[t]), w[t]
		copy(aOps[:5], eOps[:5])
		eOps[5], nE = d, 6
		aOps[5], aOps[6], nA = s0, maj, 7

		h, g, f = g, f, e
		d, c, b = c, b, a
		cs.Pop()
	}

	var out [8]UInt32
	aOps[nA] = state[0]
	eOps[nE] = state[4]
	words := [8]*UInt32{nil, &b, &c, &d, nil, &f, &g, &h}
	for i := range out {
		cs.Push("final", i)
		switch i {
		case 0:
			out[i] = AddMany(cs, aOps[:nA+1])
		case 4:
			out[i] = AddMany(cs, eOps[:nE+1])
		default:
			ops := [2]UInt32{state[i], *words[i]}
			out[i] = AddMany(cs, ops[:])
		}
		cs.Pop()
	}
	return out
}

// deferred returns the sum of ops under the namespace name; a single
// operand is returned as it is.
func deferred(cs *r1cs.System, name string, ops []UInt32) UInt32 {
	if len(ops) == 1 {
		return ops[0]
	}
	cs.Push(name, -1)
	u := AddMany(cs, ops)
	cs.Pop()
	return u
}

// bigSigma returns x>>>r1 ⊕ x>>>r2 ⊕ x>>>r3 under the namespace name.
func bigSigma(cs *r1cs.System, name string, x *UInt32, r1, r2, r3 int) UInt32 {
	a, b, c := x.RotR(r1), x.RotR(r2), x.RotR(r3)
	cs.Push(name, -1)
	u := a.Xor3(cs, &b, &c)
	cs.Pop()
	return u
}

// Sha256Block is the native compression function: it updates state with
// one 64-byte block given as 16 big-endian words, as Sha256Compress does in
// a circuit. It is the reference the gadget is checked against.
func Sha256Block(state *[8]uint32, block *[16]uint32) {
	var w [64]uint32
	copy(w[:16], block[:])
	for t := 16; t < 64; t++ {
		x, y := w[t-15], w[t-2]
		s0 := bits.RotateLeft32(x, -7) ^ bits.RotateLeft32(x, -18) ^ x>>3
		s1 := bits.RotateLeft32(y, -17) ^ bits.RotateLeft32(y, -19) ^ y>>10
		w[t] = w[t-16] + s0 + w[t-7] + s1
	}
	a, b, c, d, e, f, g, h := state[0], state[1], state[2], state[3], state[4], state[5], state[6], state[7]
	for t := 0; t < 64; t++ {
		s1 := bits.RotateLeft32(e, -6) ^ bits.RotateLeft32(e, -11) ^ bits.RotateLeft32(e, -25)
		ch := e&f ^ ^e&g
		t1 := h + s1 + ch + sha256K[t] + w[t]
		s0 := bits.RotateLeft32(a, -2) ^ bits.RotateLeft32(a, -13) ^ bits.RotateLeft32(a, -22)
		maj := a&b ^ a&c ^ b&c
		t2 := s0 + maj
		h, g, f, e = g, f, e, d+t1
		d, c, b, a = c, b, a, t1+t2
	}
	state[0] += a
	state[1] += b
	state[2] += c
	state[3] += d
	state[4] += e
	state[5] += f
	state[6] += g
	state[7] += h
}
