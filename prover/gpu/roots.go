package gpu

import (
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr/fft"
)

// domainRoots returns what the device needs of gnark-crypto's fft.Domain
// for n points: its generator ω (a primitive n-th root of unity) and its
// coset shift g, the multiplicative generator of Fr. It builds none of the
// domain's twiddle tables, which the device makes itself. fft.NewDomain
// did, and its cache holds a domain only weakly, so proofs built it again:
// at 2^24 constraints (a domain of 2^25) the ntt phase allocated 7.5 GB
// and took 1.94 s; with this, 3 GiB (a, b and c), 1.66 s in a first proof
// and 0.80 s in the next (BENCHMARKS.md).
func domainRoots(n int) (w, g fr.Element, err error) {
	w, err = fr.Generator(uint64(n))
	return w, fft.GeneratorFullMultiplicativeGroup(), err
}
