package groth16

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"io"
	"sync/atomic"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fp"
	"github.com/consensys/gnark-crypto/parallel"
)

// Key file format, version 1. Integers are big-endian.
//
//	header (128 bytes)
//	  magic        8   "PBG16KEY"
//	  version      4   1
//	  flags        4   bit 0: random keys (RandomKeys)
//	  shape       32   ShapeDigest of the circuit
//	  counts    6×8    inputs, aux, constraints, domain size n, |A|, |B|
//	  checksum    32   SHA-256 of the 80 bytes above
//	payload
//	  A density    ⌈(inputs+aux)/8⌉ bytes, bit j%8 of byte j/8 = variable j
//	  B density    the same
//	  α, β, δ      G1
//	  β, γ, δ      G2
//	  IC           inputs × G1
//	  A            |A| × G1
//	  B1           |B| × G1
//	  B2           |B| × G2
//	  L            aux × G1
//	  H            (n−1) × G1
//	trailer
//	  checksum     32  SHA-256 of the payload
//
// A G1 point is X‖Y, a G2 point X.A0‖X.A1‖Y.A0‖Y.A1, each coordinate 48
// bytes big-endian canonical; the point at infinity is all zeros. Points are
// not checked to be on the curve when read: the checksums stand guard, and
// the file is a local cache, not untrusted input.
const (
	keyMagic      = "PBG16KEY"
	keyVersion    = 1
	keyHeaderSize = 8 + 4 + 4 + 32 + 6*8 + 32
	flagRandom    = 1

	g1Size = 2 * fp.Bytes
	g2Size = 4 * fp.Bytes
)

// ErrCorruptKey is returned by ReadKeys for a file that is not a complete,
// intact key file of a version this package reads: wrong magic or version,
// a checksum mismatch, truncation or trailing bytes.
var ErrCorruptKey = errors.New("groth16: corrupt key file")

// ErrShapeMismatch is returned by ReadKeys for an intact key file made for a
// different circuit shape.
var ErrShapeMismatch = errors.New("groth16: key file is for a different circuit")

// WriteKeys writes pk and vk (a pair from Setup or RandomKeys) to w in the
// key file format.
func WriteKeys(w io.Writer, pk *ProvingKey, vk *VerifyingKey) error {
	if err := pk.check(); err != nil {
		return fmt.Errorf("write keys: %w", err)
	}
	if len(vk.IC) != pk.NumInputs || !vk.Alpha1.Equal(&pk.Alpha1) || !vk.Beta2.Equal(&pk.Beta2) ||
		!vk.Delta2.Equal(&pk.Delta2) || vk.Random != pk.Random {
		return errors.New("write keys: the verifying key does not belong to the proving key")
	}
	hdr := make([]byte, 0, keyHeaderSize)
	hdr = append(hdr, keyMagic...)
	hdr = binary.BigEndian.AppendUint32(hdr, keyVersion)
	var flags uint32
	if pk.Random {
		flags |= flagRandom
	}
	hdr = binary.BigEndian.AppendUint32(hdr, flags)
	hdr = append(hdr, pk.Shape[:]...)
	for _, c := range []int{pk.NumInputs, pk.NumAux, pk.NumConstraints, pk.DomainSize, len(pk.A), len(pk.B1)} {
		hdr = binary.BigEndian.AppendUint64(hdr, uint64(c))
	}
	sum := sha256.Sum256(hdr)
	hdr = append(hdr, sum[:]...)
	if _, err := w.Write(hdr); err != nil {
		return fmt.Errorf("write keys: %w", err)
	}

	kw := &keyWriter{w: w, h: sha256.New()}
	kw.write(packBits(pk.ADensity))
	kw.write(packBits(pk.BDensity))
	kw.g1s([]bls12381.G1Affine{pk.Alpha1, pk.Beta1, pk.Delta1})
	kw.g2s([]bls12381.G2Affine{pk.Beta2, vk.Gamma2, pk.Delta2})
	kw.g1s(vk.IC)
	kw.g1s(pk.A)
	kw.g1s(pk.B1)
	kw.g2s(pk.B2)
	kw.g1s(pk.L)
	kw.g1s(pk.H)
	if kw.err == nil {
		_, kw.err = w.Write(kw.h.Sum(nil))
	}
	if kw.err != nil {
		return fmt.Errorf("write keys: %w", kw.err)
	}
	return nil
}

