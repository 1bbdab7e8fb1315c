package gpu

import (
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr/fft"
)

// The device must transform over exactly gnark-crypto's domain, whose
// tables domainRoots skips building: same ω and coset shift, from 2^1 to
// 2^27, and ω of order exactly n.
func TestDomainRootsMatchGnarkCryptoDomain(t *testing.T) {
	for log := 1; log <= 27; log++ {
		n := 1 << log
		w, g, err := domainRoots(n)
		if err != nil {
			t.Fatalf("2^%d: %v", log, err)
		}
		d := fft.NewDomain(uint64(n), fft.WithoutPrecompute())
		if !w.Equal(&d.Generator) || !g.Equal(&d.FrMultiplicativeGen) {
			t.Fatalf("2^%d: ω = %s, g = %s; gnark-crypto's domain has %s, %s", log, w.String(), g.String(),
				d.Generator.String(), d.FrMultiplicativeGen.String())
		}
		half := w
		for i := 1; i < log; i++ {
			half.Square(&half)
		}
		var minusOne fr.Element
		minusOne.SetOne()
		minusOne.Neg(&minusOne)
		if !half.Equal(&minusOne) {
			t.Fatalf("2^%d: ω^(n/2) = %s, want −1", log, half.String())
		}
	}
	if _, _, err := domainRoots(1 << 33); err == nil {
		t.Fatal("2^33 points: no error; Fr has 2-adicity 32, so there is no such root")
	}
}
