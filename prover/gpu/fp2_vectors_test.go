package gpu_test

import (
	"bytes"
	"flag"
	"fmt"
	"math/big"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fp"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata (and cuda/gen/testdata)")

// fp2Vectors is what cuda/gen/check_fp2.cpp (make cuda-host-check) runs
// the CUDA code's Fp2 and G2 formulas against, with g++ and no GPU, and
// cuda/gen/check_ref_affine.cpp the self-test's affine G2 reference.
var fp2Vectors = filepath.Join("..", "..", "cuda", "gen", "testdata", "fp2_g2_vectors.txt")

// TestFp2G2VectorsAreGnarkCrypto writes gnark-crypto's E2 Mul, Square and
// Inverse and its G2 addition, doubling and scalar multiplication on
// fixed pseudo-random inputs (seeded, so the file is stable) and requires
// the checked-in file to be exactly that: the host check's expected values
// are gnark-crypto's. -update rewrites it.
func TestFp2G2VectorsAreGnarkCrypto(t *testing.T) {
	got := renderFp2Vectors()
	if *update {
		if err := os.WriteFile(fp2Vectors, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(fp2Vectors)
	if err != nil {
		t.Fatalf("%v (go test ./prover/gpu -run TestFp2G2VectorsAreGnarkCrypto -update writes it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is not what gnark-crypto computes now: rerun with -update and make cuda-host-check", fp2Vectors)
	}
}

// fpHex is an fp.Element's memory: its six Montgomery-form words, low
// first, 16 hex digits each.
func fpHex(x *fp.Element) string {
	var b strings.Builder
	for _, w := range x {
		fmt.Fprintf(&b, "%016x", w)
	}
	return b.String()
}

func e2Hex(x *bls12381.E2) string { return fpHex(&x.A0) + " " + fpHex(&x.A1) }

func g2Hex(p *bls12381.G2Affine) string { return e2Hex(&p.X) + " " + e2Hex(&p.Y) }

func frHex(x *fr.Element) string {
	var b strings.Builder
	for _, w := range x {
		fmt.Fprintf(&b, "%016x", w)
	}
	return b.String()
}

func renderFp2Vectors() []byte {
	rng := rand.New(rand.NewSource(20))
	randFp := func() fp.Element {
		var k big.Int
		k.Rand(rng, fp.Modulus())
		var x fp.Element
		x.SetBigInt(&k)
		return x
	}
	randE2 := func() bls12381.E2 { return bls12381.E2{A0: randFp(), A1: randFp()} }
	randFr := func() fr.Element {
		var k big.Int
		k.Rand(rng, fr.Modulus())
		var x fr.Element
		x.SetBigInt(&k)
		return x
	}
	_, _, _, g := bls12381.Generators()
	randG2 := func() bls12381.G2Affine {
		k := randFr()
		var b big.Int
		var p bls12381.G2Affine
		p.ScalarMultiplication(&g, k.BigInt(&b))
		return p
	}
	var out bytes.Buffer
	fmt.Fprintln(&out, "# Fp2 and G2 vectors from gnark-crypto (prover/gpu TestFp2G2VectorsAreGnarkCrypto; -update rewrites).")
	fmt.Fprintln(&out, "# An Fp is its six Montgomery words, low first, 16 hex digits each; an Fp2 is A0 A1; a G2 affine point x y;")
	fmt.Fprintln(&out, "# an Fr scalar its four Montgomery words. Infinity is (0, 0).")
	fmt.Fprintln(&out, "# mul a b a·b | sqr a a² | inv a 1/a | add P Q P+Q | dbl P 2P | smul k P k·P")
	var pMinus1 bls12381.E2
	pMinus1.A0.SetOne()
	pMinus1.A0.Neg(&pMinus1.A0)
	pMinus1.A1 = pMinus1.A0
	edges := []bls12381.E2{{}, pMinus1, {A0: pMinus1.A0}, {A1: pMinus1.A0}}
	edges[2].A1.SetOne()
	for i := range 40 {
		a, b := randE2(), randE2()
		if i < len(edges) {
			a = edges[i]
		}
		var c bls12381.E2
		c.Mul(&a, &b)
		fmt.Fprintln(&out, "mul", e2Hex(&a), e2Hex(&b), e2Hex(&c))
		c.Square(&a)
		fmt.Fprintln(&out, "sqr", e2Hex(&a), e2Hex(&c))
		c.Inverse(&a)
		fmt.Fprintln(&out, "inv", e2Hex(&a), e2Hex(&c))
	}
	for i := range 16 {
		p, q := randG2(), randG2()
		switch i {
		case 0:
			q = p // P + P doubles
		case 1:
			q.Neg(&p) // P + (−P) cancels
		case 2:
			q = bls12381.G2Affine{} // P + ∞
		case 3:
			p = bls12381.G2Affine{} // ∞ + Q
		}
		var r bls12381.G2Affine
		r.Add(&p, &q)
		fmt.Fprintln(&out, "add", g2Hex(&p), g2Hex(&q), g2Hex(&r))
		r.Double(&p)
		fmt.Fprintln(&out, "dbl", g2Hex(&p), g2Hex(&r))
		k := randFr()
		switch i {
		case 0:
			k.SetZero()
		case 1:
			k.SetOne()
			k.Neg(&k) // r − 1
		}
		var kb big.Int
		r.ScalarMultiplication(&p, k.BigInt(&kb))
		fmt.Fprintln(&out, "smul", frHex(&k), g2Hex(&p), g2Hex(&r))
	}
	return out.Bytes()
}