// ReadKeys reads a key file written by WriteKeys and checks that it was made
// for the circuit shape want. A damaged file gives an error wrapping
// ErrCorruptKey, one for another circuit ErrShapeMismatch; other errors are
// the reader's own.
func ReadKeys(r io.Reader, want ShapeDigest) (*ProvingKey, *VerifyingKey, error) {
	hdr := make([]byte, keyHeaderSize)
	if _, err := io.ReadFull(r, hdr); err != nil {
		return nil, nil, readErr("header", err)
	}
	if string(hdr[:8]) != keyMagic {
		return nil, nil, fmt.Errorf("%w: bad magic %q", ErrCorruptKey, hdr[:8])
	}
	if v := binary.BigEndian.Uint32(hdr[8:]); v != keyVersion {
		return nil, nil, fmt.Errorf("%w: format version %d, this build reads %d", ErrCorruptKey, v, keyVersion)
	}
	body := keyHeaderSize - sha256.Size
	if sum := sha256.Sum256(hdr[:body]); !bytes.Equal(sum[:], hdr[body:]) {
		return nil, nil, fmt.Errorf("%w: header checksum mismatch", ErrCorruptKey)
	}
	flags := binary.BigEndian.Uint32(hdr[12:])
	var shape ShapeDigest
	copy(shape[:], hdr[16:48])
	if shape != want {
		return nil, nil, fmt.Errorf("%w: file has shape %s, the circuit has %s", ErrShapeMismatch, shape, want)
	}
	var counts [6]int
	for i := range counts {
		c := binary.BigEndian.Uint64(hdr[48+8*i:])
		if c > 1<<32 {
			return nil, nil, fmt.Errorf("%w: count %d out of range", ErrCorruptKey, c)
		}
		counts[i] = int(c)
	}
	pk := &ProvingKey{
		Shape: shape, NumInputs: counts[0], NumAux: counts[1], NumConstraints: counts[2], DomainSize: counts[3],
		Random: flags&flagRandom != 0,
	}
	vk := &VerifyingKey{Random: pk.Random}
	nA, nB := counts[4], counts[5]
	if pk.NumInputs < 1 || pk.DomainSize < 2 || pk.DomainSize&(pk.DomainSize-1) != 0 {
		return nil, nil, fmt.Errorf("%w: inconsistent counts", ErrCorruptKey)
	}

	kr := &keyReader{r: r, h: sha256.New()}
	nv := pk.NumVariables()
	pk.ADensity = unpackBits(kr.read((nv+7)/8), nv)
	pk.BDensity = unpackBits(kr.read((nv+7)/8), nv)
	g1 := kr.g1s(3)
	g2 := kr.g2s(3)
	vk.IC = kr.g1s(pk.NumInputs)
	pk.A = kr.g1s(nA)
	pk.B1 = kr.g1s(nB)
	pk.B2 = kr.g2s(nB)
	pk.L = kr.g1s(pk.NumAux)
	pk.H = kr.g1s(pk.DomainSize - 1)
	if kr.err != nil {
		return nil, nil, readErr("payload", kr.err)
	}
	trailer := make([]byte, sha256.Size)
	if _, err := io.ReadFull(r, trailer); err != nil {
		return nil, nil, readErr("checksum", err)
	}
	if !bytes.Equal(trailer, kr.h.Sum(nil)) {
		return nil, nil, fmt.Errorf("%w: payload checksum mismatch", ErrCorruptKey)
	}
	switch _, err := io.ReadFull(r, make([]byte, 1)); {
	case err == nil:
		return nil, nil, fmt.Errorf("%w: trailing bytes after the checksum", ErrCorruptKey)
	case err != io.EOF:
		return nil, nil, fmt.Errorf("read keys: %w", err)
	}
	pk.Alpha1, pk.Beta1, pk.Delta1 = g1[0], g1[1], g1[2]
	pk.Beta2, vk.Gamma2, pk.Delta2 = g2[0], g2[1], g2[2]
	vk.Alpha1, vk.Beta2, vk.Delta2 = pk.Alpha1, pk.Beta2, pk.Delta2
	if err := pk.check(); err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrCorruptKey, err)
	}
	return pk, vk, nil
}

// readErr classifies a read failure: running out of bytes means a truncated
// (corrupt) file, a bad encoding a corrupt one, anything else is I/O.
func readErr(what string, err error) error {
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("%w: truncated in the %s", ErrCorruptKey, what)
	case errors.Is(err, errBadEncoding):
		return fmt.Errorf("%w: %s: %v", ErrCorruptKey, what, err)
	}
	return fmt.Errorf("read keys: %s: %w", what, err)
}

var errBadEncoding = errors.New("bad point encoding")

// chunkBytes bounds the buffer of one encode or decode step.
const chunkBytes = 1 << 20

type keyWriter struct {
	w   io.Writer
	h   hash.Hash
	buf []byte
	err error
}

func (kw *keyWriter) write(b []byte) {
	if kw.err != nil {
		return
	}
	kw.h.Write(b)
	_, kw.err = kw.w.Write(b)
}

func (kw *keyWriter) chunk(n int) []byte {
	if cap(kw.buf) < n {
		kw.buf = make([]byte, n)
	}
	return kw.buf[:n]
}

func (kw *keyWriter) g1s(ps []bls12381.G1Affine) {
	per := chunkBytes / g1Size
	for start := 0; start < len(ps) && kw.err == nil; start += per {
		part := ps[start:min(start+per, len(ps))]
		buf := kw.chunk(len(part) * g1Size)
		parallel.Execute(len(part), func(lo, hi int) {
			for i := lo; i < hi; i++ {
				b := buf[i*g1Size:]
				fp.BigEndian.PutElement((*[fp.Bytes]byte)(b[0:]), part[i].X)
				fp.BigEndian.PutElement((*[fp.Bytes]byte)(b[fp.Bytes:]), part[i].Y)
			}
		})
		kw.write(buf)
	}
}

func (kw *keyWriter) g2s(ps []bls12381.G2Affine) {
	per := chunkBytes / g2Size
	for start := 0; start < len(ps) && kw.err == nil; start += per {
		part := ps[start:min(start+per, len(ps))]
		buf := kw.chunk(len(part) * g2Size)
		parallel.Execute(len(part), func(lo, hi int) {
			for i := lo; i < hi; i++ {
				b := buf[i*g2Size:]
				fp.BigEndian.PutElement((*[fp.Bytes]byte)(b[0:]), part[i].X.A0)
				fp.BigEndian.PutElement((*[fp.Bytes]byte)(b[fp.Bytes:]), part[i].X.A1)
				fp.BigEndian.PutElement((*[fp.Bytes]byte)(b[2*fp.Bytes:]), part[i].Y.A0)
				fp.BigEndian.PutElement((*[fp.Bytes]byte)(b[3*fp.Bytes:]), part[i].Y.A1)
			}
		})
		kw.write(buf)
	}
}

type keyReader struct {
	r   io.Reader
	h   hash.Hash
	buf []byte
	err error
}

// read returns the next n payload bytes (valid until the next read), or
// nil after an error.
func (kr *keyReader) read(n int) []byte {
	if kr.err != nil {
		return nil
	}
	if cap(kr.buf) < n {
		kr.buf = make([]byte, n)
	}
	b := kr.buf[:n]
	if _, err := io.ReadFull(kr.r, b); err != nil {
		kr.err = err
		return nil
	}
	kr.h.Write(b)
	return b
}

func (kr *keyReader) g1s(n int) []bls12381.G1Affine {
	if kr.err != nil {
		return nil
	}
	out := make([]bls12381.G1Affine, n)
	per := chunkBytes / g1Size
	for start := 0; start < n; start += per {
		part := out[start:min(start+per, n)]
		buf := kr.read(len(part) * g1Size)
		if buf == nil {
			return nil
		}
		var bad atomic.Bool
		parallel.Execute(len(part), func(lo, hi int) {
			for i := lo; i < hi; i++ {
				b := buf[i*g1Size:]
				var err1, err2 error
				part[i].X, err1 = fp.BigEndian.Element((*[fp.Bytes]byte)(b[0:]))
				part[i].Y, err2 = fp.BigEndian.Element((*[fp.Bytes]byte)(b[fp.Bytes:]))
				if err1 != nil || err2 != nil {
					bad.Store(true)
				}
			}
		})
		if bad.Load() {
			kr.err = fmt.Errorf("%w: G1 coordinate out of range", errBadEncoding)
			return nil
		}
	}
	return out
}

func (kr *keyReader) g2s(n int) []bls12381.G2Affine {
	if kr.err != nil {
		return nil
	}
	out := make([]bls12381.G2Affine, n)
	per := chunkBytes / g2Size
	for start := 0; start < n; start += per {
		part := out[start:min(start+per, n)]
		buf := kr.read(len(part) * g2Size)
		if buf == nil {
			return nil
		}
		var bad atomic.Bool
		parallel.Execute(len(part), func(lo, hi int) {
			for i := lo; i < hi; i++ {
				b := buf[i*g2Size:]
				var errs [4]error
				part[i].X.A0, errs[0] = fp.BigEndian.Element((*[fp.Bytes]byte)(b[0:]))
				part[i].X.A1, errs[1] = fp.BigEndian.Element((*[fp.Bytes]byte)(b[fp.Bytes:]))
				part[i].Y.A0, errs[2] = fp.BigEndian.Element((*[fp.Bytes]byte)(b[2*fp.Bytes:]))
				part[i].Y.A1, errs[3] = fp.BigEndian.Element((*[fp.Bytes]byte)(b[3*fp.Bytes:]))
				if errs[0] != nil || errs[1] != nil || errs[2] != nil || errs[3] != nil {
					bad.Store(true)
				}
			}
		})
		if bad.Load() {
			kr.err = fmt.Errorf("%w: G2 coordinate out of range", errBadEncoding)
			return nil
		}
	}
	return out
}

func packBits(b []bool) []byte {
	out := make([]byte, (len(b)+7)/8)
	for i, x := range b {
		if x {
			out[i/8] |= 1 << (i % 8)
		}
	}
	return out
}

// unpackBits returns n flags from packed (nil if packed is nil).
func unpackBits(packed []byte, n int) []bool {
	if packed == nil {
		return nil
	}
	out := make([]bool, n)
	for i := range out {
		out[i] = packed[i/8]&(1<<(i%8)) != 0
	}
	return out
}
